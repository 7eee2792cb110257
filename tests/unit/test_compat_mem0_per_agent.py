"""The mem0 facade's calls by memory id in both layouts: a home with one database of every agent and
one with a database per agent (``per_agent_databases``), two users each.

mem0's ``get``/``update``/``delete``/``history`` take a bare memory id. With one database per agent
``add(..., user_id="alice")`` writes into alice's own database, but those calls looked only in the
facade's own (``app``'s): ``get`` of a memory just added answered None, ``update`` and ``delete``
raised "not found", ``history`` was empty and ``reset`` forgot nothing of any user's."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from engram.compat.mem0 import Memory, MemoryNotFoundError
from engram.engine import Engram
from engram.errors import ValidationError

LAYOUTS = pytest.mark.parametrize("per_agent", [True, False], ids=["per-agent", "shared"])


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture(params=[True, False], ids=["per-agent", "shared"])
def m(request: pytest.FixtureRequest, home: Path) -> Iterator[Memory]:
    engram = Engram.from_settings(home=home, agent="app", per_agent_databases=request.param,
                                  embeddings={"provider": "none"})
    memory = Memory(engram)
    yield memory
    memory.close()


def _contents(m: Memory, user: str) -> list[str]:
    return sorted(r["memory"] for r in m.get_all(user_id=user)["results"])


def _two_users(m: Memory) -> tuple[str, str]:
    alice = m.add("Alice likes blue umbrellas", user_id="alice", infer=False)["results"][0]["id"]
    bob = m.add("Bob feeds the cat at seven", user_id="bob", infer=False)["results"][0]["id"]
    return alice, bob


def _agents_in(db: Path) -> list[tuple[str, str]]:
    """(agent, content) of every memory a database file holds, read with sqlite3 itself."""
    with sqlite3.connect(db) as conn:
        return sorted(conn.execute("SELECT agent, content FROM memories"))


def test_get_update_history_and_delete_find_each_users_memory_by_id(m: Memory, home: Path) -> None:
    alice, bob = _two_users(m)
    assert m.get(alice)["memory"] == "Alice likes blue umbrellas" and m.get(alice)["user_id"] == "alice"
    assert m.get(bob)["memory"] == "Bob feeds the cat at seven" and m.get(bob)["user_id"] == "bob"

    assert m.update(alice, "Alice likes green umbrellas", metadata={"mood": "sunny"}) == {
        "message": "Memory updated successfully!"}
    assert _contents(m, "alice") == ["Alice likes green umbrellas"]
    assert _contents(m, "bob") == ["Bob feeds the cat at seven"]  # the other user's memory is untouched
    assert m.get(alice)["metadata"] == {"mood": "sunny"}
    assert [(h["event"], h["old_memory"], h["new_memory"]) for h in m.history(alice)] == [
        ("ADD", None, "Alice likes blue umbrellas"),
        ("UPDATE", "Alice likes blue umbrellas", "Alice likes green umbrellas")]
    assert [h["event"] for h in m.history(bob)] == ["ADD"]

    assert m.delete(bob) == {"message": "Memory deleted successfully!"}
    assert m.get(bob) is None and _contents(m, "bob") == []
    assert _contents(m, "alice") == ["Alice likes green umbrellas"]
    # A deleted memory's history comes from its own database's audit trail, as mem0 keeps it.
    assert [h["event"] for h in m.history(bob)] == ["ADD", "DELETE"]
    with pytest.raises(MemoryNotFoundError):
        m.delete(bob)
    with pytest.raises(MemoryNotFoundError):
        m.update(bob, "Bob feeds the dog")
    if m.engram.agent_databases is not None:  # each user's memory is in that user's own file, none in app's
        assert _agents_in(home / "agents" / "alice" / "memory.db") == [("alice", "Alice likes green umbrellas")]
        assert _agents_in(home / "agents" / "bob" / "memory.db") == []
        assert _agents_in(home / "agents" / "app" / "memory.db") == []


def test_an_id_reaches_only_memories_the_facade_made(m: Memory) -> None:
    # An engram agent's own memory, in alice's database beside the facade's, and one of an agent the
    # facade never names (a LangGraph namespace's): neither is the facade's to read or change by id.
    m.add("Alice likes blue umbrellas", user_id="alice", infer=False)
    native = m.engram.for_agent("alice").remember("Stored with engram's own API", key="native")
    other = m.engram.for_agent("lg:users:alice").remember("A LangGraph namespace's memory", key="lg")
    for memory_id in (native.memory.id, other.memory.id):
        assert m.get(memory_id) is None and m.history(memory_id) == []
        with pytest.raises(MemoryNotFoundError):
            m.delete(memory_id)
    assert m.engram.for_agent("alice").find("native") is not None
    assert m.engram.for_agent("lg:users:alice").find("lg") is not None


def test_delete_all_forgets_only_that_users_memories(m: Memory, home: Path) -> None:
    alice, bob = _two_users(m)
    m.add("Alice swims on Mondays", user_id="alice", agent_id="coach", infer=False)
    assert m.delete_all(user_id="alice") == {"message": "Memories deleted successfully!"}
    assert _contents(m, "alice") == [] and m.get(alice) is None
    assert _contents(m, "bob") == ["Bob feeds the cat at seven"] and m.get(bob)["memory"] == "Bob feeds the cat at seven"


def test_delete_all_of_a_user_with_no_memories_makes_no_database(m: Memory, home: Path) -> None:
    _two_users(m)
    assert m.delete_all(user_id="carol") == {"message": "Memories deleted successfully!"}
    assert not (home / "agents" / "carol").exists()  # (one database per agent) none made for carol
    assert _contents(m, "alice") == ["Alice likes blue umbrellas"] and _contents(m, "bob") == ["Bob feeds the cat at seven"]


def test_reset_forgets_every_users_facade_memories_and_keeps_engrams_own(m: Memory) -> None:
    alice, bob = _two_users(m)
    m.add("The coach plans drills", agent_id="coach", infer=False)
    m.engram.for_agent("alice").remember("Stored with engram's own API", key="native")
    m.reset()
    assert _contents(m, "alice") == [] and _contents(m, "bob") == []
    assert m.get_all(agent_id="coach") == {"results": []}
    assert m.get(alice) is None and m.get(bob) is None
    assert m.history(alice) == []  # mem0's reset drops the history too
    assert [x.key for x in m.engram.for_agent("alice").list()] == ["native"]
    # The facade is usable again after a reset, in either layout.
    again = m.add("Alice likes red umbrellas", user_id="alice", infer=False)["results"][0]["id"]
    assert m.get(again)["memory"] == "Alice likes red umbrellas"


@LAYOUTS
def test_a_new_facade_on_the_same_home_finds_the_ids(home: Path, per_agent: bool) -> None:
    # The ids are found from what the home holds, not from what this facade wrote: a second process
    # (here a second facade, opened after the first closed) finds and deletes alice's memory.
    settings = {"home": home, "agent": "app", "per_agent_databases": per_agent, "embeddings": {"provider": "none"}}
    with Engram.from_settings(**settings) as engram:
        alice, bob = _two_users(Memory(engram))
    with Engram.from_settings(**settings) as engram:
        m = Memory(engram)
        assert m.get(alice)["user_id"] == "alice" and m.get(bob)["user_id"] == "bob"
        m.delete(alice)
        assert _contents(m, "alice") == [] and _contents(m, "bob") == ["Bob feeds the cat at seven"]


def test_a_mem0_id_another_agent_set_on_its_own_memory_names_neither(m: Memory, home: Path) -> None:
    # alice's memory came from mem0 under the id mem0 gave it. Agent bob, through a door that
    # writes only bob's memories (engram's API, HTTP with bob's token), stores one of his own whose
    # metadata claims that id. The facade found bob's first: get showed bob's as alice's, update
    # wrote what the application meant for alice into bob's memory, delete forgot bob's and left
    # alice's. Now the id names neither: refused, nothing read or changed.
    m.import_mem0([{"id": "b7c1e0d2-mem0", "memory": "Alice's locker code is 4711", "user_id": "alice",
                    "created_at": "2024-03-01T10:00:00Z"}])
    assert m.get("b7c1e0d2-mem0")["memory"] == "Alice's locker code is 4711"
    m.engram.for_agent("bob").remember("Bob's decoy", key="decoy", source="mem0",
                                       metadata={"user_id": "bob", "mem0": {"id": "b7c1e0d2-mem0"}})
    for call in (lambda: m.get("b7c1e0d2-mem0"), lambda: m.update("b7c1e0d2-mem0", "Alice's locker code is 9876"),
                 lambda: m.delete("b7c1e0d2-mem0"), lambda: m.history("b7c1e0d2-mem0")):
        with pytest.raises(ValidationError) as refused:
            call()
        assert refused.value.field == "memory_id" and "2 memories" in str(refused.value)
    assert [x.content for x in m.engram.for_agent("bob").list()] == ["Bob's decoy"]
    assert _contents(m, "alice") == ["Alice's locker code is 4711"]
    # Once the decoy is gone, the id names alice's memory again.
    m.engram.for_agent("bob").forget("decoy")
    m.update("b7c1e0d2-mem0", "Alice's locker code is 9876")
    assert _contents(m, "alice") == ["Alice's locker code is 9876"]


def test_an_engram_id_two_agents_databases_hold_names_neither(home: Path) -> None:
    # With one database per agent, an engram id is unique in its own database only: a snapshot
    # import keeps an entry's id, so agent aaron can hold a memory of his own under the id of alice's.
    # The facade took the first database that answered (aaron's, by folder order): update wrote
    # what the application meant for alice into aaron's memory. Now the id names neither.
    engram = Engram.from_settings(home=home, agent="app", per_agent_databases=True, embeddings={"provider": "none"})
    m = Memory(engram)
    try:
        alice = m.add("Alice's locker code is 4711", user_id="alice", infer=False)["results"][0]["id"]
        decoy = {"id": alice, "key": "decoy", "content": "Aaron's decoy", "category": "knowledge", "scope": "agent:aaron",
                 "metadata": {"user_id": "aaron"}, "source": "mem0", "created_at": 1700000000, "updated_at": 1700000000}
        engram.for_agent("aaron").import_snapshot(json.dumps({"version": 1, "memories": [decoy]}))
        with pytest.raises(ValidationError) as refused:
            m.update(alice, "Alice's locker code is 9876")
        assert refused.value.field == "memory_id"
        with pytest.raises(ValidationError):
            m.get(alice)
        assert [x.content for x in engram.for_agent("aaron").list()] == ["Aaron's decoy"]
        assert _contents(m, "alice") == ["Alice's locker code is 4711"]
        assert _agents_in(home / "agents" / "aaron" / "memory.db") == [("aaron", "Aaron's decoy")]
    finally:
        m.close()
