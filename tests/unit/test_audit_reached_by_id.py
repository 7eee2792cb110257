"""An id reaches its agent's memory in any of its sessions (``get``), and so does the audit of it:
``audit_of`` and ``audit_trail(memory=id)`` read that memory's own scope too, in the library and
through ``engram audit --memory``, never another agent's; a key reaches the visible scopes only."""

from __future__ import annotations

import json
from pathlib import Path

from engram.engine import Engram
from tests.unit.test_cli import engram


def test_the_audit_of_a_memory_reached_by_id_reads_its_session(isolated_home: Path) -> None:
    engine = Engram.from_settings(agent="alice", embeddings={"provider": "none"})  # the audit trail as configured
    s1 = engine.for_session("s1")
    note = s1.remember("the session's plan", key="plan", scope="session").memory
    s1.update(note.id, content="the session's new plan")
    try:
        assert [e.action for e in s1.audit_of(note.id)] == ["stored", "updated"]
        for view in (engine, engine.for_session("s2")):
            assert view.get(note.id).id == note.id  # the id reaches it, as the audit now does
            assert [e.action for e in view.audit_of(note.id)] == ["stored", "updated"]
            assert [e.action for e in view.audit_trail(memory=note.id)] == ["updated", "stored"]
            assert view.audit_trail(memory="plan") == []  # a key reaches the visible scopes only
        for bob in (engine.for_agent("bob"), engine.for_agent("bob", "s1")):
            assert bob.audit_of(note.id) == [] and bob.audit_trail(memory=note.id) == []
    finally:
        engine.close()


def test_cli_audit_memory_reads_the_session_of_a_memory_reached_by_id(isolated_home: Path) -> None:
    stored = engram(isolated_home, "--agent", "alice", "--session", "s1", "--json", "remember", "the session's plan",
                    "--scope", "session")
    assert stored.returncode == 0, stored.stderr
    memory_id = json.loads(stored.stdout)["memory"]["id"]
    shown = engram(isolated_home, "--agent", "alice", "--json", "audit", "--memory", memory_id)
    assert shown.returncode == 0, shown.stderr
    assert [(e["action"], e["memory_id"]) for e in json.loads(shown.stdout)] == [("stored", memory_id)]
    other = engram(isolated_home, "--agent", "bob", "--json", "audit", "--memory", memory_id)
    assert other.returncode == 0 and json.loads(other.stdout) == [], other.stdout
