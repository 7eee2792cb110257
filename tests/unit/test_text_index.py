"""Full text on large SQLite stores through the Tantivy index beside the file (store/text_index.py,
store/sqlite_text.py, store/bm25.py). ``index_threshold = 0`` makes a few hundred rows take the
path a million take; answers are compared with FTS5 ranking every match on the same real file,
and the other process is a real subprocess writing that file."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

from engram.model import MemoryFilter, Scope, make_draft
from engram.store import text_index
from engram.store.index_settings import FullTextSettings
from engram.store.sqlite import SqliteMemoryStore

pytest.importorskip("tantivy")

ALL = MemoryFilter(scopes=(Scope(),))
# The index on, proposing more candidates than these stores have matches (so the ranking must be
# FTS5's exactly), and FTS5's bounded ranking tight enough that it would drop rows.
INDEXED = FullTextSettings(index_threshold=0, index_candidates=500, max_ranked_rows=50)
EXACT = FullTextSettings(index_enabled=False, max_ranked_rows=0)


def draft(content: str, key: str, scope: Scope = Scope(), search_context: str | None = None):
    return make_draft(content, key=key, scope=scope, max_content_chars=2000, search_context=search_context)


def put(store: SqliteMemoryStore, content: str, key: str, scope: Scope = Scope(), **extra) -> str:
    return store.upsert(draft(content, key, scope, **extra), proposed_key=key, now=1_700_000_000.0).memory.id


@pytest.fixture
def path(tmp_path: Path) -> Path:
    """240 rows: half say 'talking'; twelve mention a rescued greyhound, and all but six of the
    rows say 'weekend' (as in test_full_text_bounds: bounded FTS5 ranks only the greyhound rows)."""
    file = tmp_path / "memory.db"
    store = SqliteMemoryStore(file)
    for i in range(240):
        words = [f"note{i}"] if i % 40 == 0 else ["weekend", f"note{i}"]
        if i % 2:
            words.append("talking about plans")
        if i % 20 == 0:
            words.append("adopted a rescued greyhound")
        if i % 7 == 0:
            words.append("weekend weekend hiking trip")
        put(store, " ".join(words), f"k{i}")
    store.close()
    return file


def search(path: Path, settings: FullTextSettings, query: str, filt: MemoryFilter = ALL,
           limit: int = 300) -> list[tuple[str, float]]:
    store = SqliteMemoryStore(path, full_text=settings)
    try:
        return [(m.key, score) for m, score in store.search_text(query, filt, limit=limit)]
    finally:
        store.close()


def same_ranking(got: list[tuple[str, float]], want: list[tuple[str, float]]) -> None:
    assert [key for key, _ in got] == [key for key, _ in want]
    for (_, a), (_, b) in zip(got, want, strict=True):
        assert a == pytest.approx(b, rel=1e-9)


@pytest.mark.parametrize("query", [
    "did they talk about adopting a greyhound this weekend?",
    "weekend hiking",
    "talking plans",
    "note7 note21 greyhound",
])
def test_large_store_ranks_like_fts5_ranking_every_match(path: Path, query: str) -> None:
    exact = search(path, EXACT, query, limit=20)
    assert exact
    same_ranking(search(path, INDEXED, query, limit=20), exact)
    assert (path.parent / "memory.db.tantivy").is_dir()


def test_with_few_candidates_every_score_is_still_fts5s(path: Path) -> None:
    # 30 candidates for a query matching 240 rows: which rows come back depends on Tantivy's own
    # BM25, but each one's score is FTS5's, and the clear best rows are found.
    query = "adopting a greyhound this weekend"
    exact = dict(search(path, EXACT, query))
    few = search(path, FullTextSettings(index_threshold=0, index_candidates=30), query, limit=10)
    assert len(few) == 10
    for key, score in few:
        assert score == pytest.approx(exact[key], rel=1e-9)
    assert [key for key, _ in few[:5]] == sorted(exact, key=lambda k: -exact[k])[:5]


def test_rows_holding_only_common_terms_are_ranked_too(path: Path) -> None:
    # Bounded FTS5 (max_ranked_rows=50) keeps only the twelve greyhound rows; the index path
    # proposes every row a term matches and scores each exactly.
    query = "did they talk about adopting a greyhound this weekend?"
    exact = search(path, EXACT, query)
    assert len(exact) == 240
    same_ranking(search(path, INDEXED, query), exact)


def test_vector_candidates_get_their_exact_text_scores(path: Path) -> None:
    query = "weekend hiking trip"
    indexed = SqliteMemoryStore(path, full_text=INDEXED)
    exact = SqliteMemoryStore(path, full_text=EXACT)
    try:
        ids = [m.id for m in exact.list(ALL, limit=240)]
        want = exact.text_scores(query, ids)  # FTS5's exact scores, for rows among its best 1,000
        got = indexed.text_scores(query, ids)
        indexed.search_text(query, ALL, limit=5)
        assert indexed._text_index._index is not None  # the index path answered
    finally:
        indexed.close()
        exact.close()
    assert set(got) == set(want) and len(got) > 100
    for memory_id, score in want.items():
        assert got[memory_id] == pytest.approx(score, rel=1e-9)


def test_rows_the_search_scored_are_not_scored_again_for_the_vector_side(path: Path, monkeypatch) -> None:
    # A hybrid recall scores the index's candidates, then the vector side's: rows among both are
    # scored once, and a commit in between (another connection) makes every row be scored again.
    from engram.store.bm25 import ExactBm25

    scored: list[list[int]] = []
    real = ExactBm25.scores

    def counting(self, conn, stems, rowids, doc_freq):
        scored.append(list(rowids))
        return real(self, conn, stems, rowids, doc_freq)

    monkeypatch.setattr(ExactBm25, "scores", counting)
    query = "weekend hiking trip"
    store = SqliteMemoryStore(path, full_text=FullTextSettings(index_threshold=0, index_candidates=30))
    exact = SqliteMemoryStore(path, full_text=EXACT)
    try:
        found = {m.id: score for m, score in store.search_text(query, ALL, limit=10)}
        first = set(scored[-1])
        assert len(first) == 30
        everyone = [m.id for m in exact.list(ALL, limit=240)]
        got = store.text_scores(query, everyone)
        assert len(scored) == 2 and not set(scored[-1]) & first and len(scored[-1]) == 240 - 30
        want = exact.text_scores(query, everyone)
        assert set(got) == set(want)
        for memory_id, score in want.items():
            assert got[memory_id] == pytest.approx(score, rel=1e-9)
        assert all(got[memory_id] == pytest.approx(score, rel=1e-9) for memory_id, score in found.items())
        # Another connection rewrites a row: the next scores are the new text's, every row scored again.
        changed = next(iter(found))
        exact.upsert(draft("nothing of the sort", exact.get(changed, ALL).key), proposed_key="x", now=1_800_000_000.0)
        again = store.text_scores(query, everyone)
        assert len(scored[-1]) == 240 and changed not in again
    finally:
        store.close()
        exact.close()


def test_one_agent_never_sees_another_agents_memories(tmp_path: Path) -> None:
    file = tmp_path / "memory.db"
    store = SqliteMemoryStore(file, full_text=INDEXED)
    # Agent b's 300 rows outscore agent a's three on every query term: a's rows are found only
    # once the search asks the index for a's scope (the unscoped best rows are all b's).
    for i in range(300):
        put(store, f"greyhound greyhound rescue shelter story {i}", f"b{i}", Scope("b"))
    for i in range(3):
        put(store, f"a long diary entry that mentions a greyhound once, entry {i}, among many other words",
            f"a{i}", Scope("a"))
    store.close()
    only_a = MemoryFilter(scopes=(Scope("a"),))
    got = search(file, INDEXED, "greyhound rescue", only_a, limit=5)
    assert sorted(key for key, _ in got) == ["a0", "a1", "a2"]
    same_ranking(got, search(file, EXACT, "greyhound rescue", only_a, limit=5))
    assert all(key.startswith("b") for key, _ in search(file, INDEXED, "greyhound", MemoryFilter(scopes=(Scope("b"),))))
    assert search(file, INDEXED, "greyhound", MemoryFilter(scopes=(Scope("c"),))) == []
    assert (tmp_path / "memory.db.tantivy").is_dir()  # answered through the index


def test_forgotten_and_superseded_memories_stay_out(path: Path) -> None:
    store = SqliteMemoryStore(path, full_text=INDEXED)
    try:
        store.search_text("greyhound", ALL, limit=5)  # index built
        gone = store.get("k20", ALL)
        old = store.get("k40", ALL)
        assert gone is not None and old is not None
        store.delete([gone.id])
        new = put(store, "a new note about the greyhound", "k40-new")
        store.set_superseded(old.id, new, now=1_700_000_100.0)
        keys = [m.key for m, _ in store.search_text("greyhound", ALL, limit=50)]
    finally:
        store.close()
    assert "k20" not in keys and "k40" not in keys and "k40-new" in keys
    assert (path.parent / "memory.db.tantivy").is_dir()


def test_memories_this_process_deletes_leave_the_index(path: Path) -> None:
    # A deleted memory's document would take a candidate slot until the next rebuild: the next
    # catch-up deletes it (from the index itself, not only from the answers).
    store = SqliteMemoryStore(path, full_text=FullTextSettings(index_threshold=0, index_candidates=10))
    try:
        store.search_text("greyhound", ALL, limit=5)  # index built
        index = store._text_index._index
        assert index is not None
        before = len(index)
        best = [m for m, _ in store.search_text("rescued greyhound", ALL, limit=5)]
        with store.db.read() as conn:
            rowids = [int(conn.execute("SELECT rowid FROM memories WHERE id = ?", (m.id,)).fetchone()[0])
                      for m in best]
        store.delete([m.id for m in best])
        after = [m for m, _ in store.search_text("rescued greyhound", ALL, limit=5)]
        assert len(index) == before - 5
        assert all(index.indexed_id(rowid) is None for rowid in rowids)
        assert len(after) == 5 and not {m.id for m in after} & {m.id for m in best}
    finally:
        store.close()


def _other_process(file: Path, body: str) -> str:
    script = textwrap.dedent(f"""
        import sys
        sys.path[:0] = {sys.path!r}
        from engram.model import MemoryFilter, Scope
        from engram.store.sqlite import SqliteMemoryStore
        from tests.unit.test_text_index import INDEXED, draft, put
        ALL = MemoryFilter(scopes=(Scope(),))
        store = SqliteMemoryStore({str(file)!r}, full_text=INDEXED)
    """) + textwrap.dedent(body) + "\nstore.close()\n"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_forgets_and_updates_by_another_process_are_seen(path: Path) -> None:
    store = SqliteMemoryStore(path, full_text=INDEXED)
    assert any(key == "k20" for key, _ in [(m.key, s) for m, s in store.search_text("greyhound", ALL, limit=50)])
    _other_process(path, """
        store.delete([store.get("k20", ALL).id])
        put(store, "adopted a rescued whippet instead", "k40")              # content replaced
        put(store, "a brand new memory about a lurcher", "fresh")          # a new row,
        assert store.search_text("lurcher", ALL, limit=1)                  # indexed here
        newest = store.get("fresh", ALL)
        store.delete([newest.id])                                          # the newest row, forgotten:
        put(store, "a saluki joined the family", "reused")                 # its rowid is used again
    """)
    def keys(query: str) -> list[str]:
        return [m.key for m, _ in store.search_text(query, ALL, limit=50)]
    try:
        assert "k20" not in keys("greyhound")
        # With a common word beside it, so the index's answer is never empty (an empty one falls
        # back to FTS5's prefix search, which would hide a stale index).
        assert "k40" not in keys("greyhound") and keys("whippet weekend")[0] == "k40"
        assert "fresh" not in keys("lurcher weekend") and keys("saluki weekend")[0] == "reused"
        assert store._text_index._index is not None  # answered through the index
    finally:
        store.close()


def test_rowids_reused_below_the_covered_one_are_found_and_indexed_again(path: Path) -> None:
    # Another process forgets the 30 newest rows and writes 10 new ones, which take 10 of their
    # rowids: the catch-up's bisection must find the first reused rowid, not only the covered one.
    store = SqliteMemoryStore(path, full_text=INDEXED)
    try:
        store.search_text("greyhound", ALL, limit=5)  # index built over every row
        index = store._text_index._index
        assert index is not None and len(index) == 240
        with store.db.read() as conn:
            newest = conn.execute("SELECT rowid, id, key FROM memories ORDER BY rowid DESC LIMIT 30").fetchall()
        lowest_reused = min(r for r, _, _ in newest)
        _other_process(path, f"""
            store.delete({[i for _, i, _ in newest]!r})
            for n in range(10):
                put(store, f"a borzoi called rover{{n}} came to stay", f"new{{n}}")
        """)
        meta = index.read_meta()
        with store.db.read() as conn:
            assert store._text_index._unchanged_up_to(conn, index, meta) == lowest_reused - 1
            reused = dict(conn.execute("SELECT rowid, id FROM memories WHERE key LIKE 'new%'").fetchall())
        assert sorted(reused) == list(range(lowest_reused, lowest_reused + 10))
        keys = [m.key for m, _ in store.search_text("borzoi weekend", ALL, limit=50)]
        assert {f"new{n}" for n in range(10)} <= set(keys)
        assert not {k for _, _, k in newest} & {m.key for m, _ in store.search_text("weekend", ALL, limit=300)}
        assert len(index) == 220
        assert all(index.indexed_id(rowid) == text_index.id_hash(id_) for rowid, id_ in reused.items())
        assert store._text_index._index is index  # answered through the index, caught up, not rebuilt
    finally:
        store.close()


def test_memories_another_process_forgets_leave_the_index(path: Path) -> None:
    # Before, only the process that forgot a memory deleted its document; one forgotten by a
    # command that exits stayed in the index (taking a candidate slot) until the next rebuild.
    store = SqliteMemoryStore(path, full_text=FEW)
    try:
        store.search_text("greyhound", ALL, limit=5)  # index built
        index = store._text_index._index
        assert index is not None
        before = len(index)
        forgotten = [store.get(key, ALL) for key in ("k20", "k60")]
        with store.db.read() as conn:
            rowids = [int(conn.execute("SELECT rowid FROM memories WHERE id = ?", (m.id,)).fetchone()[0])
                      for m in forgotten]
        _other_process(path, f"store.delete({[m.id for m in forgotten]!r})")
        keys = [m.key for m, _ in store.search_text("rescued greyhound", ALL, limit=5)]
        assert len(index) == before - 2
        assert all(index.indexed_id(rowid) is None for rowid in rowids)
        assert len(keys) == 5 and not {"k20", "k60"} & set(keys)
    finally:
        store.close()


def test_marks_the_index_has_taken_are_dropped(path: Path) -> None:
    def marks() -> list[int]:
        with store.db.read() as conn:
            return [r for (r,) in conn.execute("SELECT memory_rowid FROM memory_reindex ORDER BY seq")]

    store = SqliteMemoryStore(path, full_text=FEW)
    try:
        store.delete([store.get("k1", ALL).id])  # no index yet: a first build reads every row
        assert marks() == []
        store.search_text("weekend", ALL, limit=5)  # index built
        for key in ("k2", "k3", "k4"):
            store.delete([store.get(key, ALL).id])
            store.search_text("weekend", ALL, limit=5)  # each forget caught up
        assert marks() == [5]  # only the one not yet taken when it was written (rowid 5: k4)
    finally:
        store.close()


def test_search_context_change_in_this_process_is_seen(path: Path) -> None:
    store = SqliteMemoryStore(path, full_text=INDEXED)
    try:
        store.search_text("greyhound", ALL, limit=5)
        old = store.get("k3", ALL)
        assert old is not None
        store.upsert(draft(old.content, "k3", search_context="borzoi owners club"), proposed_key="k3",
                     now=1_700_000_200.0)
        assert [m.key for m, _ in store.search_text("borzoi", ALL, limit=5)] == ["k3"]
    finally:
        store.close()


FEW = FullTextSettings(index_threshold=0, index_candidates=10)


def test_a_move_by_a_process_that_exits_is_seen_by_the_new_owner_only(tmp_path: Path) -> None:
    # carol's 300 rows outscore the rest, so alice's rows are found only once the index is asked
    # for alice's scope; the moving process (engram sync, say) never searches before it exits.
    file = tmp_path / "memory.db"
    store = SqliteMemoryStore(file, full_text=FEW)
    for i in range(300):
        put(store, f"greyhound greyhound rescue shelter story {i}", f"c{i}", Scope("carol"))
    put(store, "alice once walked past a greyhound", "a0", Scope("alice"))
    moved = put(store, "a long diary entry that mentions a greyhound once among many other words", "b0", Scope("bob"))
    alice, bob = MemoryFilter(scopes=(Scope("alice"),)), MemoryFilter(scopes=(Scope("bob"),))
    assert [m.key for m, _ in store.search_text("greyhound", bob, limit=5)] == ["b0"]  # index built
    store.close()
    _other_process(file, f"assert store.move({moved!r}, Scope('alice')) is not None")
    got_alice = search(file, FEW, "greyhound", alice, limit=5)
    assert sorted(key for key, _ in got_alice) == ["a0", "b0"]
    same_ranking(got_alice, search(file, EXACT, "greyhound", alice, limit=5))
    assert search(file, FEW, "greyhound", bob, limit=5) == []
    assert (tmp_path / "memory.db.tantivy").is_dir()


def index_writes(monkeypatch) -> list[int | None]:
    """The ``replace_above`` of each write to the index from now on (0: every document replaced, a rebuild)."""
    writes: list[int | None] = []
    real_write = text_index.TextIndex.write

    def spy(self, rows, changed, *, replace_above=None, threads=1):
        writes.append(replace_above)
        return real_write(self, rows, changed, replace_above=replace_above, threads=threads)

    monkeypatch.setattr(text_index.TextIndex, "write", spy)
    return writes


def test_forgetting_a_moved_memory_does_not_rebuild_the_whole_index(path: Path, monkeypatch) -> None:
    # Its memory_reindex row goes with it (ON DELETE CASCADE); read as max(seq), the marks then
    # looked older than the index's (a database restored from a backup) and every row was indexed again.
    writes = index_writes(monkeypatch)
    store = SqliteMemoryStore(path, full_text=FEW)
    try:
        moved = store.get("k3", ALL)
        store.search_text("weekend", ALL, limit=5)  # index built
        assert store.move(moved.id, Scope("alice")) is not None
        store.search_text("weekend", ALL, limit=5)  # the move indexed
        writes.clear()
        store.delete([moved.id])
        store.search_text("weekend", ALL, limit=5)
        assert 0 not in writes  # (replace_above=0: every document replaced, a rebuild)
        alice = MemoryFilter(scopes=(Scope("alice"),))
        assert store.search_text("weekend", alice, limit=5) == []
    finally:
        store.close()


def test_forgetting_the_memory_with_the_newest_version_does_not_rebuild_the_whole_index(path: Path, monkeypatch) -> None:
    # Its versions go with it; read as max(rowid) of memory_versions, the database then looked
    # older than the index (restored from a backup) and every row was indexed again.
    writes = index_writes(monkeypatch)
    store = SqliteMemoryStore(path, full_text=FEW)
    try:
        put(store, "adopted a rescued whippet instead", "k40")  # memory_versions' only row
        store.search_text("weekend", ALL, limit=5)  # index built
        writes.clear()
        store.delete([store.get("k40", ALL).id])
        assert "k40" not in [m.key for m, _ in store.search_text("whippet weekend", ALL, limit=50)]
        assert writes and 0 not in writes
    finally:
        store.close()


def test_forgetting_the_memory_with_the_newest_vector_does_not_rebuild_the_whole_index(path: Path, monkeypatch) -> None:
    writes = index_writes(monkeypatch)
    store = SqliteMemoryStore(path, full_text=FEW)
    try:
        ids = [store.get(key, ALL).id for key in ("k1", "k2")]
        store.set_vectors("fake:test:4", [(memory_id, np.full(4, 0.5, dtype=np.float32)) for memory_id in ids])
        store.search_text("weekend", ALL, limit=5)  # index built
        writes.clear()
        store.delete([ids[1]])  # the newest memory_vectors row
        assert "k2" not in [m.key for m, _ in store.search_text("note2 weekend", ALL, limit=50)]
        assert writes and 0 not in writes
    finally:
        store.close()


def test_a_database_restored_from_an_older_backup_rebuilds_the_index(path: Path, monkeypatch) -> None:
    backup = path.with_name("backup.db")
    shutil.copyfile(path, backup)  # (closed: no -wal beside it)
    store = SqliteMemoryStore(path, full_text=FEW)
    try:
        store.search_text("weekend", ALL, limit=5)  # index built
        put(store, "adopted a rescued whippet instead", "k40")  # a version the backup has not
        store.search_text("weekend", ALL, limit=5)  # ... indexed
    finally:
        store.close()
    shutil.copyfile(backup, path)
    writes = index_writes(monkeypatch)
    assert search(path, FEW, "whippet weekend", limit=5) == search(path, EXACT, "whippet weekend", limit=5)
    assert writes == [0]  # every document replaced


def test_a_search_context_change_by_a_process_that_exits_is_seen(path: Path) -> None:
    search(path, FEW, "weekend", limit=5)  # index built
    _other_process(path, """
        old = store.get("k3", ALL)
        store.upsert(draft(old.content, "k3", search_context="borzoi owners club"), proposed_key="k3", now=1.8e9)
    """)
    assert search(path, FEW, "borzoi weekend", limit=5)[0][0] == "k3"


def test_a_lost_sidecar_rebuilds_without_duplicates(path: Path) -> None:
    query = "weekend hiking"
    first = search(path, INDEXED, query, limit=30)
    (path.parent / "memory.db.tantivy.json").unlink()
    same_ranking(search(path, INDEXED, query, limit=30), first)
    state = json.loads((path.parent / "memory.db.tantivy.json").read_text())
    assert state["covered"] == 240


def test_without_tantivy_large_stores_rank_with_fts5(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from engram.store import text_index

    monkeypatch.setattr(text_index, "available", lambda: False)
    query = "did they talk about adopting a greyhound this weekend?"
    got = search(path, INDEXED, query)
    assert len(got) == 12  # FTS5's bounded ranking: the greyhound rows
    assert not (path.parent / "memory.db.tantivy").exists()


def test_small_stores_keep_fts5(path: Path) -> None:
    search(path, FullTextSettings(), "greyhound")  # 240 rows: far below the default threshold
    assert not (path.parent / "memory.db.tantivy").exists()


def test_a_damaged_index_leaves_search_to_fts5(path: Path) -> None:
    query = "weekend hiking"
    want = search(path, INDEXED, query, limit=10)
    for file in (path.parent / "memory.db.tantivy").iterdir():
        if file.is_file():
            file.write_bytes(b"damaged")
    got = search(path, INDEXED, query, limit=10)
    assert [key for key, _ in got] == [key for key, _ in want]


def test_a_long_backlog_is_indexed_in_the_background_while_fts5_answers(path: Path, monkeypatch) -> None:
    # The first build of a large store (~1 min at 576k rows) must not happen inside a person's
    # search: that search is answered by FTS5 and the index is built by a thread meanwhile.
    from engram.store import sqlite_text

    monkeypatch.setattr(sqlite_text, "INLINE_ROWS", 10)
    monkeypatch.setattr(sqlite_text, "BUILD_DELAY_S", 0.0)
    store = SqliteMemoryStore(path, full_text=INDEXED)
    try:
        index = store._text_index
        first = [m.key for m, _ in store.search_text("rescued greyhound", ALL, limit=20)]
        assert sorted(first) == sorted(f"k{i}" for i in range(0, 240, 20))  # FTS5 answered, in full
        assert index._building.wait(0) or index._index is not None  # the build started
        for _ in range(600):
            if not index._building.is_set():
                break
            threading.Event().wait(0.05)
        assert not index._building.is_set()
        assert index.candidates(["rescued", "greyhound"], 50, store._own_writes) is not None  # built
        assert [m.key for m, _ in store.search_text("rescued greyhound", ALL, limit=20)] == [
            key for key, _ in search(path, EXACT, "rescued greyhound", limit=20)]
    finally:
        store.close()


def test_closing_the_store_cancels_a_build_not_yet_begun(path: Path, monkeypatch) -> None:
    from engram.store import sqlite_text

    monkeypatch.setattr(sqlite_text, "INLINE_ROWS", 10)
    monkeypatch.setattr(sqlite_text, "BUILD_DELAY_S", 0.3)
    store = SqliteMemoryStore(path, full_text=INDEXED)
    index = store._text_index
    store.search_text("rescued greyhound", ALL, limit=5)
    timer = index._timer
    assert timer is not None and index._building.is_set()
    store.close()
    timer.join(2)
    assert not timer.is_alive() and not (path.parent / "memory.db.tantivy.json").exists()
