"""The chat-provider contract: messages in, text (or tool calls, or JSON) out, token usage reported.

Messages and tool calls are ``engram.model.Message`` / ``ToolCall`` - the same records history
stores - so a conversation goes from the history store to any provider and back unchanged.

A provider implements the minimum - turning messages into one wire-format request and the reply
back into a ``ChatResponse`` (``_build`` / ``_parse``). Everything else lives here once: the
HTTP client, timeouts, retries with exponential backoff (honouring ``Retry-After`` on 429 and
503), and translating transport failures into ``ProviderError``. Structured JSON output with
validation and a repair retry is in ``structured.py``, on top of any provider.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from engram.errors import MissingDependencyError, ProviderError
from engram.model import Message, Role, ToolCall
from engram.provider_keys import refuse_missing_key

log = logging.getLogger("engram.llm")



def system_message(content: str) -> Message:
    return Message(Role.SYSTEM, content)


def user_message(content: str) -> Message:
    return Message(Role.USER, content)


def assistant_message(content: str, tool_calls: Sequence[ToolCall] = ()) -> Message:
    return Message(Role.ASSISTANT, content, tuple(tool_calls))


def tool_message(call: ToolCall, content: str) -> Message:
    """The result of ``call``, for the model to read."""
    return Message(Role.TOOL, content, tool_call_id=call.id)


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A function the model may call: a name, what it does, and a JSON Schema for its arguments."""

    name: str
    description: str
    parameters: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True, slots=True)
class ChatResponse:
    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage()
    model: str = ""
    finish_reason: str | None = None

    def as_message(self) -> Message:
        return assistant_message(self.text, self.tool_calls)


@runtime_checkable
class ChatProvider(Protocol):
    """What the agent needs of a chat model."""

    name: str
    model: str

    def chat(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] = (),
        temperature: float | None = None,
        max_tokens: int | None = None,
        json_mode: bool = False,
    ) -> ChatResponse:
        """One completion; raises ``ProviderError`` after retries are exhausted."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class HttpRequest:
    path: str
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


class HttpChatProvider:
    """Shared HTTP plumbing; subclasses build one request and parse one reply."""

    name = "http"
    default_base_url = ""
    # The variables a key for the provider's own service is usually in (``provider_keys.key_variables``,
    # the table the embedding providers read too); set, that service needs a key. Empty for a server
    # that serves without one (Ollama, vLLM, llama.cpp at their local defaults).
    key_variables: tuple[str, ...] = ()

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        max_backoff_s: float = 20.0,
        default_max_tokens: int = 1024,
        default_temperature: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        try:
            import httpx
        except ImportError as exc:  # the core install has no HTTP client
            raise MissingDependencyError("chat providers", "llm", "httpx") from exc
        self.model = model
        self.base_url = (base_url or self.default_base_url).rstrip("/")
        self.api_key = api_key
        # Said once, here, before any request (the rule embeddings follow too).
        refuse_missing_key("llm", self.name, api_key=api_key, base_url=self.base_url,
                           default_base_url=self.default_base_url,
                           key_variables=self.key_variables)
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.default_max_tokens = default_max_tokens
        # Used when a call names no temperature (chat turns); synthesis and extraction name theirs.
        self.default_temperature = default_temperature
        self._sleep = sleep
        self._httpx = httpx
        # The client opens no connection until the first request.
        self._client = httpx.Client(timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0)))

    # --- what a wire format implements -----------------------------------------------------
    def _build(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        temperature: float | None,
        max_tokens: int | None,
        json_mode: bool,
    ) -> HttpRequest:
        raise NotImplementedError

    def _parse(self, payload: Mapping[str, Any]) -> ChatResponse:
        raise NotImplementedError

    # --- shared ----------------------------------------------------------------------------
    def chat(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] = (),
        temperature: float | None = None,
        max_tokens: int | None = None,
        json_mode: bool = False,
    ) -> ChatResponse:
        """Send the conversation; raises ``ProviderError`` (status, body excerpt) after retries."""
        if not messages:
            raise ProviderError(f"{self.name}: no messages to send")
        if temperature is None:
            temperature = self.default_temperature
        request = self._build(messages, tools, temperature, max_tokens, json_mode)
        payload = self._post(request)
        try:
            return self._parse(payload)
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise ProviderError(f"{self.name}: unexpected reply shape ({exc!r}): {_excerpt(payload)}") from exc

    def _post(self, request: HttpRequest) -> Mapping[str, Any]:
        httpx = self._httpx
        url = f"{self.base_url}{request.path}"
        attempt = 0
        while True:
            retry_after: float | None = None
            try:
                response = self._client.post(url, json=request.body, headers=request.headers)
            except httpx.TimeoutException as exc:
                problem, cause = f"timed out calling {url}", exc
            except httpx.TransportError as exc:
                problem, cause = f"cannot reach {url}: {exc}", exc
            else:
                if response.status_code < 400:
                    try:
                        return response.json()
                    except ValueError as exc:
                        raise ProviderError(f"{self.name}: reply from {url} is not JSON: {response.text[:200]!r}") from exc
                problem = f"HTTP {response.status_code} from {url}: {response.text[:300]}"
                cause = None
                if response.status_code not in RETRYABLE_STATUS:
                    raise ProviderError(f"{self.name}: {problem}")
                retry_after = _retry_after(response.headers.get("retry-after"))
            if attempt >= self.max_retries:
                tries = "1 attempt" if attempt == 0 else f"{attempt + 1} attempts"
                raise ProviderError(f"{self.name}: {problem} (gave up after {tries})") from cause
            delay = retry_after if retry_after is not None else self.backoff_s * (2**attempt) * (0.5 + random.random())
            delay = min(delay, self.max_backoff_s)
            log.warning("%s: %s; retrying in %.2fs", self.name, problem, delay)
            self._sleep(delay)
            attempt += 1

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> HttpChatProvider:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (only the delta-seconds form is honoured)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def _excerpt(payload: Any) -> str:
    try:
        return json.dumps(payload)[:300]
    except (TypeError, ValueError):
        return repr(payload)[:300]


def decode_arguments(raw: Any) -> dict[str, Any]:
    """Tool-call arguments as a dict; they travel as JSON text, which a model may malform."""
    if isinstance(raw, Mapping):
        return dict(raw)
    if raw in (None, ""):
        return {}
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        # Keep the raw text so the tool can answer with a clear error instead of the turn failing.
        return {"_raw": raw}
    return value if isinstance(value, dict) else {"_raw": raw}


def encode_arguments(raw: Any) -> str:
    """Tool-call arguments as the JSON text ``ToolCall`` keeps: the model's own order and characters
    (a provider that sends an object, not text, gets it written once, keys unsorted and non-ASCII
    kept), so the history shows the call as the model made it."""
    if isinstance(raw, str):
        return raw or "{}"
    return json.dumps(raw if raw is not None else {}, ensure_ascii=False)
