"""What the remote providers share: one httpx client, and HTTP failures mapped to the error tree.

A 429, a 5xx, a timeout or a dropped connection becomes :class:`TransientEmbeddingError` (the
:class:`~engram.embed.base.Embedder` retries it, honouring ``Retry-After``); any other 4xx becomes
:class:`~engram.errors.EmbeddingError` at once, carrying the provider's own message. Keys travel
in headers only, never in URLs, so they cannot leak into an exception or a log line.
"""

from __future__ import annotations

import email.utils
import json
import time
from typing import Any

import httpx

from engram.embed.base import EmbeddingIdentity, TransientEmbeddingError
from engram.errors import ConfigError, EmbeddingError


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _provider_message(resp: httpx.Response) -> str:
    try:
        body = resp.json()
    except ValueError:
        return resp.text[:300].strip() or resp.reason_phrase
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict):
        return str(err.get("message") or err)
    if err:
        return str(err)
    return json.dumps(body)[:300]


def need_dims(identity_provider: str, model: str, dims: int | None, known: dict[str, int]) -> int:
    """The vector size: the configured one, or the model's known size.

    Raises:
        ConfigError: the model is not known and no size was configured.
    """
    if dims is not None:
        return dims
    if model in known:
        return known[model]
    raise ConfigError(
        f"embedding model {model!r} of {identity_provider} has no known size: set embeddings.dims"
    )


class HTTPProvider:
    """Base of the remote providers: subclasses build a request and read a response."""

    identity: EmbeddingIdentity

    def __init__(self, *, base_url: str, timeout_s: float, headers: dict[str, str]) -> None:
        self.base_url = base_url.rstrip("/")
        self._client = httpx.Client(timeout=timeout_s, headers=headers)

    def close(self) -> None:
        self._client.close()

    def _post(self, url: str, body: dict[str, Any]) -> Any:
        ident = self.identity
        try:
            resp = self._client.post(url, json=body)
        except httpx.TimeoutException as exc:
            raise TransientEmbeddingError(f"{ident}: request timed out ({type(exc).__name__})") from exc
        except httpx.TransportError as exc:
            raise TransientEmbeddingError(
                f"{ident}: connection failed ({type(exc).__name__}: {exc})"
            ) from exc
        status = resp.status_code
        if status == 429 or status >= 500:
            raise TransientEmbeddingError(
                f"{ident}: HTTP {status}: {_provider_message(resp)}",
                status=status,
                retry_after=parse_retry_after(resp.headers.get("retry-after")),
            )
        if status >= 400:
            raise EmbeddingError(f"{ident}: HTTP {status}: {_provider_message(resp)}")
        try:
            return resp.json()
        except ValueError as exc:
            raise EmbeddingError(
                f"{ident}: HTTP {status} with a body that is not JSON: {resp.text[:120]!r}"
            ) from exc

    def _malformed(self, what: str) -> EmbeddingError:
        return EmbeddingError(f"{self.identity}: malformed response: {what}")
