"""EngramTools driven by a real Strands Agent over a real SQLite engram store. The model is Strands'
own OpenAI model talking to a local server that speaks the chat-completions wire format and plays
a scripted model (one tool call per reply, then an answer repeating what the last call got), so
Strands' real request building, tool registry, input validation and tool execution run; nothing
leaves 127.0.0.1."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("strands", reason="the strands extra is not installed: pip install 'engram-recall[strands]'")
pytest.importorskip("openai", reason="Strands' OpenAI model needs the openai package (installed by the dev extra)")

from strands import Agent  # noqa: E402
from strands.hooks import AfterToolCallEvent  # noqa: E402
from strands.models.openai import OpenAIModel  # noqa: E402

from engram.aio import AsyncEngram  # noqa: E402
from engram.engine import Engram  # noqa: E402
from engram.errors import StorageError, ValidationError  # noqa: E402
from engram.integrations.strands import EngramTools  # noqa: E402
from engram.testing.llm_servers import OpenAICompatServer, RecordedRequest, Reply  # noqa: E402

# Kept byte for byte: accents, an emoji, a tab, \n and \r\n line ends, quotes JSON escapes.
TRICKY = 'Ana\'s "café" ☕ order:\n\tflat white\r\nno sugar — ever'


@pytest.fixture
def engram(isolated_home: Path) -> Iterator[Engram]:
    # The configured SQLite store under the test's own ENGRAM_HOME.
    mem = Engram.from_settings(agent="assistant", embeddings={"provider": "none"})
    yield mem
    mem.close()


@pytest.fixture
def server() -> Iterator[OpenAICompatServer]:
    with OpenAICompatServer() as s:
        yield s


def _this_turn(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return messages[max(i for i, m in enumerate(messages) if m["role"] == "user"):]


def _said(message: dict[str, Any]) -> str:
    # Strands sends a user message's content as a list of parts.
    content = message["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


def scripted(*calls: tuple[str, dict[str, Any]]) -> Callable[[RecordedRequest], Reply]:
    """A model that makes ``calls`` (one per reply), then answers with the last tool message."""

    def respond(request: RecordedRequest) -> Reply:
        turn = _this_turn(request.body["messages"])
        step = sum(m["role"] == "assistant" for m in turn)
        if step < len(calls):
            return Reply.tools(calls[step])
        return Reply.say(turn[-1]["content"] if turn[-1]["role"] == "tool" else "nothing to do")

    return respond


def remembers_then_recalls(request: RecordedRequest) -> Reply:
    """A model that remembers what the user says, recalls for a question, and answers with what
    the tool gave back (the docs' example runs on it)."""
    turn = _this_turn(request.body["messages"])
    if turn[-1]["role"] == "tool":
        return Reply.say(turn[-1]["content"])
    said = _said(turn[0])
    return Reply.tools(("recall", {"query": said}) if said.endswith("?") else ("remember", {"content": said}))


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
    assert [t.tool_name for t in tools.tools] == ["remember", "recall", "forget"]
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
    assert told(refused, "remember") == ("invalid importance: 3.0 is out of range (allowed: 0.0 to 1.0)", "error")
    assert engram.count() == 1


def test_the_tools_tell_the_model_their_arguments(engram: Engram, server: OpenAICompatServer) -> None:
    agent(server, EngramTools(engram))("hi")
    tools = {t["function"]["name"]: t["function"] for t in server.requests[0].body["tools"]}
    assert set(tools) == {"remember", "recall", "forget"}
    assert tools["remember"]["description"].startswith("Store one fact")
    assert "Args:" not in tools["remember"]["description"]  # the arguments are described one by one instead
    assert tools["remember"]["parameters"]["required"] == ["content"]
    assert tools["recall"]["parameters"]["required"] == ["query"] and tools["forget"]["parameters"].get(
        "required", []) == []
    assert set(tools["forget"]["parameters"]["properties"]) == {"memory_id", "key", "query", "tag", "older_than_days",
                                                                "reason", "dry_run"}
    properties = [p for t in tools.values() for p in t["parameters"]["properties"].values()]
    assert all(p.get("description") for p in properties)  # every argument is described


@pytest.mark.parametrize(("tool", "args", "expected"), [
    ("remember", {"content": "The sky is green", "importance": 7.0}, "invalid importance: 7.0 is out of range"),
    ("remember", {"content": "   "}, "invalid content"),
    ("remember", {"content": "Fact", "category": "forever"}, "invalid category"),
    ("recall", {"query": "anything", "limit": 500}, "invalid limit"),
    ("forget", {"query": "sky", "tag": "colours"}, "invalid forget: got query, tag (allowed: exactly one of memory_id, key"),
    ("forget", {"memory_id": "no-such-memory"},
     "memory not found: 'no-such-memory'; recall first to find the right memory_id or key"),
])
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
@pytest.mark.parametrize(("tool", "args", "field"), [
    ("remember", {"content": ""}, "content"),
    ("remember", {"content": "Fact", "tags": ["ok", "x" * 200]}, "tags"),
    ("remember", {"content": "Fact", "key": "k" * 500}, "key"),
    ("recall", {"query": "x", "min_relevance": 2.0}, "min_relevance"),
    ("forget", {}, "forget"),
    ("forget", {"memory_id": "a", "key": "b"}, "forget"),
    ("forget", {"older_than_days": -1.0}, "older_than"),
])
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
    assert engram.for_agent("alice").count() == 1 and engram.for_agent("bob").count() == 0


def test_wrong_setup_names_the_field(engram: Engram) -> None:
    with pytest.raises(ValidationError) as err:
        EngramTools("not an engine")  # type: ignore[arg-type]
    assert err.value.field == "engram"
