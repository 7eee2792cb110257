"""engram's CrewAI tools driven by real CrewAI crews (``Agent`` + ``Task`` + ``Crew.kickoff``) over a
real SQLite engram store. The crews' LLM is CrewAI's own native OpenAI provider talking to a local
server that speaks the chat-completions wire format and plays a scripted model (one tool call per
reply, then an answer repeating what the last call got), so CrewAI's real prompt building, tool
schemas, argument validation, result cache and tool execution run; nothing leaves 127.0.0.1.

CrewAI is installed only in scripts/test.sh's CrewAI pass (.venv-crewai): it holds the MCP SDK
below 2, which engram's server extra cannot use."""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

if importlib.util.find_spec("crewai") is None:
    pytest.skip("the crewai extra is not installed: scripts/test.sh runs this file in .venv-crewai",
                allow_module_level=True)

# CrewAI's opt-outs, as docs/integrations.md tells an application to set them.
OPT_OUTS = {"CREWAI_DISABLE_TELEMETRY": "true", "OTEL_SDK_DISABLED": "true", "CREWAI_TRACING_ENABLED": "false",
            "CREWAI_DISABLE_VERSION_CHECK": "true"}
# Those, and no first-run tracing prompt, for every test here: no anonymous telemetry, no tracing
# upload, no PyPI version check. Set before the
# import, process-wide (this file runs in a pass of its own): importing CrewAI already writes to
# the user's home (its data folder under XDG_DATA_HOME, a key file under ~/.local/share/crewai),
# kept here in a throwaway one.
_home = tempfile.mkdtemp(prefix="engram-crewai-test-")
atexit.register(shutil.rmtree, _home, True)
os.environ.update({**OPT_OUTS, "CREWAI_TESTING": "true", "HOME": _home,
                   "XDG_DATA_HOME": os.path.join(_home, ".local", "share")})

from crewai import LLM, Agent, Crew, Task  # noqa: E402
from crewai.crews.crew_output import CrewOutput  # noqa: E402
from crewai.llms.providers.openai.completion import OpenAICompletion  # noqa: E402
from crewai.state.checkpoint_config import CheckpointConfig  # noqa: E402
from crewai.state.runtime import RuntimeState  # noqa: E402
from crewai.tools import BaseTool  # noqa: E402
from crewai.tools.tool_failure import ToolFailure, ToolFailurePolicy, ToolFailureReason  # noqa: E402
from pydantic import TypeAdapter  # noqa: E402

from engram.aio import AsyncEngram  # noqa: E402
from engram.engine import Engram  # noqa: E402
from engram.errors import ValidationError  # noqa: E402
from engram.integrations.crewai import (  # noqa: E402
    OPTIONS,
    ForgetTool,
    RecallTool,
    RememberTool,
    VersionsTool,
    engram_tools,
)
from engram.interfaces import present  # noqa: E402
from engram.testing.llm_servers import OpenAICompatServer, RecordedRequest, Reply  # noqa: E402
from tests.integrations.scripted_chat import (  # noqa: E402
    REFUSED_BY_THE_TOOLS,
    REFUSED_IN_DIRECT_CALLS,
    remembers_then_recalls,
    scripted,
)

# CrewAI's own deprecations (function_calling_llm, ...), raised by its code on every kickoff.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:crewai")

# Kept byte for byte: accents, an emoji, a tab, \n and \r\n line ends, quotes JSON escapes.
TRICKY = 'Ana\'s "café" ☕ order:\n\tflat white\r\nno sugar — ever'


def crew_agent(server: OpenAICompatServer, tools: list[Any], role: str = "assistant") -> Agent:
    """A CrewAI agent on CrewAI's native OpenAI provider, pointed at the scripted server."""
    llm = LLM(model="openai/scripted", base_url=server.base_url, api_key="test-key")
    return Agent(role=role, goal="Help the user", backstory="Keeps what matters in long-term memory.", llm=llm,
                 tools=tools)


def kickoff(server: OpenAICompatServer, tools: list[Any], *calls: tuple[str, dict[str, Any]],
            **crew: Any) -> CrewOutput:
    """One crew (one agent, one task) whose model makes ``calls``, then answers with the last result."""
    server.responder = scripted(*calls)
    agent = crew_agent(server, tools)
    task = Task(description="Do what the user asks", expected_output="The answer", agent=agent)
    return Crew(agents=[agent], tasks=[task], **crew).kickoff()


def told(server: OpenAICompatServer) -> list[dict[str, Any]]:
    """The tool messages the model was sent in its latest request, in order."""
    return [m for m in server.requests[-1].body["messages"] if m["role"] == "tool"]


class TextFormatLLM(OpenAICompletion):
    """CrewAI's own OpenAI provider for a model it drives in its text format (ReAct): CrewAI asks a
    model that does not support function calling for ``Action:`` / ``Action Input:`` lines, and
    parses the tool's arguments from the text."""

    def supports_function_calling(self) -> bool:
        return False


def react(*calls: tuple[str, dict[str, Any]]) -> Callable[[RecordedRequest], Reply]:
    """A model answering in CrewAI's text format: one ``Action`` per reply, then a ``Final Answer``
    repeating the last ``Observation`` it was given."""

    def respond(request: RecordedRequest) -> Reply:
        step = sum(m["role"] == "assistant" for m in request.body["messages"])
        if step < len(calls):
            tool, args = calls[step]
            return Reply.say(f"Thought: I should use {tool}\nAction: {tool}\n"
                             f"Action Input: {json.dumps(args, ensure_ascii=False)}")
        seen = observations(request)
        return Reply.say(f"Thought: I now know the final answer\nFinal Answer: {seen[-1] if seen else 'nothing'}")

    return respond


def observations(request: RecordedRequest) -> list[str]:
    """What CrewAI wrote after each of the model's actions (``Observation: ...``), in order."""
    return [m["content"].split("\nObservation: ", 1)[1] for m in request.body["messages"]
            if m["role"] == "assistant" and "\nObservation: " in m["content"]]


def react_kickoff(server: OpenAICompatServer, tools: list[Any], *calls: tuple[str, dict[str, Any]]) -> CrewOutput:
    """``kickoff`` for a model on CrewAI's text format: the crew's LLM reports no function calling."""
    server.responder = react(*calls)
    llm = TextFormatLLM(model="scripted", base_url=server.base_url, api_key="test-key")
    agent = Agent(role="assistant", goal="Help the user", backstory="Keeps what matters in long-term memory.",
                  llm=llm, tools=tools)
    output = Crew(agents=[agent], tasks=[Task(description="Do what the user asks", expected_output="The answer",
                                              agent=agent)]).kickoff()
    assert all("tools" not in r.body for r in server.requests)  # never offered as native tools
    return output


@pytest.mark.parametrize("given", [Engram, AsyncEngram])
def test_a_fact_remembered_in_one_crew_is_recalled_by_a_later_one(engram: Engram, server: OpenAICompatServer,
                                                                  given: Callable[[Engram], Any]) -> None:
    mem = engram if given is Engram else AsyncEngram(engram)
    first = kickoff(server, engram_tools(mem), ("remember", {"content": TRICKY, "key": "coffee", "tags": ["preferences"],
                                                             "importance": 0.8}))
    stored = json.loads(first.raw)  # the model answered with what the tool gave it
    assert stored["action"] == "created" and stored["key"] == "coffee"
    assert first.tasks_output[0].tool_failures == []

    # In the SQLite file, byte for byte: another engine opened on it reads the memory.
    with Engram.from_settings(agent="assistant", embeddings={"provider": "none"}) as reopened:
        memory = reopened.get(stored["memory_id"])
    assert memory.content.encode() == TRICKY.encode()
    assert memory.scope.agent == "assistant" and memory.tags == ("preferences",) and memory.importance == 0.8

    # A later crew, with new tools: only the store connects the two.
    second = kickoff(server, engram_tools(mem), ("recall", {"query": "coffee flat white"}))
    [shown] = told(server)
    hits = json.loads(shown["content"])["results"]
    assert [(h["memory_id"], h["content"], h["tags"]) for h in hits] == [(stored["memory_id"], TRICKY, ["preferences"])]
    assert json.loads(second.raw)["results"][0]["content"] == TRICKY

    # memory_id takes a key as well (resolved as every door resolves "id or key").
    third = kickoff(server, engram_tools(mem), ("forget", {"memory_id": "coffee", "reason": "asked to"}))
    forgotten = json.loads(third.raw)
    assert forgotten["forgotten"] == [stored["memory_id"]] and forgotten["reason"] == "asked to"
    assert engram.count() == 0


def test_the_tools_tell_the_model_their_arguments(engram: Engram, server: OpenAICompatServer) -> None:
    kickoff(server, engram_tools(engram))
    tools = {t["function"]["name"]: t["function"] for t in server.requests[0].body["tools"]}
    assert set(tools) == {"remember", "recall", "forget", "versions"}
    assert tools["remember"]["description"].startswith("Store one fact")
    assert "Args:" not in tools["remember"]["description"]  # the arguments are described one by one instead
    assert set(tools["forget"]["parameters"]["properties"]) == {"memory_id", "key", "query", "tag", "older_than_days",
                                                                "reason", "dry_run"}
    assert set(tools["versions"]["parameters"]["properties"]) == {"memory_id", "key"}
    assert tools["versions"]["description"].startswith("Read what one memory said before it was updated")
    properties = {name: p for t in tools.values() for name, p in t["parameters"]["properties"].items()}
    assert all(p.get("description") for p in properties.values())  # every argument is described
    assert properties["importance"]["description"] == "0 trivial .. 1 essential."
    # CrewAI sends strict schemas (every argument listed as required): the optional ones take null.
    assert {"type": "null"} in properties["importance"]["anyOf"] and properties["content"]["type"] == "string"


@pytest.mark.parametrize("given", [Engram, AsyncEngram])
def test_versions_gives_a_memorys_earlier_contents_oldest_first(engram: Engram, server: OpenAICompatServer,
                                                                given: Callable[[Engram], Any]) -> None:
    first = engram.remember(TRICKY, key="coffee")
    engram.remember("Ana takes a cortado", key="coffee")
    engram.remember("Ana gave up coffee", key="coffee")
    mem = engram if given is Engram else AsyncEngram(engram)

    def versions(args: dict[str, Any]) -> dict[str, Any]:
        output = kickoff(server, engram_tools(mem), ("versions", args))
        assert output.tasks_output[0].tool_failures == []
        [shown] = told(server)
        return json.loads(shown["content"])

    said = versions({"memory_id": "coffee"})
    assert [v["content"] for v in said["versions"]] == [TRICKY, "Ana takes a cortado"]
    assert said["versions"][0]["content"].encode() == TRICKY.encode()  # byte for byte through the wire
    assert said == present.versions_dict(engram.versions("coffee"))  # the form every door gives
    # A strict model's nulls for the argument it does not give.
    assert versions({"memory_id": first.memory.id, "key": None}) == said == versions({"memory_id": None, "key": "coffee"})
    assert engram.get("coffee").content == "Ana gave up coffee"  # read, nothing changed
    engram.remember("Ana likes green tea", key="tea")
    assert json.loads(VersionsTool(mem).run(key="tea")) == {"versions": []}


def test_a_strict_models_nulls_leave_engrams_defaults(engram: Engram, server: OpenAICompatServer) -> None:
    nulls = {"key": None, "tags": None, "category": None, "type": None, "importance": None}
    kickoff(server, engram_tools(engram), ("remember", {"content": "The user likes tea", **nulls}),
            ("forget", {"memory_id": None, "key": None, "query": "coffee", "tag": None, "older_than_days": None,
                        "reason": None, "dry_run": None}))
    [memory] = engram.list()
    assert (memory.category.value, memory.importance) == ("knowledge", 0.5)
    assert json.loads(told(server)[-1]["content"])["count"] == 0


@pytest.mark.parametrize(("tool", "args", "expected"), REFUSED_BY_THE_TOOLS)
def test_a_bad_argument_comes_back_to_the_model_naming_the_field(engram: Engram, server: OpenAICompatServer, tool: str,
                                                                 args: dict[str, Any], expected: str) -> None:
    output = kickoff(server, engram_tools(engram), (tool, args))
    [message] = told(server)
    assert message["name"] == tool and message["content"].startswith(expected), message
    assert output.raw == message["content"]  # the model read it, and answered
    # CrewAI knows the call failed (a declared failure, not text it has to guess from).
    [record] = output.tasks_output[0].tool_failures
    assert record.tool_name == tool and record.failure.message == message["content"]
    assert record.failure.reason is ToolFailureReason.TOOL_REPORTED
    assert engram.count() == 0  # nothing was stored


def test_an_argument_of_the_wrong_type_is_refused_by_crewai_naming_it(engram: Engram, server: OpenAICompatServer) -> None:
    output = kickoff(server, engram_tools(engram), ("remember", {"content": "The sky is green", "importance": "high"}))
    [message] = told(server)
    assert message["content"].startswith("Error executing tool: Tool 'remember' arguments validation failed")
    assert "importance" in message["content"] and output.tasks_output[0].tool_failures
    assert engram.count() == 0


@pytest.mark.parametrize(("tool", "args", "field"), REFUSED_IN_DIRECT_CALLS)
def test_a_direct_call_with_bad_input_names_the_field_and_stores_nothing(engram: Engram, tool: str,
                                                                        args: dict[str, Any], field: str) -> None:
    engram.remember("A memory already there", key="there")
    [crew_tool] = engram_tools(engram, include=(tool,))
    result = crew_tool.run(**args)  # CrewAI's own entry point: its argument validation, then the tool
    assert isinstance(result, ToolFailure) and result.message.startswith(f"invalid {field}"), result
    assert [m.key for m in engram.list()] == ["there"]


def test_results_are_never_cached(engram: Engram, server: OpenAICompatServer) -> None:
    # A crew that opts into CrewAI's tool-result cache keeps a result by its arguments for the
    # run: the second recall, the same call, must still see what was remembered in between.
    kickoff(server, engram_tools(engram), ("recall", {"query": "favourite colour"}),
            ("remember", {"content": "The user's favourite colour is teal"}), ("recall", {"query": "favourite colour"}),
            cache=True)
    before, _, after = (json.loads(m["content"]) for m in told(server))
    assert before["results"] == [] and [h["content"] for h in after["results"]] == ["The user's favourite colour is teal"]


def test_a_storage_failure_is_left_to_crewai(isolated_home: Path, server: OpenAICompatServer) -> None:
    # Not the model's to correct: CrewAI shows it its own error text and records the exception.
    mem = Engram.from_settings(agent="assistant", embeddings={"provider": "none"})
    mem.close()
    output = kickoff(server, engram_tools(mem), ("recall", {"query": "anything"}))
    [message] = told(server)
    assert message["content"].startswith("Error executing tool: ")
    [record] = output.tasks_output[0].tool_failures
    assert record.failure.reason is ToolFailureReason.EXCEPTION and record.failure.code == "StorageError"


def test_one_crew_agent_never_sees_another_agents_memories(engram: Engram, server: OpenAICompatServer) -> None:
    # One crew, two CrewAI agents, each with tools over its own engram agent.
    scripts = {"alice": scripted(("remember", {"content": "Alice's locker code is 4512"})),
               "bob": scripted(("recall", {"query": "locker code"}), ("forget", {"query": "locker code"}))}

    def model(request: RecordedRequest) -> Reply:  # each CrewAI agent's system prompt names its role
        system = request.body["messages"][0]["content"]
        return next(script(request) for role, script in scripts.items() if system.startswith(f"You are {role}."))

    server.responder = model
    alice = crew_agent(server, engram_tools(engram.for_agent("alice")), role="alice")
    bob = crew_agent(server, engram_tools(engram.for_agent("bob")), role="bob")
    Crew(agents=[alice, bob], tasks=[Task(description="Keep the locker code", expected_output="Done", agent=alice),
                                     Task(description="Find the locker code", expected_output="It", agent=bob)]
         ).kickoff()
    recalled, forgotten = (json.loads(m["content"]) for m in told(server))
    assert recalled["results"] == [] and forgotten["count"] == 0  # bob's tools reach only bob's memories
    [memory] = engram.for_agent("alice").list()
    assert memory.content == "Alice's locker code is 4512" and engram.for_agent("bob").count() == 0

    # And the other way: a memory id of alice's is not found through bob's forget.
    result = ForgetTool(engram.for_agent("bob")).run(memory_id=memory.id)
    assert isinstance(result, ToolFailure) and result.message.startswith("memory not found")
    assert engram.for_agent("alice").count() == 1
    # Nor its earlier contents through bob's versions, by id or by key.
    engram.for_agent("alice").remember("Alice's locker code is 9981", key=memory.key)
    for args in ({"memory_id": memory.id}, {"key": memory.key}):
        result = VersionsTool(engram.for_agent("bob")).run(**args)
        assert isinstance(result, ToolFailure) and "not found" in result.message and "Alice's" not in result.message
    assert [v["content"] for v in json.loads(VersionsTool(engram.for_agent("alice")).run(key=memory.key))["versions"]] \
        == ["Alice's locker code is 4512"]


@pytest.mark.parametrize(("make", "field"), [
    (lambda mem: RememberTool("not an engine"), "engram"),
    (lambda mem: RecallTool(None), "engram"),
    (lambda mem: engram_tools(mem, include=("remember", "search")), "include"),
    (lambda mem: engram_tools(mem, include="recall"), "include"),
    (lambda mem: engram_tools(mem, include=()), "include"),
])
def test_wrong_setup_names_the_field(engram: Engram, make: Callable[[Engram], Any], field: str) -> None:
    with pytest.raises(ValidationError) as err:
        make(engram)
    assert err.value.field == field


@pytest.mark.parametrize("tool", [RememberTool, RecallTool, ForgetTool, VersionsTool])
def test_a_tool_built_without_an_engine_says_what_it_takes(tool: type[BaseTool]) -> None:
    # Python's missing-argument TypeError, which said nothing of what the tool takes; options given or not.
    for options in ({}, {"result_as_answer": True}):
        with pytest.raises(ValidationError) as err:
            tool(**options)
        assert err.value.field == "engram" and err.value.problem == "is required", str(err.value)
        assert err.value.allowed == f"an Engram or AsyncEngram: {tool.__name__}(mem)"


@pytest.mark.parametrize(("make", "field", "problem", "allowed"), [
    # Python's TypeError ("missing 1 required positional argument: 'engram'"), where the tools
    # themselves said what they take.
    (lambda mem: engram_tools(), "engram", "is required", "an Engram or AsyncEngram: engram_tools(mem)"),
    (lambda mem: engram_tools(include=("recall",)), "engram", "is required", "an Engram or AsyncEngram: engram_tools(mem)"),
    (lambda mem: engram_tools(mem, ("recall",)), "argument 2", "engram_tools takes 1 positional argument (engram), got 2",
     "the others by keyword (include): engram_tools(mem)"),
    (lambda mem: engram_tools(mem, engram=mem), "engram", "is given twice, by position and by keyword", "engram_tools(mem)"),
])
def test_engram_tools_called_wrongly_says_what_it_takes(engram: Engram, make: Callable[[Engram], Any], field: str,
                                                        problem: str, allowed: str) -> None:
    with pytest.raises(ValidationError) as err:
        make(engram)
    assert (err.value.field, err.value.problem, err.value.allowed) == (field, problem, allowed), str(err.value)
    assert [t.name for t in engram_tools(engram=engram, include=("recall",))] == ["recall"]  # by keyword, as before


def _mistyped_usage_limit(mem: Engram) -> Any:
    return RememberTool(mem, max_uses=2)


@pytest.mark.parametrize(("make", "field", "said"), [
    # CrewAI's BaseTool ignored a keyword it does not know: the tool was left unlimited, unsaid.
    (_mistyped_usage_limit, "max_uses", "is not a keyword of RememberTool"),
    (lambda mem: engram_tools(mem, top_k=3), "top_k", "is not a keyword of engram_tools"),
    (lambda mem: RecallTool(mem, engram_scope="agent:other"), "engram_scope", "is not a keyword of RecallTool"),
    # Read as False by pydantic.
    (lambda mem: RememberTool(mem, result_as_answer="no"), "result_as_answer", 'got "no"'),
    (lambda mem: engram_tools(mem, description_updated=1), "description_updated", "got 1"),
    # A TypeError from CrewAI's validator, or pydantic's own error.
    (lambda mem: RememberTool(mem, max_usage_count="2"), "max_usage_count", 'got "2"'),
    (lambda mem: RememberTool(mem, max_usage_count=0), "max_usage_count", "0 is out of range"),
    (lambda mem: RememberTool(mem, current_usage_count=-1), "current_usage_count", "-1 is out of range"),
    (lambda mem: ForgetTool(mem, tool_failure_policy="loud"), "tool_failure_policy", "got 'loud'"),
    (lambda mem: RecallTool(mem, name=1), "name", "got 1"),
    (lambda mem: RecallTool(mem, description=""), "description", "got ''"),
    (lambda mem: RecallTool(mem, env_vars="API_KEY"), "env_vars", "got str"),
    (lambda mem: RecallTool(mem, env_vars=[{"nam": "API_KEY"}]), "env_vars[0].nam", "is not a keyword of EnvVar"),
    (lambda mem: RecallTool(mem, env_vars=[{"name": "K", "description": "d", "required": "no"}]),
     "env_vars[0].required", 'got "no"'),
    # CrewAI's EnvVar refuses these, in pydantic's words: engram's, naming the item's field.
    (lambda mem: RecallTool(mem, env_vars=[{"description": "d"}]), "env_vars[0].name", "is required (allowed: text)"),
    (lambda mem: RecallTool(mem, env_vars=[{"name": "K", "description": "d"}, {"name": "J", "description": 3}]),
     "env_vars[1].description", "got int (allowed: text)"),
    (lambda mem: RecallTool(mem, env_vars=[{"name": "K", "description": "d", "default": 3}]),
     "env_vars[0].default", "got int (allowed: text, or None)"),
    # The tool's own: a cache function would let CrewAI serve a stale recall; schemas engram's _run does not take.
    (lambda mem: RecallTool(mem, cache_function=lambda _a=None, _r=None: True), "cache_function", "never cached"),
    (lambda mem: RecallTool(mem, args_schema=None), "args_schema", "is set by RecallTool"),
    # Four tools of one name: the model could reach only one of them.
    (lambda mem: engram_tools(mem, name="memory"), "name", "given for 4 tools"),
])
def test_a_crewai_option_is_checked_as_engrams_error_naming_it(engram: Engram, make: Callable[[Engram], Any],
                                                               field: str, said: str) -> None:
    with pytest.raises(ValidationError) as err:  # engram's (a ValueError), not pydantic's
        make(engram)
    assert err.value.field == field and said in str(err.value), str(err.value)
    if said.startswith("is not a keyword of") and "EnvVar" not in said:  # and what the tools do take
        assert "max_usage_count" in err.value.allowed and "result_as_answer" in err.value.allowed


def test_crewai_options_given_as_it_takes_them_are_kept(engram: Engram) -> None:
    tool = RecallTool(engram, name="memory_recall", description="Look up what you know.", result_as_answer=True,
                      max_usage_count=2, tool_failure_policy="raise",
                      env_vars=[{"name": "K", "description": "a key", "required": False}])
    assert (tool.name, tool.description, tool.result_as_answer, tool.max_usage_count) == (
        "memory_recall", "Look up what you know.", True, 2)
    assert tool.tool_failure_policy is ToolFailurePolicy.RAISE and tool.env_vars[0].required is False
    [one] = engram_tools(engram, include=("recall",), name="memory_recall")  # one tool: its name is the option's
    assert one.name == "memory_recall"
    # What CrewAI passes when it rebuilds a tool from a checkpoint's dump (BaseTool's own restore,
    # _resolve_tool_dict, as Crew.from_checkpoint runs it): every option back, the same engine, never cached.
    tool.run(query="anything")
    [restored] = TypeAdapter(list[BaseTool]).validate_python([json.loads(tool.model_dump_json())])
    assert type(restored) is RecallTool and restored.engram is engram
    assert {k: getattr(restored, k) for k in OPTIONS} == {k: getattr(tool, k) for k in OPTIONS}
    assert restored.current_usage_count == 1 and restored.cache_function("q", "result") is False


def test_crewai_options_reach_the_tools(engram: Engram, server: OpenAICompatServer) -> None:
    # CrewAI's own BaseTool fields pass through: here the recall result is the agent's final answer.
    engram.remember("The deploy window is Tuesday")
    tools = engram_tools(engram, include=("recall",), result_as_answer=True)
    output = kickoff(server, tools, ("recall", {"query": "deploy window"}))
    assert [t.name for t in tools] == ["recall"] and tools[0].engram is engram
    assert json.loads(output.raw)["results"][0]["content"] == "The deploy window is Tuesday"
    assert len(server.requests) == 1  # the tool's result ended the task: no further model call


# A crew process, from import to exit, recording every host it looks up or connects to.
_WATCHED_CREW = """
import atexit, os, socket, sys
reached = set()
atexit.register(lambda: print("REACHED", sorted(reached - {"127.0.0.1"})))  # runs last: after CrewAI's flush
connect, lookup = socket.socket.connect, socket.getaddrinfo
socket.socket.connect = lambda self, address: (reached.add(str(address[0])), connect(self, address))[1]
socket.getaddrinfo = lambda host, *a, **k: (reached.add(str(host)), lookup(host, *a, **k))[1]
from crewai import LLM, Agent, Crew, Task
from engram import Engram
from engram.integrations.crewai import engram_tools
with Engram.from_settings(agent="assistant", embeddings={"provider": "none"}) as mem:
    llm = LLM(model="openai/scripted", base_url=os.environ["SCRIPTED_URL"], api_key="test-key")
    agent = Agent(role="assistant", goal="Help", backstory="Remembers", llm=llm, tools=engram_tools(mem), verbose=True)
    Crew(agents=[agent], tasks=[Task(description="Keep it", expected_output="Done", agent=agent)]).kickoff()
"""


def test_with_the_documented_opt_outs_a_crew_reaches_only_its_model(tmp_path: Path, isolated_home: Path,
                                                                    server: OpenAICompatServer) -> None:
    # Without them CrewAI 1.15 looks up telemetry.crewai.com when the process exits (measured by
    # hand; not run here, as it would try to reach the network). With them, nothing but loopback.
    server.responder = scripted(("remember", {"content": "The user likes tea"}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CREWAI_", "OTEL_"))}
    env.update({**OPT_OUTS, "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data"),
                "SCRIPTED_URL": server.base_url, "PYTHONPATH": os.pathsep.join(sys.path)})
    run = subprocess.run([sys.executable, "-c", _WATCHED_CREW], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "REACHED []" in run.stdout.splitlines(), run.stdout[-2000:]
    with Engram.from_settings(agent="assistant", embeddings={"provider": "none"}) as mem:
        assert [m.content for m in mem.list()] == ["The user likes tea"]  # the crew did run, on engram


def test_a_text_format_model_remembers_recalls_and_forgets(engram: Engram, server: OpenAICompatServer) -> None:
    # The model writes its arguments as JSON text (accents, emoji, escaped tab and line ends);
    # CrewAI parses them and runs the tools; the Observation it is sent is engram's output.
    first = react_kickoff(server, engram_tools(engram), ("remember", {"content": TRICKY, "key": "coffee",
                                                                      "tags": ["preferences"]}))
    [seen] = observations(server.requests[-1])
    stored = json.loads(seen)
    assert stored["action"] == "created" and stored["key"] == "coffee" and first.raw == seen
    assert "Tool Name: remember" in server.requests[0].body["messages"][0]["content"]  # described in the prompt
    with Engram.from_settings(agent="assistant", embeddings={"provider": "none"}) as reopened:  # in the SQLite file
        memory = reopened.get(stored["memory_id"])
    assert memory.content.encode() == TRICKY.encode() and memory.tags == ("preferences",)

    react_kickoff(server, engram_tools(engram), ("recall", {"query": "coffee flat white"}))
    [seen] = observations(server.requests[-1])
    assert [(h["memory_id"], h["content"]) for h in json.loads(seen)["results"]] == [(stored["memory_id"], TRICKY)]

    react_kickoff(server, engram_tools(engram), ("forget", {"memory_id": "coffee", "reason": "asked to"}))
    [seen] = observations(server.requests[-1])
    assert json.loads(seen)["forgotten"] == [stored["memory_id"]] and engram.count() == 0


@pytest.mark.parametrize(("tool", "args", "expected"), REFUSED_BY_THE_TOOLS)
def test_a_text_format_models_bad_argument_comes_back_naming_the_field(engram: Engram, server: OpenAICompatServer,
                                                                       tool: str, args: dict[str, Any],
                                                                       expected: str) -> None:
    output = react_kickoff(server, engram_tools(engram), (tool, args))
    [seen] = observations(server.requests[-1])
    assert seen.startswith(expected), seen
    [record] = output.tasks_output[0].tool_failures
    assert record.tool_name == tool and record.failure.message == seen
    assert record.failure.reason is ToolFailureReason.TOOL_REPORTED
    assert engram.count() == 0


def test_a_model_refusing_native_tools_is_moved_to_the_text_format(engram: Engram, server: OpenAICompatServer) -> None:
    # An Ollama model without tool support answers a request with tools 400 "... does not support
    # tools"; CrewAI then goes on in its text format, and the tools work there.
    calls = react(("remember", {"content": "The user likes tea"}))

    def model(request: RecordedRequest) -> Reply:
        if "tools" in request.body:
            return Reply.fail(400, "registry.ollama.ai/library/scripted does not support tools")
        return calls(request)

    server.responder = model
    agent = Agent(role="assistant", goal="Help", backstory="Remembers", llm=LLM(model="ollama/scripted",
                                                                               base_url=server.base_url),
                  tools=engram_tools(engram))
    output = Crew(agents=[agent], tasks=[Task(description="Keep it", expected_output="Done", agent=agent)]).kickoff()
    assert "tools" in server.requests[0].body and "tools" not in server.requests[-1].body
    [seen] = observations(server.requests[-1])
    [memory] = engram.list()
    assert json.loads(seen)["memory_id"] == memory.id and memory.content == "The user likes tea"
    assert output.raw == seen


def checkpointed_crew(server: OpenAICompatServer, mem: Engram) -> Crew:
    """A crew of two tasks for the researcher: the first keeps a fact, the second looks for it."""
    agent = crew_agent(server, engram_tools(mem), role="researcher")
    return Crew(agents=[agent], tasks=[Task(description="The launch code is 7-4-1", expected_output="Done", agent=agent),
                                       Task(description="What is the launch code?", expected_output="It", agent=agent)])


def fails_after_the_first_task(server: OpenAICompatServer, mem: Engram, folder: Path) -> Path:
    """Runs the crew, whose model fails on the second task, then writes its checkpoint (CrewAI's
    ``RuntimeState.checkpoint``, what ``Crew(checkpoint=...)`` calls on its events) and returns it.
    Written once the crew stopped: CrewAI 1.15's automatic checkpoints are written from its event
    threads while the crew goes on, and a write sometimes fails there ("dictionary changed size
    during iteration") and is lost."""
    def model(request: RecordedRequest) -> Reply:
        if "Current Task: What is the launch code?" in request.body["messages"][1]["content"]:
            return Reply.fail(400, "scripted outage")
        return remembers_then_recalls(request)

    server.responder = model
    crew = checkpointed_crew(server, mem)
    with pytest.raises(Exception, match="scripted outage"):
        crew.kickoff()
    written = Path(RuntimeState(root=[crew]).checkpoint(str(folder)))
    server.responder = remembers_then_recalls  # the outage is over
    return written


def test_a_crew_restored_from_a_checkpoint_keeps_its_engine(engram: Engram, server: OpenAICompatServer,
                                                            tmp_path: Path) -> None:
    # CrewAI writes the tools into the checkpoint as data; restored, they act for the same engine
    # (not a copy), and the resumed crew runs its second task on it.
    researcher = engram.for_agent("researcher")
    first = fails_after_the_first_task(server, researcher, tmp_path / "checkpoints")
    [crew] = json.loads(first.read_text())["entities"]
    kept = [(t["tool_type"], t["engram_scope"]) for t in crew["agents"][0]["tools"]]  # what it keeps of the engine
    assert kept == [(f"engram.integrations.crewai.{name}", "agent:researcher")
                    for name in ("RememberTool", "RecallTool", "ForgetTool", "VersionsTool")]
    restored = Crew.from_checkpoint(CheckpointConfig(restore_from=str(first)))
    assert all(tool.engram is researcher for tool in restored.agents[0].tools)
    before = len(server.requests)
    output = restored.kickoff()
    assert len(server.requests) - before == 2  # only the second task ran again: recall, then the answer
    assert [h["content"] for h in json.loads(output.raw)["results"]] == ["The launch code is 7-4-1"]
    assert [m.content for m in researcher.list()] == ["The launch code is 7-4-1"]  # stored once


# Another process resuming a checkpoint: first without building engram tools, then as documented.
_RESUMED_CREW = """
import json, os, sys
from crewai import LLM, Agent, Crew, Task
from crewai.state.checkpoint_config import CheckpointConfig
from engram import Engram
from engram.integrations.crewai import engram_tools
config = CheckpointConfig(restore_from=sys.argv[1])
try:
    Crew.from_checkpoint(config)
except Exception as exc:
    print("REFUSED", json.dumps(str(exc)))
with Engram.from_settings(agent="assistant", embeddings={"provider": "none"}) as mem:
    llm = LLM(model="openai/scripted", base_url=os.environ["SCRIPTED_URL"], api_key="test-key")
    agent = Agent(role="researcher", goal="Help", backstory="Remembers", llm=llm,
                  tools=engram_tools(mem.for_agent("researcher")))
    crew = Crew(agents=[agent], tasks=[Task(description="The launch code is 7-4-1", expected_output="Done", agent=agent),
                                       Task(description="What is the launch code?", expected_output="It", agent=agent)])
    print("ANSWER", crew.kickoff(from_checkpoint=config).raw)
"""


def test_a_checkpoint_resumed_in_another_process_needs_the_tools_built_there(
        engram: Engram, server: OpenAICompatServer, tmp_path: Path) -> None:
    first = fails_after_the_first_task(server, engram.for_agent("researcher"), tmp_path / "checkpoints")
    env = {**os.environ, "SCRIPTED_URL": server.base_url, "PYTHONPATH": os.pathsep.join(sys.path)}
    # In tmp_path: a resumed kickoff goes on checkpointing, to CrewAI's default ./.checkpoints.
    run = subprocess.run([sys.executable, "-c", _RESUMED_CREW, str(first)], env=env, capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    said = dict(line.split(" ", 1) for line in run.stdout.splitlines() if line.startswith(("REFUSED", "ANSWER")))
    # No engine given for the scope in that process: refused before anything runs, naming engram
    # (CrewAI's pydantic restore reports it once per place the tool appears).
    refused = json.loads(said["REFUSED"])
    assert "engram: a CrewAI checkpoint holds the tools' scope ('agent:researcher'), not their engine" in refused
    assert "build the crew with engram_tools(mem) for that agent first" in refused
    # With the crew built there and resumed from the checkpoint: the second task, on engram.
    assert [h["content"] for h in json.loads(said["ANSWER"])["results"]] == ["The launch code is 7-4-1"]
    assert [m.content for m in engram.for_agent("researcher").list()] == ["The launch code is 7-4-1"]


def test_kickoff_for_each_shares_the_tools_engine(engram: Engram, server: OpenAICompatServer) -> None:
    # kickoff_for_each runs a copy of the crew per input; the copies keep the same tools and engine.
    server.responder = remembers_then_recalls
    agent = crew_agent(server, engram_tools(engram))
    crew = Crew(agents=[agent], tasks=[Task(description="{fact}", expected_output="Done", agent=agent)])
    crew.kickoff_for_each([{"fact": "The user likes tea"}, {"fact": "The user lives in Lisbon"}])
    assert sorted(m.content for m in engram.list()) == ["The user likes tea", "The user lives in Lisbon"]
