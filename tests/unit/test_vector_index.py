"""The SQLite store's vector caches: the HNSW index beside the file and the exact matrix below it.

Small thresholds make a few dozen vectors take the approximate path; the other process is a
real subprocess writing the same database file.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from engram.db import migrate as migrate_module
from engram.db.sqlite import Database
from engram.model import MemoryFilter, Scope, make_draft
from engram.store import ann
from engram.store.index_settings import VectorIndexSettings
from engram.store.sqlite import SqliteMemoryStore

pytest.importorskip("usearch")

IDENTITY = "fake:test:16"
ALL = MemoryFilter(scopes=(Scope(),))
SMALL = VectorIndexSettings(threshold=0, merge_after=8)


def draft(content: str, key: str | None = None, scope: Scope = Scope()):
    return make_draft(content, key=key, scope=scope, max_content_chars=8000)


def vec(seed: int, dims: int = 16) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=dims).astype(np.float32)
    return v / np.linalg.norm(v)


def add(store: SqliteMemoryStore, n: int, start: int = 0, identity: str = IDENTITY, dims: int = 16) -> list[str]:
    ids = []
    for i in range(start, start + n):
        memory = store.upsert(draft(f"memory number {i}", key=f"k{i}"), proposed_key=f"k{i}", now=1.0).memory
        ids.append(memory.id)
    store.set_vectors(identity, [(memory_id, vec(start + j, dims)) for j, memory_id in enumerate(ids)])
    return ids


def top_ids(store: SqliteMemoryStore, query: np.ndarray, limit: int = 5) -> list[str]:
    return [memory.id for memory, _ in store.search_vector(query, ALL, limit=limit)]


def sidecar(tmp_path) -> dict:
    return json.loads((tmp_path / "memory.db.usearch.json").read_text())


def test_large_store_searches_the_saved_graph_and_a_fresh_handle_reuses_it(tmp_path):
    store = SqliteMemoryStore(tmp_path / "memory.db", vector_index=SMALL)
    ids = add(store, 40)
    assert top_ids(store, vec(7))[0] == ids[7]
    assert store._vectors.approximate
    assert sidecar(tmp_path)["covered"] == 40 and sidecar(tmp_path)["identity"] == IDENTITY
    store.close()

    again = SqliteMemoryStore(tmp_path / "memory.db", vector_index=SMALL)
    assert top_ids(again, vec(21))[0] == ids[21]
    assert again._vectors._graph is not None and again._vectors._graph.view  # mapped, not rebuilt
    again.close()


def test_catches_up_after_another_process_wrote(tmp_path):
    store = SqliteMemoryStore(tmp_path / "memory.db", vector_index=SMALL)
    add(store, 30)
    top_ids(store, vec(0))  # builds and saves the graph
    script = textwrap.dedent(f"""
        import sys
        sys.path[:0] = {sys.path!r}
        from tests.unit.test_vector_index import add, SMALL
        from engram.store.sqlite import SqliteMemoryStore
        other = SqliteMemoryStore({str(tmp_path / "memory.db")!r}, vector_index=SMALL)
        print(",".join(add(other, 3, start=100)))
        other.close()
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    new_ids = done.stdout.strip().split(",")
    # Three new rows stay in the exact delta (below merge_after) until more arrive.
    assert top_ids(store, vec(101))[0] == new_ids[1]
    assert sidecar(tmp_path)["covered"] == 30
    more = add(store, 10, start=200)
    assert top_ids(store, vec(205))[0] == more[5]
    assert sidecar(tmp_path)["covered"] == 43  # the delta reached merge_after and joined the graph
    store.close()


def test_a_move_by_a_process_that_exits_is_seen_by_the_new_owner_only(tmp_path):
    # The graph holds sequence numbers, not scopes: the store filters its candidates in SQL, so a
    # memory moved by a process that never searched is the new owner's at once, never the old one's.
    file = tmp_path / "memory.db"
    store = SqliteMemoryStore(file, vector_index=SMALL)
    add(store, 40)
    moved = store.upsert(draft("bob's note", key="b0", scope=Scope("bob")), proposed_key="b0", now=1.0).memory.id
    store.set_vectors(IDENTITY, [(moved, vec(500))])
    bob, alice = MemoryFilter(scopes=(Scope("bob"),)), MemoryFilter(scopes=(Scope("alice"),))
    assert [m.id for m, _ in store.search_vector(vec(500), bob, limit=3)] == [moved]
    assert store._vectors.approximate  # answered through the saved graph
    store.close()
    script = textwrap.dedent(f"""
        import sys
        sys.path[:0] = {sys.path!r}
        from tests.unit.test_vector_index import SMALL
        from engram.model import Scope
        from engram.store.sqlite import SqliteMemoryStore
        other = SqliteMemoryStore({str(file)!r}, vector_index=SMALL)
        assert other.move({moved!r}, Scope("alice")) is not None
        other.close()
    """)
    subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    store = SqliteMemoryStore(file, vector_index=SMALL)
    try:
        assert [m.id for m, _ in store.search_vector(vec(500), alice, limit=3)] == [moved]
        assert store.search_vector(vec(500), bob, limit=3) == []
        assert store._vectors.approximate
    finally:
        store.close()


def test_deleted_and_replaced_vectors_are_never_returned(tmp_path):
    store = SqliteMemoryStore(tmp_path / "memory.db", vector_index=SMALL)
    ids = add(store, 40)
    top_ids(store, vec(0))
    # Delete one, change another's content (its vector is dropped), give a third a new vector.
    store.delete([ids[3]])
    store.upsert(draft("entirely new words", key="k4"), proposed_key="k4", now=2.0)
    store.set_vectors(IDENTITY, [(ids[5], vec(999))])
    assert ids[3] not in top_ids(store, vec(3), limit=40)
    assert ids[4] not in top_ids(store, vec(4), limit=40)
    hits = store.search_vector(vec(5), ALL, limit=40)
    assert ids[5] not in [m.id for m, _ in hits[:1]]
    assert top_ids(store, vec(999))[0] == ids[5]
    assert len(store.search_vector(vec(0), ALL, limit=100)) == 38  # every live vector, nothing stale
    store.close()


def test_many_deletes_by_another_handle_are_removed_then_rebuilt(tmp_path):
    store = SqliteMemoryStore(tmp_path / "memory.db", vector_index=SMALL)
    ids = add(store, 200)
    top_ids(store, vec(0))
    other = SqliteMemoryStore(tmp_path / "memory.db", vector_index=SMALL)
    other.delete(ids[:80])  # 40% of the graph: removed, then past rebuild_stale_share
    other.close()
    hits = top_ids(store, vec(0), limit=200)
    assert len(hits) == 120 and not set(hits) & set(ids[:80])
    graph = store._vectors._graph
    assert graph is not None and len(graph) == 120 and graph.meta.removed == 0  # rebuilt
    assert sidecar(tmp_path)["removed"] == 0
    store.close()


def test_identity_change_rebuilds(tmp_path):
    store = SqliteMemoryStore(tmp_path / "memory.db", vector_index=SMALL)
    ids = add(store, 20)
    top_ids(store, vec(1))
    old_epoch = sidecar(tmp_path)["epoch"]
    store.clear_vectors()
    assert top_ids(store, vec(1)) == []
    store.set_vectors("fake:other:8", [(memory_id, vec(50 + i, 8)) for i, memory_id in enumerate(ids)])
    assert top_ids(store, vec(1)) == []  # a 16-d query against 8-d vectors: nothing, not an error
    assert top_ids(store, vec(52, 8))[0] == ids[2]
    assert sidecar(tmp_path)["identity"] == "fake:other:8" and sidecar(tmp_path)["epoch"] != old_epoch
    store.close()


def test_selective_filter_falls_back_to_exact_search(tmp_path):
    store = SqliteMemoryStore(tmp_path / "memory.db", vector_index=SMALL)
    add(store, 300)
    lone = store.upsert(draft("the only session memory", scope=Scope("a", "s")), proposed_key="lone", now=1.0)
    store.set_vectors(IDENTITY, [(lone.memory.id, vec(0))])
    hits = store.search_vector(vec(0), MemoryFilter(scopes=(Scope("a", "s"),)), limit=3)
    assert [m.id for m, _ in hits] == [lone.memory.id]
    store.close()


def test_small_store_searches_exactly_and_catches_up_incrementally(tmp_path):
    store = SqliteMemoryStore(tmp_path / "memory.db")  # default threshold: exact
    ids = add(store, 10)
    assert top_ids(store, vec(4))[0] == ids[4]
    assert not store._vectors.approximate and not (tmp_path / "memory.db.usearch").exists()
    other = SqliteMemoryStore(tmp_path / "memory.db")
    more = add(other, 2, start=50)
    other.delete([ids[4]])
    other.close()
    assert top_ids(store, vec(51))[0] == more[1]
    assert ids[4] not in top_ids(store, vec(4), limit=20)
    store.close()


def test_migration_keeps_existing_vectors_and_gives_replacements_new_sequences(tmp_path, monkeypatch):
    path = tmp_path / "memory.db"
    everything = migrate_module.available
    monkeypatch.setattr(migrate_module, "available", lambda dialect: [m for m in everything(dialect) if m.version < 5])
    db = Database(path)
    migrate_module.migrate(db)
    with db.write() as conn:
        conn.execute("INSERT INTO memories (id, key, content, content_hash, category, type, layer, created_at, updated_at)"
                     " VALUES ('m1', 'k', 'c', 'h', 'core', 'learned', 'semantic', 1, 1)")
        conn.execute("INSERT INTO memory_vectors (memory_rowid, vector) VALUES (1, ?)", (vec(1).tobytes(),))
        conn.execute("INSERT INTO engram_meta (name, value) VALUES ('embedding_identity', ?)", (IDENTITY,))
    db.close()
    monkeypatch.setattr(migrate_module, "available", everything)
    store = SqliteMemoryStore(path)
    assert top_ids(store, vec(1)) == ["m1"]
    store.set_vectors(IDENTITY, [("m1", vec(2))])
    store.set_vectors(IDENTITY, [("m1", vec(3))])
    with store.db.read() as conn:
        assert conn.execute("SELECT seq FROM memory_vectors").fetchall() == [(3,)]
    store.close()


class HashedWords:
    """A tiny deterministic embedder: hashed bag of words (meaning is not the point here)."""

    identity = "fake:words:16"

    def embed(self, texts):
        out = np.zeros((len(texts), 16), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, sum(map(ord, word)) % 16] += 1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)

    def embed_query(self, text):
        return self.embed([text])[0]


def test_reindex_leaves_the_index_built_for_the_new_vectors(tmp_path):
    from engram.backends.sqlite import SqliteBackend
    from engram.engine import Engram

    store = SqliteMemoryStore(tmp_path / "memory.db", vector_index=SMALL)
    add(store, 12)
    top_ids(store, vec(0))
    # The backend builds the index after a reindex (as engram.root wires it for every door).
    engram = Engram(store, embedder=HashedWords(), backend=SqliteBackend(store))
    assert engram.reindex() == 12
    assert sidecar(tmp_path)["identity"] == "fake:words:16" and sidecar(tmp_path)["covered"] > 12
    hits = engram.recall("memory number 7", mode="vector", touch=False).hits
    assert hits and hits[0].memory.content == "memory number 7"
    store.close()


def test_a_narrow_time_range_is_searched_exactly_within_its_rows_and_scope(tmp_path, monkeypatch):
    # Rows 0-59 an hour apart, agents a and b alternating. A range holding 12 rows (6 of agent a)
    # answers with agent a's in-range rows by exact cosine, whatever the graph would have found;
    # an empty range answers nothing, on either side, without ranking the store.
    store = SqliteMemoryStore(tmp_path / "memory.db", vector_index=SMALL)
    ids, vectors = [], []
    for i in range(60):
        scope = Scope("a" if i % 2 == 0 else "b")
        memory = store.upsert(make_draft(f"walk number {i}", key=f"k{i}", scope=scope, max_content_chars=100,
                                         created_at=3600.0 * i), proposed_key=f"k{i}", now=3600.0 * i).memory
        ids.append(memory.id)
        vectors.append(vec(i))
    store.set_vectors(IDENTITY, list(zip(ids, vectors, strict=True)))
    query = vec(999)
    assert store.search_vector(query, MemoryFilter(scopes=(Scope("a"),)), limit=3)
    assert store._vectors.approximate  # the graph answers unbounded searches
    start, end = 3600.0 * 20, 3600.0 * 32  # rows 20..31
    walks = []
    real_search = ann.AnnIndex.search
    monkeypatch.setattr(ann.AnnIndex, "search", lambda self, *a, **k: walks.append(1) or real_search(self, *a, **k))
    for filt in (MemoryFilter(scopes=(Scope(), Scope("a")), happened_from=start, happened_before=end),
                 MemoryFilter(scopes=(Scope(), Scope("a")), since=start, until=end - 1)):
        found = store.search_vector(query, filt, limit=10)
        inside = [i for i in range(20, 32) if i % 2 == 0]
        want = sorted(inside, key=lambda i: -float(vectors[i] @ query))
        assert [m.id for m, _ in found] == [ids[i] for i in want]
        for (_, cosine), i in zip(found, want, strict=True):
            assert cosine == pytest.approx(float(vectors[i] @ query), abs=1e-5)
    assert not walks  # the range's rows were scored, not the graph walked
    empty = MemoryFilter(scopes=(Scope(), Scope("a")), happened_from=3600.0 * 100, happened_before=3600.0 * 200)
    assert store.search_vector(query, empty, limit=10) == []
    assert store.search_text("walk number", empty, limit=10) == []
    assert store.search_text("walk number", MemoryFilter(scopes=(Scope("a"),), happened_from=start,
                                                         happened_before=end), limit=10)
    store.close()


def test_exact_matrix_drops_deleted_and_replaced_rows_in_place(tmp_path):
    store = SqliteMemoryStore(tmp_path / "memory.db")  # default threshold: exact
    ids = add(store, 30)
    assert top_ids(store, vec(2))[0] == ids[2]
    matrix = store._vectors._exact
    other = SqliteMemoryStore(tmp_path / "memory.db")
    other.delete([ids[2], ids[9]])
    other.set_vectors(IDENTITY, [(ids[5], vec(777))])  # replaced: a new row, a new seq
    other.close()
    assert top_ids(store, vec(777))[0] == ids[5]
    found = top_ids(store, vec(2), limit=40)
    assert len(found) == 28 and ids[2] not in found and ids[9] not in found
    assert ids[5] not in top_ids(store, vec(5), limit=1)  # its old vector is gone
    # The same matrix, its stale rows dropped by seq: not every vector read again.
    assert store._vectors._exact is matrix and len(matrix) == 28
    store.close()


def test_vector_matrix_appends_in_place_and_keeps_what_is_asked():
    from engram.store.vectors import VectorMatrix

    grown, whole, rows = VectorMatrix(), VectorMatrix(), [vec(i) for i in range(40)]
    for start in range(0, 40, 3):
        grown.extend(list(range(start, min(start + 3, 40))), np.vstack(rows[start:start + 3]))
    whole.extend(list(range(40)), np.vstack(rows))
    assert grown.ids == whole.ids and np.array_equal(grown.matrix, whole.matrix)
    assert grown.top(vec(11), 5) == whole.top(vec(11), 5)
    grown.keep(set(range(0, 40, 2)))
    assert grown.ids == list(range(0, 40, 2)) and np.array_equal(grown.matrix, np.vstack(rows[::2]))
    assert [memory_id for memory_id, _ in grown.top(vec(11), 3)][0] != 11
    grown.keep(set())
    assert len(grown) == 0 and grown.top(vec(1), 3) == []
