"""The mem0 facade: mem0's own quickstart, ported unchanged but for the import, on a real store."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.compat.mem0 import Memory
from engram.errors import NotFoundError, ValidationError

MESSAGES = [  # mem0's python quickstart conversation, verbatim
    {"role": "user", "content": "I'm planning to watch a movie tonight. Any recommendations?"},
    {"role": "assistant", "content": "How about a thriller movies? They can be quite engaging."},
    {"role": "user", "content": "I'm not a big fan of thriller movies but I love sci-fi movies."},
    {"role": "assistant", "content": "Got it! I'll avoid thriller recommendations and suggest sci-fi movies in the future."},
]
ITEM_KEYS = {"id", "memory", "hash", "metadata", "created_at", "updated_at", "user_id"}


@pytest.fixture
def m(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Memory:
    monkeypatch.setenv("OPENAI_API_KEY", "your-api-key")  # the quickstart's set-up line; engram never calls out
    memory = Memory()
    yield memory
    memory.close()


def test_mem0_python_quickstart(m: Memory) -> None:
    messages = MESSAGES
    # Store inferred memories (default behavior)
    result = m.add(messages, user_id="alice", metadata={"category": "movie_recommendations"})
    assert result == {"results": [{"id": result["results"][0]["id"], "memory": "The user loves sci-fi movies.",
                                   "event": "ADD", "metadata": {"category": "movie_recommendations"}}]}
    # Store memories with agent and run context (the 0.x quickstart): the same fact, now with more ids
    result = m.add(messages, user_id="alice", agent_id="movie-assistant", run_id="session-001",
                   metadata={"category": "movie_recommendations"})
    assert [r["event"] for r in result["results"]] == ["UPDATE"]
    # Store raw messages without inference
    raw = m.add(messages, user_id="alice", metadata={"category": "movie_recommendations"}, infer=False)
    assert [r["memory"] for r in raw["results"]] == [msg["content"] for msg in messages]

    # Get all memories
    all_memories = m.get_all(user_id="alice")
    assert len(all_memories["results"]) == 5
    for item in all_memories["results"]:
        assert ITEM_KEYS <= set(item) and item["user_id"] == "alice"
        assert item["metadata"] == {"category": "movie_recommendations"}
        assert item["created_at"].endswith("+00:00") and len(item["hash"]) == 32
    fact_id = next(i["id"] for i in all_memories["results"] if i["memory"] == "The user loves sci-fi movies.")

    # Get a single memory by ID
    specific_memory = m.get(fact_id)
    assert specific_memory["memory"] == "The user loves sci-fi movies."
    assert (specific_memory["agent_id"], specific_memory["run_id"]) == ("movie-assistant", "session-001")

    # Search memories
    related_memories = m.search(query="What do you know about me?", user_id="alice")
    # engram answers nothing rather than its least bad matches (a documented difference)
    assert isinstance(related_memories["results"], list)
    assert all("score" in r and r["user_id"] == "alice" for r in related_memories["results"])
    scifi = m.search(query="sci-fi movies", user_id="alice")["results"]
    assert "sci-fi" in scifi[0]["memory"] and scifi[0]["score"] >= scifi[-1]["score"]

    # Update a memory
    result = m.update(memory_id=fact_id, data="I love India, it is my favorite country.")
    assert result == {"message": "Memory updated successfully!"}
    assert m.get(fact_id)["memory"] == "I love India, it is my favorite country."
    assert m.get(fact_id)["metadata"] == {"category": "movie_recommendations"}

    # Memory history
    history = m.history(memory_id=fact_id)
    assert [(h["event"], h["old_memory"], h["new_memory"]) for h in history] == [
        ("ADD", None, "The user loves sci-fi movies."),
        ("UPDATE", "The user loves sci-fi movies.", "I love India, it is my favorite country."),
    ]

    # Delete a memory by id
    assert m.delete(memory_id=fact_id) == {"message": "Memory deleted successfully!"}
    assert m.get(fact_id) is None and m.history(fact_id) == []
    # Delete all memories for a user
    assert m.delete_all(user_id="alice") == {"message": "Memories deleted successfully!"}
    assert m.get_all(user_id="alice") == {"results": []}
    # Reset all memories
    m.add("I like tea", user_id="bob", infer=False)
    m.reset()
    assert m.get_all(user_id="bob") == {"results": []}


def test_owners_are_isolated_and_ids_narrow_reads(m: Memory) -> None:
    m.add("Alice plays chess on Sundays", user_id="alice", agent_id="coach", infer=False)
    m.add("Alice swims on Mondays", user_id="alice", infer=False)
    m.add("Bob plays chess too", user_id="bob", infer=False)
    assert len(m.get_all(user_id="alice")["results"]) == 2
    assert [r["memory"] for r in m.get_all(user_id="alice", agent_id="coach")["results"]] == [
        "Alice plays chess on Sundays"]
    # mem0 2.x passes the ids in filters
    assert [r["memory"] for r in m.search("chess", filters={"user_id": "alice"})["results"]] == [
        "Alice plays chess on Sundays"]
    assert [r["memory"] for r in m.search("chess", filters={"user_id": "bob"})["results"]] == ["Bob plays chess too"]
    assert m.get_all(agent_id="coach") == {"results": []}  # memories live with their owner (user_id)


def test_reset_keeps_memories_not_made_through_the_facade(m: Memory) -> None:
    m.engram.for_agent("alice").remember("Stored with engram's own API", key="native")
    m.add("I like tea", user_id="alice", infer=False)
    m.reset()
    assert [x.key for x in m.engram.for_agent("alice").list()] == ["native"]


def test_bad_input_names_the_field_and_stores_nothing(m: Memory) -> None:
    with pytest.raises(ValueError) as err:  # mem0 callers catch ValueError: still works
        m.add("no owner")
    assert isinstance(err.value, ValidationError) and err.value.field == "add"
    cases = [
        (lambda: m.add("x", user_id="two words"), "user_id"),
        (lambda: m.add("x", user_id="   "), "user_id"),
        (lambda: m.add(42, user_id="alice"), "messages"),
        (lambda: m.add([{"role": "robot", "content": "x"}], user_id="alice"), "messages[0].role"),
        (lambda: m.add("x", user_id="alice", memory_type="procedural_memory"), "memory_type"),
        (lambda: m.get_all(filters={"user_id": "alice", "category": {"in": ["a"]}}), "filters.category"),
        (lambda: m.search("x"), "search"),
        (lambda: m.delete_all(), "delete_all"),
        (lambda: m.add("x", user_id="a/b"), "user_id"),
        (lambda: Memory.from_config({"vector_store": {"provider": "qdrant"}}), "config.vector_store"),
    ]
    for call, field in cases:
        with pytest.raises(ValidationError) as err:
            call()
        assert err.value.field == field
    with pytest.raises(NotFoundError):
        m.update("0190e2b2-0000-7000-8000-000000000000", "new text")
    assert m.engram.count() == 0


def test_mem0_async_quickstart(isolated_home: Path) -> None:
    import asyncio
    import threading

    from engram.compat.mem0 import AsyncMemory  # was: from mem0 import AsyncMemory

    async def main() -> None:
        m = AsyncMemory()
        threads: list[str] = []
        m.engram.subscribe(lambda event: threads.append(threading.current_thread().name))
        result = await m.add(MESSAGES, user_id="alice", metadata={"category": "movie_recommendations"})
        fact_id = result["results"][0]["id"]
        assert (await m.get(fact_id))["memory"] == "The user loves sci-fi movies."
        assert [r["id"] for r in (await m.get_all(user_id="alice"))["results"]] == [fact_id]
        assert (await m.search("sci-fi movies", user_id="alice"))["results"][0]["id"] == fact_id
        assert await m.update(memory_id=fact_id, data="I love India") == {"message": "Memory updated successfully!"}
        assert [h["event"] for h in await m.history(memory_id=fact_id)] == ["ADD", "UPDATE"]
        await m.delete(memory_id=fact_id)
        assert await m.get(fact_id) is None
        await m.close()
        assert threads and threading.main_thread().name not in threads  # the work ran off the loop's thread

    asyncio.run(main())
