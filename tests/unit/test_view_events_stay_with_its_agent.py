"""A listener subscribed through an agent's view hears only what that view may read: never another
agent's memories as they are stored, changed, linked or forgotten, nor their ids through a global
memory's links, nor another agent's name: a change another agent made to a global memory is heard
with the scope ``ANOTHER_AGENT_SCOPE`` (the audit trail's "another agent"). The engine's own
listeners (the operator's, as the audit trail's) still hear every agent, by name. A real SQLite
file, views made by ``for_agent`` as every door makes them."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.engine import Engram
from engram.errors import ValidationError
from engram.events import MemoryEvent
from engram.files.sync import FileSync
from engram.model import Scope
from engram.visibility import ANOTHER_AGENT, ANOTHER_AGENT_SCOPE
from tests.files.conftest import entry_block, with_copy


@pytest.fixture
def root(tmp_path: Path):
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}, files={"enabled": False}) as engram:
        yield engram


def _heard(view: Engram) -> list[MemoryEvent]:
    heard: list[MemoryEvent] = []
    view.subscribe(heard.append)
    return heard


def test_an_agents_listener_never_hears_another_agents_memories(root: Engram) -> None:
    alice, bob = root.for_agent("alice"), root.for_agent("bob")
    alice_heard, bob_heard, operator_heard = _heard(alice), _heard(bob), _heard(root)
    shared = alice.remember("the office moves in March", key="office", scope="global").memory
    secret = bob.remember("bob's bank PIN is 4321", key="pin").memory
    bob.update(secret, content="bob's bank PIN is 9876")
    bob.link(secret, shared)
    bob.forget(secret)
    in_session = bob.for_session("s1").remember("bob's session note", scope="session").memory

    said = [m.content for e in alice_heard for m in (*e.memories, *e.previous)]
    assert not any("bob" in text for text in said), said
    assert all(secret.id not in m.links for e in alice_heard for m in e.memories)
    assert [(e.kind, [m.id for m in e.memories]) for e in alice_heard] == [("stored", [shared.id])]
    # Bob hears his own changes, in any of his sessions, and the global memory; the engine, all of them.
    assert [e.kind for e in bob_heard] == ["stored", "stored", "updated", "linked", "forgotten", "stored"]
    assert bob_heard[-1].memories[0].id == in_session.id
    assert [e.kind for e in operator_heard] == [e.kind for e in bob_heard]


def test_a_global_memory_is_heard_with_links_it_may_read(root: Engram) -> None:
    alice, bob = root.for_agent("alice"), root.for_agent("bob")
    shared = alice.remember("the office moves in March", key="office", scope="global").memory
    secret = bob.remember("bob's bank PIN is 4321", key="pin").memory
    bob.link(secret, shared)
    alice_heard = _heard(alice.for_session("s1"))
    bob.update(shared, content="the office moves in April")
    assert [(e.kind, m.content, m.links) for e in alice_heard for m in e.memories] == [
        ("updated", "the office moves in April", ())]
    assert alice_heard[0].previous[0].links == ()


def test_another_agents_change_of_a_global_memory_is_heard_without_its_name(root: Engram) -> None:
    alice, bob = root.for_agent("alice"), root.for_agent("bob")
    writer = alice.for_session("s1")
    bob_heard, bob_session_heard = _heard(bob), _heard(bob.for_session("b1"))
    alice_heard, operator_heard = _heard(alice.for_session("s2")), _heard(root)
    shared = writer.remember("the office moves in March", key="office", scope="global").memory
    writer.update(shared, content="the office moves in April")
    writer.forget(shared)

    for heard in (bob_heard, bob_session_heard):
        assert [(e.kind, e.scope, e.origin) for e in heard] == [
            ("stored", ANOTHER_AGENT_SCOPE, "library"), ("updated", ANOTHER_AGENT_SCOPE, "library"),
            ("forgotten", ANOTHER_AGENT_SCOPE, "library")]
        assert "alice" not in repr(heard) and "s1" not in repr(heard)
        # Only the name is hidden: the memory, its earlier state and the times are heard as they were.
        assert [m.content for e in heard for m in (*e.memories, *e.previous)] == [
            "the office moves in March", "the office moves in April", "the office moves in March",
            "the office moves in April"]
        assert [e.at for e in heard] == [e.at for e in operator_heard]
    # The writer's own agent, from another of its sessions, and the operator's engine hear its name.
    assert [e.scope for e in alice_heard] == [Scope("alice", "s1")] * 3
    assert [e.scope for e in operator_heard] == [Scope("alice", "s1")] * 3


def test_an_agent_hears_its_own_changes_by_name_and_the_home_agents_as_another_agent(root: Engram) -> None:
    bob = root.for_agent("bob")
    bob_heard = _heard(bob)
    bob.for_session("b1").remember("the printer is on floor 2", key="printer", scope="global")
    root.remember("the office moves in March", key="office", scope="global")  # the engine's agent, "default": not bob
    assert [e.scope for e in bob_heard] == [Scope("bob", "b1"), ANOTHER_AGENT_SCOPE]


def test_the_stand_in_is_never_a_real_agents_scope(root: Engram) -> None:
    assert str(ANOTHER_AGENT_SCOPE) == f"agent:{ANOTHER_AGENT}"
    with pytest.raises(ValidationError, match="agent"):
        root.for_agent(ANOTHER_AGENT_SCOPE.agent or "")
    with pytest.raises(ValidationError, match="scope|agent"):
        Scope.parse(str(ANOTHER_AGENT_SCOPE))


def test_a_memory_moved_by_hand_into_global_is_heard_without_the_agent_it_left(tmp_path: Path) -> None:
    with Engram.from_settings(home=tmp_path / "home", agent="alice", embeddings={"provider": "none"},
                              files={"enabled": False}) as alice:
        folder = tmp_path / "home" / "memory"
        mirror = FileSync(alice, folder)
        mine = alice.remember("the office moves in March", key="office", tags=["notes"]).memory
        alice.remember("a neighbour", key="stays", tags=["notes"])
        alice.remember("the printer is on floor 2", key="printer", tags=["notes"], scope="global")
        mirror.sync()
        bob_heard = _heard(alice.for_agent("bob"))
        mine_file, global_file = folder / "agents" / "alice" / "notes.md", folder / "global" / "notes.md"
        text = mine_file.read_text(encoding="utf-8")
        block = entry_block(text, mine.id)
        mine_file.write_text(text.replace("\n".join(block) + "\n", ""), encoding="utf-8")
        global_file.write_text(with_copy(global_file.read_text(encoding="utf-8"), block), encoding="utf-8")

        mirror.sync()

        assert [(e.kind, e.scope, [m.scope for m in e.memories], e.previous) for e in bob_heard] == [
            ("moved", ANOTHER_AGENT_SCOPE, [Scope()], ())]
        assert "alice" not in repr(bob_heard)
