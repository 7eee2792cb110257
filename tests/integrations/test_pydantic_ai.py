"""EngramToolset and EngramMessageStore driven by a real Pydantic AI Agent (FunctionModel, Pydantic
AI's own offline model, stands in for a provider) over a real SQLite engram store."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai", reason="the pydantic-ai extra is not installed: pip install 'engram-recall[pydantic-ai]'")

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.messages import (  # noqa: E402
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402

from engram.aio import AsyncEngram  # noqa: E402
from engram.engine import Engram  # noqa: E402
from engram.errors import StorageError, ValidationError  # noqa: E402
from engram.integrations import CUT_MARK  # noqa: E402
from engram.integrations.pydantic_ai import EngramMessageStore, EngramToolset  # noqa: E402
from engram.interfaces import present  # noqa: E402


@pytest.fixture
def engram(isolated_home: Path) -> Engram:
    # The configured SQLite store and SQLite history under the test's own ENGRAM_HOME.
    mem = Engram.from_settings(agent="assistant", embeddings={"provider": "none"})
    yield mem
    mem.close()


def calls_then_answers(*calls: tuple[str, dict[str, Any]]) -> tuple[FunctionModel, list[list[ModelMessage]]]:
    """A model that makes ``calls`` (one tool call per response), then answers with what the last
    tool call got back (its return, or the error text it was sent); and every history it was shown."""
    seen: list[list[ModelMessage]] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        step = sum(isinstance(m, ModelResponse) for m in _this_run(messages))  # one call per response
        if step < len(calls):
            name, args = calls[step]
            return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=f"call-{step}")])
        last = messages[-1].parts[-1]
        text = last.content if isinstance(last.content, str) else json.dumps(last.content)
        return ModelResponse(parts=[TextPart(text)])

    return FunctionModel(respond), seen


def _this_run(messages: list[ModelMessage]) -> list[ModelMessage]:
    """The messages since the run's own prompt (a loaded history comes before it)."""
    starts = [i for i, m in enumerate(messages)
              if isinstance(m, ModelRequest) and any(isinstance(p, UserPromptPart) for p in m.parts)]
    return messages[starts[-1]:]


def returned(result: Any, tool: str) -> Any:
    """What ``tool`` gave the model in this run (its return, or its retry prompt's text)."""
    for message in result.new_messages():
        for part in message.parts:
            if isinstance(part, ToolReturnPart | RetryPromptPart) and part.tool_name == tool:
                return part.content
    raise AssertionError(f"{tool} was not called")


def run(agent: Agent, prompt: str, **kwargs: Any) -> Any:
    return asyncio.run(agent.run(prompt, **kwargs))


def with_tools(mem: AsyncEngram, *calls: tuple[str, dict[str, Any]]) -> Agent:
    model, _ = calls_then_answers(*calls)
    return Agent(model, toolsets=[EngramToolset(mem)])


def test_a_fact_remembered_in_one_run_is_recalled_in_a_later_one(engram: Engram) -> None:
    mem = AsyncEngram(engram)
    first = run(with_tools(mem, ("remember", {"content": "The user's favourite colour is teal",
                                               "tags": ["preferences"], "importance": 0.8})),
                "Remember that my favourite colour is teal")
    stored = returned(first, "remember")
    assert stored["action"] == "created" and stored["memory_id"]
    memory = engram.get(stored["memory_id"])
    assert memory.scope.agent == "assistant" and memory.tags == ("preferences",) and memory.importance == 0.8

    # A later run, with a new agent and toolset: only the store connects the two.
    second = run(with_tools(AsyncEngram(engram), ("recall", {"query": "favourite colour"})),
                 "What is my favourite colour?")
    hits = returned(second, "recall")["results"]
    assert [h["content"] for h in hits] == ["The user's favourite colour is teal"]
    assert hits[0]["memory_id"] == stored["memory_id"] and hits[0]["tags"] == ["preferences"]
    assert "teal" in second.output  # the model was shown the recalled memory

    third = run(with_tools(mem, ("forget", {"memory_id": stored["memory_id"], "reason": "asked to"})), "Forget it")
    assert returned(third, "forget")["count"] == 1 and engram.count() == 0


def test_the_tools_tell_the_model_their_arguments(engram: Engram) -> None:
    tools: dict[str, Any] = {}

    def look(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        tools.update({t.name: t for t in info.function_tools})
        return ModelResponse(parts=[TextPart("ok")])

    run(Agent(FunctionModel(look), toolsets=[EngramToolset(AsyncEngram(engram))]), "hi")
    assert set(tools) == {"remember", "recall", "forget", "versions"}
    remember = tools["remember"]
    assert remember.description.startswith("Store one fact") and remember.parameters_json_schema["required"] == ["content"]
    # every argument is described to the model (the toolset refuses a tool with an undescribed one)
    assert all(p.get("description") for t in tools.values() for p in t.parameters_json_schema["properties"].values())


@pytest.mark.parametrize(("tool", "args", "expected"), [
    ("remember", {"content": "The sky is green", "importance": 7.0}, "invalid importance"),
    ("remember", {"content": "   "}, "invalid content"),
    ("remember", {"content": "Fact", "category": "forever"}, "invalid category"),
    ("recall", {"query": "anything", "limit": 500}, "invalid limit"),
    ("forget", {"query": "sky", "tag": "colours"}, "invalid forget: got query, tag (allowed: exactly one of memory_id, key"),
])
def test_a_bad_argument_comes_back_to_the_model_naming_the_field(engram: Engram, tool: str, args: dict[str, Any],
                                                                 expected: str) -> None:
    result = run(with_tools(AsyncEngram(engram), (tool, args)), "Do it")
    told = returned(result, tool)
    assert isinstance(told, str) and told.startswith(expected), told
    assert expected in result.output  # the model read it, and could answer (or retry) from it
    assert engram.count() == 0  # nothing was stored


def test_versions_gives_a_memorys_earlier_contents_oldest_first(engram: Engram) -> None:
    first = engram.remember("Ana takes a flat white ☕", key="coffee")
    engram.remember("Ana takes a cortado", key="coffee")
    engram.remember("Ana gave up coffee", key="coffee")
    mem = AsyncEngram(engram)
    by_key = returned(run(with_tools(mem, ("versions", {"key": "coffee"})), "What did I drink before?"), "versions")
    assert [v["content"] for v in by_key["versions"]] == ["Ana takes a flat white ☕", "Ana takes a cortado"]
    assert by_key == present.versions_dict(engram.versions("coffee"))  # the form every door gives
    by_id = returned(run(with_tools(mem, ("versions", {"memory_id": first.memory.id})), "And by id?"), "versions")
    assert by_id == by_key and engram.get("coffee").content == "Ana gave up coffee"  # read, nothing changed
    engram.remember("Ana likes green tea", key="tea")
    assert returned(run(with_tools(mem, ("versions", {"memory_id": "tea"})), "Tea?"), "versions") == {"versions": []}


@pytest.mark.parametrize("tool", ["forget", "versions"])
def test_a_memory_that_is_not_there_is_a_failed_call_not_a_retry(engram: Engram, tool: str) -> None:
    result = run(with_tools(AsyncEngram(engram), (tool, {"memory_id": "no-such-memory"})), "Do it")
    part = next(p for m in result.new_messages() for p in m.parts if isinstance(p, ToolReturnPart))
    assert part.outcome == "failed"
    assert part.content == 'memory not found: "no-such-memory"; recall first to find the right memory_id or key'


def test_a_conversation_saved_loads_as_it_was_and_the_next_run_sees_it(engram: Engram) -> None:
    store = EngramMessageStore(engram)
    model, seen = calls_then_answers(("remember", {"content": "The user's name is Ana"}))
    agent = Agent(model, toolsets=[EngramToolset(AsyncEngram(engram))])

    first = run(agent, "My name is Ana", message_history=store.messages("user-42"))
    store.save("user-42", first.new_messages())
    store.save("user-42", [])  # nothing new is nothing to save (the history refuses an empty batch)
    loaded = store.messages("user-42")
    assert loaded == first.all_messages() and len(loaded) == 4  # prompt, tool call, tool return, answer

    second = run(agent, "What is my name?", message_history=loaded)
    assert seen[-1][:4] == first.all_messages()  # the model was shown the first run
    asyncio.run(store.asave("user-42", second.new_messages()))
    assert asyncio.run(store.amessages("user-42")) == second.all_messages()
    assert store.messages("user-42", limit=2) == second.all_messages()[-2:]

    # engram's own history reads it as a conversation; the whole message rides in the metadata
    history = engram.history.all("pydantic-ai:user-42")
    assert [(m.role.value, m.content) for m in history][:1] == [("user", "My name is Ana")]
    assert history[3].content == first.output and history[1].role.value == "assistant"
    assert json.loads(history[1].content)["parts"][0]["tool_name"] == "remember"  # no text: the message as JSON
    # each at the time Pydantic AI gave it, not the time it was saved
    stamped = [(m.created_at, message.timestamp) for m, message in zip(history, first.all_messages(), strict=False)]
    assert all(message_time is not None and created == message_time.timestamp() for created, message_time in stamped)

    store.clear("user-42")
    assert store.messages("user-42") == [] and store.messages("someone-else") == []


def test_a_window_that_cuts_a_tool_call_from_its_return_still_runs(engram: Engram) -> None:
    store = EngramMessageStore(engram)
    first = run(with_tools(AsyncEngram(engram), ("recall", {"query": "anything"})), "Look it up")
    store.save("c", first.new_messages())
    window = store.messages("c", limit=2)  # the tool's return and the answer, without the call
    assert isinstance(window[0].parts[0], ToolReturnPart)
    model, seen = calls_then_answers()
    assert run(Agent(model), "And now?", message_history=window).output == "And now?"
    assert not any(isinstance(p, ToolReturnPart) for m in seen[0] for p in m.parts)  # Pydantic AI dropped it


def test_a_conversations_text_is_kept_as_written_in_engrams_history(engram: Engram) -> None:
    # The readable text engram's history shows (transcripts, search) is the prompt and the answer byte
    # for byte: their leading indentation and trailing newline were cut off.
    store = EngramMessageStore(engram)
    prompt = "  indented code:\n\tx = 1\n"
    model, _ = calls_then_answers()
    first = run(Agent(model), prompt)
    store.save("c", first.new_messages())
    history = engram.history.all("pydantic-ai:c")
    assert [m.content for m in history] == [prompt, first.output]
    assert store.messages("c") == first.all_messages()


def test_one_agent_never_sees_another_agents_memories_or_conversations(engram: Engram) -> None:
    alice, bob = AsyncEngram(engram.for_agent("alice")), AsyncEngram(engram.for_agent("bob"))
    stored = returned(run(with_tools(alice, ("remember", {"content": "Alice's locker code is 4512"})), "Keep it"),
                      "remember")
    assert returned(run(with_tools(bob, ("recall", {"query": "locker code"})), "Code?"), "recall")["results"] == []
    assert returned(run(with_tools(alice, ("recall", {"query": "locker code"})), "Code?"), "recall")["results"]
    refused = run(with_tools(bob, ("forget", {"memory_id": stored["memory_id"]})), "Forget it")
    assert returned(refused, "forget").startswith("memory not found")
    engram.for_agent("alice").remember("Alice's locker code is 9981", key=stored["key"])  # now it has a version
    for args in ({"memory_id": stored["memory_id"]}, {"key": stored["key"]}):
        told = returned(run(with_tools(bob, ("versions", args)), "Old code?"), "versions")
        assert isinstance(told, str) and "not found" in told and "Alice's" not in told, told
    assert returned(run(with_tools(alice, ("versions", {"key": stored["key"]})), "Old code?"), "versions") == {
        "versions": [{"content": "Alice's locker code is 4512",
                      "replaced_at": engram.for_agent("alice").versions(stored["key"])[0].replaced_at}]}
    assert engram.for_agent("alice").count() == 1

    saved = run(with_tools(alice), "A secret between us")
    EngramMessageStore(alice).save("c1", saved.new_messages())
    assert EngramMessageStore(bob).messages("c1") == []
    assert EngramMessageStore(engram.for_agent("alice")).messages("c1") == saved.all_messages()


def test_a_run_with_a_message_engram_refuses_saves_none_of_it(engram: Engram) -> None:
    store = EngramMessageStore(engram)
    store.save("c", [ModelRequest.user_text_prompt("kept from before")])
    run_messages = [ModelRequest.user_text_prompt("first"), ModelResponse(parts=[TextPart("second")]),
                    ModelRequest.user_text_prompt("a NUL \x00 no store can hold"), ModelResponse(parts=[TextPart("fourth")])]
    with pytest.raises(ValidationError) as err:
        store.save("c", run_messages)
    assert [m.parts[0].content for m in store.messages("c")] == ["kept from before"]  # not "first", "second"
    assert err.value.field == "messages[2].content"


@pytest.mark.parametrize("bad", ["a NUL \x00", "a lone \ud800 surrogate"])
def test_a_nul_or_lone_surrogate_anywhere_in_a_message_is_refused_naming_it(engram: Engram, bad: str) -> None:
    # A lone surrogate was pydantic's own serialization error naming no message; a NUL in a tool
    # call's arguments was named as the history's "messages[1].metadata".
    store = EngramMessageStore(engram)
    for messages, field in [([ModelRequest.user_text_prompt("first"), ModelRequest.user_text_prompt(bad)],
                             "messages[1].content"),
                            ([ModelRequest.user_text_prompt("first"),
                              ModelResponse(parts=[TextPart("looking"), ToolCallPart("look_up", {"q": bad})])],
                             "messages[1]")]:
        with pytest.raises(ValidationError) as err:
            store.save("c", messages)
        assert err.value.field == field
    assert store.messages("c") == []


def test_a_run_whose_write_fails_half_way_saves_none_of_it(engram: Engram) -> None:
    store = EngramMessageStore(engram)
    with engram.history.store.db.write() as conn:  # the database refuses the third row, after two went in
        conn.execute("CREATE TRIGGER refuse BEFORE INSERT ON history_messages WHEN NEW.content = 'boom' "
                     "BEGIN SELECT RAISE(ABORT, 'refused'); END")
    run_messages = [ModelRequest.user_text_prompt("first"), ModelResponse(parts=[TextPart("second")]),
                    ModelRequest.user_text_prompt("boom"), ModelResponse(parts=[TextPart("fourth")])]
    with pytest.raises(StorageError, match="refused"):
        store.save("c", run_messages)
    assert store.messages("c") == []


@pytest.mark.parametrize(("make", "field"), [
    (lambda e: EngramToolset(e), "engram"),  # a sync Engram: the tools are async
    # Pydantic AI took these unchecked:
    (lambda e: EngramToolset(AsyncEngram(e), id=1), "id"), (lambda e: EngramToolset(AsyncEngram(e), id=""), "id"),
    (lambda e: EngramToolset(AsyncEngram(e), max_retries="x"), "max_retries"),
    (lambda e: EngramToolset(AsyncEngram(e), max_retries=-1), "max_retries"),
    (lambda e: EngramToolset(AsyncEngram(e), max_retries=True), "max_retries"),
    (lambda e: EngramMessageStore("not an engine"), "engram"),
    (lambda e: EngramMessageStore(e).messages("has:colon"), "conversation_id"),
    (lambda e: EngramMessageStore(e).messages("ok", limit=-1), "limit"),
    (lambda e: EngramMessageStore(e).save("ok", [ModelRequest.user_text_prompt("hi"), {"role": "user"}]), "messages[1]"),
])
def test_wrong_setup_names_the_field(engram: Engram, make: Callable[[Engram], Any], field: str) -> None:
    with pytest.raises(ValidationError) as err:
        make(engram)
    assert err.value.field == field


@pytest.mark.parametrize(("make", "field", "allowed"), [
    # Python's own TypeError named the keyword and listed nothing.
    (lambda e: EngramToolset(AsyncEngram(e), retries=2), "retries", "engram, id, max_retries"),
    (lambda e: EngramMessageStore(e, limit=10), "limit", "engram"),
])
def test_an_unknown_keyword_is_refused_naming_it_and_what_is_taken(engram: Engram, make: Callable[[Engram], Any],
                                                                   field: str, allowed: str) -> None:
    with pytest.raises(ValidationError) as err:
        make(engram)
    assert err.value.field == field and "is not a keyword of Engram" in str(err.value) and err.value.allowed == allowed


def test_a_conversation_id_engram_refuses_says_what_a_conversation_id_may_be(engram: Engram) -> None:
    with pytest.raises(ValidationError) as err:
        EngramMessageStore(engram).messages("has:colon")
    # Not the rule of a whole conversation key (channel:chat...), which the caller never wrote.
    assert err.value.field == "conversation_id" and err.value.allowed == '1-128 characters without ":" or spaces'


def test_a_prompt_with_an_image_is_saved_and_loads_with_its_bytes(engram: Engram) -> None:
    # The history text of a message without plain text was the message's JSON, base64 and all:
    # an 800 KB photo made it longer than a history message may be, and the run was refused.
    from pydantic_ai.messages import BinaryContent

    photo = bytes(range(256)) * 3200  # 800 KB
    run = [ModelRequest(parts=[UserPromptPart(content=["What is in this photo, José?",
                                                       BinaryContent(data=photo, media_type="image/jpeg")])]),
           ModelRequest(parts=[UserPromptPart(content=[BinaryContent(data=photo, media_type="image/jpeg")])])]
    store = EngramMessageStore(engram)
    store.save("user-42", run)
    loaded = store.messages("user-42")
    assert [[piece if isinstance(piece, str) else (piece.data, piece.media_type) for piece in m.parts[0].content]
            for m in loaded] == [["What is in this photo, José?", (photo, "image/jpeg")], [(photo, "image/jpeg")]]
    shown = [m.content for m in engram.history.all("pydantic-ai:user-42")]
    assert shown[0] == "What is in this photo, José?"  # a prompt's text beside its image is what people read
    assert shown[1].endswith(CUT_MARK) and len(shown[1]) == 1_000_000
