"""The audit trail: every store, update, forget, link, unlink and import, on every backend."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import pytest

from engram.audit import AuditEntry, AuditQuery, MemoryAuditLog
from engram.errors import ValidationError
from engram.events import MemoryEvent
from engram.model import Memory, Scope
from tests.lifecycle.conftest import DAY


def test_every_change_is_recorded_with_origin_reason_and_what_was_forgotten(backend, make_engram, clock):
    engram = make_engram(backend)
    cli = engram.for_agent("default", origin="cli")
    cli.remember("first version", key="k")
    clock.advance(1)
    cli.remember("second version", key="k")
    cli.remember("other", key="o")
    cli.link("k", "o")
    cli.link("o", "k")  # already linked: nothing changed, nothing audited
    cli.unlink("k", "o")
    snapshot = cli.export_snapshot()
    clock.advance(1)
    cli.forget("k", reason="outdated preference")
    cli.forget("o")
    cli.import_snapshot(snapshot)
    log = engram.backend.audit_log()
    rows = log.query(AuditQuery(limit=100))
    actions = [r.action for r in reversed(rows)]
    assert actions == ["stored", "updated", "stored", "linked", "linked", "unlinked", "unlinked",
                       "forgotten", "forgotten", "imported", "imported"]
    assert {r.origin for r in rows} == {"cli"}
    forgotten = log.query(AuditQuery(action="forgotten", memory="k"))
    (entry,) = forgotten
    assert entry.reason == "outdated preference"
    assert entry.detail["content"] == "second version" and entry.detail["key"] == "k"
    assert entry.at == clock.t and entry.actor_scope == "agent:default" and entry.memory_scope == "agent:default"
    linked = log.query(AuditQuery(action="linked", memory="k"))
    assert linked[0].detail == {"with": ["o"]}


def test_queries_filter_by_time_origin_and_limit(make_engram, clock):
    engram = make_engram("sqlite")
    engram.remember("a", key="a")
    clock.advance(100)
    engram.for_agent("default", origin="mcp").remember("b", key="b")
    log = engram.backend.audit_log()
    assert [r.memory_key for r in log.query(AuditQuery(since=clock.t - 1))] == ["b"]
    assert [r.memory_key for r in log.query(AuditQuery(until=clock.t - 1))] == ["a"]
    assert [r.memory_key for r in log.query(AuditQuery(origin="mcp"))] == ["b"]
    assert len(log.query(AuditQuery(limit=1))) == 1


def test_bad_queries_are_refused(make_engram):
    log = make_engram("sqlite").backend.audit_log()
    with pytest.raises(ValidationError) as err:
        log.query(AuditQuery(action="deleted"))
    assert err.value.field == "action"
    with pytest.raises(ValidationError):
        log.query(AuditQuery(limit=0))


def test_jsonl_trail_survives_reopening_and_skips_a_torn_line(tmp_path):
    path = tmp_path / "memory.json.audit.jsonl"
    memory = Memory(id="1", key="k", content="c")
    MemoryAuditLog(path)(MemoryEvent("stored", (memory,), Scope("a"), "library", None, 5.0))
    with path.open("a") as handle:
        handle.write('{"at": 6.0, "action": "stor')  # a crash mid-line
    rows = MemoryAuditLog(path).query(AuditQuery())
    assert [(r.action, r.memory_key, r.at) for r in rows] == [("stored", "k", 5.0)]


def test_jsonl_trail_reads_back_a_key_holding_a_line_separator(tmp_path):
    # The row is written with the separator raw (ensure_ascii=False); reading split it in two and
    # skipped the row as torn.
    path = tmp_path / "memory.json.audit.jsonl"
    memory = Memory(id="1", key="notes\u2028draft\u0085two", content="c")
    MemoryAuditLog(path)(MemoryEvent("stored", (memory,), Scope("a"), "library", "why\u2029not", 5.0))
    rows = MemoryAuditLog(path).query(AuditQuery())
    assert [(r.memory_key, r.reason) for r in rows] == [("notes\u2028draft\u0085two", "why\u2029not")]


def test_recall_events_and_unknown_kinds_are_not_audited():
    log = MemoryAuditLog()
    log(MemoryEvent("recalled", (Memory(id="1", key="k", content="c"),), Scope(), "library"))
    assert log.query(AuditQuery()) == []


def test_operations_are_logged_as_structured_lines(tmp_path, caplog):
    import json
    import logging

    from engram.config import load_settings
    from engram.engine import Engram

    with caplog.at_level(logging.INFO, logger="engram.operations"):
        engram = Engram.from_settings(load_settings(home=tmp_path, backend="inmemory"))
        engram.remember("logged", key="l")
    (record,) = [r for r in caplog.records if r.name == "engram.operations"]
    line = json.loads(record.getMessage())
    assert line["event"] == "stored" and line["memories"][0]["key"] == "l" and line["origin"] == "library"


@pytest.mark.parametrize("kind", ["sqlite", "jsonfile"])
def test_the_read_trail_is_bounded_and_keeps_the_newest(kind, tmp_path, clock):
    # ClawCode audits "all memory access"; reads can be many, so only the newest max_entries stay.
    from engram.audit import PRUNE_EVERY, ReadTrail
    from engram.engine import Engram
    from engram.events import EventBus
    from tests.lifecycle.conftest import backend_for, open_store

    store = open_store(kind, tmp_path)
    events = EventBus()
    log = backend_for(kind, store, tmp_path).audit_log()
    events.subscribe(log)
    events.subscribe_reads(ReadTrail(log, max_entries=5))
    engram = Engram(store, clock=clock, events=events)
    try:
        engram.remember("tulip bulbs in the shed", key="tulips")
        for i in range(PRUNE_EVERY * 2):
            clock.advance(1)
            engram.recall(f"tulip {i}", mode="text")
        engram.recall("maintenance pass", background=True)  # a job's recall is no access
        reads = log.query(AuditQuery(action="recalled", limit=1000))
        assert len(reads) == 5
        assert [r.detail["query"] for r in reads] == [f"tulip {i}" for i in range(PRUNE_EVERY * 2 - 1, PRUNE_EVERY * 2 - 6, -1)]
        assert reads[0].detail["results"][0]["key"] == "tulips"
        assert [r.action for r in log.query(AuditQuery(action="stored"))] == ["stored"]  # changes never pruned
    finally:
        engram.close()


def test_concurrent_changes_are_committed_together_and_each_caller_waits_for_its_commit(make_engram):
    log = make_engram("sqlite").backend.audit_log()
    transactions: list[int] = []
    insert_now = log._insert_now

    def counted(rows: list[AuditEntry]) -> None:
        transactions.append(len(rows))
        insert_now(rows)

    log._insert_now = counted
    rows = [AuditEntry(float(i), "stored", "http", None, "agent:a", f"id{i}", f"k{i}", "agent:a") for i in range(8)]
    callers = [threading.Thread(target=log.insert, args=([row],)) for row in rows]
    with log.db.lock:  # the first caller's transaction waits here; the other seven queue behind it
        for caller in callers:
            caller.start()
        deadline = time.monotonic() + 10
        while log._inserts.waiting < 7 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert log._inserts.waiting == 7
        assert all(caller.is_alive() for caller in callers)  # nobody returned before a commit
    for caller in callers:
        caller.join(10)
    assert transactions == [1, 7]
    assert sorted(r.memory_key for r in log.query(AuditQuery(limit=100))) == sorted(r.memory_key for r in rows)


def test_a_failed_shared_insert_reaches_every_caller_of_its_transaction(make_engram):
    log = make_engram("sqlite").backend.audit_log()
    bad = AuditEntry(1.0, "stored", "http", None, "agent:a", "id", "k", "agent:a", {"x": {1, 2}})  # not JSON
    with pytest.raises(TypeError):
        log.insert([bad])
    log.insert([AuditEntry(2.0, "stored", "http", None, "agent:a", "id2", "k2", "agent:a")])
    assert [r.memory_key for r in log.query(AuditQuery())] == ["k2"]


def test_an_agents_trail_takes_times_as_every_time_field_does(backend, make_engram, clock):
    """``since``/``until``: epoch seconds, ISO 8601 in the user's zone, or a phrase as ``when``
    reads it (a day or period counts whole); a bad one names its field and changes nothing."""
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from engram.temporal.reader import TimeReader

    zone = ZoneInfo("Europe/Berlin")
    clock.t = datetime(2027, 1, 15, 12, 0, tzinfo=zone).timestamp()  # a Friday, noon in Berlin
    alice = make_engram(backend, time_reader=TimeReader(zone))
    alice.remember("three days back", key="old")
    clock.advance(2 * DAY)
    alice.remember("yesterday's note", key="yesterday")
    clock.advance(DAY)
    alice.remember("today's note", key="today")
    alice.for_agent("bob").remember("bob's note today", key="bob")

    def keys(**window: object) -> list[str]:
        return [e.memory_key for e in alice.audit_trail(**window)]

    assert keys() == ["today", "yesterday", "old"]  # bob's entry is not alice's to read
    assert keys(since="yesterday") == ["today", "yesterday"]
    assert keys(until="yesterday") == ["yesterday", "old"]  # all of yesterday, to its last instant
    assert keys(since="yesterday", until="yesterday") == ["yesterday"]
    assert keys(since="2027-01-17", until="2027-01-17T23:59") == ["yesterday"]  # ISO, read in Berlin
    assert keys(since="2027-01-18T00:00+01:00") == ["today"]
    assert keys(since=clock.t - 1) == keys(since=str(clock.t - 1)) == ["today"]  # epoch seconds
    assert keys(since="3 days ago", until="3 days ago") == ["old"]
    assert keys(since="last week") == ["today", "yesterday", "old"]
    for field, window, allowed in (("since", {"since": "soonish"}, "yesterday"),
                                   ("until", {"until": "2027-13-45"}, "ISO 8601"),
                                   ("since", {"since": "1e30"}, "9998"),
                                   ("until", {"since": "today", "until": "yesterday"}, "at or after since")):
        with pytest.raises(ValidationError) as err:
            alice.audit_trail(**window)
        assert err.value.field == field and allowed in str(err.value), window
    assert keys() == ["today", "yesterday", "old"]


def test_a_memorys_record_is_read_oldest_first_by_its_agent_or_every_agent(backend, make_engram, clock):
    """``Engram.audit_of``: one memory's rows, oldest first (rows of one instant in the order they
    were written), kept once it is forgotten; another agent reads none of them unless it asks with
    the operator's reach (``every_agent``, as the mem0 facade does for any owner's memory)."""
    alice = make_engram(backend).for_agent("alice")
    tea = alice.remember("I like tea", key="tea").memory
    alice.update(tea.id, metadata={"cups": 2})  # the same instant as the store
    clock.advance(1)
    alice.update(tea.id, content="I like green tea")
    alice.remember("keyed by tea's id", key=tea.id)  # a key equal to the id is another memory's
    alice.link(a_key="tea", b_key=tea.id)
    clock.advance(1)
    alice.forget(tea.id, reason="gone off it")
    rows = alice.audit_of(tea.id)
    assert [(r.action, r.memory_id) for r in rows] == [
        ("stored", tea.id), ("updated", tea.id), ("updated", tea.id), ("linked", tea.id), ("forgotten", tea.id)]
    assert rows[1].detail["changed"] == ["metadata"] and rows[-1].reason == "gone off it"
    bob = alice.for_agent("bob")
    assert bob.audit_of(tea.id) == []
    assert bob.audit_of(tea.id, every_agent=True) == rows
    for bad in ("", None, 5):
        with pytest.raises(ValidationError) as err:
            alice.audit_of(bad)  # type: ignore[arg-type]
        assert err.value.field == "memory"


def test_a_memory_handed_in_under_a_made_up_key_is_audited_under_its_stored_key(make_engram):
    # Review: link and unlink wrote their rows from the Memory records passed in, so an agent passing a
    # global memory with a made-up key wrote that key into the global trail every agent reads; an update
    # or replace of such a record stored a second memory under the made-up key.
    engram = make_engram()
    bob = engram.for_agent("bob")
    shared = bob.remember("The office opens at nine", key="office-hours", scope="global").memory
    own = bob.remember("Bob starts at ten", key="bob-start").memory
    later = bob.remember("The office opens at eight", key="office-hours-2", scope="global").memory
    fake = replace(shared, key="made-up", content="made-up content")
    assert bob.link(fake, replace(own, key="made-up-too"))
    assert bob.unlink(replace(own, key="made-up-too"), fake)
    bob.supersede(fake, replace(later, key="made-up-new"))
    log = engram.backend.audit_log()
    rows = log.query(AuditQuery(limit=100))
    assert not [r for r in rows if r.memory_key and r.memory_key.startswith("made-up")], rows
    linked = {r.memory_key: r.detail for r in rows if r.action in ("linked", "unlinked")}
    assert linked == {"office-hours": {"with": []}, "bob-start": {"with": ["office-hours"]}}
    # That is the stored record (the operator's). The global row of bob's link names nothing another
    # agent may read, so another agent's view leaves it out (``visibility.without_others_links``): it
    # would tell alice that something hidden from her was linked to the global memory. Bob reads it.
    assert not [r for r in engram.for_agent("alice").audit_trail(100) if r.action in ("linked", "unlinked")]
    assert sorted(r.memory_key for r in bob.audit_trail(100) if r.action in ("linked", "unlinked")) == [
        "bob-start", "bob-start", "office-hours", "office-hours"]
    (superseded,) = [r for r in rows if r.reason and r.reason.startswith("superseded")]
    assert superseded.memory_key == "office-hours" and superseded.reason == "superseded by office-hours-2"
    assert "made-up content" not in str(superseded.detail)
    # An update or replace of such a record changes the stored memory, under its own key.
    assert bob.update(replace(own, key="made-up-3"), importance=0.9).memory.key == "bob-start"
    assert bob.replace(replace(own, key="made-up-4"), "Bob starts at eleven").memory.id == own.id
    assert sorted(m.key for m in bob.list()) == ["bob-start", "office-hours-2"]
    assert bob.get("bob-start").content == "Bob starts at eleven"
    assert not [r for r in log.query(AuditQuery(limit=100)) if r.memory_key and r.memory_key.startswith("made-up")]
