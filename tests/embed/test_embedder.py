"""The Embedder's own duties with a small in-process provider (a real implementation of the
protocol: hashed bag of words), where no server is needed to show them."""

from __future__ import annotations

import threading
import time

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


class GatedBagOfWords(BagOfWords):
    """Holds its first call until released, so concurrent callers pile up behind it."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.release = threading.Event()

    def embed_batch(self, texts: list[str]) -> list[list[float]]:
        self.entered.set()
        assert self.release.wait(30)
        return super().embed_batch(texts)


def test_concurrent_callers_share_one_model_call_and_each_gets_its_own_rows():
    provider = GatedBagOfWords()
    embedder = Embedder(provider, batch_size=64)
    expected = Embedder(BagOfWords())
    results: dict[int, np.ndarray] = {}

    def store(i: int) -> None:
        results[i] = embedder.embed([f"memory {i} alpha", f"memory {i} beta"])

    first = threading.Thread(target=store, args=(0,))
    first.start()
    assert provider.entered.wait(30)  # the first caller is inside the model
    others = [threading.Thread(target=store, args=(i,)) for i in range(1, 16)]
    for t in others:
        t.start()
    deadline = time.monotonic() + 30
    while embedder._documents.waiting < 15 and time.monotonic() < deadline:  # all 15 queued
        time.sleep(0.01)
    provider.release.set()
    for t in [first, *others]:
        t.join(30)
    # Two model calls in all: the first caller's, then the 15 that queued behind it as one batch.
    assert [len(b) for b in provider.batches] == [2, 30]
    for i in range(16):
        assert np.allclose(results[i], expected.embed([f"memory {i} alpha", f"memory {i} beta"]))


def test_a_failed_shared_call_fails_its_callers_and_not_the_next():
    class Flaky(BagOfWords):
        def embed_batch(self, texts: list[str]) -> list[list[float]]:
            if any("bad" in t for t in texts):
                raise EmbeddingError("the model refused")
            return super().embed_batch(texts)

    embedder = Embedder(Flaky())
    with pytest.raises(EmbeddingError, match="refused"):
        embedder.embed(["bad text"])
    assert embedder.embed(["good text"]).shape == (1, 16)
