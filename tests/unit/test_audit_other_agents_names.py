"""An agent reading the audit trail of a global memory (every agent reads it) learns no other
agent's name from it: a row another agent wrote shows its ``actor_scope`` as ``"another agent"``
(``visibility.without_others_names``), in the library (``audit_of``, ``audit_trail``) and through
``engram audit``; the agent's own rows, from any of its sessions, and the operator's
``audit_of(every_agent=True)`` keep the names. A real home, SQLite file and CLI."""

from __future__ import annotations

import json
from pathlib import Path

from engram.engine import Engram
from engram.visibility import ANOTHER_AGENT
from tests.cli_in_process import cli_output


def test_another_agent_reads_a_global_memorys_trail_without_its_writers_name(isolated_home: Path) -> None:
    engine = Engram.from_settings(agent="alice", embeddings={"provider": "none"})
    try:
        shared = engine.remember("the office opens at nine", key="hours", scope="global").memory
        engine.update(shared.id, content="the office opens at ten")
        bob = engine.for_agent("bob")
        bob.update(shared.id, content="the office opens at eleven")

        for view in (bob, engine.for_agent("bob", "s1")):
            assert [(e.action, e.actor_scope) for e in view.audit_of(shared.id)] == [
                ("stored", ANOTHER_AGENT), ("updated", ANOTHER_AGENT), ("updated", "agent:bob")]
            assert [(e.action, e.actor_scope) for e in view.audit_trail(memory=shared.id)] == [
                ("updated", "agent:bob"), ("updated", ANOTHER_AGENT), ("stored", ANOTHER_AGENT)]
        # Nothing else of the rows is hidden: the content written and the times stay.
        bob_rows = bob.audit_of(shared.id)
        assert [e.detail["content"] for e in bob_rows] == [
            "the office opens at nine", "the office opens at ten", "the office opens at eleven"]
        assert [e.at for e in bob_rows] == [e.at for e in engine.audit_of(shared.id, every_agent=True)]

        for view in (engine, engine.for_session("s2")):  # alice's own rows, from any of her sessions
            assert [e.actor_scope for e in view.audit_of(shared.id)] == ["agent:alice", "agent:alice", ANOTHER_AGENT]
        # The operator's reach (``every_agent``) names every agent.
        everyone = ["agent:alice", "agent:alice", "agent:bob"]
        assert [e.actor_scope for e in bob.audit_of(shared.id, every_agent=True)] == everyone
    finally:
        engine.close()


def test_engram_audit_shows_another_agents_rows_without_its_name(isolated_home: Path) -> None:
    stored = json.loads(cli_output(isolated_home, "--agent", "alice", "--json", "remember", "the office opens at nine",
                                   "--key", "hours", "--scope", "global"))
    memory_id = stored["memory"]["id"]
    seen = json.loads(cli_output(isolated_home, "--agent", "bob", "--json", "audit", "--memory", memory_id))
    assert [(e["action"], e["actor_scope"], e["memory_id"]) for e in seen] == [("stored", ANOTHER_AGENT, memory_id)]
    assert "alice" not in json.dumps(seen)
    own = json.loads(cli_output(isolated_home, "--agent", "alice", "--json", "audit", "--memory", memory_id))
    assert [e["actor_scope"] for e in own] == ["agent:alice"]
