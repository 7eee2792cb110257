"""A local HTTP server speaking the OpenAI, Gemini and Ollama embedding wire formats.

Tests point the real provider clients at it (``server.url``) so the real request, auth, retry and
parsing code runs over a real socket. Vectors are deterministic: a hashed bag of words, so texts
that share words are close. The server records every request it answered (``server.requests``)
and can be scripted to fail the next requests::

    with ProviderServer(api_key="sk-test") as server:
        server.fail(Fault(429, retry_after="0"), Fault(500))
        ...  # the next two requests fail, the third succeeds

Routes: ``POST /v1/embeddings`` (OpenAI: Bearer key), ``POST /v1beta/models/{m}:batchEmbedContents``
(Gemini: ``x-goog-api-key`` header or ``?key=``), ``POST /api/embed`` (Ollama: no key). It binds
127.0.0.1 on a free port and stops with the context manager.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

import numpy as np

MODEL_DIMS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
    "text-embedding-004": 768,
    "gemini-embedding-001": 3072,
    "nomic-embed-text": 768,
    "mxbai-embed-large": 1024,
    "all-minilm": 384,
}


def bag_of_words_vector(text: str, dims: int) -> list[float]:
    """A deterministic unit vector: each lower-cased word adds +-1 at a hashed position."""
    vec = np.zeros(dims, dtype=np.float64)
    for word in re.findall(r"\w+", text.lower()) or [""]:
        h = hashlib.sha256(word.encode()).digest()
        vec[int.from_bytes(h[:4], "little") % dims] += 1.0 if h[4] & 1 else -1.0
    norm = np.linalg.norm(vec)
    return (vec / norm if norm else vec).round(6).tolist()


@dataclass
class Fault:
    """One scripted failure: an HTTP status, or ``kind`` ``"malformed"`` (bad JSON body, 200),
    ``"wrong_dims"`` (200 with vectors one element short), or ``"sleep"`` (answer after ``delay_s``)."""

    status: int = 200
    kind: str = "status"
    retry_after: str | None = None
    message: str = "scripted failure"
    delay_s: float = 0.0


@dataclass
class Request:
    """One request the server answered."""

    provider: str
    path: str
    headers: dict[str, str]
    body: Any
    status: int = 200


@dataclass
class _State:
    api_key: str | None
    faults: list[Fault] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Handler(BaseHTTPRequestHandler):
    state: _State  # set on the subclass made per server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib's name
        pass  # keep test output quiet

    def _send(
        self, status: int, body: Any, headers: dict[str, str] | None = None, raw: bytes | None = None
    ) -> None:
        data = raw if raw is not None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:  # noqa: N802 - stdlib's name
        url = urlparse(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"null")
        except ValueError:
            body = None
        headers = {k.lower(): v for k, v in self.headers.items()}
        gemini = re.fullmatch(r"/v1beta/models/([^/:]+):batchEmbedContents", url.path)
        if url.path == "/v1/embeddings":
            provider = "openai"
        elif gemini:
            provider = "gemini"
        elif url.path == "/api/embed":
            provider = "ollama"
        else:
            self._send(404, {"error": {"message": f"no route {url.path}"}})
            return
        record = Request(provider, self.path, headers, body)
        with self.state.lock:
            self.state.requests.append(record)
            fault = self.state.faults.pop(0) if self.state.faults else None

        def error(status: int, message: str, extra: dict[str, str] | None = None) -> None:
            record.status = status
            payload = (
                {"error": message}
                if provider == "ollama"
                else {"error": {"message": message, "code": status}}
            )
            self._send(status, payload, extra)

        key = self.state.api_key
        if key is not None and provider != "ollama":
            given = (
                headers.get("authorization", "").removeprefix("Bearer ")
                if provider == "openai"
                else headers.get("x-goog-api-key") or parse_qs(url.query).get("key", [""])[0]
            )
            if given != key:
                error(401, "Incorrect API key provided")
                return
        if fault is not None and fault.kind == "status" and fault.status >= 400:
            error(
                fault.status, fault.message, {"Retry-After": fault.retry_after} if fault.retry_after else None
            )
            return
        if fault is not None and fault.kind == "sleep":
            threading.Event().wait(fault.delay_s)
        if fault is not None and fault.kind == "malformed":
            self._send(200, None, raw=b'{"data": [ {"embedding": [0.1, ')
            return
        short = 1 if fault is not None and fault.kind == "wrong_dims" else 0

        try:
            if provider == "openai":
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                dims = body.get("dimensions") or MODEL_DIMS.get(body["model"], 1536)
                data = [
                    {"object": "embedding", "index": i, "embedding": bag_of_words_vector(t, dims - short)}
                    for i, t in enumerate(texts)
                ]
                data.reverse()  # the real API may answer out of order; clients must sort by index
                self._send(
                    200,
                    {
                        "object": "list",
                        "data": data,
                        "model": body["model"],
                        "usage": {"prompt_tokens": 0, "total_tokens": 0},
                    },
                )
            elif provider == "gemini":
                out = []
                for req in body["requests"]:
                    dims = req.get("outputDimensionality") or MODEL_DIMS.get(gemini.group(1), 768)
                    text = " ".join(p["text"] for p in req["content"]["parts"])
                    out.append({"values": bag_of_words_vector(text, dims - short)})
                self._send(200, {"embeddings": out})
            else:
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                dims = MODEL_DIMS.get(body["model"].removesuffix(":latest"), 768)
                self._send(
                    200,
                    {
                        "model": body["model"],
                        "embeddings": [bag_of_words_vector(t, dims - short) for t in texts],
                    },
                )
        except (KeyError, TypeError, AttributeError) as exc:
            error(400, f"invalid request body: {exc!r}")


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out (as the timeout tests make it) leaves a broken pipe: not news.
        exc = sys.exc_info()[1]
        if not isinstance(exc, ConnectionError):
            super().handle_error(request, client_address)


class ProviderServer:
    """The fake provider server; use as a context manager (or call :meth:`start`/:meth:`stop`)."""

    def __init__(self, api_key: str | None = "test-key") -> None:
        self._state = _State(api_key=api_key)
        handler = type("Handler", (_Handler,), {"state": self._state})
        self._httpd = _QuietServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="provider-server", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def requests(self) -> list[Request]:
        with self._state.lock:
            return list(self._state.requests)

    def fail(self, *faults: Fault) -> None:
        """Answer the next ``len(faults)`` requests with these faults, in order."""
        with self._state.lock:
            self._state.faults.extend(faults)

    def reset(self) -> None:
        with self._state.lock:
            self._state.faults.clear()
            self._state.requests.clear()

    def start(self) -> ProviderServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ProviderServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
