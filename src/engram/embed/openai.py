"""OpenAI embeddings (and any server speaking its wire format): ``POST {base_url}/embeddings``.

Request ``{"model", "input": [...]}`` (plus ``dimensions`` when a size other than the model's
native one is asked of a text-embedding-3 model), Bearer key; response ``{"data": [{"index",
"embedding"}]}``, re-ordered by ``index``.
"""

from __future__ import annotations

from typing import Any

from engram.embed._http import HTTPProvider, need_dims
from engram.embed.base import EmbeddingIdentity
from engram.embed.settings import key_variables
from engram.provider_keys import refuse_missing_key

DEFAULT_MODEL = "text-embedding-3-small"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
KNOWN_DIMS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}


class OpenAIProvider(HTTPProvider):
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
        refuse_missing_key("embeddings", "openai embedding", api_key=api_key, base_url=base_url,
                           default_base_url=DEFAULT_BASE_URL, key_variables=key_variables("openai"))
        model = model or DEFAULT_MODEL
        size = need_dims("openai", model, dims, KNOWN_DIMS)
        self.identity = EmbeddingIdentity("openai", model, size)
        # Only text-embedding-3 models accept a reduced size.
        self._dimensions = size if dims is not None and KNOWN_DIMS.get(model) != dims else None
        # No key (a server of one's own): no Authorization header, rather than "Bearer None".
        super().__init__(
            base_url=base_url, timeout_s=timeout_s, headers={"Authorization": f"Bearer {api_key}"} if api_key else {}
        )

    def embed_batch(self, texts: list[str]) -> list[list[float]]:
        body: dict[str, Any] = {"model": self.identity.model, "input": texts}
        if self._dimensions is not None:
            body["dimensions"] = self._dimensions
        data = self._post(f"{self.base_url}/embeddings", body)
        try:
            items = sorted(data["data"], key=lambda d: d["index"])
            return [item["embedding"] for item in items]
        except (KeyError, TypeError) as exc:
            raise self._malformed("expected data[].index/embedding") from exc
