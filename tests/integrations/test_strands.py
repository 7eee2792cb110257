"""EngramTools driven by a real Strands Agent over a real SQLite engram store. The model is Strands'
own OpenAI model talking to a local server that speaks the chat-completions wire format and plays
a scripted model (one tool call per reply, then an answer repeating what the last call got), so
Strands' real request building, tool registry, input validation and tool execution run; nothing
leaves 127.0.0.1."""

from __future__ import annotations

import asyncio
import inspect
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("strands", reason="the strands extra is not installed: pip install 'engram-recall[strands]'")
pytest.importorskip("openai", reason="Strands' OpenAI model needs the openai package (installed by the dev extra)")

from strands import Agent  # noqa: E402
from strands.hooks import AfterToolCallEvent  # noqa: E402
from strands.memory import AggregateMemoryError, InvocationTrigger, MemoryManager  # noqa: E402
from strands.models.openai import OpenAIModel  # noqa: E402

from engram.aio import AsyncEngram  # noqa: E402
from engram.engine import Engram  # noqa: E402
from engram.errors import StorageError, ValidationError  # noqa: E402
from engram.integrations.strands import EngramMemoryStore, EngramTools  # noqa: E402
from engram.interfaces import present  # noqa: E402
from engram.testing.llm_servers import OpenAICompatServer, RecordedRequest, Reply  # noqa: E402
from tests.integrations.scripted_chat import REFUSED_BY_THE_TOOLS, REFUSED_IN_DIRECT_CALLS, said, scripted  # noqa: E402

# Kept byte for byte: accents, an emoji, a tab, \n and \r\n line ends, quotes JSON escapes.
TRICKY = 'Ana\'s "café" ☕ order:\n\tflat white\r\nno sugar — ever'


def agent(server: OpenAICompatServer, tools: EngramTools, *calls: tuple[str, dict[str, Any]],
          stream: bool = True) -> Agent:
    server.responder = scripted(*calls)
    # Streamed by default, as Strands' OpenAIModel asks for the reply.
    model = OpenAIModel(client_args={"api_key": "test-key", "base_url": server.base_url}, model_id="scripted",
                        stream=stream)
    return Agent(model=model, tools=[tools], callback_handler=None)


def told(run: Agent, tool: str) -> tuple[str, str]:
    """What ``tool`` last sent back to the model in ``run``'s conversation (its text) and its status."""
    names = {b["toolUse"]["toolUseId"]: b["toolUse"]["name"]
             for m in run.messages for b in m["content"] if "toolUse" in b}
    results = [b["toolResult"] for m in run.messages for b in m["content"]
               if "toolResult" in b and names[b["toolResult"]["toolUseId"]] == tool]
    assert results, f"{tool} was not called"
    return results[-1]["content"][0]["text"], results[-1]["status"]


@pytest.mark.parametrize("stream", [True, False])
def test_a_fact_remembered_in_one_run_is_recalled_in_a_later_one(engram: Engram, server: OpenAICompatServer,
                                                                 stream: bool) -> None:
    first = agent(server, EngramTools(engram), ("remember", {"content": TRICKY, "key": "coffee",
                                                             "tags": ["preferences"], "importance": 0.8}), stream=stream)
    first("Remember how I take my coffee")
    text, status = told(first, "remember")
    stored = json.loads(text)
    assert status == "success" and stored["action"] == "created" and stored["key"] == "coffee"

    # In the SQLite file, byte for byte: another engine opened on it reads the memory.
    with Engram.from_settings(agent="assistant", embeddings={"provider": "none"}) as reopened:
        memory = reopened.get(stored["memory_id"])
    assert memory.content == TRICKY and memory.content.encode() == TRICKY.encode()
    assert memory.scope.agent == "assistant" and memory.tags == ("preferences",) and memory.importance == 0.8

    # A later run, with a new agent and toolkit: only the store connects the two.
    second = agent(server, EngramTools(engram), ("recall", {"query": "coffee flat white"}), stream=stream)
    answer = second("How do I take my coffee?")
    assert server.requests[-1].body["stream"] is stream
    hits = json.loads(told(second, "recall")[0])["results"]
    assert [(h["memory_id"], h["content"], h["tags"]) for h in hits] == [(stored["memory_id"], TRICKY, ["preferences"])]
    # The model was shown it, whole: the tool message on the wire, and its answer from it.
    shown = [m for m in server.requests[-1].body["messages"] if m["role"] == "tool"][-1]["content"]
    assert json.loads(shown)["results"][0]["content"] == TRICKY
    assert json.loads(str(answer))["results"][0]["content"] == TRICKY

    # memory_id takes a key as well (resolved as every door resolves "id or key").
    third = agent(server, EngramTools(engram), ("forget", {"memory_id": "coffee", "reason": "asked to"}))
    third("Forget it")
    forgotten = json.loads(told(third, "forget")[0])
    assert forgotten["forgotten"] == [stored["memory_id"]] and forgotten["reason"] == "asked to"
    assert engram.count() == 0


def test_async_engine_gives_async_tools(engram: Engram, server: OpenAICompatServer) -> None:
    tools = EngramTools(AsyncEngram(engram))
    assert [t.tool_name for t in tools.tools] == ["remember", "recall", "forget", "versions"]
    # @tool keeps the function it wraps (functools.wraps): awaited, not run in a worker thread
    assert all(inspect.iscoroutinefunction(t.__wrapped__) for t in tools.tools)
    assert not any(inspect.iscoroutinefunction(t.__wrapped__) for t in EngramTools(engram).tools)

    run = agent(server, tools, ("remember", {"content": TRICKY}), ("recall", {"query": "flat white"}))
    asyncio.run(run.invoke_async("Remember my coffee"))
    memory_id = json.loads(told(run, "remember")[0])["memory_id"]
    assert [(h["memory_id"], h["content"]) for h in json.loads(told(run, "recall")[0])["results"]] == [
        (memory_id, TRICKY)]
    assert engram.get(memory_id).content == TRICKY

    refused = agent(server, tools, ("remember", {"content": "Fact", "importance": 3}))
    refused("Keep it")  # the synchronous call runs the same async tools on Strands' own loop
    assert told(refused, "remember") == ("invalid importance: 3.0 is out of range (allowed: a number from 0 to 1)", "error")
    assert engram.count() == 1


def test_the_tools_tell_the_model_their_arguments(engram: Engram, server: OpenAICompatServer) -> None:
    agent(server, EngramTools(engram))("hi")
    tools = {t["function"]["name"]: t["function"] for t in server.requests[0].body["tools"]}
    assert set(tools) == {"remember", "recall", "forget", "versions"}
    assert tools["remember"]["description"].startswith("Store one fact")
    assert "Args:" not in tools["remember"]["description"]  # the arguments are described one by one instead
    assert tools["remember"]["parameters"]["required"] == ["content"]
    assert tools["recall"]["parameters"]["required"] == ["query"] and tools["forget"]["parameters"].get(
        "required", []) == []
    assert set(tools["forget"]["parameters"]["properties"]) == {"memory_id", "key", "query", "tag", "older_than_days",
                                                                "reason", "dry_run"}
    assert set(tools["versions"]["parameters"]["properties"]) == {"memory_id", "key"}
    assert tools["versions"]["description"].startswith("Read what one memory said before it was updated")
    properties = [p for t in tools.values() for p in t["parameters"]["properties"].values()]
    assert all(p.get("description") for p in properties)  # every argument is described


@pytest.mark.parametrize("asynchronous", [False, True])
def test_versions_gives_a_memorys_earlier_contents_oldest_first(engram: Engram, server: OpenAICompatServer,
                                                                asynchronous: bool) -> None:
    first = engram.remember(TRICKY, key="coffee")
    engram.remember("Ana takes a cortado", key="coffee")
    engram.remember("Ana gave up coffee", key="coffee")
    tools = EngramTools(AsyncEngram(engram) if asynchronous else engram)

    def versions(args: dict[str, Any]) -> dict[str, Any]:
        run = agent(server, tools, ("versions", args))
        run("What did I drink before?")
        text, status = told(run, "versions")
        assert status == "success", text
        return json.loads(text)

    said = versions({"memory_id": "coffee"})
    assert [v["content"] for v in said["versions"]] == [TRICKY, "Ana takes a cortado"]
    assert said["versions"][0]["content"].encode() == TRICKY.encode()  # byte for byte through the wire
    assert said == present.versions_dict(engram.versions("coffee"))  # the form every door gives
    assert versions({"memory_id": first.memory.id}) == said == versions({"key": "coffee"})
    assert engram.get("coffee").content == "Ana gave up coffee"  # read, nothing changed
    engram.remember("Ana likes green tea", key="tea")
    assert versions({"key": "tea"}) == {"versions": []}


@pytest.mark.parametrize(("tool", "args", "expected"), REFUSED_BY_THE_TOOLS)
def test_a_bad_argument_comes_back_to_the_model_naming_the_field(engram: Engram, server: OpenAICompatServer, tool: str,
                                                                 args: dict[str, Any], expected: str) -> None:
    run = agent(server, EngramTools(engram), (tool, args))
    answer = run("Do it")
    text, status = told(run, tool)
    assert status == "error" and text.startswith(expected), text
    tool_messages = [m for m in server.requests[-1].body["messages"] if m["role"] == "tool"]
    assert tool_messages[-1]["content"] == text and str(answer).strip() == text  # the model read it, and answered
    assert engram.count() == 0  # nothing was stored


@pytest.mark.parametrize("asynchronous", [False, True])
@pytest.mark.parametrize(("tool", "args", "field"), REFUSED_IN_DIRECT_CALLS)
def test_a_direct_call_with_bad_input_names_the_field_and_stores_nothing(
        engram: Engram, server: OpenAICompatServer, tool: str, args: dict[str, Any], field: str,
        asynchronous: bool) -> None:
    engram.remember("A memory already there", key="there")
    # Strands' direct tool call (agent.tool.<name>), through its input validation and executor.
    run = agent(server, EngramTools(AsyncEngram(engram) if asynchronous else engram))
    result = getattr(run.tool, tool)(**args)
    assert result["status"] == "error" and result["content"][0]["text"].startswith(f"invalid {field}"), result
    assert [m.key for m in engram.list()] == ["there"]


def test_a_storage_failure_is_left_to_strands(isolated_home: Path, server: OpenAICompatServer) -> None:
    # Not the model's to correct: Strands shows it its own error text and hands the application
    # the exception in AfterToolCallEvent, rather than the MCP words for a refused argument.
    mem = Engram.from_settings(agent="assistant", embeddings={"provider": "none"})
    mem.close()
    run = agent(server, EngramTools(mem), ("recall", {"query": "anything"}))
    seen: list[BaseException | None] = []
    run.add_hook(lambda event: seen.append(event.exception), AfterToolCallEvent)
    run("Anything?")
    text, status = told(run, "recall")
    assert status == "error" and text.startswith("Error: StorageError - ")
    assert len(seen) == 1 and isinstance(seen[0], StorageError)


def test_one_agent_never_sees_another_agents_memories(engram: Engram, server: OpenAICompatServer) -> None:
    alice, bob = EngramTools(engram.for_agent("alice")), EngramTools(engram.for_agent("bob"))
    run = agent(server, alice, ("remember", {"content": "Alice's locker code is 4512"}))
    run("Keep it")
    stored = json.loads(told(run, "remember")[0])

    def recalled(tools: EngramTools) -> list[dict[str, Any]]:
        run = agent(server, tools, ("recall", {"query": "locker code"}))
        run("Code?")
        return json.loads(told(run, "recall")[0])["results"]

    assert recalled(bob) == [] and [h["memory_id"] for h in recalled(alice)] == [stored["memory_id"]]
    run = agent(server, bob, ("forget", {"memory_id": stored["memory_id"]}))
    run("Forget it")
    text, status = told(run, "forget")
    assert status == "error" and text.startswith("memory not found")
    assert json.loads(bob.forget(query="locker code"))["count"] == 0  # a query reaches only bob's own
    engram.for_agent("alice").remember("Alice's locker code is 9981", key=stored["key"])  # now it has a version
    for args in ({"memory_id": stored["memory_id"]}, {"key": stored["key"]}):
        run = agent(server, bob, ("versions", args))
        run("Old code?")
        text, status = told(run, "versions")
        assert status == "error" and "not found" in text and "Alice's" not in text, text
    run = agent(server, alice, ("versions", {"key": stored["key"]}))
    run("Old code?")
    assert [v["content"] for v in json.loads(told(run, "versions")[0])["versions"]] == ["Alice's locker code is 4512"]
    assert engram.for_agent("alice").count() == 1 and engram.for_agent("bob").count() == 0


def test_wrong_setup_names_the_field(engram: Engram) -> None:
    with pytest.raises(ValidationError) as err:
        EngramTools("not an engine")  # type: ignore[arg-type]
    assert err.value.field == "engram"
    # Python's own TypeError named the keyword but not what the toolkit takes.
    with pytest.raises(ValidationError) as err:
        EngramTools(engram, per_user=True)  # type: ignore[call-arg]
    assert err.value.field == "per_user" and "is not a keyword of EngramTools" in str(err.value)
    assert err.value.allowed == "engram"


# --- EngramMemoryStore: Strands' own MemoryManager (its search_memory / add_memory tools, injection,
# extraction) over engram ------------------------------------------------------------------------

def managed(server: OpenAICompatServer, *stores: EngramMemoryStore, calls: tuple[tuple[str, dict[str, Any]], ...] = (),
            **manager: Any) -> Agent:
    """An agent with Strands' MemoryManager over ``stores`` (its add tool on), the model making ``calls``."""
    server.responder = scripted(*calls)
    model = OpenAIModel(client_args={"api_key": "test-key", "base_url": server.base_url}, model_id="scripted")
    return Agent(model=model, memory_manager=MemoryManager(stores=list(stores), **{"add_tool_config": True, **manager}),
                 callback_handler=None)


def injected(request: RecordedRequest) -> list[str]:
    """The texts Strands' injection folded into the latest user message of a request the model got."""
    user = [m for m in request.body["messages"] if m["role"] == "user"][-1]
    return [p["text"] for p in user["content"][1:]]


@pytest.mark.parametrize("asynchronous", [False, True])
def test_memory_manager_add_memory_stores_and_a_later_run_finds_it(engram: Engram, server: OpenAICompatServer,
                                                                   asynchronous: bool) -> None:
    store = EngramMemoryStore(AsyncEngram(engram) if asynchronous else engram)
    first = managed(server, store, calls=(("add_memory", {"entries": [TRICKY]}),))
    first("Remember my coffee order") if not asynchronous else asyncio.run(first.invoke_async("Remember my coffee order"))
    assert told(first, "add_memory") == ('{"stored": 1}', "success")

    # In the SQLite file, byte for byte, as the engine's agent's: another engine opened on it reads it.
    with Engram.from_settings(agent="assistant", embeddings={"provider": "none"}) as reopened:
        [memory] = reopened.list()
    assert memory.content.encode() == TRICKY.encode() and memory.source == "strands"
    assert memory.scope.agent == "assistant"

    # A later run, a new agent and manager: Strands folds what the store finds into the user's turn...
    second = managed(server, EngramMemoryStore(engram), calls=(("search_memory", {"query": "flat white"}),))
    second("What is my order?")
    assert injected(server.requests[-2]) == [f'\n\n<memory>\n<entry source="engram">{TRICKY}</entry>\n</memory>']
    assert all("<memory>" not in said(m) for m in second.messages if m["role"] == "user")  # for that call only
    # ...and the model's search_memory call gets it, whole, with engram's id, key, score and time.
    [entry] = json.loads([m for m in server.requests[-1].body["messages"] if m["role"] == "tool"][-1]["content"])
    assert entry["content"] == TRICKY and entry["store_name"] == "engram"
    assert entry["metadata"]["id"] == memory.id and entry["metadata"]["key"] == memory.key
    assert entry["metadata"]["tags"] == [] and entry["metadata"]["created_at"].endswith("Z")
    assert 0 < entry["metadata"]["score"] <= 1 and "metadata" not in entry["metadata"]  # it was added with none


def test_memory_manager_keeps_two_engram_agents_apart(engram: Engram, server: OpenAICompatServer) -> None:
    alice, bob = EngramMemoryStore(engram.for_agent("alice")), EngramMemoryStore(engram.for_agent("bob"))
    managed(server, alice, calls=(("add_memory", {"entries": ["Alice's locker code is 4512"]}),))("Keep it")

    def found(store: EngramMemoryStore) -> tuple[list[dict[str, Any]], list[str]]:
        run = managed(server, store, calls=(("search_memory", {"query": "locker code"}),))
        run("What is my locker code?")
        return json.loads(told(run, "search_memory")[0]), injected(server.requests[-2])

    assert found(bob) == ([], [])  # neither the tool nor the injection sees alice's
    entries, shown = found(alice)
    assert [e["content"] for e in entries] == ["Alice's locker code is 4512"] and "4512" in shown[0]
    assert engram.for_agent("alice").count() == 1 and engram.for_agent("bob").count() == 0


def test_a_repeated_add_stores_one_memory(engram: Engram, server: OpenAICompatServer) -> None:
    # Strands' extraction writes are at-least-once: engram keeps identical content once per agent.
    run = managed(server, EngramMemoryStore(engram), calls=(("add_memory", {"entries": [TRICKY, TRICKY]}),))
    run("Remember it twice")
    assert told(run, "add_memory") == ('{"stored": 2}', "success")
    assert [m.content for m in engram.list()] == [TRICKY]
    again = asyncio.run(EngramMemoryStore(engram).add(TRICKY, {"from": "a retried batch"}))
    assert again.action == "duplicate" and again.memory.metadata == {} and engram.count() == 1


def test_extraction_distils_facts_through_add(engram: Engram, server: OpenAICompatServer) -> None:
    """With only ``add`` (no ``add_messages``), Strands' extraction runs its ModelExtractor (a model
    call) and stores each fact through ``add``, metadata kept; the same facts again store nothing."""
    fact = {"content": "Ana takes her coffee black", "metadata": {"confidence": 0.9, "topics": ["coffee"]}}

    def model(request: RecordedRequest) -> Reply:
        system = [m for m in request.body["messages"] if m["role"] == "system"]
        if system and "You extract durable facts" in said(system[0]):
            return Reply.say(json.dumps([fact]))
        return Reply.say("Noted.")

    store = EngramMemoryStore(engram, extraction={"trigger": [InvocationTrigger()]})
    for text in ("I take my coffee black", "Black, no milk, remember?"):
        run = managed(server, store, add_tool_config=False)
        server.responder = model
        run(text)  # the synchronous call waits for extraction (MemoryManager.flush)
    [memory] = engram.list()
    assert memory.content == fact["content"] and dict(memory.metadata) == fact["metadata"]
    entries = asyncio.run(store.search("coffee"))
    assert [(e.content, e.metadata["metadata"]) for e in entries] == [(fact["content"], fact["metadata"])]


@pytest.mark.parametrize("metadata", [{"when": object()}, {"ratio": float("nan")}, '{"a": 1}', ["a"]])
def test_bad_metadata_is_refused_naming_it(engram: Engram, metadata: Any) -> None:
    manager = MemoryManager(stores=[EngramMemoryStore(engram)])
    with pytest.raises(AggregateMemoryError) as err:  # Strands' manager holds each store's error
        asyncio.run(manager.add("Fact", {"metadata": metadata}))
    [reason] = err.value.errors
    assert isinstance(reason, ValidationError) and reason.field == "metadata", reason
    assert engram.count() == 0


def test_what_the_model_sees_when_engram_refuses_an_entry(engram: Engram, server: OpenAICompatServer) -> None:
    run = managed(server, EngramMemoryStore(engram), calls=(("add_memory", {"entries": ["   "]}),))
    run("Remember nothing")
    text, status = told(run, "add_memory")
    assert status == "error" and text == ("Error: AggregateMemoryError - MemoryManager: failed to add 1 of 1 entries: "
                                          "content: must not be empty (allowed: 1-8000 characters)")
    assert [m for m in server.requests[-1].body["messages"] if m["role"] == "tool"][-1]["content"] == text
    assert engram.count() == 0


def test_search_caps_and_blank_queries(engram: Engram, server: OpenAICompatServer) -> None:
    for i in range(12):
        engram.remember(f"Note {i} about the garden")
    store, five = EngramMemoryStore(engram), EngramMemoryStore(engram, max_search_results=5)

    def search(s: EngramMemoryStore, query: str = "garden", **options: Any) -> int:
        return len(asyncio.run(s.search(query, options or None)))

    assert search(store) == 10 and search(five) == 5 and search(five, max_search_results=3) == 3
    assert search(store, max_search_results=500) == 12  # "at most 500": engram's page of 100 holds them all
    assert search(store, "   ") == 0 and search(store, "") == 0
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValidationError) as err:
            search(store, max_search_results=bad)
        assert err.value.field == "max_search_results"
    run = managed(server, store, calls=(("search_memory", {"query": "garden", "max_search_results": 2}),))
    run("Garden?")
    assert len(json.loads(told(run, "search_memory")[0])) == 2
    # A search is a use of what it finds (the lifecycle jobs keep what is used); touch=False is a look.
    counts = {m.id: m.recall_count for m in engram.list()}
    assert sum(counts.values()) >= 10 + 5 + 3 + 12 + 2
    search(EngramMemoryStore(engram, touch=False), max_search_results=1)
    assert {m.id: m.recall_count for m in engram.list()} == counts


@pytest.mark.parametrize(("arguments", "field"), [
    ({"engram": "not an engine"}, "engram"),
    ({"name": ""}, "name"),
    ({"name": None}, "name"),
    ({"description": 3}, "description"),
    ({"max_search_results": 0}, "max_search_results"),
    ({"max_search_results": 101}, "max_search_results"),
    ({"writable": "yes"}, "writable"),
    ({"touch": 1}, "touch"),
    ({"extraction": "always"}, "extraction"),
    # Python's own TypeError (naming the keyword, listing nothing), and a key Strands would have left unread:
    ({"max_results": 3}, "max_results"),
    ({"extraction": {"triger": InvocationTrigger()}}, "extraction.triger"),
])
def test_memory_store_setup_names_the_field(engram: Engram, arguments: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as err:
        EngramMemoryStore(**{"engram": engram, **arguments})
    assert err.value.field == field
    if field == "max_results":  # and what the store does take
        assert "is not a keyword of EngramMemoryStore" in str(err.value)
        assert err.value.allowed is not None and "max_search_results" in err.value.allowed
    if field == "extraction.triger":
        assert err.value.allowed == "extractor, filter, trigger"


def test_store_settings_reach_strands(engram: Engram, server: OpenAICompatServer) -> None:
    store = EngramMemoryStore(engram, name="facts", description="What the user told us", writable=False)
    assert (store.name, store.description, store.max_search_results, store.writable, store.extraction) == (
        "facts", "What the user told us", 10, False, None)
    managed(server, store, add_tool_config=False)("hi")
    [search] = [t["function"] for t in server.requests[0].body["tools"] if t["function"]["name"] == "search_memory"]
    assert "- facts: What the user told us" in search["description"]
    with pytest.raises(ValueError, match="no writable stores"):  # Strands' own check
        MemoryManager(stores=[store], add_tool_config=True)
    with pytest.raises(ValidationError) as err:
        asyncio.run(store.add("Fact"))
    assert err.value.field == "writable" and engram.count() == 0
