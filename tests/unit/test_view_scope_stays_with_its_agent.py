"""An agent's view of the engine never reaches another agent's memories through an explicit
``scope=``: remember, count, list and export refuse it naming ``scope`` and store nothing;
the agent's own sessions and global memories stay reachable, and ``for_agent`` opens the other."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.engine import Engram
from engram.errors import ValidationError
from engram.model import Scope


@pytest.fixture
def root(tmp_path: Path):
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}, files={"enabled": False}) as engram:
        engram.for_agent("bob").remember("bob's private note", key="secret")
        yield engram


@pytest.mark.parametrize("call", [
    lambda alice: alice.remember("planted in bob's memories", scope=Scope("bob")),
    lambda alice: alice.remember("planted in bob's session", scope=Scope("bob", "s1")),
    lambda alice: alice.count(scope=Scope("bob")),
    lambda alice: alice.list(scope=Scope("bob")),
    lambda alice: alice.export_snapshot(scope=Scope("bob")),
])
def test_another_agents_scope_is_refused(root: Engram, call) -> None:  # noqa: ANN001
    alice = root.for_agent("alice")
    with pytest.raises(ValidationError) as raised:
        call(alice)
    assert raised.value.field == "scope" and "for_agent" in str(raised.value)
    bob = root.for_agent("bob")
    assert [m.content for m in bob.list()] == ["bob's private note"]


def test_own_sessions_and_global_stay_reachable(root: Engram) -> None:
    alice = root.for_agent("alice")
    alice.remember("alice in a session", scope=Scope("alice", "s1"))
    alice.remember("for everyone", scope=Scope())
    assert alice.count(scope=Scope("alice", "s1")) == 1
    assert root.for_agent("bob").count(scope=Scope()) == 1
