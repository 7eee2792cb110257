"""A tiny deterministic embedder for tests where the real model is not the point."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np


class HashedBagOfWords:
    """Each word adds 1 to a hashed dimension; similar wording gives similar vectors."""

    def __init__(self, dims: int = 64) -> None:
        self.dims = dims
        self.identity = f"fake:bag-of-words:{dims}"
        self.calls = 0

    def _one(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dims, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dims] += 1.0
        return vector

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        return np.vstack([self._one(t) for t in texts]) if texts else np.zeros((0, self.dims), np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._one(text)
