"""EngramTools driven by a real Agno Agent over a real SQLite engram store. The model is Agno's own
OpenAI chat model talking to a local server that speaks the chat-completions wire format and
plays a scripted model (one tool call per reply, then an answer repeating what the last call got),
so Agno's real request building, tool dispatch and error handling run; nothing leaves 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("agno", reason="the agno extra is not installed: pip install 'engram-recall[agno]'")
pytest.importorskip("openai", reason="Agno's OpenAI model needs the openai package (installed by the dev extra)")

from agno.agent import Agent  # noqa: E402
from agno.exceptions import RetryAgentRun  # noqa: E402
from agno.models.openai import OpenAIChat  # noqa: E402
from agno.run import RunContext  # noqa: E402

from engram.aio import AsyncEngram  # noqa: E402
from engram.engine import Engram  # noqa: E402
from engram.errors import ValidationError  # noqa: E402
from engram.integrations.agno import EngramTools  # noqa: E402
from engram.interfaces import present  # noqa: E402
from engram.testing.llm_servers import OpenAICompatServer  # noqa: E402
from tests.integrations.scripted_chat import REFUSED_BY_THE_TOOLS, REFUSED_IN_DIRECT_CALLS, scripted  # noqa: E402


@pytest.fixture(autouse=True)
def no_telemetry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGNO_TELEMETRY", "false")  # Agno would otherwise post each run to its API


def agent(server: OpenAICompatServer, tools: EngramTools, *calls: tuple[str, dict[str, Any]]) -> Agent:
    server.responder = scripted(*calls)
    model = OpenAIChat(id="scripted", api_key="test-key", base_url=server.base_url)
    return Agent(model=model, tools=[tools], telemetry=False)


def told(run: Any, tool: str) -> tuple[str, bool]:
    """What ``tool`` sent back to the model in ``run`` (its text) and whether the call failed."""
    done = [t for t in run.tools or [] if t.tool_name == tool]
    assert done, f"{tool} was not called"
    return done[-1].result, bool(done[-1].tool_call_error)


def test_a_fact_remembered_in_one_run_is_recalled_in_a_later_one(engram: Engram, server: OpenAICompatServer) -> None:
    first = agent(server, EngramTools(engram), ("remember", {"content": "The user's favourite colour is teal",
                                                             "key": "colour", "tags": ["preferences"], "importance": 0.8}))
    text, failed = told(first.run("Remember that my favourite colour is teal"), "remember")
    stored = json.loads(text)
    assert not failed and stored["action"] == "created" and stored["key"] == "colour"

    # In the SQLite file: another engine opened on it reads the memory.
    with Engram.from_settings(agent="assistant", embeddings={"provider": "none"}) as reopened:
        memory = reopened.get(stored["memory_id"])
    assert memory.scope.agent == "assistant" and memory.tags == ("preferences",) and memory.importance == 0.8

    # A later run, with a new agent and toolkit: only the store connects the two.
    second = agent(server, EngramTools(engram), ("recall", {"query": "favourite colour"})).run("My favourite colour?")
    hits = json.loads(told(second, "recall")[0])["results"]
    assert [(h["memory_id"], h["content"], h["tags"]) for h in hits] == [
        (stored["memory_id"], "The user's favourite colour is teal", ["preferences"])]
    assert "teal" in second.content  # the model was shown the recalled memory

    # memory_id takes a key as well (resolved as every door resolves "id or key").
    third = agent(server, EngramTools(engram), ("forget", {"memory_id": "colour", "reason": "asked to"})).run("Forget it")
    forgotten = json.loads(told(third, "forget")[0])
    assert forgotten["forgotten"] == [stored["memory_id"]] and forgotten["reason"] == "asked to"
    assert engram.count() == 0


def test_async_runs_use_the_async_engine(engram: Engram, server: OpenAICompatServer) -> None:
    mem = AsyncEngram(engram)
    tools = EngramTools(mem)
    assert all(asyncio.iscoroutinefunction(f.entrypoint) for f in tools.async_functions.values())
    assert set(tools.async_functions) == {"remember", "recall", "forget", "versions"}

    run = asyncio.run(agent(server, tools, ("remember", {"content": "Ana takes the 7:40 train"}),
                            ("recall", {"query": "train"})).arun("Remember my train"))
    memory_id = json.loads(told(run, "remember")[0])["memory_id"]
    assert [h["memory_id"] for h in json.loads(told(run, "recall")[0])["results"]] == [memory_id]
    assert engram.get(memory_id).content == "Ana takes the 7:40 train"

    refused = asyncio.run(agent(server, tools, ("remember", {"content": "Fact", "importance": 3})).arun("Keep it"))
    assert told(refused, "remember") == ("invalid importance: 3.0 is out of range (allowed: a number from 0 to 1)", True)
    assert engram.count() == 1


def test_the_tools_tell_the_model_their_arguments(engram: Engram, server: OpenAICompatServer) -> None:
    agent(server, EngramTools(engram)).run("hi")
    tools = {t["function"]["name"]: t["function"] for t in server.requests[0].body["tools"]}
    assert set(tools) == {"remember", "recall", "forget", "versions"}
    assert tools["remember"]["description"].startswith("Store one fact")
    assert tools["remember"]["parameters"]["required"] == ["content"]
    assert tools["recall"]["parameters"]["required"] == ["query"] and tools["forget"]["parameters"]["required"] == []
    assert set(tools["versions"]["parameters"]["properties"]) == {"memory_id", "key"}
    assert tools["versions"]["description"].startswith("Read what one memory said before it was updated")
    properties = [(name, p) for t in tools.values() for name, p in t["parameters"]["properties"].items()]
    assert all(p.get("description") for _, p in properties)  # every argument is described
    assert "run_context" not in {name for name, _ in properties}  # Agno's to fill, never the model's


@pytest.mark.parametrize("asynchronous", [False, True])
def test_versions_gives_a_memorys_earlier_contents_oldest_first(engram: Engram, server: OpenAICompatServer,
                                                                asynchronous: bool) -> None:
    first = engram.remember("Ana takes a flat white ☕", key="coffee")
    engram.remember("Ana takes a cortado", key="coffee")
    engram.remember("Ana gave up coffee", key="coffee")
    tools = EngramTools(AsyncEngram(engram) if asynchronous else engram)

    def versions(args: dict[str, Any]) -> dict[str, Any]:
        made = agent(server, tools, ("versions", args))
        run = asyncio.run(made.arun("What did I drink before?")) if asynchronous else made.run("What did I drink before?")
        text, failed = told(run, "versions")
        assert not failed, text
        return json.loads(text)

    said = versions({"memory_id": "coffee"})
    assert [v["content"] for v in said["versions"]] == ["Ana takes a flat white ☕", "Ana takes a cortado"]
    assert said == present.versions_dict(engram.versions("coffee"))  # the form every door gives
    assert versions({"memory_id": first.memory.id}) == said == versions({"key": "coffee"})
    assert engram.get("coffee").content == "Ana gave up coffee"  # read, nothing changed
    engram.remember("Ana likes green tea", key="tea")
    assert versions({"key": "tea"}) == {"versions": []}


@pytest.mark.parametrize(("tool", "args", "expected"), REFUSED_BY_THE_TOOLS)
def test_a_bad_argument_comes_back_to_the_model_naming_the_field(engram: Engram, server: OpenAICompatServer, tool: str,
                                                                 args: dict[str, Any], expected: str) -> None:
    run = agent(server, EngramTools(engram), (tool, args)).run("Do it")
    text, failed = told(run, tool)
    assert failed and text.startswith(expected), text
    tool_messages = [m for m in server.requests[-1].body["messages"] if m["role"] == "tool"]
    assert tool_messages[-1]["content"] == text and run.content == text  # the model read it, and answered from it
    assert engram.count() == 0  # nothing was stored


@pytest.mark.parametrize("asynchronous", [False, True])
@pytest.mark.parametrize(("tool", "args", "field"), REFUSED_IN_DIRECT_CALLS)
def test_a_direct_call_with_bad_input_names_the_field_and_stores_nothing(
        engram: Engram, tool: str, args: dict[str, Any], field: str, asynchronous: bool) -> None:
    engram.remember("A memory already there", key="there")
    tools = EngramTools(AsyncEngram(engram))
    with pytest.raises(RetryAgentRun) as err:
        if asynchronous:
            asyncio.run(getattr(tools, "a" + tool)(**args))
        else:
            getattr(tools, tool)(**args)
    assert str(err.value).startswith(f"invalid {field}"), str(err.value)
    assert isinstance(err.value.__cause__, ValidationError)
    assert [m.key for m in engram.list()] == ["there"]


def test_one_agent_never_sees_another_agents_memories(engram: Engram, server: OpenAICompatServer) -> None:
    alice, bob = EngramTools(engram.for_agent("alice")), EngramTools(engram.for_agent("bob"))
    stored = json.loads(told(agent(server, alice, ("remember", {"content": "Alice's locker code is 4512"})).run("Keep it"),
                             "remember")[0])
    assert json.loads(told(agent(server, bob, ("recall", {"query": "locker code"})).run("Code?"), "recall")[0])[
        "results"] == []
    assert json.loads(told(agent(server, alice, ("recall", {"query": "locker code"})).run("Code?"), "recall")[0])["results"]
    text, failed = told(agent(server, bob, ("forget", {"memory_id": stored["memory_id"]})).run("Forget it"), "forget")
    assert failed and text.startswith("memory not found")
    assert json.loads(bob.forget(query="locker code"))["count"] == 0  # a query reaches only bob's own
    engram.for_agent("alice").remember("Alice's locker code is 9981", key=stored["key"])  # now it has a version
    for args in ({"memory_id": stored["memory_id"]}, {"key": stored["key"]}):
        text, failed = told(agent(server, bob, ("versions", args)).run("Old code?"), "versions")
        assert failed and "not found" in text and "Alice's" not in text, text
    text, failed = told(agent(server, alice, ("versions", {"key": stored["key"]})).run("Old code?"), "versions")
    assert not failed and [v["content"] for v in json.loads(text)["versions"]] == ["Alice's locker code is 4512"]
    assert engram.for_agent("alice").count() == 1 and engram.for_agent("bob").count() == 0


def test_per_user_keeps_each_runs_user_apart(engram: Engram, server: OpenAICompatServer) -> None:
    tools = EngramTools(engram, per_user=True)
    run = agent(server, tools, ("remember", {"content": "Ana is allergic to peanuts"})).run("Note it", user_id="ana")
    memory = engram.for_agent("agno:ana").get(json.loads(told(run, "remember")[0])["memory_id"])
    assert memory.scope.agent == "agno:ana" and engram.count() == 0  # not the toolkit's own agent

    for user, found in (("ana", 1), ("ben", 0)):
        run = agent(server, tools, ("recall", {"query": "allergic peanuts"})).run("Allergies?", user_id=user)
        assert len(json.loads(told(run, "recall")[0])["results"]) == found, user
    # The run's context is Agno's to fill: a model naming another user is ignored.
    sneaky = {"query": "allergic peanuts", "run_context": {"user_id": "ana", "run_id": "r", "session_id": "s"}}
    run = agent(server, tools, ("recall", sneaky)).run("Allergies?", user_id="ben")
    assert json.loads(told(run, "recall")[0])["results"] == []


def test_per_user_takes_any_user_id_and_none_lands_on_another_users_agent(engram: Engram,
                                                                          server: OpenAICompatServer) -> None:
    # Ids an application may let its users choose: an accent, a space, an email, and the written
    # form of another user's id; each is its own agent.
    tools = EngramTools(engram, per_user=True)
    users = {"José": "agno:Jos@c3@a9", "Jos@c3@a9": "agno:Jos@40c3@40a9", "has a space": "agno:has@20a@20space",
             "ana@example.com": "agno:ana@40example.com"}
    for user in users:
        run = agent(server, tools, ("remember", {"content": f"{user} keeps a key under the mat"})).run(
            "Note it", user_id=user)
        assert not told(run, "remember")[1], user
    for user, name in users.items():
        assert [m.content for m in engram.for_agent(name).list()] == [f"{user} keeps a key under the mat"]


@pytest.mark.parametrize(("user_id", "expected"), [
    (None, "user_id: the run has none"),
    ("", "user_id: the run has none"),
])
def test_per_user_refuses_a_run_without_a_usable_user_id(engram: Engram, server: OpenAICompatServer,
                                                        user_id: str | None, expected: str) -> None:
    run = agent(server, EngramTools(engram, per_user=True), ("remember", {"content": "Kept for whom?"})).run(
        "Note it", user_id=user_id)
    text, failed = told(run, "remember")
    assert failed and text.startswith(expected), text
    assert engram.list(limit=100) == [] and engram.stats().memories == 0  # nothing stored anywhere

    direct = EngramTools(AsyncEngram(engram), per_user=True)
    with pytest.raises(ValidationError) as err:
        asyncio.run(direct.aremember("Kept for whom?", run_context=RunContext(run_id="r", session_id="s", user_id=user_id)))
    assert err.value.field == "user_id"


@pytest.mark.parametrize(("make", "field"), [
    (lambda e: EngramTools("not an engine"), "engram"),
    (lambda e: EngramTools(e, user_prefix="no spaces "), "user_prefix"),
    (lambda e: EngramTools(e, user_prefix=None), "user_prefix"),
    (lambda e: EngramTools(e, per_user="no"), "per_user"),  # truthy: it turned per-user mapping on
    # Agno's Toolkit raised a TypeError for an unknown keyword, an AttributeError for a name of 1,
    # and took cache_results="no" unchecked, for its own lax reading:
    (lambda e: EngramTools(e, bogus=1), "bogus"),
    (lambda e: EngramTools(e, tools=[]), "tools"),
    (lambda e: EngramTools(e, name=1), "name"),
    (lambda e: EngramTools(e, cache_results="no"), "cache_results"),
    (lambda e: EngramTools(e, add_instructions=1), "add_instructions"),
])
def test_wrong_setup_names_the_field(engram: Engram, make: Callable[[Engram], Any], field: str) -> None:
    with pytest.raises(ValidationError) as err:
        make(engram)
    assert err.value.field == field


@pytest.mark.parametrize(("option", "value", "field"), [
    # A string where Agno takes a list: include_tools failed in Agno's words, naming letters ("r, e, c, a, l");
    # the lists past include/exclude were read by substring, so "recall, forget" needed confirmation for both.
    ("include_tools", "recall", "include_tools"),
    ("requires_confirmation_tools", "recall, forget", "requires_confirmation_tools"),
    ("exclude_tools", 3, "exclude_tools"),
    # A name that is no tool's: Agno only logged a warning for these lists (a tool left unconfirmed, unsaid).
    ("requires_confirmation_tools", ["forget", "delete"], "requires_confirmation_tools[1]"),
    ("stop_after_tool_call_tools", ["remember "], "stop_after_tool_call_tools[0]"),
    ("include_tools", ["search"], "include_tools[0]"),
])
def test_a_list_of_tool_names_is_checked_naming_the_field_and_the_tools(engram: Engram, option: str, value: Any,
                                                                        field: str) -> None:
    with pytest.raises(ValidationError) as err:
        EngramTools(engram, **{option: value})
    assert err.value.field == field
    assert err.value.allowed is not None and "remember, recall, forget, versions" in err.value.allowed


def test_agno_s_own_keywords_still_reach_its_toolkit(engram: Engram) -> None:
    tools = EngramTools(engram, name="memory", include_tools=["recall"], cache_results=False, instructions="Use it.")
    assert (tools.name, tools.include_tools, tools.cache_results, tools.instructions) == (
        "memory", ["recall"], False, "Use it.")
    confirmed = EngramTools(engram, requires_confirmation_tools=("forget",), exclude_tools=None)
    assert confirmed.requires_confirmation_tools == ["forget"] and confirmed.functions["forget"].requires_confirmation
    assert not confirmed.functions["recall"].requires_confirmation


@pytest.mark.parametrize(("option", "value", "said", "allowed"), [
    # Agno stored these unchecked, to fail later or never: a cache_ttl of "1h" when a result is cached,
    # instructions of 3 in the agent's prompt, a timeout of -1 or True.
    ("cache_ttl", "1h", 'got "1h" (text)', "an integer, 0 or more (seconds)"),
    ("cache_ttl", True, "got true (a boolean)", "an integer, 0 or more (seconds)"),
    ("cache_ttl", None, "got null", "an integer, 0 or more (seconds)"),
    ("timeout", -1, "-1 is out of range", "0 or more (seconds), or None"),
    ("timeout", "5", 'got "5" (text)', "an integer, 0 or more (seconds), or None"),
    ("instructions", 3, "got int 3", "text, or None"),
    ("id", ["engram"], 'got list ["engram"]', "text, or None"),
    ("cache_dir", b"/tmp", "got bytes b'/tmp'", "text, or None"),
])
def test_agno_s_other_toolkit_keywords_are_checked_by_their_type(engram: Engram, option: str, value: Any, said: str,
                                                                 allowed: str) -> None:
    with pytest.raises(ValidationError) as err:
        EngramTools(engram, **{option: value})
    assert (err.value.field, err.value.allowed) == (option, allowed), str(err.value)
    assert said in err.value.problem, str(err.value)


def test_agno_s_other_toolkit_keywords_given_as_it_takes_them_are_kept(engram: Engram, tmp_path: Any) -> None:
    tools = EngramTools(engram, id="memory-tools", cache_ttl=60, cache_dir=str(tmp_path), timeout=None,
                        instructions=None, cache_results=True)
    assert (tools.id, tools.cache_ttl, tools.cache_dir, tools.instructions) == ("memory-tools", 60, str(tmp_path), None)
    assert tools.functions["recall"].cache_ttl == 60 and tools.functions["recall"].cache_dir == str(tmp_path)
    assert EngramTools(engram, cache_ttl=60.0).cache_ttl == 60  # a whole float, as engram's counts take it


def test_an_empty_include_tools_is_refused_as_a_toolkit_with_no_tools(engram: Engram) -> None:
    # Agno registered none of these tools for [], but treats [] as "all tools" for decorated ones.
    with pytest.raises(ValidationError) as err:
        EngramTools(engram, include_tools=[])
    assert err.value.field == "include_tools" and "no tools" in err.value.problem
    assert err.value.allowed is not None and "or None (all of them)" in err.value.allowed
    # An empty exclude_tools means the same on both paths: nothing excluded.
    assert sorted(EngramTools(engram, exclude_tools=[]).functions) == ["forget", "recall", "remember", "versions"]


@pytest.mark.parametrize(("given", "said", "left"), [
    # Agno built these toolkits without a word, with no tools: the agent ran without memory.
    ({"exclude_tools": ["remember", "recall", "forget", "versions"]}, "excludes every tool:",
     "remember, recall, forget, versions"),
    ({"exclude_tools": ("versions", "forget", "recall", "remember", "recall")}, "excludes every tool:",
     "remember, recall, forget, versions"),
    ({"include_tools": ["recall", "versions"], "exclude_tools": ["versions", "recall"]},
     "excludes every tool include_tools includes (recall, versions):", "recall, versions"),
])
def test_exclude_tools_that_leaves_no_tool_is_refused(engram: Engram, given: dict[str, Any], said: str,
                                                      left: str) -> None:
    with pytest.raises(ValidationError) as err:
        EngramTools(engram, **given)
    assert err.value.field == "exclude_tools" and err.value.problem == f"{said} the toolkit would have no tools"
    assert err.value.allowed == f"a list leaving at least one of {left}, or None (nothing excluded)", str(err.value)
    # One tool left is a toolkit: with include_tools, and without.
    assert sorted(EngramTools(engram, include_tools=["recall", "versions"], exclude_tools=["versions"]).functions) \
        == ["recall"]
    assert sorted(EngramTools(engram, exclude_tools=["remember", "forget", "versions"]).functions) == ["recall"]


@pytest.mark.parametrize(("option", "value", "none_gives"), [
    # Agno kept "" as the toolkit's id (None makes one from its name) while its registry and Studio
    # read an empty id as none; an empty cache_dir cached in the shared temporary folder.
    ("id", "", "an id made from the toolkit's name"),
    ("id", "  ", "an id made from the toolkit's name"),
    ("cache_dir", "", "the system's temporary folder"),
])
def test_an_empty_id_or_cache_dir_is_refused_as_agno_reads_it_as_not_given(engram: Engram, option: str, value: str,
                                                                           none_gives: str) -> None:
    with pytest.raises(ValidationError) as err:
        EngramTools(engram, **{option: value})
    assert (err.value.field, err.value.allowed) == (option, f"a non-empty text, or None ({none_gives})"), str(err.value)
    assert "which Agno reads as not given" in err.value.problem
    assert EngramTools(engram, id=None).id and EngramTools(engram, instructions="").instructions == ""  # as before


@pytest.mark.parametrize(("option", "value", "field"), [
    ("include_tools", "recall " * 200, "include_tools"),
    ("requires_confirmation_tools", ["forget", "x" * 2000], "requires_confirmation_tools[1]"),
])
def test_a_long_value_in_a_list_error_is_cut(engram: Engram, option: str, value: Any, field: str) -> None:
    # The whole repr was shown: a 2,000-character name made a 2,000-character message.
    with pytest.raises(ValidationError) as err:
        EngramTools(engram, **{option: value})
    assert err.value.field == field and "…" in err.value.problem and len(err.value.problem) < 200, str(err.value)
