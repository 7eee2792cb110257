"""The HNSW index finds what exact search finds, on real MiniLM embeddings of LoCoMo turns.

Embeddings come from the local model through the embedder's persistent cache (under
``$ENGRAM_TEST_CACHE_DIR``, default ``~/.cache/engram-tests``), so only the first run pays ~30 s.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from engram.model import MemoryFilter, Scope, make_draft
from engram.store.index_settings import VectorIndexSettings
from engram.store.sqlite import SqliteMemoryStore

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo-dev.json"
QUESTIONS = 200


def _texts() -> tuple[list[str], list[str]]:
    # bench/locomo.py is the project's one LoCoMo loader; bench/ is scripts, not a package.
    spec = importlib.util.spec_from_file_location("locomo", Path(__file__).resolve().parents[2] / "bench" / "locomo.py")
    assert spec is not None and spec.loader is not None
    locomo = importlib.util.module_from_spec(spec)
    sys.modules["locomo"] = locomo  # its dataclasses look their module up while being defined
    spec.loader.exec_module(locomo)
    conversations = locomo.load(DATA)
    turns = list(dict.fromkeys(turn.text for c in conversations for turn in c.turns))
    questions = [q.question for c in conversations for q in c.questions]
    return turns, questions[:: max(1, len(questions) // QUESTIONS)][:QUESTIONS]


@pytest.fixture(scope="module")
def embedder():
    pytest.importorskip("usearch")
    from engram.embed import Embedder, EmbeddingCache
    from engram.embed.local import LocalProvider, available_runtime

    if available_runtime() is None:
        pytest.skip("no local embedding runtime installed (pip install 'engram-recall[local]')")
    if not DATA.exists():
        pytest.skip(f"{DATA} is not here")
    folder = Path(os.environ.get("ENGRAM_TEST_CACHE_DIR", Path.home() / ".cache" / "engram-tests"))
    folder.mkdir(parents=True, exist_ok=True)
    return Embedder(LocalProvider(), cache=EmbeddingCache(folder / "embeddings.db"))


def test_recall_at_10_of_the_index_against_exact_search(tmp_path, embedder):
    turns, questions = _texts()
    vectors = embedder.embed(turns)
    queries = embedder.embed(questions)
    # Threshold 0: every vector goes through the HNSW graph, with the shipped ef and M.
    store = SqliteMemoryStore(tmp_path / "memory.db", vector_index=VectorIndexSettings(threshold=0))
    scope = Scope()
    ids = [
        store.upsert(make_draft(t, scope=scope, max_content_chars=8000), proposed_key=f"t{i}", now=1.0).memory.id
        for i, t in enumerate(turns)
    ]
    store.set_vectors(str(embedder.identity), list(zip(ids, vectors, strict=True)))
    store.sync_vector_index()
    assert store._vectors.approximate

    exact = np.argsort(-(queries @ vectors.T), axis=1)[:, :10]
    everything = MemoryFilter(scopes=(scope,))
    found = []
    for query, truth in zip(queries, exact, strict=True):
        got = {memory.id for memory, _ in store.search_vector(query, everything, limit=10)}
        found.append(len(got & {ids[i] for i in truth}) / 10)
    assert float(np.mean(found)) >= 0.97
    store.close()
