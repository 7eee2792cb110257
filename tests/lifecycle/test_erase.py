"""``forget(erase=True)``: a memory erased leaves nothing of its text anywhere engram keeps it. Its
audit rows keep their action, time, id and scope only (the ids are how an import knows not to
bring it back), its versions go, an ``erased`` row records the erase without content, and the
SQLite file (and its WAL) holds none of its bytes afterwards. A recall row's query is the user's and
stays. One agent's erase never touches another agent's memories or audit rows.

Real SQLite files, read byte by byte; the JSON-lines trail of the jsonfile backend; encryption on."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from engram.audit import AuditQuery
from engram.engine import Engram
from engram.errors import NotFoundError, ValidationError
from engram.model import Scope
from tests.cli_in_process import cli_output

# A word no tokenizer, stemmer or key maker shortens: its lower-case form is searched for in raw bytes.
SECRET = "Quixotrelliumz"
NEEDLE = SECRET.lower().encode()


def _open(home: Path, **settings: Any) -> Engram:
    return Engram.from_settings(home=home, embeddings={"provider": "none"}, **settings)


def _raw_holds(path: Path) -> list[str]:
    """The files under ``path`` whose bytes hold the secret (any case), named by their place."""
    return sorted(str(f.relative_to(path)) for f in path.rglob("*") if f.is_file() and NEEDLE in f.read_bytes().lower())


def _told(engram: Engram) -> str:
    """A memory holding the secret in every place a memory keeps text: content, key (made from the
    content), metadata, tags are the user's own words too; an update keeps the first text as a
    version; a link to another memory names its key in the other's rows; a recall names it."""
    told = engram.remember(f"my bank password hint is {SECRET} blue", metadata={"note": f"said {SECRET} twice"}).memory
    engram.update(told.id, content=f"my bank password hint is {SECRET} green")
    engram.remember("the weather was fine", key="weather")
    engram.link(told.id, "weather")
    assert engram.recall("password hint"), "recall finds it (and the trail records the recall)"
    return told.id


def test_an_erased_memory_leaves_no_byte_of_its_text_in_the_sqlite_file(tmp_path: Path) -> None:
    with _open(tmp_path) as engram:
        told = _told(engram)
        assert engram.versions(told), "the update kept the first text as a version"
        snapshot = engram.export_snapshot()
        assert _raw_holds(tmp_path), "before the erase the text is on disk (the test can see it)"
        erased = engram.forget(query=SECRET, erase=True, reason="user asked")
        assert [m.id for m in erased] == [told]
        rows = engram.audit_of(told)
        assert [r.action for r in rows] == ["stored", "updated", "linked", "forgotten", "erased"]
        assert all(r.memory_key is None and r.detail is None and r.memory_id == told for r in rows)
        assert all(r.memory_scope == "agent:default" for r in rows)
        assert rows[-1].reason == "user asked" and all(r.reason is None for r in rows[:-1])
        recalls = engram.backend.audit_log().query(AuditQuery(action="recalled"))
        assert recalls[0].detail["query"] == "password hint", "the query is the user's: kept"
        assert recalls[0].detail["results"][0] == {**recalls[0].detail["results"][0], "id": told, "key": None}
        weather = engram.audit_of(engram.get("weather").id)
        assert [r.detail for r in weather if r.action == "linked"] == [{"with": []}]
        with pytest.raises(NotFoundError):
            engram.versions(told)
        with engram.store.db.read() as conn:
            assert conn.execute("SELECT COUNT(*) FROM memory_versions").fetchone()[0] == 0
        dump = json.dumps([r.detail for r in engram.backend.audit_log().query(AuditQuery(limit=1000))])
        assert SECRET.lower() not in dump.lower()
        # An old snapshot holding it does not bring it back; the other memory is still there.
        result = engram.import_snapshot(snapshot)
        assert (result.imported, result.skipped) == (0, 2)
        assert [m.key for m in engram.list()] == ["weather"]
        assert engram.count() == 1
        with engram.store.db.read() as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        assert _raw_holds(tmp_path) == []


def test_a_dry_run_lists_and_erases_nothing(tmp_path: Path) -> None:
    with _open(tmp_path) as engram:
        told = _told(engram)
        would = engram.forget(query=SECRET, erase=True, dry_run=True)
        assert [m.id for m in would] == [told]
        assert engram.get(told).content.endswith(f"{SECRET} green")
        assert engram.audit_of(told)[0].detail["content"].endswith(f"{SECRET} blue")
        with pytest.raises(ValidationError) as refused:
            engram.forget(told, erase="perhaps")  # type: ignore[arg-type]
        assert refused.value.field == "erase"
        assert engram.get(told).id == told


def test_a_plain_forget_still_keeps_the_memory_in_the_trail_and_a_snapshot_restores_it(tmp_path: Path) -> None:
    with _open(tmp_path) as engram:
        told = _told(engram)
        snapshot = engram.export_snapshot()
        engram.forget(told)
        assert engram.audit_of(told)[-1].detail["content"].endswith(f"{SECRET} green")
        assert engram.import_snapshot(snapshot).imported == 1


def test_one_agent_erases_nothing_of_another(tmp_path: Path) -> None:
    with _open(tmp_path) as engram:
        alice, bob = engram.for_agent("alice"), engram.for_agent("bob")
        mine, theirs = _told(alice), _told(bob)
        assert alice.forget(query=SECRET, erase=True) and alice.list(limit=10)[0].key == "weather"
        assert bob.get(theirs).content.endswith(f"{SECRET} green")
        rows = bob.audit_of(theirs)
        assert [r.action for r in rows] == ["stored", "updated", "linked"]
        assert rows[0].detail["content"].endswith(f"{SECRET} blue") and rows[0].memory_key == theirs_key(bob, theirs)
        assert bob.backend.audit_log().query(AuditQuery(action="recalled", scopes=("agent:bob",)))[0] \
            .detail["results"][0]["key"] is not None
        assert [r.action for r in engram.audit_of(mine, every_agent=True)][-1] == "erased"
        with pytest.raises(NotFoundError):  # alice cannot name bob's memory
            alice.forget(theirs, erase=True)
        assert bob.get(theirs).id == theirs


def theirs_key(engram: Engram, memory_id: str) -> str:
    return engram.get(memory_id).key


def test_erase_with_encryption_on(tmp_path: Path) -> None:
    pytest.importorskip("sqlcipher3")
    with _open(tmp_path, privacy={"encryption_key": "correct horse battery"}) as engram:
        told = _told(engram)
        engram.forget(told, erase=True)
        assert all(r.detail is None and r.memory_key is None for r in engram.audit_of(told))
        assert [r.action for r in engram.audit_of(told)][-1] == "erased"
        assert _raw_holds(tmp_path) == []
    with _open(tmp_path, privacy={"encryption_key": "correct horse battery"}) as engram:
        assert [m.key for m in engram.list()] == ["weather"]


def test_erase_on_the_json_file_backend_rewrites_its_trail(tmp_path: Path) -> None:
    with _open(tmp_path, backend="jsonfile") as engram:
        told = _told(engram)
        engram.forget(told, erase=True)
        assert [r.action for r in engram.audit_of(told)][-1] == "erased"
    trails = list(tmp_path.rglob("*.audit.jsonl"))
    assert trails and all(NEEDLE not in t.read_bytes().lower() for t in trails)
    assert all(NEEDLE not in f.read_bytes().lower() for f in tmp_path.rglob("*.json"))


def test_the_memory_folder_entry_goes_with_it(tmp_path: Path) -> None:
    with _open(tmp_path, files={"enabled": True}) as engram:
        told = _told(engram)
        assert any(NEEDLE in f.read_bytes().lower() for f in tmp_path.rglob("*.md")), "the mirror held it"
        engram.forget(told, erase=True)
    assert not any(NEEDLE in f.read_bytes().lower() for f in tmp_path.rglob("*.md"))


def test_the_embedding_cache_forgets_the_vectors_of_its_texts(tmp_path: Path) -> None:
    """The cache keeps a hash of each text embedded and its vector, never the text: a hash confirms a
    guessed text, so an erase drops the rows of the memory's content and earlier contents."""
    from engram.embed.cache import text_key

    with Engram.from_settings(home=tmp_path, files={"enabled": False}) as engram:
        told = engram.remember(f"my hint is {SECRET} blue", search_context="asked at the bank").memory
        engram.update(told.id, content=f"my hint is {SECRET} green")
        engram.remember("the weather was fine", key="weather")
        texts = [f"my hint is {SECRET} {colour}{context}"
                 for colour in ("blue", "green") for context in ("", "\nasked at the bank")]
        cache = engram.embedder.cache

        def cached() -> int:
            with cache._lock:
                db = cache._db()
                return sum(db.execute("SELECT COUNT(*) FROM embedding_cache WHERE text_hash = ?", (text_key(t),))
                           .fetchone()[0] for t in [*texts, "the weather was fine"])

        assert cached() == 5
        engram.forget(told.id, erase=True)
        assert cached() == 1, "the weather's vector stays"
    hashes = [text_key(t) for t in texts]
    for file in tmp_path.glob("embedding-cache.db*"):
        assert not any(h in file.read_bytes() for h in hashes), file


def test_a_foreign_import_does_not_bring_an_erased_memory_back(tmp_path: Path) -> None:
    """Another system's export imported again (mem0's here) finds the erased memory's id among the
    forgotten: the ids an erase keeps are that record."""
    source = json.dumps({"results": [{"id": "a1", "memory": f"hint is {SECRET}", "user_id": "u1"},
                                     {"id": "a2", "memory": "Lives in Oslo", "user_id": "u1"}]})
    with _open(tmp_path) as engram:
        assert engram.import_from(source, "mem0").imported == 2
        u1 = engram.for_agent("u1")
        [erased] = u1.forget(query=SECRET, erase=True)
        assert all(r.detail is None for r in u1.audit_of(erased.id))
        again = engram.import_from(source, "mem0")
        assert (again.imported, again.forgotten) == (0, 1), again
        assert [m.content for m in u1.list()] == ["Lives in Oslo"]
    assert _raw_holds(tmp_path) == [], "closed: the WAL folded into the file, which holds none of it"


@pytest.mark.parametrize("backend", ["sqlite", "jsonfile"])
def test_the_rows_of_the_agents_sessions_are_erased_too_and_no_other_agents(tmp_path: Path, backend: str) -> None:
    """A recall made in one of the agent's sessions names the memory's key in a row of that session's
    scope; an erase from the agent's own view rewrites it (its query kept). Bob's session, with an
    agent name alice's is a prefix of (and a "_", LIKE's wildcard), keeps his row whole."""
    with _open(tmp_path, backend=backend) as engram:
        alice = engram.for_agent("al_ce")
        told = alice.remember(f"my hint is {SECRET}").memory
        assert alice.for_session("chat1").recall("hint")
        bob = engram.for_agent("alxce")
        bob.remember(f"my hint is {SECRET}")
        assert bob.for_session("chat1").recall("hint")
        alice.forget(told.id, erase=True)
        trail = engram.backend.audit_log()
        [mine] = trail.query(AuditQuery(action="recalled", scopes=("session:al_ce/chat1",)))
        assert mine.detail["query"] == "hint" and mine.detail["results"][0]["key"] is None
        [theirs] = trail.query(AuditQuery(action="recalled", scopes=("session:alxce/chat1",)))
        assert SECRET.lower() in theirs.detail["results"][0]["key"]


def test_with_a_database_per_agent_only_the_erasing_agents_file_is_touched(tmp_path: Path) -> None:
    with _open(tmp_path, per_agent_databases=True) as engram:
        alice, bob = engram.for_agent("alice"), engram.for_agent("bob")
        told = _told(alice)
        _told(bob)
        snapshot = alice.export_snapshot()
        alice.forget(told, erase=True)
        assert [(r.action, r.detail) for r in alice.audit_of(told)][-2:] == [("forgotten", None), ("erased", None)]
        assert alice.import_snapshot(snapshot).imported == 0
    held = _raw_holds(tmp_path)
    assert held and all("bob" in place for place in held), held


def test_an_erase_in_a_store_of_many_leaves_no_byte_of_texts_written_long_before(tmp_path: Path) -> None:
    """Hundreds of memories around the erased one, which was updated after they were stored (its
    earlier texts were rewritten in pages it shares with kept memories, and page splits left copies
    of its cells in pages that hold none of its rows), its words in the full-text index's segments.
    The first erase on a file vacuums it (a file engram wrote before it zeroed what writes free
    holds such copies in its free space), and every kept memory is still there, found by its words.
    Later erases: ``test_a_later_erase_zeroes_what_it_deletes_without_rebuilding_the_file``."""
    words = "deploy server cache budget invoice meeting garden recipe flight hotel doctor lesson".split()
    with _open(tmp_path) as engram:
        engram.remember_many([{"content": f"note {i}: " + " ".join(words[(i + j) % 12] for j in range(8 + i % 30)),
                               "key": f"a{i}"} for i in range(300)])
        told = engram.remember(f"my bank password hint is {SECRET} blue", search_context=f"asked about {SECRET}").memory
        engram.remember_many([{"content": f"later {i}: " + " ".join(words[(i * 7 + j) % 12] for j in range(8 + i % 30)),
                               "key": f"b{i}"} for i in range(300)])
        engram.update(told.id, content=f"my bank password hint is {SECRET} green and a good deal longer now")
        engram.update(told.id, content=f"my {SECRET} short")
        assert engram.recall("password hint") and _raw_holds(tmp_path)
        engram.forget(told.id, erase=True)
        with engram.store.db.read() as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        assert _raw_holds(tmp_path) == []
        assert engram.count() == 600 and engram.store.db.integrity_check() == "ok"
        assert {m.key for m in engram.list(limit=1000)} == {f"{side}{i}" for side in "ab" for i in range(300)}
        assert len(engram.recall("invoice meeting", limit=5)) == 5


def erase_a_key_another_agent_linked(engram: Engram) -> tuple[Engram, str]:
    """Bob links two global memories, one keyed ``plan`` (both global rows name the other's key);
    alice erases her own memory keyed ``plan`` too (keys are unique within a scope only). Returns
    bob's view and the id of the global memory whose link row names ``plan``."""
    alice, bob = engram.for_agent("alice"), engram.for_agent("bob")
    office = bob.remember("the office opens at nine", key="office", scope=Scope()).memory
    bob.remember("the launch is in March", key="plan", scope=Scope())
    bob.link("office", "plan")
    alice.forget(alice.remember(f"alice's own plan: {SECRET}", key="plan").memory.id, erase=True)
    return bob, office.id


@pytest.mark.parametrize("backend", ["sqlite", "jsonfile"])
def test_an_erase_leaves_another_agents_link_row_naming_a_global_memory_of_the_same_key(tmp_path: Path,
                                                                                        backend: str) -> None:
    """A global memory's link row names only global memories, so it never names alice's: her erase
    of her ``plan`` must not strip ``plan`` (bob's global memory, still stored) from the row that
    records bob linking it."""
    with _open(tmp_path, backend=backend) as engram:
        bob, office = erase_a_key_another_agent_linked(engram)
        assert [r.detail for r in bob.audit_of(office) if r.action == "linked"] == [{"with": ["plan"]}]
        assert bob.get_by_key("plan").content == "the launch is in March"


def test_an_erase_given_a_memory_record_works_from_what_the_store_holds(tmp_path: Path) -> None:
    """``forget`` takes a ``Memory`` as the caller hands it (its id and scope checked, not its key):
    an erase of alice's global notice handed in with the key ``plan`` must not strip ``plan`` from
    the row recording bob linking two global memories, and erases the notice's own key."""
    with _open(tmp_path) as engram:
        alice, bob = engram.for_agent("alice"), engram.for_agent("bob")
        office = bob.remember("the office opens at nine", key="office", scope=Scope()).memory
        bob.remember("the launch is in March", key="plan", scope=Scope())
        bob.link("office", "plan")
        notice = alice.remember(f"the notice board says {SECRET}", key="notice", scope=Scope()).memory
        alice.link(notice.id, "office")
        alice.forget(replace(notice, key="plan", content="a decoy"), erase=True)
        assert [r.detail for r in bob.audit_of(office.id) if r.action == "linked"] == [{"with": ["plan"]}]
        # Alice's link, its other end erased, names nothing bob may read: his view leaves it out
        # (``visibility.without_others_links``); the operator's record keeps it, the key gone.
        every = bob.audit_of(office.id, every_agent=True)
        assert [r.detail for r in every if r.action == "linked"] == [{"with": ["plan"]}, {"with": []}]
        assert all(r.memory_key is None and r.detail is None for r in alice.audit_of(notice.id))


def _use(monkeypatch: pytest.MonkeyPatch, module: Any) -> None:
    """Open plain files with the DB-API ``module`` (a SQLite other than engram's driver's)."""
    from engram.db import sqlite as sqlite_module

    monkeypatch.setattr(sqlite_module, "driver", module)
    monkeypatch.setattr(sqlite_module, "_DB_ERRORS", [*sqlite_module._DB_ERRORS, module.DatabaseError])


@pytest.fixture(params=["pysqlite3", "sqlite3"])
def sqlite_driver(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Plain files opened with ``pysqlite3`` (a recent SQLite, when installed) or the stdlib's
    ``sqlite3`` (often an older one): an erase leaves no byte on either."""
    if request.param == "pysqlite3":
        _use(monkeypatch, pytest.importorskip("pysqlite3.dbapi2"))
    else:
        import sqlite3

        _use(monkeypatch, sqlite3)
    return request.param


def _segments(engram: Engram) -> int:
    """How many segments the full-text index has (a merge leaves one)."""
    with engram.store.db.read() as conn:
        return conn.execute("SELECT COUNT(DISTINCT segid) FROM memories_fts_idx").fetchone()[0]


def test_a_later_erase_zeroes_what_it_deletes_without_rebuilding_the_file(tmp_path: Path, sqlite_driver: str) -> None:
    """Once a file has been scrubbed (the first erase vacuums it and marks it), a later erase costs
    no VACUUM: every write since zeroed what it freed (``PRAGMA secure_delete``), so the full-text
    index merge (every erase merges it: FTS5 keeps a deleted document's terms until its segments
    merge) and an emptied WAL leave no byte of the memory, its earlier texts (rewritten in pages
    shared with kept memories, copied by page splits), its search context or its full-text terms in
    any file of the folder. The file is not rebuilt: the pages freed by other forgets stay free,
    and most pages are as they were."""
    words = "deploy server cache budget invoice meeting garden recipe flight hotel doctor lesson".split()
    with _open(tmp_path) as engram:
        engram.remember_many([{"content": f"note {i}: " + " ".join(words[(i + j) % 12] for j in range(8 + i % 30)),
                               "key": f"a{i}"} for i in range(300)])
        engram.forget(engram.remember("a first thing to erase").memory.id, erase=True)
        told = engram.remember(f"my bank password hint is {SECRET} blue", search_context=f"asked about {SECRET}").memory
        engram.remember_many([{"content": f"later {i}: " + " ".join(words[(i * 7 + j) % 12] for j in range(8 + i % 30)),
                               "key": f"b{i}"} for i in range(300)])
        engram.update(told.id, content=f"my bank password hint is {SECRET} green and a good deal longer now")
        engram.update(told.id, content=f"my {SECRET} short")
        for i in range(200):  # frees pages, which a VACUUM would drop from the file (one by one: no backup)
            engram.forget(f"b{i}")
        assert engram.recall("password hint") and _raw_holds(tmp_path)
        assert _segments(engram) > 1
        with engram.store.db.read() as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        before = (tmp_path / "memory.db").read_bytes()
        engram.forget(told.id, erase=True)
        assert _raw_holds(tmp_path) == [], "the erase itself emptied the WAL"
        assert _segments(engram) == 1, "the erase merged the full-text index"
        after = (tmp_path / "memory.db").read_bytes()
        changed = sum(before[at:at + 4096] != after[at:at + 4096] for at in range(0, max(len(before), len(after)), 4096))
        # The merge rewrites the full-text index's pages (about a fifth here); a VACUUM, most of the file.
        assert changed < len(before) // 4096 // 2, "no VACUUM rewrote the file: most of its pages are as they were"
        with engram.store.db.read() as conn:
            assert conn.execute("PRAGMA freelist_count").fetchone()[0] > 0, "no VACUUM rebuilt the file"
        assert engram.store.db.integrity_check() == "ok"
        assert engram.count() == 400 and len(engram.recall("invoice meeting", limit=5)) == 5


def test_engram_vacuum_marks_the_file_so_a_later_erase_needs_no_vacuum_of_its_own(tmp_path: Path) -> None:
    """``engram vacuum`` rebuilds the file from its live rows, as the first erase's VACUUM does, and
    engram's writes since zero what they free: it marks the file (``zeroed_since``) as that VACUUM
    does. Unmarked, the erase after it vacuumed the whole file again. Here the erase leaves the free
    pages that forgets made since (no VACUUM rebuilt the file) and no byte of the secret anywhere."""
    with _open(tmp_path) as engram:
        engram.remember_many([{"content": f"note {i}: " + "filler words " * 40, "key": f"a{i}"} for i in range(200)])
        told = engram.remember(f"my bank password hint is {SECRET} blue").memory
    cli_output(tmp_path, "vacuum", env={"ENGRAM_EMBEDDINGS__PROVIDER": "none"})
    with _open(tmp_path) as engram:
        with engram.store.db.read() as conn:
            assert conn.execute("SELECT 1 FROM engram_meta WHERE name = 'zeroed_since'").fetchone() is not None
        for i in range(150):  # frees pages, which a VACUUM would drop from the file
            engram.forget(f"a{i}")
        with engram.store.db.read() as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            assert conn.execute("PRAGMA freelist_count").fetchone()[0] > 0
        engram.forget(told.id, erase=True)
        with engram.store.db.read() as conn:
            assert conn.execute("PRAGMA freelist_count").fetchone()[0] > 0, "the erase did not vacuum the file again"
        assert engram.store.db.integrity_check() == "ok" and engram.count() == 50
    assert _raw_holds(tmp_path) == []
