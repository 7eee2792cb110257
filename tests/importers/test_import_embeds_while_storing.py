"""An import embeds its memories while another thread stores the rows (``engram.bulk``): on a real
SQLite file the outcome is what storing, announcing and then embedding gave. A vector belongs to
the stored text, a refused import stores and embeds nothing, a failing model keeps the rows, a
second run embeds nothing, and the events and progress are as before."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from engram.engine import Engram
from engram.errors import StorageError
from engram.events import MemoryEvent
from engram.store.sqlite import SqliteMemoryStore
from engram.testing import HashingEmbedder


def snapshot_of(tmp_path: Path, contents: list[str]) -> str:
    with Engram(SqliteMemoryStore(tmp_path / "source.db"), agent="a") as source:  # no embedder: no vectors
        source.remember_many([{"content": c} for c in contents])
        return source.export_snapshot()


def test_a_vector_is_of_the_stored_text_even_when_the_snapshot_says_otherwise(tmp_path: Path) -> None:
    document = snapshot_of(tmp_path, ["alpine lakes in june", "desert roads at night", "harbour cranes"])
    data = json.loads(document)
    embedder = HashingEmbedder()
    with Engram(SqliteMemoryStore(tmp_path / "target.db"), agent="a") as target:  # stored before, no vector
        target.import_snapshot(json.dumps({**data, "memories": data["memories"][:1]}))
    changed = {**data, "memories": [{**data["memories"][0], "content": "something else entirely"},
                                    *data["memories"][1:]]}
    with Engram(SqliteMemoryStore(tmp_path / "target.db"), agent="a", embedder=embedder) as target:
        result = target.import_snapshot(json.dumps(changed))
        assert (result.imported, result.skipped) == (2, 1)
        first = data["memories"][0]["id"]
        assert target.get(first).content == "alpine lakes in june"
        vectors = target.store.vectors_for([m["id"] for m in data["memories"]])
        assert len(vectors) == 3  # the kept memory is embedded too, by its own text
        assert np.allclose(vectors[first], embedder.embed(["alpine lakes in june"])[0])
        assert np.allclose(vectors[data["memories"][1]["id"]], embedder.embed(["desert roads at night"])[0])


def test_a_refused_import_stores_and_embeds_nothing(tmp_path: Path) -> None:
    document = snapshot_of(tmp_path, [f"fact {i} about tides" for i in range(300)])
    embedder = HashingEmbedder()

    def guard(reason: str) -> None:
        raise StorageError(f"no backup could be taken before the {reason}")

    with Engram(SqliteMemoryStore(tmp_path / "target.db"), agent="a", embedder=embedder, guard=guard) as target:
        with pytest.raises(StorageError, match="before the import"):
            target.import_snapshot(document)
        assert target.stats().memories == 0 and target.stats().vectors == 0


def test_a_failing_model_keeps_the_rows_and_their_event(tmp_path: Path) -> None:
    document = snapshot_of(tmp_path, [f"fact {i} about tides" for i in range(300)])
    embedder = HashingEmbedder()
    embedder.fail = True
    events: list[MemoryEvent] = []
    with Engram(SqliteMemoryStore(tmp_path / "target.db"), agent="a", embedder=embedder) as target:
        target.subscribe(events.append)
        assert target.import_snapshot(document).imported == 300
        assert target.stats().memories == 300 and target.stats().vectors == 0
        assert target.recall("fact 7 about tides", mode="text").hits
    assert [(e.kind, len(e.memories)) for e in events] == [("imported", 300)]


def test_a_second_run_embeds_nothing_and_every_memory_has_its_vector(tmp_path: Path) -> None:
    document = snapshot_of(tmp_path, [f"fact {i} about tides" for i in range(600)])
    embedder = HashingEmbedder()
    with Engram(SqliteMemoryStore(tmp_path / "target.db"), agent="a", embedder=embedder) as target:
        assert target.import_snapshot(document).imported == 600
        assert embedder.calls == 600 and target.stats().vectors == 600
        again = target.import_snapshot(document)
        assert (again.imported, again.skipped) == (0, 600) and embedder.calls == 600


def test_other_kinds_report_storing_then_embedding_and_announce_once(tmp_path: Path) -> None:
    items = [{"id": f"m{i}", "memory": f"fact {i} about tides", "user_id": "alex"} for i in range(300)]
    phases: list[tuple[str, int, int]] = []
    events: list[MemoryEvent] = []
    with Engram(SqliteMemoryStore(tmp_path / "target.db"), agent="a", embedder=HashingEmbedder()) as target:
        target.subscribe(events.append)
        summary = target.import_from(json.dumps({"results": items}), "mem0", progress=lambda *p: phases.append(p))
        assert summary.imported == 300 and target.stats().vectors == 300
    # Storing is reported done before any embedding (the rows may commit after the model's first
    # batches), then the embedding climbs to the whole import.
    assert phases[:2] == [("storing", 0, 300), ("storing", 300, 300)]
    embedding = phases[2:]
    assert {p[0] for p in embedding} == {"embedding"} and embedding[-1] == ("embedding", 300, 300)
    assert [p[1] for p in embedding] == sorted(p[1] for p in embedding)
    assert [(e.kind, len(e.memories), e.reason) for e in events] == [("imported", 300, "import from mem0")]
