"""Ollama embeddings: ``POST {base_url}/api/embed`` with ``{"model", "input": [...]}`` ->
``{"embeddings": [[...]]}``. No key; ``OLLAMA_HOST`` may be a bare ``host[:port]``.
"""

from __future__ import annotations

from typing import Any

from engram.embed._http import HTTPProvider, need_dims
from engram.embed.base import EmbeddingIdentity

DEFAULT_MODEL = "nomic-embed-text"
DEFAULT_BASE_URL = "http://localhost:11434"
KNOWN_DIMS = {
    "nomic-embed-text": 768,
    "mxbai-embed-large": 1024,
    "all-minilm": 384,
    "snowflake-arctic-embed": 1024,
    "bge-m3": 1024,
}


def normalise_host(host: str) -> str:
    """``0.0.0.0`` / ``myhost:1234`` / ``https://x`` -> a URL with scheme and port, like Ollama's CLI."""
    host = host.strip().rstrip("/")
    if "://" not in host:
        host = "http://" + host
    scheme, _, rest = host.partition("://")
    hostport, slash, path = rest.partition("/")
    if ":" not in hostport.rsplit("]", 1)[-1]:
        hostport += ":11434" if scheme == "http" else ":443"
    return f"{scheme}://{hostport}{slash}{path}"


class OllamaProvider(HTTPProvider):
    def __init__(
        self,
        *,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        dims: int | None = None,
        timeout_s: float = 30.0,
        **_: Any,
    ) -> None:
        model = model or DEFAULT_MODEL
        size = need_dims(
            "ollama", model, dims, {**KNOWN_DIMS, **{f"{k}:latest": v for k, v in KNOWN_DIMS.items()}}
        )
        self.identity = EmbeddingIdentity("ollama", model, size)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}  # for proxies that want one
        super().__init__(
            base_url=normalise_host(base_url or DEFAULT_BASE_URL), timeout_s=timeout_s, headers=headers
        )

    def embed_batch(self, texts: list[str]) -> list[list[float]]:
        data = self._post(f"{self.base_url}/api/embed", {"model": self.identity.model, "input": texts})
        try:
            return list(data["embeddings"])
        except (KeyError, TypeError) as exc:
            raise self._malformed("expected embeddings[[...]]") from exc
