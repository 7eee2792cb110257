"""A listener subscribed through an agent's view hears only what that view may read: never another
agent's memories as they are stored, changed, linked or forgotten, nor their ids through a global
memory's links. The engine's own listeners (the operator's, as the audit trail's) still hear every
agent. A real SQLite file, views made by ``for_agent`` as every door makes them."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.engine import Engram
from engram.events import MemoryEvent


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
