"""The Embedder's own duties with a small in-process provider (a real implementation of the
protocol: hashed bag of words), where no server is needed to show them."""

from __future__ import annotations

import numpy as np
import pytest

from engram.embed import Embedder, EmbeddingIdentity, EmbeddingProvider
from engram.errors import EmbeddingError, ValidationError
from engram.testing.provider_servers import bag_of_words_vector


class BagOfWords:
    def __init__(self, dims: int = 16, scale: float = 3.0) -> None:
        self.identity = EmbeddingIdentity("bow", "hashed", dims)
        self.scale = scale
        self.batches: list[list[str]] = []

    def embed_batch(self, texts: list[str]) -> list[list[float]]:
        self.batches.append(list(texts))
        return [[x * self.scale for x in bag_of_words_vector(t, self.identity.dims)] for t in texts]


def test_provider_satisfies_the_protocol():
    assert isinstance(BagOfWords(), EmbeddingProvider)


def test_rows_are_normalised_and_duplicates_embedded_once():
    p = BagOfWords()
    out = Embedder(p).embed(["a b", "c", "a b"])
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0)
    assert np.array_equal(out[0], out[2]) and sorted(p.batches[0]) == ["a b", "c"] and len(p.batches) == 1


def test_empty_input_and_bad_input():
    emb = Embedder(BagOfWords())
    assert emb.embed([]).shape == (0, 16)
    with pytest.raises(ValidationError):
        emb.embed("not a list")
    with pytest.raises(ValidationError, match=r"texts\[1\]"):
        emb.embed(["ok", 3])
    with pytest.raises(ValidationError):
        Embedder(BagOfWords(), batch_size=0)


def test_non_finite_or_missing_vectors_are_refused():
    class Broken(BagOfWords):
        def embed_batch(self, texts):
            return [[float("nan")] * 16 for _ in texts[:-1]] + [[0.0] * 16]

    with pytest.raises(EmbeddingError, match="NaN"):
        Embedder(Broken()).embed(["a", "b"])

    class Short(BagOfWords):
        def embed_batch(self, texts):
            return [[1.0] * 16]

    with pytest.raises(EmbeddingError, match="for 2 texts"):
        Embedder(Short()).embed(["a", "b"])
