"""The mem0 facade: mem0's own quickstart, ported unchanged but for the import, on a real store."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from engram.agent.extract import Fact
from engram.compat.mem0 import Memory
from engram.errors import NotFoundError, ValidationError
from engram.ids import key_from_content
from engram.integrations import DEFAULT_AGENT_PREFIX

MESSAGES = [  # mem0's python quickstart conversation, verbatim
    {"role": "user", "content": "I'm planning to watch a movie tonight. Any recommendations?"},
    {"role": "assistant", "content": "How about a thriller movies? They can be quite engaging."},
    {"role": "user", "content": "I'm not a big fan of thriller movies but I love sci-fi movies."},
    {"role": "assistant", "content": "Got it! I'll avoid thriller recommendations and suggest sci-fi movies in the future."},
]
# what mem0's LLM extracts from it, as engram's rule extractor does
QUICKSTART_FACTS = ["The user is planning to watch a movie tonight.", "The user does not like thriller movies.",
                    "The user loves sci-fi movies."]
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
    assert result == {"results": [{"id": r["id"], "memory": fact, "event": "ADD",
                                   "metadata": {"category": "movie_recommendations"}}
                                  for r, fact in zip(result["results"], QUICKSTART_FACTS, strict=True)]}
    # Store memories with agent and run context (the 0.x quickstart): the same facts under more ids
    # are memories of their own, as in mem0 (whose filters keep the two apart)
    result = m.add(messages, user_id="alice", agent_id="movie-assistant", run_id="session-001",
                   metadata={"category": "movie_recommendations"})
    assert [r["event"] for r in result["results"]] == ["ADD"] * 3
    # saying it again with the same ids updates those memories, not the first ones
    again = m.add(messages, user_id="alice", agent_id="movie-assistant", run_id="session-001",
                  metadata={"category": "movie_recommendations", "said": "again"})
    assert [(r["id"], r["event"]) for r in again["results"]] == [(r["id"], "UPDATE") for r in result["results"]]
    # Store raw messages without inference
    raw = m.add(messages, user_id="alice", metadata={"category": "movie_recommendations"}, infer=False)
    assert [r["memory"] for r in raw["results"]] == [msg["content"] for msg in messages]

    # Get all memories
    all_memories = m.get_all(user_id="alice")
    assert len(all_memories["results"]) == 3 + 3 + 4
    for item in all_memories["results"]:
        assert ITEM_KEYS <= set(item) and item["user_id"] == "alice"
        assert item["metadata"] in ({"category": "movie_recommendations"},
                                    {"category": "movie_recommendations", "said": "again"})
        assert item["created_at"].endswith("+00:00") and len(item["hash"]) == 32
    fact_id = next(i["id"] for i in all_memories["results"]
                   if i.get("run_id") == "session-001" and i["memory"] == "The user loves sci-fi movies.")

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
    assert m.get(fact_id)["metadata"] == {"category": "movie_recommendations", "said": "again"}

    # Memory history
    history = m.history(memory_id=fact_id)
    assert [(h["event"], h["old_memory"], h["new_memory"]) for h in history] == [
        ("ADD", None, "The user loves sci-fi movies."),
        # the add said again with new metadata, which add reported as an UPDATE: mem0 logs it so
        ("UPDATE", "The user loves sci-fi movies.", "The user loves sci-fi movies."),
        ("UPDATE", "The user loves sci-fi movies.", "I love India, it is my favorite country."),
    ]

    # Delete a memory by id
    assert m.delete(memory_id=fact_id) == {"message": "Memory deleted successfully!"}
    assert m.get(fact_id) is None
    # mem0 keeps a deleted memory's history, its DELETE included
    gone = m.history(fact_id)
    assert [(h["event"], h["old_memory"], h["new_memory"], h["is_deleted"]) for h in gone] == [
        ("ADD", None, "The user loves sci-fi movies.", False),
        ("UPDATE", "The user loves sci-fi movies.", "The user loves sci-fi movies.", False),
        ("UPDATE", "The user loves sci-fi movies.", "I love India, it is my favorite country.", False),
        ("DELETE", "I love India, it is my favorite country.", None, True),
    ]
    assert [h["id"] for h in gone[:3]] == [h["id"] for h in history]  # what it said before the delete
    assert {h["created_at"] for h in gone} == {history[0]["created_at"]} and gone[3]["updated_at"] >= gone[2]["updated_at"]
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
        (lambda: m.get_all(filters={"user_id": "alice", "category": {"like": "a"}}), "filters.category"),
        (lambda: m.search("x"), "search"),
        (lambda: m.delete_all(), "delete_all"),
    ]  # an id no agent is named as it is ("a/b", "José") is an owner too, as mem0 takes it: see
    # test_compat_mem0_after_engram_import
    for call, field in cases:
        with pytest.raises(ValidationError) as err:
            call()
        assert err.value.field == field
    with pytest.raises(NotFoundError):
        m.update("0190e2b2-0000-7000-8000-000000000000", "new text")
    assert m.engram.count() == 0


def test_an_engine_or_extractor_that_is_not_one_is_refused_when_made(m: Memory, tmp_path: Path) -> None:
    """``Memory("memory.db")`` was taken and failed at the first call as an ``AttributeError``;
    an extractor that cannot extract failed at the first ``add``: each is refused naming it."""
    from engram.aio import AsyncEngram
    from engram.compat.mem0_async import AsyncMemory

    for make, field in ((lambda: Memory(str(tmp_path / "memory.db")), "engram"),  # type: ignore[arg-type]
                        (lambda: AsyncMemory(42), "engram"),  # type: ignore[arg-type]
                        (lambda: Memory(m.engram, extractor="rules"), "extractor")):  # type: ignore[arg-type]
        with pytest.raises(ValidationError) as err:
            make()
        assert err.value.field == field and err.value.allowed
    assert not (tmp_path / "memory.db").exists()
    assert Memory(AsyncEngram(m.engram)).engram is m.engram


def test_mem0_async_quickstart(isolated_home: Path) -> None:
    import asyncio
    import threading

    from engram.compat.mem0 import AsyncMemory  # was: from mem0 import AsyncMemory

    async def main() -> None:
        m = AsyncMemory()
        threads: list[str] = []
        m.engram.subscribe(lambda event: threads.append(threading.current_thread().name))
        result = await m.add(MESSAGES, user_id="alice", metadata={"category": "movie_recommendations"})
        assert [r["memory"] for r in result["results"]] == QUICKSTART_FACTS
        fact_id = result["results"][2]["id"]
        assert (await m.get(fact_id))["memory"] == "The user loves sci-fi movies."
        assert sorted(r["id"] for r in (await m.get_all(user_id="alice"))["results"]) == sorted(
            r["id"] for r in result["results"])
        assert (await m.search("sci-fi movies", user_id="alice"))["results"][0]["id"] == fact_id
        assert await m.update(memory_id=fact_id, data="I love India") == {"message": "Memory updated successfully!"}
        assert [h["event"] for h in await m.history(memory_id=fact_id)] == ["ADD", "UPDATE"]
        await m.delete(memory_id=fact_id)
        assert await m.get(fact_id) is None
        await m.close()
        assert threads and threading.main_thread().name not in threads  # the work ran off the loop's thread

    asyncio.run(main())


def test_a_user_and_an_agent_or_run_of_the_same_name_never_share_memories(m: Memory) -> None:
    # user_id, agent_id and run_id are separate namespaces in mem0: "x" the user is not "x" the agent
    mine = m.add("I like tea", user_id="x", infer=False)["results"]
    theirs = m.add("I like tea", agent_id="x", infer=False)["results"]
    assert [r["event"] for r in theirs] == ["ADD"] and theirs[0]["id"] != mine[0]["id"]
    m.add("I love sci-fi movies", user_id="x")
    assert [r["event"] for r in m.add("I love sci-fi movies", run_id="x")["results"]] == ["ADD"]
    assert sorted(r["memory"] for r in m.get_all(user_id="x")["results"]) == ["I like tea", "The user loves sci-fi movies."]
    assert [r["memory"] for r in m.get_all(agent_id="x")["results"]] == ["I like tea"]
    m.delete_all(agent_id="x")
    m.delete_all(run_id="x")
    assert len(m.get_all(user_id="x")["results"]) == 2
    assert [a for a in m.engram.stats().by_scope] == ["agent:x"]  # the user's agent: its id as it is
    with pytest.raises(ValidationError) as err:
        m.add("x", user_id="agent:x")  # would be the agent's scope
    assert err.value.field == "user_id"


def test_each_combination_of_ids_keeps_its_own_memories(m: Memory) -> None:
    # mem0 keeps what run r1 said apart from what run r2 said (its filters match every id given):
    # a second run saying the same thing must not be folded into the first run's memory
    first = m.add("I like tea", user_id="alice", run_id="r1", infer=False)["results"]
    second = m.add("I like tea", user_id="alice", run_id="r2", infer=False)["results"]
    assert [r["event"] for r in second] == ["ADD"] and second[0]["id"] != first[0]["id"]
    assert m.add("I like tea", user_id="alice", run_id="r2", infer=False) == {"results": []}  # stored once
    m.add("I love sci-fi movies", user_id="alice", agent_id="coach")
    m.add("I love sci-fi movies", user_id="alice", agent_id="planner")
    assert [r["agent_id"] for r in m.search("sci-fi", user_id="alice", agent_id="coach")["results"]] == ["coach"]

    m.delete_all(user_id="alice", run_id="r1")  # ending run r1 forgets only what r1 said
    assert [r["run_id"] for r in m.get_all(user_id="alice", run_id="r2")["results"]] == ["r2"]
    assert [r["agent_id"] for r in m.get_all(user_id="alice", agent_id="planner")["results"]] == ["planner"]

    # a memory changed by update is never overwritten by the same message said again
    m.update(second[0]["id"], "I like green tea")
    again = m.add("I like tea", user_id="alice", run_id="r2", infer=False)["results"]
    assert [r["event"] for r in again] == ["ADD"] and again[0]["id"] != second[0]["id"]
    assert m.get(second[0]["id"])["memory"] == "I like green tea"


def test_ids_come_from_the_arguments_never_the_metadata(m: Memory) -> None:
    with pytest.raises(ValidationError) as err:
        m.add("Bob's secret", user_id="bob", metadata={"user_id": "alice"}, infer=False)
    assert err.value.field == "metadata.user_id"
    kept = m.add("Bob's note", user_id="bob", infer=False)["results"][0]["id"]
    with pytest.raises(ValidationError) as err:
        m.update(kept, "Bob's note, moved", metadata={"user_id": "alice"})
    assert err.value.field == "metadata.user_id"
    assert m.get(kept)["memory"] == "Bob's note" and m.get_all(user_id="alice") == {"results": []}


def test_ids_reach_only_memories_the_facade_made(m: Memory) -> None:
    # an engram agent's own memory is not the mem0 application's to read, change or delete
    native = m.engram.for_agent("alice").remember("Alice's agent keeps this to itself").memory
    assert m.get(native.id) is None and m.history(native.id) == []
    for call in (lambda: m.update(native.id, "overwritten"), lambda: m.delete(native.id)):
        with pytest.raises(NotFoundError):
            call()
    m.reset()
    assert m.engram.for_agent("alice").get(native.id).content == "Alice's agent keeps this to itself"


def test_search_finds_what_get_all_lists_never_a_global_memory(m: Memory) -> None:
    # A global memory is every engram agent's to read, and one may carry a user_id in its metadata:
    # it is still no memory of the facade's, so search leaves it out as get_all does (get says None).
    mine = m.add("Alice plays chess on Sundays", user_id="alice", infer=False)["results"][0]["id"]
    m.engram.for_agent("carol").remember("The chess club meets on Fridays", scope="global", metadata={"user_id": "alice"})
    found = m.search("chess", user_id="alice")["results"]
    assert [r["id"] for r in found] == [mine] == [r["id"] for r in m.get_all(user_id="alice")["results"]]
    assert all(m.get(r["id"]) is not None for r in found)


def test_mem0_2x_arguments(m: Memory) -> None:
    added = m.add([{"role": "user", "content": "Dinner is at eight", "name": "bob"}], user_id="alice", infer=False)
    assert added["results"][0] | {"id": None} == {"id": None, "memory": "Dinner is at eight", "event": "ADD",
                                                  "actor_id": "bob", "role": "user"}
    found = m.search("dinner", filters={"user_id": "alice"}, top_k=5, threshold=0.1, rerank=True, explain=True)
    assert found["results"][0]["actor_id"] == "bob"
    assert set(found["results"][0]["score_details"]) == {"text", "vector", "fused", "recency", "importance", "link"}
    assert m.search("dinner", filters={"user_id": "alice"}, top_k=0) == {"results": []}
    assert m.search("dinner", filters={"user_id": "alice"}, threshold=0)["results"]  # the range's ends are in it
    assert m.search("dinner", filters={"user_id": "alice"}, threshold=1) == {"results": []}
    assert m.get_all(filters={"user_id": "alice"}, top_k=0) == {"results": []}
    cases = [
        (lambda: m.search("dinner", filters={"user_id": "alice"}, top_k=-1), "top_k"),
        (lambda: m.get_all(user_id="alice", limit=5000), "limit"),
        (lambda: m.search("dinner", filters={"user_id": "alice"}, reference_date="2026-01-01"), "reference_date"),
        (lambda: m.add("x", user_id="alice", timestamp=1700000000), "timestamp"),
        (lambda: m.search("dinner", filters={"user_id": "alice", "run_id": "*"}), "run_id"),
        (lambda: m.search("dinner", filters={"user_id": "alice"}, threshold=1.5), "threshold"),  # mem0: 0 to 1
        (lambda: m.search("dinner", filters={"user_id": "alice"}, threshold=-0.1), "threshold"),
        (lambda: m.search("dinner", filters={"user_id": "alice"}, threshold=float("nan")), "threshold"),
    ]
    for call, field in cases:
        with pytest.raises(ValueError) as err:  # mem0 raises ValueError for each
            call()
        assert isinstance(err.value, ValidationError) and err.value.field == field


def test_a_mem0_export_comes_in_where_the_facade_finds_it(m: Memory) -> None:
    export = (Path(__file__).resolve().parents[1] / "fixtures" / "import" / "mem0.json").read_text(encoding="utf-8")
    assert m.import_mem0(export) == {"imported": 3, "skipped": 0, "forgotten": 0}
    assert m.import_mem0(export) == {"imported": 0, "skipped": 3, "forgotten": 0}  # the same export again stores nothing
    alex = m.get_all(user_id="alex")["results"]
    assert sorted(r["memory"] for r in alex) == ["Deploys the billing service every Tuesday",
                                                 "Is travelling to Paris in June", "Prefers vegetarian restaurants"]
    paris = next(r for r in alex if r["memory"].startswith("Is travelling"))
    assert paris["user_id"] == "alex" and paris["created_at"].startswith("2024-02-26T06:57:00")
    # The item's metadata as mem0 had it; engram keeps mem0's id, hash and ids beside it, and what the
    # import brought (the text's digest, the categories) for the next import, as engram import does.
    assert paris["metadata"] == {"source": "chat"}
    assert paris["id"] == "f38b689d-6b24-45b7-bced-17fbb4d8bac7"  # mem0's id, as the application stored it
    assert m.engram.for_agent("alex").get(_engram_id(m, paris["id"])).metadata["mem0"] == {
        "id": "f38b689d-6b24-45b7-bced-17fbb4d8bac7", "hash": "62bc074f56d1f909f1b4c2b639f56f6a", "user_id": "alex",
        "imported_text_sha256": _sha256(paris["memory"]), "imported_tags": ["travel"], "imported_keys": ["source", "user_id"]}
    # Its ids narrow reads as the facade's own memories' do, and mem0's id reaches nothing else.
    deploys = m.get_all(user_id="alex", agent_id="ops-bot", run_id="run-42")["results"]
    assert [(r["memory"], r["agent_id"], r["run_id"]) for r in deploys] == [
        ("Deploys the billing service every Tuesday", "ops-bot", "run-42")]
    assert m.search("vegetarian food", user_id="alex")["results"][0]["memory"] == "Prefers vegetarian restaurants"
    assert m.get_all(user_id="ops-bot")["results"] == [] and m.get_all(agent_id="ops-bot")["results"] == []
    # The facade changes and deletes imported memories as its own.
    m.update(paris["id"], "Is travelling to Paris in July")
    assert [e["event"] for e in m.history(paris["id"])] == ["ADD", "UPDATE"]
    # The same export again does not undo that change (it put June back, counted as imported).
    assert m.import_mem0(export) == {"imported": 0, "skipped": 3, "forgotten": 0}
    assert m.get(paris["id"])["memory"] == "Is travelling to Paris in July"
    m.delete_all(user_id="alex", run_id="run-42")
    assert len(m.get_all(user_id="alex")["results"]) == 2


def test_a_bad_mem0_export_names_the_item_and_stores_nothing(m: Memory) -> None:
    good = {"id": "a", "memory": "Likes tea", "user_id": "alex"}
    for bad, field in (({"id": "b", "memory": "no owner"}, "results[1].user_id"),
                       ({"id": "b", "memory": "spaced", "user_id": "a b"}, "results[1].user_id"),
                       ({"id": "b", "memory": "", "user_id": "alex"}, "results[1].memory"),
                       ({"id": "b", "memory": "x", "user_id": "alex", "metadata": {"run_id": "r"}},
                        "results[1].metadata.run_id"),
                       # what remember refuses is found before the first item is stored, too
                       ({"id": "b", "memory": "x" * 8001, "user_id": "alex"}, "results[1].memory"),
                       ({"id": "b", "memory": "a\x00b", "user_id": "bob"}, "results[1].memory")):
        with pytest.raises(ValidationError) as refused:
            m.import_mem0({"results": [good, bad]})
        assert refused.value.field == field, (bad, refused.value)
    assert m.get_all(user_id="alex")["results"] == [] and m.get_all(user_id="bob")["results"] == []


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "import"


@pytest.mark.parametrize("facade", ["Memory", "AsyncMemory"])
def test_a_memory_deleted_since_an_import_is_not_brought_back_by_the_export_again(
        isolated_home: Path, caplog: pytest.LogCaptureFixture, facade: str) -> None:
    # As engram import leaves out what was forgotten since (the audit trail's record), so does the
    # facade's import: a delete through mem0's API is on purpose, and the same or a newer export
    # must not undo it.
    from engram.compat.mem0 import AsyncMemory

    mem = Memory() if facade == "Memory" else AsyncMemory()

    def call(name: str, *args: Any, **kwargs: Any) -> Any:
        made = getattr(mem, name)(*args, **kwargs)
        return asyncio.run(made) if facade == "AsyncMemory" else made

    export = (FIXTURES / "mem0.json").read_text(encoding="utf-8")
    try:
        assert call("import_mem0", export) == {"imported": 3, "skipped": 0, "forgotten": 0}
        paris = next(r for r in call("get_all", user_id="alex")["results"] if r["memory"].startswith("Is travelling"))
        call("delete", paris["id"])
        call("delete_all", user_id="alex", run_id="run-42")
        with caplog.at_level(logging.WARNING, logger="engram.compat.mem0"):
            assert call("import_mem0", export) == {"imported": 0, "skipped": 1, "forgotten": 2}
        assert [r["memory"] for r in call("get_all", user_id="alex")["results"]] == ["Prefers vegetarian restaurants"]
        assert any("2 memories were forgotten in engram since an earlier import and are not imported again"
                   in r.getMessage() for r in caplog.records), caplog.records
        # Added again through the facade, it is the facade's own memory once more.
        assert call("add", "Is travelling to Paris in June", user_id="alex", infer=False)["results"][0]["event"] == "ADD"
    finally:
        call("close")


def test_imported_metadata_comes_back_as_mem0_had_it(m: Memory, caplog: pytest.LogCaptureFixture) -> None:
    # mem0 -> the facade -> mem0: each item's metadata, its own "mem0" entry included, comes back
    # unchanged; engram keeps mem0's id and hash beside it (as engram import does) and says so.
    source = (FIXTURES / "mem0-own-metadata.json").read_text(encoding="utf-8")
    original = {item["memory"]: item["metadata"] for item in json.loads(source)["results"]}
    with caplog.at_level(logging.WARNING, logger="engram.compat.mem0"):
        assert m.import_mem0(source) == {"imported": 4, "skipped": 0, "forgotten": 0}
    assert [r.getMessage() for r in caplog.records] == [
        f"mem0 import: results[{i}].metadata.mem0: kept as metadata.mem0.own (metadata.mem0 holds where the record "
        "came from in mem0)" for i in (0, 1)]
    items = {item["memory"]: item for item in m.get_all(user_id="alex")["results"]}
    assert {content: item["metadata"] for content, item in items.items()} == original
    coffee = items["Orders a flat white every morning"]
    assert m.get(coffee["id"])["metadata"]["mem0"]["note"] == "cafe\u0301 \u2615  "
    assert m.engram.for_agent("alex").get(_engram_id(m, coffee["id"])).metadata["mem0"] == {
        "id": "3d1f6a2e-8c4b-4f0a-9e7d-5b2c1a0f9e8d", "hash": "0c2f4e6a8b1d3f5e7a9c0b2d4f6e8a1c", "user_id": "alex",
        "own": {"id": "crm-7731", "note": "cafe\u0301 \u2615  "},
        "imported_text_sha256": _sha256(coffee["memory"]), "imported_tags": ["food"],
        "imported_keys": sorted({*original[coffee["memory"]], "user_id"} - {"mem0"})}
    # Changing the user's own "mem0" entry changes that entry, not what engram keeps of the origin.
    m.update(coffee["id"], "Orders an oat flat white every morning", metadata={"mem0": "changed"})
    assert m.get(coffee["id"])["metadata"] == {"source": "chat", "mem0": "changed"}
    kept = m.engram.for_agent("alex").get(_engram_id(m, coffee["id"])).metadata["mem0"]
    assert kept["id"] == coffee["id"] == "3d1f6a2e-8c4b-4f0a-9e7d-5b2c1a0f9e8d"
    # A memory added with a "mem0" entry of its own gives it back too.
    added = m.add("Walks the dog at noon", user_id="alex", metadata={"mem0": {"id": "mine"}}, infer=False)
    assert m.get(added["results"][0]["id"])["metadata"] == {"mem0": {"id": "mine"}}


def test_the_platforms_fields_come_in_as_engram_import_keeps_them(m: Memory) -> None:
    # The platform's owner, organization, app_id, structured_attributes, immutable and expiry: kept
    # in what engram keeps of the origin (as engram import keeps them), out of mem0's result shape,
    # and given back by the mem0 export, where the facade kept only mem0's id and hash.
    from engram.exporters.mem0 import dump

    source = json.loads((FIXTURES / "mem0-platform.json").read_text(encoding="utf-8"))["results"]
    assert m.import_mem0({"results": source}) == {"imported": 2, "skipped": 0, "forgotten": 0}
    fields = ("owner", "organization", "app_id", "structured_attributes", "immutable", "expiration_date")
    items = {item["memory"]: item for item in m.get_all(user_id="alice")["results"]}
    for given in source:
        item = items[given["memory"]]
        kept = m.engram.for_agent("alice").get(_engram_id(m, item["id"])).metadata["mem0"]
        assert {k: kept.get(k) for k in (*fields, "id", "hash")} == {k: given[k] for k in (*fields, "id", "hash")}
        assert not set(fields) & set(item) and item["metadata"] == given["metadata"], item
    back = {i["id"]: i for i in json.loads(dump(m.engram.for_agent("alice")))["results"]}
    for given in source:
        assert {k: back[given["id"]].get(k) for k in fields} == {k: given[k] for k in fields}, back[given["id"]]
    assert m.import_mem0({"results": source}) == {"imported": 0, "skipped": 2, "forgotten": 0}


_FIRST = {"id": "f38b689d-6b24-45b7-bced-17fbb4d8bac7", "memory": "Is travelling to Paris in June",
          "hash": "62bc074f56d1f909f1b4c2b639f56f6a", "metadata": {"source": "chat"}, "categories": ["travel"],
          "app_id": "planner", "created_at": "2024-02-25T23:57:00Z", "updated_at": "2024-07-25T23:57:00Z",
          "user_id": "alex"}


def _imported_fields(memory: Any) -> dict[str, Any]:
    """What an import decides of a memory (its owner's id aside, so two owners' copies compare)."""
    fields = ("content", "category", "type", "layer", "tags", "importance", "related_entity", "source",
              "search_context", "valid_from", "valid_until", "created_at")
    metadata = {k: v for k, v in memory.metadata.items() if k != "user_id"}
    return {name: getattr(memory, name) for name in fields} | {
        "metadata": metadata | {"mem0": {k: v for k, v in metadata["mem0"].items() if k != "user_id"}}}


@pytest.mark.parametrize("text", ["Is travelling to Paris in July", _FIRST["memory"]], ids=["text-changed", "same-text"])
def test_a_newer_export_of_an_item_leaves_its_memory_as_a_fresh_import_of_it_would(m: Memory, text: str) -> None:
    # mem0 exported again after the item changed (later updated_at; its text, categories, metadata
    # and platform fields changed; an expiration_date set): the memory the first import made is
    # brought to what importing the newer item fresh gives (valid_until from expiration_date, the
    # next midnight UTC; mem0's fields in metadata.mem0 as the newer item has them, app_id gone),
    # where the expiry was dropped and, for a changed text (a new key), the whole change was skipped.
    second = {**_FIRST, "memory": text, "hash": "0d4c1e8a9b7f6e5d4c3b2a1908f7e6d5", "metadata": {"source": "email"},
              "categories": ["trips", "europe"], "updated_at": "2024-08-01T09:00:00Z", "expiration_date": "2024-09-30"}
    del second["app_id"]
    assert m.import_mem0([_FIRST]) == {"imported": 1, "skipped": 0, "forgotten": 0}
    [item] = m.get_all(user_id="alex")["results"]
    before_update = m.engram.clock()
    assert m.import_mem0([second]) == {"imported": 1, "skipped": 0, "forgotten": 0}
    [memory] = m.engram.store.get_many([_engram_id(m, item["id"])])
    assert (memory.content, memory.tags) == (text, ("trips", "europe"))
    assert memory.valid_until == datetime(2024, 10, 1, tzinfo=UTC).timestamp()
    assert memory.metadata == {"source": "email", "user_id": "alex", "mem0": {
        "id": _FIRST["id"], "hash": second["hash"], "user_id": "alex", "expiration_date": "2024-09-30",
        "imported_text_sha256": _sha256(text), "imported_tags": ["trips", "europe"], "imported_keys": ["source", "user_id"]}}
    # Everything else as a fresh import of the newer item gives it (here into another owner's agent).
    assert m.import_mem0([{**second, "id": "another", "user_id": "sam"}])["imported"] == 1
    [fresh] = m.engram.for_agent("sam").list(scope="agent")
    expected = _imported_fields(fresh)
    expected["metadata"]["mem0"]["id"] = _FIRST["id"]
    assert _imported_fields(memory) == expected
    # Its update time is the write's: the engine stamps every update with its clock (a new memory
    # alone takes the item's updated_at), later than either export's, so neither comes back.
    assert memory.updated_at >= before_update
    assert m.get(item["id"])["metadata"] == {"source": "email"} and m.get(item["id"])["memory"] == text
    assert [e["event"] for e in m.history(item["id"])] == ["ADD", "UPDATE"]
    # The first export again changes nothing, nor does the second.
    for export in ([_FIRST], [second]):
        assert m.import_mem0(export) == {"imported": 0, "skipped": 1, "forgotten": 0}
        assert m.engram.store.get_many([_engram_id(m, item["id"])]) == [memory]
    # A newer one without an expiry or categories: the valid time and tags are cleared, as fresh.
    third = {k: v for k, v in second.items() if k not in ("expiration_date", "categories")}
    assert m.import_mem0([{**third, "updated_at": "2030-01-01T00:00:00Z"}])["imported"] == 1
    [memory] = m.engram.store.get_many([_engram_id(m, item["id"])])
    assert (memory.valid_until, memory.tags, memory.metadata["mem0"]) == (None, (), {
        "id": _FIRST["id"], "hash": second["hash"], "user_id": "alex", "imported_text_sha256": _sha256(text),
        "imported_tags": [], "imported_keys": ["source", "user_id"]})


def test_a_newer_item_whose_text_dates_it_after_its_expiry_updates_as_a_fresh_import(m: Memory) -> None:
    # A fresh import keeps the date the text states as valid_from only when it falls before the
    # expiry (an end before its start is no valid time): the update takes the same rule, where it
    # derived the date as remember does and refused the whole export.
    second = {**_FIRST, "memory": "On 2024-12-01 Alex moves to Lisbon", "updated_at": "2024-08-01T09:00:00Z",
              "expiration_date": "2024-09-30"}
    assert m.import_mem0([_FIRST]) == {"imported": 1, "skipped": 0, "forgotten": 0}
    [item] = m.get_all(user_id="alex")["results"]
    assert m.import_mem0([second]) == {"imported": 1, "skipped": 0, "forgotten": 0}
    [memory] = m.engram.store.get_many([_engram_id(m, item["id"])])
    assert (memory.content, memory.valid_from, memory.valid_until) == (
        second["memory"], None, datetime(2024, 10, 1, tzinfo=UTC).timestamp())


def _later(after: float, item: dict[str, Any], **changed: Any) -> dict[str, Any]:
    """``item`` as mem0 gives it once it changed it a minute after ``after`` (an engram memory's
    update time): newer than the memory, as an export taken after mem0's change is."""
    return {**item, **changed, "updated_at": datetime.fromtimestamp(after + 60, UTC).isoformat()}


def _engram_id(m: Memory, facade_id: str) -> str:
    """engram's id of the memory the facade calls ``facade_id`` (the mem0 id of one imported from
    mem0: ``compat.mem0.public_id``)."""
    return m._find(facade_id)[0].id


def _read(m: Memory, memory_id: str) -> Any:
    """The memory as stored, when it was last used included: an import that brings nothing makes
    no write, not even the use an unchanged update counts."""
    [memory] = m.engram.store.get_many([memory_id])
    return memory


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_a_tag_added_in_engram_stays_when_a_newer_export_changes_the_categories(m: Memory) -> None:
    # As engram import does: mem0's new categories replace the ones the last import brought (kept at
    # metadata.mem0.imported_tags), in mem0's order, and a tag added in engram since stays after them,
    # where the facade replaced the tags wholesale and lost it.
    assert m.import_mem0([_FIRST]) == {"imported": 1, "skipped": 0, "forgotten": 0}
    alex = m.engram.for_agent("alex")
    [memory] = alex.list(scope="agent")
    assert memory.metadata["mem0"]["imported_tags"] == ["travel"]
    tagged = alex.update(memory, tags=["travel", "mine"]).memory
    later = _later(tagged.updated_at, _FIRST, categories=["trips", "europe"])
    assert m.import_mem0([later]) == {"imported": 1, "skipped": 0, "forgotten": 0}
    now = _read(m, memory.id)
    assert now.tags == ("trips", "europe", "mine")
    assert (now.metadata["mem0"]["imported_tags"], now.metadata["mem0"]["imported_text_sha256"]) == (
        ["trips", "europe"], _sha256(_FIRST["memory"]))
    assert m.get(memory.id)["metadata"] == {"source": "chat"}  # the bookkeeping is engram's, out of mem0's shape
    assert m.import_mem0([later]) == {"imported": 0, "skipped": 1, "forgotten": 0}
    assert _read(m, memory.id) == now


def test_a_newer_item_that_brings_nothing_new_leaves_its_memory_untouched(m: Memory) -> None:
    # mem0 gave the item a later updated_at and nothing else (the same text, categories, metadata,
    # no expiry): it is newer than the memory, but an import of it has nothing to bring. The facade
    # made no write, as engram import makes none, where it handed update the same fields and the
    # unchanged write counted as a use of the memory (its last_accessed moved).
    assert m.import_mem0([_FIRST]) == {"imported": 1, "skipped": 0, "forgotten": 0}
    [memory] = m.engram.for_agent("alex").list(scope="agent")
    trail, history = m.engram.audit_of(memory.id, every_agent=True), m.history(memory.id)
    assert [row.action for row in trail] == ["imported"] and memory.last_accessed is None
    touched = _later(memory.updated_at, _FIRST)
    assert m.import_mem0([touched]) == {"imported": 0, "skipped": 1, "forgotten": 0}
    assert _read(m, memory.id) == memory
    assert m.engram.audit_of(memory.id, every_agent=True) == trail and m.history(memory.id) == history
    assert m.engram.for_agent("alex").versions(memory) == []
    summary = m.engram.import_from(json.dumps({"results": [touched]}), "mem0")  # the same verdict
    assert (summary.updated, summary.skipped) == (0, 1) and _read(m, memory.id) == memory
    # A newer item that does bring something is still written, beside one that brings nothing.
    other = {**_FIRST, "id": "b2", "memory": "Likes green tea"}
    assert m.import_mem0([touched, other]) == {"imported": 1, "skipped": 1, "forgotten": 0}
    [tea] = [r for r in m.get_all(user_id="alex")["results"] if r["memory"] == "Likes green tea"]
    retagged = _later(m.engram.store.get_many([_engram_id(m, tea["id"])])[0].updated_at, other, categories=["drinks"])
    assert m.import_mem0([touched, retagged]) == {"imported": 1, "skipped": 1, "forgotten": 0}
    assert _read(m, _engram_id(m, tea["id"])).tags == ("drinks",) and _read(m, memory.id) == memory


def _imported_tagged_then_later(m: Memory) -> tuple[Any, Any, dict[str, Any]]:
    """_FIRST imported through the facade, the tag "mine" added in engram, and a newer export of the
    item (new text, categories ["trips"]): alex's view, the memory, the newer item."""
    m.import_mem0([_FIRST])
    alex = m.engram.for_agent("alex")
    [memory] = alex.list(scope="agent")
    tagged = alex.update(memory, tags=["travel", "mine"]).memory
    return alex, memory, _later(tagged.updated_at, _FIRST, memory="Is travelling to Paris in July", categories=["trips"])


def test_engram_import_after_a_facade_refresh_of_the_same_export_changes_nothing(m: Memory) -> None:
    # The facade keeps what engram import keeps of what it brought (the text's digest, the tags),
    # so engram import of the same newer export finds nothing to change; and of a later one, brings
    # mem0's text (the memory's is still the one an import brought) and keeps the tag added in engram,
    # where it took the refreshed text for an edit in engram and dropped that tag.
    alex, memory, later = _imported_tagged_then_later(m)
    assert m.import_mem0([later]) == {"imported": 1, "skipped": 0, "forgotten": 0}
    now = _read(m, memory.id)
    assert (now.content, now.tags) == (later["memory"], ("trips", "mine"))
    summary = m.engram.import_from(json.dumps({"results": [later]}), "mem0")
    assert (summary.imported, summary.updated, summary.skipped) == (0, 0, 1), summary
    assert _read(m, memory.id) == now
    latest = _later(now.updated_at, _FIRST, memory="Is travelling to Paris in August", categories=["trips", "summer"])
    summary = m.engram.import_from(json.dumps({"results": [latest]}), "mem0")
    assert (summary.updated, summary.warnings) == (1, ()), summary
    moved = _read(m, memory.id)
    assert (moved.content, moved.tags) == (latest["memory"], ("trips", "summer", "mine"))
    assert [v.content for v in alex.versions(moved)] == [_FIRST["memory"], later["memory"]]


def test_the_facade_after_engram_import_of_the_same_export_changes_nothing(m: Memory) -> None:
    # The reverse order: engram import refreshes a memory the facade imported (keeping the tag
    # added in engram, which needs the tags the facade's import brought), and the facade's import of
    # the same export then changes nothing; a later one through the facade keeps that tag too.
    alex, memory, later = _imported_tagged_then_later(m)
    summary = m.engram.import_from(json.dumps({"results": [later]}), "mem0")
    assert (summary.imported, summary.updated, summary.warnings) == (0, 1, ()), summary
    now = _read(m, memory.id)
    assert (now.content, now.tags) == (later["memory"], ("trips", "mine"))
    assert m.import_mem0([later]) == {"imported": 0, "skipped": 1, "forgotten": 0}
    assert _read(m, memory.id) == now
    latest = _later(now.updated_at, _FIRST, memory="Is travelling to Paris in August", categories=["trips", "summer"])
    assert m.import_mem0([latest]) == {"imported": 1, "skipped": 0, "forgotten": 0}
    moved = _read(m, memory.id)
    assert (moved.content, moved.tags) == (latest["memory"], ("trips", "summer", "mine"))
    assert m.get(memory.id)["memory"] == latest["memory"] and m.get(memory.id)["metadata"] == {"source": "chat"}


def test_a_newer_export_brings_mem0s_text_over_an_edit_in_engram_and_records_it(m: Memory) -> None:
    # The facade's memories are mem0's (its application's): a newer item's text replaces a text
    # changed in engram before mem0's change (the edit stays in the versions), where engram import
    # keeps the edit. The digest it records is of the text it brought, so engram import of the same
    # export finds the text an import's and changes nothing.
    m.import_mem0([_FIRST])
    alex = m.engram.for_agent("alex")
    [memory] = alex.list(scope="agent")
    edited = alex.update(memory, content="Is travelling to Paris and Rome in June").memory
    later = _later(edited.updated_at, _FIRST, memory="Is travelling to Paris in July")
    assert m.import_mem0([later]) == {"imported": 1, "skipped": 0, "forgotten": 0}
    now = _read(m, memory.id)
    assert (now.content, now.metadata["mem0"]["imported_text_sha256"]) == (later["memory"], _sha256(later["memory"]))
    assert [v.content for v in alex.versions(now)] == [_FIRST["memory"], edited.content]
    summary = m.engram.import_from(json.dumps({"results": [later]}), "mem0")
    assert (summary.updated, summary.skipped, summary.warnings) == (0, 1, ()), summary
    assert _read(m, memory.id) == now


def test_a_memory_engram_import_made_of_an_item_is_the_facades_and_its_import_refreshes_it(m: Memory) -> None:
    # engram import places a mem0 item as the facade does (importers.mem0.owner: the user's agent, the
    # ids at the top of the metadata), so the facade finds that memory as its own, and its import of a
    # newer export of the item refreshes it. It kept the ids in metadata.mem0 alone, which the facade
    # never read: the memory was invisible to get_all and search, and the facade's import skipped it.
    m.engram.import_from(json.dumps({"results": [_FIRST]}), "mem0")
    [memory] = m.engram.for_agent("alex").list(scope="agent")
    assert [(r["id"], r["memory"], r["metadata"], r["user_id"]) for r in m.get_all(user_id="alex")["results"]] == [
        (_FIRST["id"], _FIRST["memory"], {"source": "chat"}, "alex")]
    later = _later(memory.updated_at, _FIRST, memory="Is travelling to Paris in July", categories=["trips"])
    assert m.import_mem0([later]) == {"imported": 1, "skipped": 0, "forgotten": 0}
    now = _read(m, memory.id)
    assert (now.content, now.tags, now.created_at) == (later["memory"], ("trips",), memory.created_at)
    assert m.import_mem0([later]) == {"imported": 0, "skipped": 1, "forgotten": 0}
    assert [r["memory"] for r in m.get_all(user_id="alex")["results"]] == [later["memory"]]


def test_an_item_whose_key_only_a_memory_the_facade_did_not_make_holds_is_imported_beside_it(m: Memory) -> None:
    # A global memory (every agent reads it) and the engram agent's own memory under the item's key
    # are not the facade's: the item is a memory of its own (as a fresh import stores it, under
    # another key), and neither is changed, where the global one made the item count as held and
    # be skipped.
    shared = m.engram.remember("Is travelling to Paris in June", key=key_from_content(_FIRST["memory"]),
                               scope="global").memory
    assert m.import_mem0([_FIRST]) == {"imported": 1, "skipped": 0, "forgotten": 0}
    assert [(r["memory"], r["metadata"]) for r in m.get_all(user_id="alex")["results"]] == [
        (_FIRST["memory"], {"source": "chat"})]
    assert m.engram.store.get_many([shared.id]) == [shared]
    own = m.engram.for_agent("bea").remember("Is travelling to Paris in June", key=key_from_content(_FIRST["memory"])).memory
    assert m.import_mem0([{**_FIRST, "id": "b1", "user_id": "bea"}])["imported"] == 1
    assert [r["metadata"] for r in m.get_all(user_id="bea")["results"]] == [{"source": "chat"}]
    assert m.engram.store.get_many([own.id]) == [own]


def test_a_user_id_naming_a_langgraph_agent_is_refused(m: Memory) -> None:
    # The facade keeps a user's memories in the engram agent named by the user id; engram's LangGraph
    # store keeps each namespace's items in an agent named DEFAULT_AGENT_PREFIX + label: such a user
    # id would read, change and delete those items.
    user = f"{DEFAULT_AGENT_PREFIX}u-7"
    calls = [lambda: m.add("Likes tea", user_id=user), lambda: m.get_all(user_id=user),
             lambda: m.search("tea", user_id=user), lambda: m.get_all(filters={"user_id": user}),
             lambda: m.delete_all(user_id=user)]
    for call in calls:
        with pytest.raises(ValidationError) as refused:
            call()
        assert refused.value.field == "user_id"
        assert str(refused.value).startswith(f"user_id: {json.dumps(user)} holds ':'")
        assert "LangGraph" in str(refused.value)
    with pytest.raises(ValidationError) as refused:
        m.import_mem0({"results": [{"id": "a", "memory": "Likes tea", "user_id": user}]})
    assert refused.value.field == "results[0].user_id"
    # An agent or run of that name is the facade's own agent:lg:... / run:lg:..., no LangGraph agent.
    assert [r["event"] for r in m.add("Likes tea", agent_id=user, infer=False)["results"]] == ["ADD"]
    assert m.engram.stats().by_scope.get(f"agent:{user}") is None and m.engram.stats().by_scope[f"agent:agent:{user}"] == 1


def test_a_user_id_with_a_colon_is_refused_whatever_agents_it_would_name(m: Memory) -> None:
    # A user's memories live in the engram agent named by the user id as it is; the agents other
    # doors name for their users all have a prefix ending in ':' (Google ADK's adk:app:user, Agno's
    # agno:user, the strands:user and crewai:user the docs suggest, any application's). Refusing
    # only agent:, run: and lg: let user_id="adk:app:u-7" store memories in ADK user u-7's agent
    # (recalled into u-7's turns) and update one of its memories by key.
    adk_user = m.engram.for_agent("adk:app:u-7")
    adk_user.remember("u-7's card ends in 4242", key="card")
    for user in ("adk:app:u-7", "agno:u-7", "strands:u-7", "crewai:u-7", "tenant:alice"):
        for method, args, kwargs in (("add", ("my card ends in 0000",), {"user_id": user, "infer": False}),
                                     ("get_all", (), {"user_id": user}), ("search", ("card",), {"user_id": user}),
                                     ("delete_all", (), {"user_id": user}), ("get_all", (), {"filters": {"user_id": user}})):
            with pytest.raises(ValidationError) as refused:
                getattr(m, method)(*args, **kwargs)
            assert refused.value.field == "user_id" and str(refused.value).startswith(f"user_id: {json.dumps(user)} holds ':'")
    with pytest.raises(ValidationError) as refused:
        m.import_mem0({"results": [{"id": "a", "memory": "my card ends in 0000", "user_id": "adk:app:u-7"}]})
    assert refused.value.field == "results[0].user_id"
    assert [(x.key, x.content) for x in adk_user.list()] == [("card", "u-7's card ends in 4242")]
    # An agent or run id may hold one: it is the facade's own agent:... / run:... agent.
    assert [r["event"] for r in m.add("Likes tea", agent_id="adk:app:u-7", infer=False)["results"]] == ["ADD"]
    assert m.engram.stats().by_scope["agent:adk:app:u-7"] == 1


def test_a_blank_id_is_refused_by_the_import_as_by_the_facade(m: Memory) -> None:
    # The facade refuses a blank user, agent or run id; its import (and engram import) read one as
    # no id and stored the item in the facade's own agent, which no user's call reaches.
    for name in ("user_id", "agent_id", "run_id"):
        with pytest.raises(ValidationError) as refused:
            m.add("Likes tea", **{name: " "}, infer=False)
        assert refused.value.field == name
        with pytest.raises(ValidationError) as refused:
            m.import_mem0({"results": [{"id": "a", "memory": "Likes tea", "user_id": "bea"},
                                       {"id": "b", "memory": "Likes coffee", name: " \t"}]})
        assert refused.value.field == f"results[1].{name}" and '" \\t" is blank' in str(refused.value)
    assert list(m.engram.store.iter_all()) == []  # all or nothing: bea's item is not stored either


def test_an_imported_items_own_engram_metadata_comes_back_byte_for_byte(m: Memory) -> None:
    # mem0 -> the facade -> mem0: "engram" in an item's metadata is the user's (text, null, a list,
    # a dict shaped like engram's fields); results give it back unchanged, keys in their order.
    source = (FIXTURES / "mem0-own-engram.json").read_text(encoding="utf-8")
    original = {item["memory"]: item["metadata"] for item in json.loads(source)["results"]}
    assert m.import_mem0(source) == {"imported": 6, "skipped": 0, "forgotten": 0}
    items = {item["memory"]: item for item in m.get_all(user_id="alex")["results"]}
    for content, metadata in original.items():
        assert json.dumps(items[content]["metadata"], ensure_ascii=False) == json.dumps(metadata, ensure_ascii=False)
        assert m.get(items[content]["id"])["metadata"] == metadata


def test_update_history_and_delete_read_the_memory_once(m: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    # The facade finds the memory by id (whichever owner holds it) and hands it on as it found it.
    added = m.add("I like tea", user_id="alice", infer=False)["results"][0]["id"]
    store, calls = m.engram.store, []
    for name in ("get", "versions"):
        real = getattr(store, name)
        monkeypatch.setattr(store, name, lambda *args, _real=real, _name=name: calls.append(_name) or _real(*args))
    m.update(added, "I like green tea")
    assert calls == ["get"]  # the writer's look under its key, that it is still stored (not a read by id)
    calls.clear()
    assert [h["new_memory"] for h in m.history(added)] == ["I like tea", "I like green tea"]
    assert calls == ["versions"]
    calls.clear()
    assert m.delete(added) == {"message": "Memory deleted successfully!"}
    assert calls == [] and m.engram.find(added) is None  # found by the facade, deleted as found


def test_an_unknown_id_raises_the_value_error_mem0_code_catches(m: Memory) -> None:
    # mem0's update and delete raise ValueError("Memory with id ... not found"): an application
    # written for mem0 catches that one, and must keep working after the changed import.
    kept = m.add("I like tea", user_id="alice", infer=False)["results"][0]["id"]
    m.delete(kept)
    for call in (lambda: m.delete(kept), lambda: m.update(kept, "I like coffee"),
                 lambda: m.update("0190e2b2-0000-7000-8000-000000000000", "x")):
        try:
            call()
        except ValueError as exc:  # as a mem0 application writes it
            assert isinstance(exc, NotFoundError) and exc.ref in (kept, "0190e2b2-0000-7000-8000-000000000000")
        else:
            pytest.fail("no error for an unknown memory id")
    assert m.get(kept) is None and [h["event"] for h in m.history(kept)] == ["ADD", "DELETE"]
    assert m.history("0190e2b2-0000-7000-8000-000000000000") == []  # never stored: nothing, as mem0


def test_a_mem0_config_opens_engram_with_its_embedder_and_llm(
        isolated_home: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    # mem0's docs: Memory.from_config(config) with vector_store/llm/embedder sections. Changing the
    # import only, the same dict opens engram: embedder and llm are engram's providers (Ollama
    # here, over a real socket), the sections engram has no use for are left aside, each named.
    from engram import foreign_settings
    from engram.testing.llm_servers import OpenAICompatServer, Reply
    from engram.testing.provider_servers import ProviderServer

    monkeypatch.setattr(foreign_settings, "_warned", set())
    facts = (Reply.say("NONE"), Reply.say("- The user loves sci-fi movies"))  # one reply per user message
    with ProviderServer(api_key=None) as embeddings, OpenAICompatServer(*facts) as llm:
        config = {
            "vector_store": {"provider": "qdrant", "config": {"collection_name": "test", "host": "localhost", "port": 6333}},
            "llm": {"provider": "ollama", "config": {"model": "llama3.1:latest", "temperature": 0,
                                                     "max_tokens": 2000, "ollama_base_url": llm.root_url}},
            "embedder": {"provider": "ollama", "config": {"model": "nomic-embed-text:latest",
                                                          "ollama_base_url": embeddings.url}},
            "graph_store": {"provider": "neo4j", "config": {"url": "neo4j://localhost:7687"}},
            "history_db_path": "/tmp/history.db",
            "version": "v1.1",
        }
        with caplog.at_level(logging.WARNING, logger="engram.config"):
            m = Memory.from_config(config)
        try:
            assert sorted(r.getMessage().split(":")[0] for r in caplog.records) == [
                "graph_store", "history_db_path", "vector_store", "version"]
            assert m.engram.settings.home == isolated_home  # engram's store, not qdrant's nor history_db_path
            added = m.add(MESSAGES, user_id="alice")["results"]
            assert [(r["memory"], r["event"]) for r in added] == [("The user loves sci-fi movies", "ADD")]
            assert [r.body["model"] for r in llm.requests] == ["llama3.1:latest"] * 2  # one call per user message
            assert {r.body["model"] for r in embeddings.requests} == {"nomic-embed-text:latest"}
            assert m.search("sci-fi", filters={"user_id": "alice"})["results"][0]["id"] == added[0]["id"]
            assert config["llm"]["config"]["ollama_base_url"] == llm.root_url  # the caller's dict left as it was
        finally:
            m.close()


def test_a_mem0_config_names_what_engram_cannot_honour(isolated_home: Path, monkeypatch: pytest.MonkeyPatch,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    from engram import foreign_settings
    from engram.errors import ConfigError

    monkeypatch.setattr(foreign_settings, "_warned", set())
    # A provider engram has not: its own settings apply (no LLM: the rule extractor), said once.
    with caplog.at_level(logging.WARNING, logger="engram.config"):
        m = Memory.from_config({"llm": {"provider": "groq", "config": {"model": "llama3-70b"}},
                                "embedder": {"provider": "huggingface", "config": {"model": "multi-qa-MiniLM-L6-cos-v1"}},
                                "path": str(isolated_home / "mine.db")})
    try:
        messages = sorted(r.getMessage() for r in caplog.records)
        assert messages[0].startswith("embedder.config.model: 'multi-qa-MiniLM-L6-cos-v1' is not loaded")
        assert messages[1].startswith("llm.provider: 'groq' is not used: engram has no such provider")
        assert messages[1].endswith("extracts facts with engram's rules") and len(messages) == 2
        assert m.engram.settings.embeddings.provider == "local" and m.engram.settings.path == isolated_home / "mine.db"
        assert [r["memory"] for r in m.add("I love sci-fi movies", user_id="alice")["results"]] == [
            "The user loves sci-fi movies."]  # engram's rule extractor, no network
    finally:
        m.close()
    for bad, named in (({"embedder": "openai"}, "embedder:"), ({"llm": {"provider": "openai", "config": "gpt-4"}}, "llm.config:"),
                       ({"vector_store": {}, "verison": "v1.1"},
                        "verison: not a setting engram or mem0 knows .did you mean 'version'"),
                       ({"vektor_store": {}}, "vektor_store: not a setting engram or mem0 knows .did you mean 'vector_store'"),
                       ({"agnet": "alice"}, "agnet: not a setting engram knows .did you mean 'agent'"),
                       ({"vector_indx": {}}, "vector_indx: not a setting engram knows .did you mean 'vector_index'")):
        with pytest.raises(ConfigError, match=named):
            Memory.from_config(bad)
    with pytest.raises(ValidationError) as err:
        Memory.from_config([("llm", {})])
    assert err.value.field == "config"


def _tasks(m: Memory, user: str = "pm") -> None:
    for text, metadata in [
        ("Ship the alpha release", {"project": "alpha", "priority": 9, "status": "open", "assignee": "alice"}),
        ("Write the beta docs", {"project": "beta", "priority": 5, "status": "completed", "assignee": "bob"}),
        ("Fix the alpha login bug", {"project": "alpha", "priority": 8, "status": "open", "assignee": "carol",
                                     "title": "URGENT: Login"}),
        ("Plan the offsite", {"category": "spam", "priority": 2}),
    ]:
        m.add(text, user_id=user, metadata=metadata, infer=False)


def test_mem0_metadata_filter_operators(m: Memory) -> None:
    # mem0's documented filters (docs.mem0.ai, open-source metadata filtering), with the ids in them
    _tasks(m)

    def found(**kwargs: Any) -> list[str]:
        return sorted(r["memory"] for r in m.get_all(**kwargs)["results"])

    assert found(filters={"user_id": "pm", "priority": {"gte": 8}}) == ["Fix the alpha login bug", "Ship the alpha release"]
    assert found(filters={"user_id": "pm", "status": {"nin": ["completed", "archived"]}, "project": {"in": ["alpha"]}}) == [
        "Fix the alpha login bug", "Ship the alpha release"]
    assert found(filters={"user_id": "pm", "title": {"icontains": "urgent"}}) == ["Fix the alpha login bug"]
    assert found(filters={"user_id": "pm", "category": "*"}) == ["Plan the offsite"]
    assert found(filters={"user_id": "pm", "AND": [
        {"project": {"in": ["alpha", ""]}}, {"priority": {"gte": 8}}, {"status": {"ne": "completed"}},
        {"OR": [{"assignee": "alice"}, {"assignee": "bob"}]}]}) == ["Ship the alpha release"]
    assert found(filters={"user_id": "pm", "NOT": [{"category": "spam"}, {"status": "completed"}]}) == [
        "Fix the alpha login bug", "Ship the alpha release"]
    # top-level ids (mem0 1.x) take the same filters; search applies them too
    assert found(user_id="pm", filters={"priority": {"lt": 3}}) == ["Plan the offsite"]
    hits = m.search("alpha", filters={"user_id": "pm", "assignee": {"ne": "alice"}})["results"]
    assert hits[0]["memory"] == "Fix the alpha login bug" and "Ship the alpha release" not in [h["memory"] for h in hits]
    assert m.get_all(filters={"user_id": "other", "priority": {"gte": 0}}) == {"results": []}  # owners stay apart

    # an unknown operator is refused, naming it and the operators there are (mem0: ValueError)
    with pytest.raises(ValueError) as err:
        m.search("alpha", filters={"user_id": "pm", "priority": {"between": [1, 5]}})
    assert isinstance(err.value, ValidationError) and err.value.field == "filters.priority"
    assert '"between"' in str(err.value) and all(op in str(err.value) for op in ("in", "nin", "gte", "icontains"))
    with pytest.raises(ValidationError) as err:
        m.get_all(filters={"user_id": "pm", "OR": [{"priority": {"gte": 1}}, {"x": {"regex": "a"}}]})
    assert err.value.field == "filters.OR[1].x"


def test_search_and_get_all_return_20_unless_asked(m: Memory) -> None:
    # mem0's top_k defaults to 20 for search and get_all; 1.x's limit still asks for a count
    for i in range(25):
        m.add(f"note number {i} about the garden", user_id="alice", infer=False)
    assert len(m.get_all(filters={"user_id": "alice"})["results"]) == 20
    assert len(m.get_all(filters={"user_id": "alice"}, top_k=25)["results"]) == 25
    assert len(m.get_all(user_id="alice", limit=22)["results"]) == 22
    assert len(m.search("garden note", filters={"user_id": "alice"})["results"]) == 20
    assert len(m.search("garden note", filters={"user_id": "alice"}, top_k=3, limit=7)["results"]) == 3  # top_k wins
    assert len(m.search("garden note", user_id="alice", limit=24)["results"]) == 24


def test_history_keeps_a_deleted_memorys_events_as_mem0_does(m: Memory) -> None:
    added = m.add([{"role": "user", "content": "I like tea", "name": "ann"}], user_id="alice", infer=False)
    tea = added["results"][0]["id"]
    m.update(tea, "I like green tea")
    m.update(tea, "I like green tea", metadata={"cups": 2})  # the same text: an UPDATE keeping it, as before the delete
    before = m.history(tea)
    m.delete(tea)
    after = m.history(tea)
    assert [(h["event"], h["old_memory"], h["new_memory"], h["is_deleted"]) for h in after] == [
        ("ADD", None, "I like tea", False), ("UPDATE", "I like tea", "I like green tea", False),
        ("UPDATE", "I like green tea", "I like green tea", False), ("DELETE", "I like green tea", None, True)]
    assert [{k: h[k] for k in ("id", "event", "created_at", "actor_id", "role")} for h in after[:3]] == [
        {k: h[k] for k in ("id", "event", "created_at", "actor_id", "role")} for h in before]
    assert (after[3]["actor_id"], after[3]["role"], after[3]["memory_id"]) == ("ann", "user", tea)
    # delete_all keeps them too; reset drops the history with the memories, as mem0's reset does
    coffee = m.add("I like coffee", user_id="alice", infer=False)["results"][0]["id"]
    m.delete_all(user_id="alice")
    assert [h["event"] for h in m.history(coffee)] == ["ADD", "DELETE"]
    juice = m.add("I like juice", user_id="alice", infer=False)["results"][0]["id"]
    m.reset()
    assert m.history(juice) == [] and [h["event"] for h in m.history(coffee)] == ["ADD", "DELETE"]
    # only memories the facade made: an engram agent's own forgotten memory stays out of reach
    native = m.engram.for_agent("alice").remember("Alice's agent keeps this to itself").memory
    m.engram.for_agent("alice").forget(native.id)
    assert m.history(native.id) == []


def test_an_update_of_the_metadata_alone_is_in_the_history_as_mem0_logs_it(m: Memory) -> None:
    # mem0's update logs an UPDATE whatever changed, the text as old_memory and new_memory: a mem0
    # application reading history() sees its metadata change, of any owner's memory.
    tea = m.add("I like tea", agent_id="coach", run_id="r1", infer=False)["results"][0]["id"]
    m.update(tea, "I like tea", metadata={"cups": 2})
    m.update(tea, "I like green tea")
    m.update(tea, "I like green tea", metadata={"cups": 3})
    m.update(tea, "I like green tea", metadata={"cups": 3})  # nothing changed: nothing to log
    # a change of a field mem0 does not know (engram's importance) is none of its history
    m.engram.for_agent("agent:coach").update(tea, importance=0.9)
    events = [(h["event"], h["old_memory"], h["new_memory"]) for h in m.history(tea)]
    assert events == [("ADD", None, "I like tea"), ("UPDATE", "I like tea", "I like tea"),
                      ("UPDATE", "I like tea", "I like green tea"), ("UPDATE", "I like green tea", "I like green tea")]
    stored = m.history(tea)
    assert [h["id"] for h in stored] == [f"{tea}:{n}" for n in range(4)]
    assert all(h["updated_at"] and h["updated_at"] >= stored[n]["updated_at"] for n, h in enumerate(stored[2:], 1))
    m.delete(tea)
    gone = m.history(tea)  # the same events once it is deleted (timed by the trail), then its DELETE
    assert [(h["id"], h["event"], h["old_memory"], h["new_memory"]) for h in gone[:4]] == [
        (h["id"], h["event"], h["old_memory"], h["new_memory"]) for h in stored]
    assert gone[3]["updated_at"] == stored[3]["updated_at"] and gone[4]["event"] == "DELETE"


def test_get_gives_every_field_of_mem0s_item(m: Memory) -> None:
    kept = m.add("I like tea", user_id="alice", metadata={"mood": "calm"}, infer=False)["results"][0]["id"]
    item = m.get(kept)
    assert set(item) == {"id", "memory", "hash", "metadata", "score", "created_at", "updated_at", "user_id", "role"}
    assert item["score"] is None and item["metadata"] == {"mood": "calm"}
    assert "score" not in m.get_all(filters={"user_id": "alice"})["results"][0]  # get_all's items have none


def test_async_from_config_is_awaited_as_mem0s_and_opens_off_the_loop(isolated_home: Path) -> None:
    # mem0's AsyncMemory.from_config is a coroutine: `m = await AsyncMemory.from_config(config)`.
    import asyncio
    import threading

    from engram.compat.mem0 import AsyncMemory
    from engram.errors import ConfigError

    opened_in: list[str] = []
    real = Memory.from_config

    def recording(config: Any) -> Memory:
        opened_in.append(threading.current_thread().name)
        return real(config)

    async def main() -> None:
        m = await AsyncMemory.from_config({"path": str(isolated_home / "mine.db"), "embeddings": {"provider": "none"}})
        try:
            assert m.engram.settings.path == isolated_home / "mine.db"
            added = await m.add("I love sci-fi movies", user_id="alice")
            assert (await m.get(added["results"][0]["id"]))["memory"] == "The user loves sci-fi movies."
        finally:
            await m.close()
        with pytest.raises(ConfigError, match="verison: not a setting"):
            await AsyncMemory.from_config({"verison": "v1.1"})
        with pytest.raises(ValidationError) as err:
            await AsyncMemory.from_config([("llm", {})])
        assert err.value.field == "config"

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Memory, "from_config", recording)
        asyncio.run(main())
    assert opened_in and threading.main_thread().name not in opened_in  # opened off the loop's thread


# --- privacy.pii = "redact" ---------------------------------------------------------------------

def _every_byte_written(home: Path) -> bytes:
    """Every file under engram's home (the database and its WAL, the audit trail in it, the memory
    folder's markdown): where a key made from the text as given would show."""
    return b"".join(path.read_bytes() for path in sorted(home.rglob("*")) if path.is_file())


@pytest.fixture
def redacting(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Memory:
    monkeypatch.setenv("ENGRAM_PRIVACY__PII", "redact")
    memory = Memory()
    yield memory
    memory.close()


def test_under_redact_no_pii_reaches_a_key_and_a_repeated_message_is_kept_once(redacting: Memory,
                                                                               isolated_home: Path) -> None:
    """Review: keys were made from the text as given (``my-email-alice-example-com-<sha256 of it>``)
    and kept by the store as given, so the address reached the key column, the audit trail and the
    memory folder; and a message said again under a run compared its stored, redacted copy with the
    text as given, found them different, and was stored again under a fresh key."""
    m = redacting
    said = "my email is alice@example.com"
    for ids in ({"user_id": "u1"}, {"user_id": "u1", "run_id": "r1"}, {"user_id": "u1", "agent_id": "a1", "run_id": "r1"}):
        first = m.add(said, infer=False, **ids)["results"]
        assert [r["memory"] for r in first] == ["my email is [REDACTED:email]"]
        assert m.add(said, infer=False, **ids)["results"] == []  # said again: the same memory, kept once
        assert [r["id"] for r in m.get_all(**ids)["results"] if r.get("role")] == [first[0]["id"]]
    # Facts, as the rule extractor reads them: from the text as stored (it cut "alice@example.com"
    # read as given at its last dot, "alice@example.", which no detector finds).
    for text in (said, "I love bob@example.com", "I prefer carol@example.com"):
        facts = m.add(text, user_id="u2", run_id="r2")["results"]
        assert len(facts) == 1 and "[REDACTED:email]" in facts[0]["memory"], facts
        assert m.add(text, user_id="u2", run_id="r2")["results"] == []
    assert m.import_mem0([{"id": "x1", "memory": "erin@example.com is my boss", "user_id": "u3"}])["imported"] == 1
    keys = [memory.key for owner in ("u1", "u2", "u3") for memory in m.engram.for_agent(owner).list(limit=100)]
    assert len(keys) == 7 and not [k for k in keys if "example" in k or "alice" in k], keys
    written = _every_byte_written(isolated_home)
    assert b"[REDACTED:email]" in written  # (the check reads what was written)
    for leaked in (b"example.com", b"alice", b"bob@", b"carol", b"erin", b"example."):
        assert leaked not in written, leaked


def test_a_health_condition_is_read_through_the_same_screen_as_every_fact(redacting: Memory, isolated_home: Path) -> None:
    """Health statements are facts mem0 extracts; the rule extractor read none ("I have diabetes").
    They are no PII kind, so they are stored as told, but through the screen every fact passes:
    the address said beside one is redacted, in the fact and in what is written."""
    m = redacting
    added = m.add("I have diabetes and I'm allergic to nuts. My email is dana@example.com", user_id="dana")["results"]
    assert [r["memory"] for r in added] == ["The user has diabetes.", "The user is allergic to nuts.",
                                            "The user's email is [REDACTED:email]."]
    written = _every_byte_written(isolated_home)
    assert b"The user has diabetes." in written and b"dana@" not in written


def test_under_redact_a_message_that_fits_only_as_given_is_refused_by_its_place(redacting: Memory) -> None:
    m = redacting
    limit = m.engram.max_content_chars
    grown = "x" * (limit - 10) + " a@b.io"  # a@b.io is 6 characters, its marker 16
    assert len(grown) <= limit
    with pytest.raises(ValidationError) as refused:
        m.add([{"role": "user", "content": "fine"}, {"role": "user", "content": grown}], user_id="u1", infer=False)
    assert refused.value.field == "messages[1].content" and "once possible PII was redacted" in refused.value.problem
    assert m.get_all(user_id="u1")["results"] == []  # all or nothing: the first message was not stored either


class _KeyingExtractor:
    """A plug-in extractor (``Memory(extractor=...)``) that keys each fact by what it names, as one
    wrapping a model may: the address the message masked spelled out in the key."""

    def extract(self, user: str, assistant: str = "", *, source: str = "") -> list[Fact]:
        return [Fact("f1", "alice@example.com is my manager", source, key="contact-alice@example.com"),
                Fact("f2", "bob@example.org is my dentist", source, key="contact-bob@example.org"),
                Fact("f3", "I like tea", source, key="likes-tea")]


def test_under_redact_a_fact_key_holding_pii_is_made_from_the_fact_as_stored(isolated_home: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A slot key holding PII is dropped (as synthesis drops its model's), not redacted in place: the
    two keys above, redacted alike (``contact-[REDACTED:email]``), made the second fact overwrite the
    first, one memory of two. Keys without PII stay the extractor's."""
    monkeypatch.setenv("ENGRAM_PRIVACY__PII", "redact")
    m = Memory(extractor=_KeyingExtractor())
    try:
        added = m.add("my contacts", user_id="u1")["results"]
        assert [r["event"] for r in added] == ["ADD"] * 3, added
        stored = {memory.key: memory.content for memory in m.engram.for_agent("u1").list(limit=10)}
    finally:
        m.close()
    assert stored == {"redacted-email-my-manager": "[REDACTED:email] is my manager",
                      "redacted-email-my-dentist": "[REDACTED:email] is my dentist",
                      "likes-tea": "I like tea"}, stored
    assert b"example" not in _every_byte_written(isolated_home)


def test_categories_and_tags_added_in_engram_past_the_bound_are_refused_naming_the_item(m: Memory) -> None:
    # 60 new categories beside 50 tags added in engram: 110, past MAX_TAGS (100). As engram import
    # does, the facade names the item's field (it raised the plain "tags" error, no item named),
    # before anything is written: the other item is not stored and the memory is kept as it was.
    assert m.import_mem0([_FIRST]) == {"imported": 1, "skipped": 0, "forgotten": 0}
    alex = m.engram.for_agent("alex")
    [memory] = alex.list(scope="agent")
    tagged = alex.update(memory, tags=["travel", *(f"mine{i}" for i in range(50))]).memory
    later = _later(tagged.updated_at, _FIRST, categories=[f"new{i}" for i in range(60)])
    other = {**_FIRST, "id": "b2", "memory": "Likes green tea"}
    with pytest.raises(ValidationError) as refused:
        m.import_mem0({"results": [other, later]})
    assert refused.value.field == "results[1].categories"
    assert str(refused.value).startswith(
        f"results[1].categories: with the 50 tags added in engram to memory {memory.key}, has 110 different tags "
        "(allowed: at most 100 different tags"), refused.value
    assert _read(m, memory.id) == tagged and alex.count() == 1


def test_a_newer_item_keeps_the_search_context_and_entity_set_in_engram(m: Memory) -> None:
    # mem0 has no search context or related entity: they are engram's, set in engram. A newer item
    # (mem0's new text) brings its text and keeps them, as engram import keeps them, where the facade
    # cleared both; an item whose engram entry (engram's own mem0 export) carries them brings those.
    assert m.import_mem0([_FIRST]) == {"imported": 1, "skipped": 0, "forgotten": 0}
    alex = m.engram.for_agent("alex")
    [memory] = alex.list(scope="agent")
    set_here = alex.update(memory, search_context="summer holiday plans", related_entity="Alex").memory
    later = _later(set_here.updated_at, _FIRST, memory="Is travelling to Paris in July")
    assert m.import_mem0([later]) == {"imported": 1, "skipped": 0, "forgotten": 0}
    now = _read(m, memory.id)
    assert (now.content, now.search_context, now.related_entity) == (later["memory"], "summer holiday plans", "Alex")
    carried = _later(now.updated_at, later, engram={"search_context": "autumn plans", "related_entity": "Sam"})
    assert m.import_mem0([carried]) == {"imported": 1, "skipped": 0, "forgotten": 0}
    assert (_read(m, memory.id).search_context, _read(m, memory.id).related_entity) == ("autumn plans", "Sam")
