"""Google Gemini embeddings: ``POST {base_url}/v1beta/models/{model}:batchEmbedContents``.

Request ``{"requests": [{"model": "models/{model}", "content": {"parts": [{"text"}]}}]}`` with the
key in the ``x-goog-api-key`` header (not the ``?key=`` parameter, so it never appears in a URL);
response ``{"embeddings": [{"values": [...]}]}``.
"""

from __future__ import annotations

from typing import Any

from engram.embed._http import HTTPProvider, need_dims
from engram.embed.base import EmbeddingIdentity
from engram.embed.settings import key_variables
from engram.provider_keys import refuse_missing_key

DEFAULT_MODEL = "text-embedding-004"
DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
KNOWN_DIMS = {"text-embedding-004": 768, "embedding-001": 768, "gemini-embedding-001": 3072}


class GeminiProvider(HTTPProvider):
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
        base_url = base_url or DEFAULT_BASE_URL
        # The rule the chat providers follow: a key at the service's own address, none needed at a server of one's own.
        refuse_missing_key("embeddings", "gemini embedding", api_key=api_key, base_url=base_url,
                           default_base_url=DEFAULT_BASE_URL, key_variables=key_variables("gemini"))
        model = (model or DEFAULT_MODEL).removeprefix("models/")
        size = need_dims("gemini", model, dims, KNOWN_DIMS)
        self.identity = EmbeddingIdentity("gemini", model, size)
        self._output_dims = size if dims is not None and KNOWN_DIMS.get(model) != dims else None
        super().__init__(
            base_url=base_url, timeout_s=timeout_s, headers={"x-goog-api-key": api_key} if api_key else {}
        )

    def embed_batch(self, texts: list[str]) -> list[list[float]]:
        name = f"models/{self.identity.model}"
        requests = []
        for text in texts:
            req: dict[str, Any] = {"model": name, "content": {"parts": [{"text": text}]}}
            if self._output_dims is not None:
                req["outputDimensionality"] = self._output_dims
            requests.append(req)
        data = self._post(f"{self.base_url}/v1beta/{name}:batchEmbedContents", {"requests": requests})
        try:
            return [e["values"] for e in data["embeddings"]]
        except (KeyError, TypeError) as exc:
            raise self._malformed("expected embeddings[].values") from exc
