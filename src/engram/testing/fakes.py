"""Deterministic stand-ins for time and embeddings, for tests where they are not the point."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from engram import text
from engram.embed.base import EmbeddingIdentity
from engram.errors import EmbeddingError


class FakeClock:
    """A clock tests move by hand: ``clock()`` returns the time, ``advance(s)`` moves it."""

    def __init__(self, start: float = 1_750_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class HashingEmbedder:
    """Bag-of-words vectors from hashed word tokens: texts sharing words are similar.

    ``fail = True`` makes every call raise ``EmbeddingError`` (to test fallbacks); ``calls``
    counts texts embedded.
    """

    def __init__(self, dims: int = 64, model: str = "hashing") -> None:
        self.identity = EmbeddingIdentity("test", model, dims)
        self.fail = False
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.fail:
            raise EmbeddingError("test embedder told to fail")
        self.calls += len(texts)
        out = np.zeros((len(texts), self.identity.dims), dtype=np.float32)
        for row, item in enumerate(texts):
            for word in text.words(item):
                if word in text.STOPWORDS:
                    continue
                digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
                out[row, int.from_bytes(digest, "big") % self.identity.dims] += 1.0
            norm = np.linalg.norm(out[row])
            if norm:
                out[row] /= norm
        return out

    def embed_query(self, query: str) -> np.ndarray:
        return self.embed([query])[0]
