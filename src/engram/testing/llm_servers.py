"""Local HTTP servers that speak the chat providers' wire formats, scripted by a test.

The real provider code (httpx, request building, reply parsing, retries) runs against them over
a real socket on 127.0.0.1. A test queues ``Reply`` values (text, tool calls, errors, a 429 with
``Retry-After``, a stall for timeouts) or installs a ``responder`` function that decides each
reply from the request it received - a scripted model. Every request is recorded. The OpenAI
server also streams a reply (server-sent chunks) to a request that asks with ``"stream": true``.

    with OpenAICompatServer() as server:
        server.enqueue(Reply.tool("memory_store", key="k", content="v"), Reply.text("done"))
        provider = OpenAIChat("test-model", base_url=server.base_url)
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One scripted model reply (or failure)."""

    text: str = ""
    tool_calls: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    status: int = 200
    error: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    prompt_tokens: int = 10
    completion_tokens: int = 5
    raw_body: str | None = None  # sent verbatim (e.g. a malformed reply)

    @classmethod
    def say(cls, text: str, **kw: Any) -> Reply:
        return cls(text=text, **kw)

    @classmethod
    def tool(cls, name: str, **arguments: Any) -> Reply:
        return cls(tool_calls=((name, arguments),))

    @classmethod
    def tools(cls, *calls: tuple[str, Mapping[str, Any]], text: str = "") -> Reply:
        return cls(text=text, tool_calls=tuple(calls))

    @classmethod
    def fail(cls, status: int, message: str = "scripted failure", retry_after: float | None = None) -> Reply:
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        return cls(status=status, error=message, headers=headers)

    @classmethod
    def rate_limited(cls, retry_after: float = 0.0) -> Reply:
        return cls.fail(429, "rate limit exceeded", retry_after=retry_after)

    @classmethod
    def stall(cls, seconds: float, then: str = "too late") -> Reply:
        return cls(text=then, delay_s=seconds)


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    headers: Mapping[str, str]
    body: Mapping[str, Any]


Responder = Callable[[RecordedRequest], Reply]


class ScriptedLLMServer:
    """Base server: queue, responder, recording. Subclasses render replies in one wire format."""

    wire = "base"

    def __init__(self, *replies: Reply, responder: Responder | None = None) -> None:
        self._queue: deque[Reply] = deque(replies)
        self.responder = responder
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- scripting ---------------------------------------------------------------------------
    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def _next(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            return self.responder(request)
        return Reply.fail(500, "no scripted reply left")

    # --- wire format ---------------------------------------------------------------------------
    def accepts(self, path: str) -> bool:
        raise NotImplementedError

    def render(self, reply: Reply, request: RecordedRequest) -> dict[str, Any]:
        raise NotImplementedError

    def render_error(self, reply: Reply) -> dict[str, Any]:
        raise NotImplementedError

    def render_stream(self, reply: Reply, request: RecordedRequest) -> list[dict[str, Any]] | None:
        """The reply as server-sent events when the request asked to stream, or None to answer
        whole (a wire format without streaming here)."""
        return None

    @property
    def base_url(self) -> str:
        return self.root_url

    @property
    def root_url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    # --- lifecycle -----------------------------------------------------------------------------
    def start(self) -> ScriptedLLMServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not owner.accepts(self.path.split("?")[0]):
                    self._send(404, {"error": {"message": f"no route {self.path}"}}, {})
                    return
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    self._send(400, {"error": {"message": "request body is not JSON"}}, {})
                    return
                request = RecordedRequest(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                reply = owner._next(request)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.raw_body is not None:
                    self._send_raw(reply.status, reply.raw_body.encode(), dict(reply.headers))
                elif reply.status >= 400:
                    self._send(reply.status, owner.render_error(reply), dict(reply.headers))
                elif (events := owner.render_stream(reply, request)) is not None:
                    data = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
                    self._send_raw(200, data.encode(), dict(reply.headers), "text/event-stream")
                else:
                    self._send(200, owner.render(reply, request), dict(reply.headers))

            def _send(self, status: int, payload: Any, headers: dict[str, str]) -> None:
                self._send_raw(status, json.dumps(payload).encode(), headers)

            def _send_raw(self, status: int, data: bytes, headers: dict[str, str],
                          content_type: str = "application/json") -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout tests)
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name=f"{self.wire}-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class OpenAICompatServer(ScriptedLLMServer):
    """``POST /v1/chat/completions`` as OpenAI, Ollama, vLLM and llama.cpp serve it."""

    wire = "openai"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    def accepts(self, path: str) -> bool:
        return path == "/v1/chat/completions"

    def render(self, reply: Reply, request: RecordedRequest) -> dict[str, Any]:
        n = len(self.requests)
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.tool_calls:
            message["tool_calls"] = [
                {"id": f"call_{n}_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(dict(args))}}
                for i, (name, args) in enumerate(reply.tool_calls)
            ]
        return {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "model": request.body.get("model", ""),
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
            "usage": {
                "prompt_tokens": reply.prompt_tokens,
                "completion_tokens": reply.completion_tokens,
                "total_tokens": reply.prompt_tokens + reply.completion_tokens,
            },
        }

    def render_stream(self, reply: Reply, request: RecordedRequest) -> list[dict[str, Any]] | None:
        """With ``"stream": true``, the same reply as ``chat.completion.chunk`` events: the text and
        each whole tool call in one delta, then the finish reason, then the usage when
        ``stream_options.include_usage`` asks for it (as OpenAI sends it, in a chunk of no choices)."""
        if request.body.get("stream") is not True:
            return None
        whole = self.render(reply, request)
        message, finish = whole["choices"][0]["message"], whole["choices"][0]["finish_reason"]
        delta: dict[str, Any] = {"role": "assistant", "content": message["content"]}
        if "tool_calls" in message:
            delta["tool_calls"] = [dict(call, index=i) for i, call in enumerate(message["tool_calls"])]
        chunk = {"id": whole["id"], "object": "chat.completion.chunk", "created": 0, "model": whole["model"]}
        events = [dict(chunk, choices=[{"index": 0, "delta": delta, "finish_reason": None}]),
                  dict(chunk, choices=[{"index": 0, "delta": {}, "finish_reason": finish}])]
        if (request.body.get("stream_options") or {}).get("include_usage"):
            events.append(dict(chunk, choices=[], usage=whole["usage"]))
        return events

    def render_error(self, reply: Reply) -> dict[str, Any]:
        return {"error": {"message": reply.error, "type": "scripted_error", "code": reply.status}}


class AnthropicServer(ScriptedLLMServer):
    """``POST /v1/messages`` (Anthropic Messages API)."""

    wire = "anthropic"

    def accepts(self, path: str) -> bool:
        return path == "/v1/messages"

    def render(self, reply: Reply, request: RecordedRequest) -> dict[str, Any]:
        n = len(self.requests)
        content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text else []
        content += [
            {"type": "tool_use", "id": f"toolu_{n}_{i}", "name": name, "input": dict(args)}
            for i, (name, args) in enumerate(reply.tool_calls)
        ]
        return {
            "id": f"msg_{n}",
            "type": "message",
            "role": "assistant",
            "model": request.body.get("model", ""),
            "content": content,
            "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
            "usage": {"input_tokens": reply.prompt_tokens, "output_tokens": reply.completion_tokens},
        }

    def render_error(self, reply: Reply) -> dict[str, Any]:
        kind = "rate_limit_error" if reply.status == 429 else "api_error"
        return {"type": "error", "error": {"type": kind, "message": reply.error}}


class GeminiServer(ScriptedLLMServer):
    """``POST /v1beta/models/{model}:generateContent`` (Gemini API)."""

    wire = "gemini"

    def accepts(self, path: str) -> bool:
        return path.startswith("/v1beta/models/") and path.endswith(":generateContent")

    def render(self, reply: Reply, request: RecordedRequest) -> dict[str, Any]:
        parts: list[dict[str, Any]] = [{"text": reply.text}] if reply.text else []
        parts += [{"functionCall": {"name": name, "args": dict(args)}} for name, args in reply.tool_calls]
        model = request.path.split("/models/")[1].split(":")[0]
        return {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {
                "promptTokenCount": reply.prompt_tokens,
                "candidatesTokenCount": reply.completion_tokens,
                "totalTokenCount": reply.prompt_tokens + reply.completion_tokens,
            },
            "modelVersion": model,
        }

    def render_error(self, reply: Reply) -> dict[str, Any]:
        status = {429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}.get(reply.status, "INTERNAL")
        return {"error": {"code": reply.status, "message": reply.error, "status": status}}


__all__ = ["AnthropicServer", "GeminiServer", "OpenAICompatServer", "RecordedRequest", "Reply", "ScriptedLLMServer"]
