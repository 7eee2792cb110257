"""A key read where a view reads finds nothing when only another session of the agent holds it:
the not-found error names those sessions and the ids that reach them (``visibility.
sessions_holding_key``), asking about the agent's sessions a bounded number at a time (a filter
names each scope, and SQLite bounds an expression's depth), and never about another agent's."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram import Engram
from engram.errors import NotFoundError
from engram.model import Scope


def test_a_key_in_other_sessions_is_named_across_many_sessions(tmp_path: Path) -> None:
    with Engram.from_settings(path=tmp_path / "m.db", embeddings={"provider": "none"}) as root:
        alice = root.for_agent("alice")
        # 450 sessions (past two batches of sessions asked at once), the key in three of them, far apart.
        alice.remember_many([{"content": f"note of session {n}", "scope": Scope("alice", f"s{n:03d}")}
                             for n in range(450)])
        held = {n: alice.remember(f"the plan as session {n} had it", key="plan", scope=Scope("alice", f"s{n:03d}")).memory
                for n in (10, 300, 420)}
        root.for_agent("bob", "s005").remember("bob's plan", key="plan", scope="session")
        with pytest.raises(NotFoundError) as missing:
            alice.get("plan")
        said = str(missing.value)
        assert said.startswith('memory not found: "plan"; this agent\'s sessions "s010" (id '), said
        for n, memory in held.items():
            assert f'"s{n:03d}" (id {memory.id})' in said, said
        assert "s005" not in said and "bob" not in said
        # From one of those sessions the key is its own; by id, any view of alice reaches each.
        assert alice.for_session("s300").get("plan").id == held[300].id
        assert {alice.get(m.id).id for m in held.values()} == {m.id for m in held.values()}
        # Bob's view is told nothing of alice's sessions, only of his own.
        with pytest.raises(NotFoundError) as theirs:
            root.for_agent("bob").get("plan")
        assert '"s005"' in str(theirs.value) and "s010" not in str(theirs.value)
