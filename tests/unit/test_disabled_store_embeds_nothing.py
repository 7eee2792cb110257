"""Memory turned off (``backend = "disabled"``) keeps nothing, so no write runs the embedding
model: it used to embed every ``remember``, ``remember_many``, ``update`` and import for vectors
the store then dropped."""

from __future__ import annotations

import json

import pytest

from engram.engine import Engram
from engram.errors import NotFoundError
from engram.store.disabled import DisabledMemoryStore
from engram.testing.fakes import HashingEmbedder


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder()  # a real embedder; ``calls`` counts the texts it embedded


def test_writes_to_a_disabled_store_never_run_the_model(embedder: HashingEmbedder) -> None:
    mem = Engram(DisabledMemoryStore(), agent="alice", embedder=embedder)
    try:
        result = mem.remember("The staging server is called kestrel", key="staging", tags=["infra"])
        assert result.warnings == ("memory is disabled: nothing was stored",)
        assert result.memory.content == "The staging server is called kestrel" and mem.count() == 0
        many = mem.remember_many([{"content": "Deploys go out on Tuesdays"}, {"content": "Backups run nightly"}])
        assert [r.memory.content for r in many] == ["Deploys go out on Tuesdays", "Backups run nightly"]
        assert all("memory is disabled: nothing was stored" in r.warnings for r in many)
        assert mem.remember_soon("Queued without waiting").result(timeout=10).warnings
        with pytest.raises(NotFoundError):  # nothing is kept, so nothing is there to update
            mem.update("staging", content="The staging server is called osprey")
        assert mem.import_snapshot(json.dumps([{"content": "imported fact"}])).imported == 0
        assert mem.embed_missing() == 0 and mem.count() == 0
        assert embedder.calls == 0
        # The engine still holds its model (recall is asked about it); only the writer goes without.
        assert mem.embedder is not None and mem.writes.embedder is None
    finally:
        mem.close()


def test_a_store_that_keeps_memories_still_embeds_them(tmp_path, embedder: HashingEmbedder) -> None:
    from engram.store.sqlite import SqliteMemoryStore

    mem = Engram(SqliteMemoryStore(tmp_path / "memory.db"), agent="alice", embedder=embedder)
    try:
        mem.remember("The staging server is called kestrel")
        assert embedder.calls == 1 and mem.visible_stats().vectors == 1
    finally:
        mem.close()
