"""File backends keep what they stored across reopening, and read the formats they promise."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from engram.engine import Engram
from engram.errors import DimensionError, SnapshotError, StorageError
from engram.ids import key_from_content
from engram.model import MemoryFilter, Scope, make_draft
from engram.store.base import BatchWrite
from engram.store.jsonfile import JsonFileMemoryStore
from engram.store.sqlite import SqliteMemoryStore
from engram.testing import HashingEmbedder

OPENERS = {
    "sqlite": lambda folder: SqliteMemoryStore(folder / "memory.db"),
    "jsonfile": lambda folder: JsonFileMemoryStore(folder / "memory.json"),
}


@pytest.mark.parametrize("backend", sorted(OPENERS))
def test_reopen_keeps_memories_links_versions_and_vectors(backend: str, tmp_path: Path) -> None:
    embedder = HashingEmbedder()
    with Engram(OPENERS[backend](tmp_path), agent="a", embedder=embedder) as mem:
        mem.remember("first version", key="k")
        mem.remember("second version", key="k")
        mem.remember("other", key="o", links=["k"])
    with Engram(OPENERS[backend](tmp_path), agent="a", embedder=embedder) as mem:
        assert mem.get("k").content == "second version"
        assert [v.content for v in mem.versions("k")] == ["first version"]
        assert [m.key for m in mem.neighbours("k")] == ["o"]
        assert mem.recall("second", mode="vector").hits[0].memory.key == "k"


def test_jsonfile_reads_ptrclaw_legacy_array(tmp_path: Path) -> None:
    path = tmp_path / "memory.json"
    path.write_text(json.dumps([
        {"id": "1", "key": "user-prefers-python", "content": "Prefers Python for scripting",
         "category": "knowledge", "timestamp": 1700000000, "session_id": "", "links": ["project-uses-python"]},
        {"id": "2", "key": "project-uses-python", "content": "Current project uses Python 3.12",
         "category": "knowledge", "timestamp": 1700000001, "session_id": "", "links": ["user-prefers-python"]},
    ]))
    mem = Engram(JsonFileMemoryStore(path), agent="a")
    hits = mem.recall("python scripting")
    assert hits.hits[0].memory.key == "user-prefers-python"
    assert [m.key for m in mem.neighbours("user-prefers-python")] == ["project-uses-python"]
    mem.remember("new entry")  # rewritten in engram's object format, atomically
    data = json.loads(path.read_text())
    assert data["format"] == "engram-jsonfile" and len(data["entries"]) == 3


def test_jsonfile_reads_ptrclaw_object_format(tmp_path: Path) -> None:
    path = tmp_path / "memory.json"
    path.write_text(json.dumps({
        "entries": [{"id": "1", "key": "k", "content": "kept", "category": "core", "timestamp": 5}],
        "embeddings": {"k": [0.1, 0.2, 0.3]},
    }))
    mem = Engram(JsonFileMemoryStore(path), agent="a")
    assert mem.get("k").content == "kept"


def test_jsonfile_refuses_malformed_file_without_touching_it(tmp_path: Path) -> None:
    path = tmp_path / "memory.json"
    path.write_text("{broken")
    with pytest.raises(SnapshotError) as err:
        JsonFileMemoryStore(path)
    assert "malformed JSON" in str(err.value)
    assert path.read_text() == "{broken"


def test_jsonfile_write_is_atomic(tmp_path: Path) -> None:
    path = tmp_path / "memory.json"
    mem = Engram(JsonFileMemoryStore(path), agent="a")
    mem.remember("one")
    assert [p.name for p in tmp_path.iterdir()] == ["memory.json"]  # no temp files left behind


def test_jsonfile_reads_back_more_tags_than_a_write_may_give_and_an_import_refuses_them(tmp_path: Path) -> None:
    # A store written before MAX_TAGS may hold more: it still opens with them all (no memory of it
    # lost, the file unchanged), while importing that file, as any document, refuses the entry by name.
    path = tmp_path / "memory.json"
    with Engram(JsonFileMemoryStore(path), agent="a") as mem:
        mem.remember("many tags", key="k", tags=["drink"])
        mem.remember("few tags", key="f", tags=["drink"])
    data = json.loads(path.read_text())
    data["entries"][0]["tags"] = [f"t{i}" for i in range(150)]
    path.write_text(json.dumps(data))
    with Engram(JsonFileMemoryStore(path), agent="a") as mem:
        assert len(mem.get("k").tags) == 150 and mem.get("f").tags == ("drink",)
    with Engram(SqliteMemoryStore(tmp_path / "memory.db"), agent="a") as target:
        with pytest.raises(SnapshotError) as refused:
            target.import_snapshot(path.read_text())
        assert str(refused.value).startswith("entries[0].tags: has more than 100 different tags (150 given)")
        assert target.count() == 0


def test_recall_cache_sees_writes_from_another_connection(tmp_path: Path) -> None:
    """Two processes (here: two connections) on one file: a cached recall is not served stale."""
    first = Engram(SqliteMemoryStore(tmp_path / "memory.db"), agent="a")
    second = Engram(SqliteMemoryStore(tmp_path / "memory.db"), agent="a")
    first.remember("Walrus facts", key="w1")
    assert [h.memory.key for h in first.recall("walrus")] == ["w1"]
    second.remember("More walrus facts", key="w2")
    assert {h.memory.key for h in first.recall("walrus")} == {"w1", "w2"}
    first.close()
    second.close()


def test_snapshot_import_embeds_in_batches_and_reports_progress(tmp_path: Path) -> None:
    with Engram(SqliteMemoryStore(tmp_path / "source.db"), agent="a") as source:  # no embedder: no vectors
        source.remember_many([{"content": f"fact number {i} about gardening"} for i in range(600)])
        document = source.export_snapshot()
    calls: list[tuple[int, int]] = []
    embedder = HashingEmbedder()
    with Engram(SqliteMemoryStore(tmp_path / "target.db"), agent="a", embedder=embedder) as target:
        result = target.import_snapshot(document, progress=lambda done, total: calls.append((done, total)))
        assert result.imported == 600
        assert target.stats().vectors == 600
        assert target.recall("fact number 7 about gardening", mode="vector").hits
    # One call per batch, each against the whole import, ending complete.
    assert [total for _, total in calls] == [600] * len(calls)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls) and calls[-1] == (600, 600)
    assert len(calls) == 3  # batches of 256: 256, 512, 600


def _replacements_of(path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every ``os.replace`` onto ``path`` from now on (the call still happens: this only watches)."""
    seen: list[str] = []
    real = os.replace

    def watched(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        if Path(dst) == path:
            seen.append(str(src))
        real(src, dst)

    monkeypatch.setattr(os, "replace", watched)
    return seen


def test_jsonfile_writes_a_batch_once_answering_each_write_in_its_place(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The write queue coalesces concurrent ``remember`` calls into one write_batch; the file used
    # to be rewritten whole after each change of each write (row, vector, link) of it.
    path = tmp_path / "memory.json"
    store = JsonFileMemoryStore(path)
    target = Engram(store, agent="alice").remember("the link target").memory
    replaced = _replacements_of(path, monkeypatch)
    good, bad = np.ones(4, dtype=np.float32), np.ones(5, dtype=np.float32)
    drafts = [make_draft(f"batch write {i}", max_content_chars=500, scope=Scope("alice")) for i in range(5)]
    writes = [BatchWrite(d, key_from_content(d.content), bad if i == 2 else good, links=(target.id,))
              for i, d in enumerate(drafts)]
    results = store.write_batch(writes, now=1000.0, identity="test:batch:4")
    assert len(replaced) == 1
    assert isinstance(results[2], DimensionError)  # its vector refused: its own error, the others kept
    assert [r.action for i, r in enumerate(results) if i != 2] == ["created"] * 4  # type: ignore[union-attr]
    # What write_batch acknowledged is on disk when it returns: a fresh store reads it back.
    reopened = JsonFileMemoryStore(path)
    everyone = MemoryFilter(scopes=(Scope("alice"),))
    assert {m.content for m in reopened.list(everyone, limit=100)} == \
        {m.content for m in store.list(everyone, limit=100)} >= {f"batch write {i}" for i in (0, 1, 3, 4)}
    kept = [r.memory.id for i, r in enumerate(results) if i != 2]  # type: ignore[union-attr]
    assert set(reopened.vectors_for(kept)) == set(kept)
    assert set(reopened.get_many([target.id])[0].links) >= set(kept)


def test_jsonfile_batch_that_cannot_be_written_keeps_none_of_it(tmp_path: Path) -> None:
    path = tmp_path / "memory.json"
    store = JsonFileMemoryStore(path)
    Engram(store, agent="alice").remember("before the batch")
    before = path.read_bytes()
    drafts = [make_draft(f"batch write {i}", max_content_chars=500, scope=Scope("alice")) for i in range(3)]
    aside = path.with_name("memory.json.aside")
    path.rename(aside)
    (path / "occupied").mkdir(parents=True)  # the file cannot be replaced, as on a full disk
    try:
        results = store.write_batch([BatchWrite(d, key_from_content(d.content)) for d in drafts],
                                    now=1000.0, identity=None)
    finally:
        (path / "occupied").rmdir()
        path.rmdir()
        aside.rename(path)
    assert all(isinstance(r, StorageError) for r in results)
    assert store.count(MemoryFilter(scopes=(Scope("alice"),))) == 1  # not kept in memory either
    assert path.read_bytes() == before


def test_a_store_in_memory_alone_does_not_copy_its_state_for_each_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    # Writing a batch once is the JSON file's need; it costs a copy of the whole state (to put back
    # when the one write fails). A store that writes nothing anywhere must not pay O(its size) per
    # batch of the write queue.
    from engram.store.inmemory import InMemoryMemoryStore

    store = InMemoryMemoryStore()
    copies: list[int] = []
    real = InMemoryMemoryStore._copy_state
    monkeypatch.setattr(InMemoryMemoryStore, "_copy_state", lambda self: copies.append(1) or real(self))
    drafts = [make_draft(f"batch write {i}", max_content_chars=500, scope=Scope("alice")) for i in range(3)]
    results = store.write_batch([BatchWrite(d, key_from_content(d.content)) for d in drafts], now=1000.0, identity=None)
    assert [r.action for r in results] == ["created"] * 3  # type: ignore[union-attr]
    assert copies == []


def _operations() -> dict[str, object]:
    def update(engram, kept, _other):  # noqa: ANN001, ANN202
        engram.remember("the kettle is in the attic now", key=kept.key)

    return {
        "store": lambda engram, _kept, _other: engram.remember("a fact the disk never took"),
        "update": update,
        "forget": lambda engram, kept, _other: engram.forget(kept.id),
        "link": lambda engram, kept, other: engram.link(kept.id, other.id),
        "recorded recall": lambda engram, kept, _other: engram.store.touch([kept.id], 2_000_000_000.0),
    }


@pytest.mark.parametrize("operation", list(_operations()))
def test_jsonfile_a_change_whose_save_failed_is_not_written_by_the_next_save(tmp_path: Path, monkeypatch, operation: str) -> None:
    """Outside a write batch (a job's update, a link, a forget, a recorded recall) a change whose
    file save failed was kept in memory, so the next save wrote what its caller was told had failed."""
    from engram.engine import Engram
    from engram.errors import StorageError
    from engram.store import jsonfile

    path = tmp_path / "memory.json"
    engram = Engram(JsonFileMemoryStore(path))
    kept = engram.remember("the kettle is in the cupboard", key="kettle").memory
    other = engram.remember("the teapot is blue").memory
    before = path.read_text(encoding="utf-8")
    written = jsonfile.atomic_write

    def full_disk(target: Path, content: str) -> None:
        raise StorageError(f"cannot write {target}: [Errno 28] No space left on device")

    monkeypatch.setattr(jsonfile, "atomic_write", full_disk)
    with pytest.raises(StorageError, match="No space left"):
        _operations()[operation](engram, kept, other)
    assert path.read_text(encoding="utf-8") == before
    monkeypatch.setattr(jsonfile, "atomic_write", written)
    later = engram.remember("a later fact").memory  # the next save
    engram.close()
    reopened = JsonFileMemoryStore(path)
    stored = {m.id: m for m in reopened.iter_all()}
    assert set(stored) == {kept.id, other.id, later.id}
    assert stored[kept.id].content == "the kettle is in the cupboard"
    assert stored[kept.id].links == () and stored[kept.id].recall_count == 0
