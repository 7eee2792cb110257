"""EngramSession driven by the real Agents SDK Runner (a scripted model stands in for OpenAI)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents", reason="the openai-agents extra is not installed: pip install 'engram-recall[openai-agents]'")

from agents import Agent, RunConfig, Runner  # noqa: E402
from agents.items import ModelResponse  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from agents.usage import Usage  # noqa: E402
from openai.types.responses import ResponseOutputMessage, ResponseOutputText  # noqa: E402

from engram.engine import Engram  # noqa: E402
from engram.errors import ValidationError  # noqa: E402
from engram.integrations import CUT_MARK  # noqa: E402
from engram.integrations.openai_agents import EngramSession  # noqa: E402
from tests.cli_in_process import cli_output  # noqa: E402


class ScriptedModel(Model):
    """Answers with the number of user turns it was shown: proves the session fed it the history."""

    def __init__(self) -> None:
        self.inputs: list[list] = []

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema,  # noqa: A002, ANN001, ANN201, PLR0913
                           handoffs, tracing, *, previous_response_id, conversation_id, prompt):
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        self.inputs.append(items)
        users = [i["content"] for i in items if isinstance(i, dict) and i.get("role") == "user"]
        text = f"I have seen {len(users)} message(s) from you: " + " | ".join(users)
        message = ResponseOutputMessage(id=f"msg_{len(self.inputs)}", role="assistant", status="completed",
                                        type="message", content=[ResponseOutputText(text=text, type="output_text",
                                                                                    annotations=[])])
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):  # noqa: ANN002, ANN003, ANN201
        raise NotImplementedError


@pytest.fixture
def engram(isolated_home: Path) -> Engram:
    mem = Engram.from_settings(agent="support", embeddings={"provider": "none"})
    yield mem
    mem.close()


def test_the_runner_keeps_the_conversation_in_engram(engram: Engram) -> None:
    model = ScriptedModel()
    agent = Agent(name="support", instructions="Be brief.", model=model)
    config = RunConfig(tracing_disabled=True)

    async def chat() -> list[str]:
        session = EngramSession("user-42", engram)
        first = await Runner.run(agent, "My name is Ana", session=session, run_config=config)
        second = await Runner.run(agent, "What is my name?", session=session, run_config=config)
        return [first.final_output, second.final_output]

    answers = asyncio.run(chat())
    assert answers[1] == "I have seen 2 message(s) from you: My name is Ana | What is my name?"
    # the history lives in engram, readable as a conversation, and a new session object finds it
    messages = engram.history.all("openai-agents:user-42")
    assert [(m.role.value, m.content) for m in messages][:2] == [("user", "My name is Ana"),
                                                                 ("assistant", answers[0])]
    items = asyncio.run(EngramSession("user-42", engram).get_items())
    assert len(items) == 4 and items[0] == {"role": "user", "content": "My name is Ana"}
    assert items[1]["type"] == "message" and items[1]["content"][0]["text"] == answers[0]


def test_session_operations(engram: Engram) -> None:
    async def run() -> None:
        session = EngramSession("s1", engram)
        other = EngramSession("s2", engram)
        await session.add_items([{"role": "user", "content": "one"}, {"role": "assistant", "content": "two"},
                                 {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}])
        await other.add_items([{"role": "user", "content": "elsewhere"}])
        await other.add_items([])  # no items is nothing to add (the history refuses an empty batch)
        assert [i.get("content") for i in await session.get_items(limit=2)] == ["two", None]
        assert (await session.pop_item())["type"] == "function_call"
        assert [i["content"] for i in await session.get_items()] == ["one", "two"]
        await session.clear_session()
        assert await session.get_items() == [] and await session.pop_item() is None
        assert [i["content"] for i in await other.get_items()] == ["elsewhere"]
        with pytest.raises(ValidationError) as err:
            await session.get_items(limit="2")  # type: ignore[arg-type]
        assert err.value.field == "limit"

    asyncio.run(run())
    with pytest.raises(ValidationError) as err:
        EngramSession("has:colon", engram)
    assert err.value.field == "session_id"


def test_a_message_another_door_appended_is_an_item_of_the_session(isolated_home: Path) -> None:
    # The CLI appends to the SDK session's conversation (a note for the model). It held no SDK
    # item: get_items left it out, and pop_item removed it and answered None, which the SDK reads
    # as an empty session while the session's own items were still there.
    async def add() -> None:
        mem = Engram.from_settings(agent="support", embeddings={"provider": "none"})
        try:
            await EngramSession("user-42", mem).add_items([{"role": "user", "content": "Hi, I'm Ana"}])
        finally:
            mem.close()

    asyncio.run(add())
    cli_output(isolated_home, "--agent", "support", "history", "append", "openai-agents:user-42",
               "The user prefers short answers.", "--role", "system")
    mem = Engram.from_settings(agent="support", embeddings={"provider": "none"})
    try:
        async def read_and_pop() -> tuple[list, object, object, list]:
            session = EngramSession("user-42", mem)
            items = await session.get_items()
            return items, await session.pop_item(), await session.pop_item(), await session.get_items()

        items, first, second, left = asyncio.run(read_and_pop())
    finally:
        mem.close()
    assert items == [{"role": "user", "content": "Hi, I'm Ana"}, {"role": "system", "content": "The user prefers short answers."}]
    assert first == {"role": "system", "content": "The user prefers short answers."}
    assert second == {"role": "user", "content": "Hi, I'm Ana"} and left == []


def test_limits_read_as_the_sdks_sqlite_session_reads_them(engram: Engram) -> None:
    # SQLiteSession hands the limit to SQLite's LIMIT: a negative one (or None) is every item, 0 none
    from agents import SQLiteSession
    from agents.memory import SessionSettings

    items = [{"role": "user", "content": "one"}, {"role": "assistant", "content": "two"},
             {"role": "user", "content": "three"}]

    async def both(limit: int | None, settings: SessionSettings | None = None) -> tuple[list, list]:
        ours = EngramSession("limits", engram, session_settings=settings)
        theirs = SQLiteSession("limits", session_settings=settings)  # an in-memory SQLite database
        await theirs.add_items(items)
        try:
            return await ours.get_items(limit), await theirs.get_items(limit)
        finally:
            theirs.close()

    asyncio.run(EngramSession("limits", engram).add_items(items))
    for limit, settings in [(-1, None), (-5, None), (None, SessionSettings(limit=-1)), (None, SessionSettings(limit=0)),
                            (0, None), (2, None), (None, None), (-1, SessionSettings(limit=1))]:
        ours, theirs = asyncio.run(both(limit, settings))
        assert ours == theirs, (limit, settings)
    assert len(asyncio.run(both(-1))[0]) == 3


def test_trimmed_history_never_returns_a_tool_output_without_its_call(isolated_home: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # history.max_history_len trims items one by one, blind to the Agents SDK's call/output pairs:
    # the cut can fall between a function_call and its output, which the OpenAI API rejects.
    monkeypatch.setenv("ENGRAM_HISTORY__MAX_HISTORY_LEN", "3")
    call = {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "sunny"}
    answer = {"role": "assistant", "content": "a1"}

    async def run(mem: Engram) -> None:
        session = EngramSession("trimmed", mem)
        await session.add_items([{"role": "user", "content": "q1"}, call, output, answer])
        await session.add_items([{"role": "user", "content": "q2"}])
        # stored: output, a1, q2 (the call was trimmed): the orphaned output is left out
        assert await session.get_items() == [answer, {"role": "user", "content": "q2"}]
        await session.add_items([{"role": "user", "content": "q3"}, call, output])
        assert await session.get_items() == [{"role": "user", "content": "q3"}, call, output]
        assert await session.get_items(limit=1) == []  # the latest item alone is an orphaned output
        assert await session.get_items(limit=2) == [call, output]

    with Engram.from_settings(agent="support", embeddings={"provider": "none"}) as mem:
        assert mem.history.max_history_len == 3
        asyncio.run(run(mem))


def test_session_settings_limit_the_history_as_the_sdk_sessions_do(engram: Engram) -> None:
    # SQLiteSession("id", session_settings=SessionSettings(limit=...)): the Runner reads the
    # session's own settings, and get_items() without a limit honours them
    from agents.memory import SessionSettings

    model = ScriptedModel()
    agent = Agent(name="support", instructions="Be brief.", model=model)
    config = RunConfig(tracing_disabled=True)

    async def chat() -> list[dict]:
        session = EngramSession("limited", engram, session_settings=SessionSettings(limit=1))
        await Runner.run(agent, "My name is Ana", session=session, run_config=config)
        second = await Runner.run(agent, "What is my name?", session=session, run_config=config)
        assert second.final_output == "I have seen 1 message(s) from you: What is my name?"
        assert len(await session.get_items(limit=10)) == 4  # an explicit limit wins
        return await session.get_items()

    last = asyncio.run(chat())
    assert len(last) == 1 and last[0]["type"] == "message"  # the latest item only: the second answer
    assert len(asyncio.run(EngramSession("limited", engram, session_settings={"limit": 2}).get_items())) == 2
    with pytest.raises(ValidationError) as err:
        EngramSession("limited", engram, session_settings=5)  # type: ignore[arg-type]
    assert err.value.field == "session_settings"


@pytest.mark.parametrize(("settings", "field"), [
    ({"limt": 2}, "session_settings.limt"), ({"limit": "2"}, "session_settings.limit"),
    ({"limit": "x"}, "session_settings.limit"), ({"limit": True}, "session_settings.limit"),
])
def test_session_settings_as_a_dict_are_checked_as_engram_s_errors(engram: Engram, settings: dict, field: str) -> None:
    """A dict's unknown key was dropped, unsaid (the SDK's own sessions refuse one), "2" was read as
    2, and "x" was refused in pydantic's words: each is engram's ``ValidationError`` naming it."""
    with pytest.raises(ValidationError) as err:
        EngramSession("limited", engram, session_settings=settings)
    assert err.value.field == field and err.value.allowed
    assert EngramSession("limited", engram, session_settings={"limit": None}).session_settings.limit is None


def test_an_unknown_keyword_is_refused_naming_it_and_what_the_session_takes(engram: Engram) -> None:
    # Python's own TypeError named it and listed nothing (the SDK's sessions take ``session_settings``).
    with pytest.raises(ValidationError) as err:
        EngramSession("s", engram, settings={"limit": 2})  # type: ignore[call-arg]
    assert err.value.field == "settings" and "is not a keyword of EngramSession" in str(err.value)
    assert err.value.allowed == "engram, session_id, session_settings"


def test_items_engram_refuses_add_none_of_them(engram: Engram) -> None:
    session = EngramSession("batch", engram)
    items = [{"role": "user", "content": "one"}, {"role": "assistant", "content": "two"},
             {"role": "user", "content": "a NUL \x00 no store can hold"}]
    with pytest.raises(ValidationError) as err:
        asyncio.run(session.add_items(items))
    assert asyncio.run(session.get_items()) == []  # not "one", "two"
    assert err.value.field == "items[2].content"  # the caller's argument, not the history's messages[2]


@pytest.mark.parametrize("bad", ["a NUL \x00", "a lone \ud800 surrogate"])
def test_a_nul_or_lone_surrogate_anywhere_in_an_item_is_refused_naming_the_item(engram: Engram, bad: str) -> None:
    # Kept whole in the history message's metadata: it was named "messages[1].metadata", words of
    # engram's history, not of add_items.
    session = EngramSession("batch", engram)
    items = [{"role": "user", "content": "one"},
             {"type": "function_call", "call_id": "c1", "name": "look_up", "arguments": f'{{"q": "{bad}"}}'},
             {"role": "user", "content": [{"type": "input_text", "text": bad}]}]
    for i in (1, 2):
        with pytest.raises(ValidationError) as err:
            asyncio.run(session.add_items(items[:1] + items[i:i + 1]))
        assert err.value.field == "items[1]"  # the second item given
    assert asyncio.run(session.get_items()) == []


@pytest.mark.parametrize(("items", "field"), [
    ("Hi, I'm Ana", "items"), ({"role": "user", "content": "hi"}, "items"), (None, "items"),
    ([{"role": "user", "content": "one"}, 5], "items[1]"), ([["role", "user"]], "items[0]"),
])
def test_what_is_not_a_list_of_items_is_refused_naming_it(engram: Engram, items: Any, field: str) -> None:
    # A string was stored one item per character (and a number as an item), which the Runner then sent.
    session = EngramSession("typed", engram)
    with pytest.raises(ValidationError) as err:
        asyncio.run(session.add_items(items))
    assert err.value.field == field and "dict" in err.value.allowed
    assert asyncio.run(session.get_items()) == []


def test_a_session_id_engram_refuses_says_what_a_session_id_may_be(engram: Engram) -> None:
    with pytest.raises(ValidationError) as err:
        EngramSession("has space", engram)
    # Not the rule of a whole conversation key (channel:chat...), which the caller never wrote.
    assert err.value.field == "session_id" and err.value.allowed == '1-128 characters without ":" or spaces'


def test_pops_awaited_together_each_take_their_own_item(engram: Engram) -> None:
    # pop_item is count, read, discard by position: without a lock two pops awaited together read
    # the same newest item (both returned it, one item was removed), and a pop beside add_items
    # removed another item than the one it returned. The SDK's SQLiteSession pops atomically.
    async def run() -> None:
        one, two = EngramSession("popped", engram), EngramSession("popped", engram)  # two objects, one session
        await one.add_items([{"role": "user", "content": f"m{i}"} for i in range(20)])
        popped = await asyncio.gather(*(session.pop_item() for _ in range(5) for session in (one, two)))
        assert sorted(item["content"] for item in popped) == sorted(f"m{i}" for i in range(10, 20))
        assert [item["content"] for item in await one.get_items()] == [f"m{i}" for i in range(10)]

        await one.clear_session()
        await one.add_items([{"role": "user", "content": f"m{i}"} for i in range(5)])
        calls = [call for i in range(10)
                 for call in (two.pop_item(), one.add_items([{"role": "user", "content": f"n{i}"}]))]
        popped = [item["content"] for item in await asyncio.gather(*calls) if item is not None]
        left = [item["content"] for item in await one.get_items()]
        # every item is either still there or was returned by a pop, once
        assert sorted(popped + left) == sorted([f"m{i}" for i in range(5)] + [f"n{i}" for i in range(10)])

    asyncio.run(run())


def _pop_in_another_process(barrier, out) -> None:  # noqa: ANN001 - multiprocessing objects
    from tests.history_races import Paused

    mem = Engram.from_settings(agent="support", embeddings={"provider": "none"})
    try:
        # Caught between its first read and its change, as a slower process would be.
        mem.history.store = Paused(mem.history.store, barrier)
        out.put(asyncio.run(EngramSession("shared", mem).pop_item())["content"])
    finally:
        mem.close()


def test_pops_from_two_processes_each_take_their_own_item(engram: Engram) -> None:
    # The per-process lock left two processes on one home free to count the same ten items and
    # discard position 9: one removed m9, the other returned m8 and removed nothing (m8 stayed).
    import multiprocessing

    asyncio.run(EngramSession("shared", engram).add_items([{"role": "user", "content": f"m{i}"} for i in range(10)]))
    context = multiprocessing.get_context("fork")
    barrier, out = context.Barrier(2), context.Queue()
    procs = [context.Process(target=_pop_in_another_process, args=(barrier, out)) for _ in range(2)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join()
    assert [proc.exitcode for proc in procs] == [0, 0]
    assert sorted([out.get(), out.get()]) == ["m8", "m9"]
    items = asyncio.run(EngramSession("shared", engram).get_items())
    assert [item["content"] for item in items] == [f"m{i}" for i in range(8)]


def test_an_item_longer_than_a_history_message_is_kept_whole(engram: Engram) -> None:
    # An item's history text is its JSON when it has no text of its own: a user's 800 KB photo
    # (or a long tool output) made it longer than a history message may be, and add_items refused it.
    photo = "data:image/jpeg;base64," + "A" * 1_100_000
    call = {"type": "function_call", "call_id": "c1", "name": "read_file", "arguments": "{}"}
    items = [{"role": "user", "content": [{"type": "input_image", "image_url": photo, "detail": "auto"}]},
             call, {"type": "function_call_output", "call_id": "c1", "output": "é" * 1_200_000},
             {"role": "user", "content": "ß" * 1_000_001}]
    session = EngramSession("photos", engram)
    asyncio.run(session.add_items(items))
    assert asyncio.run(session.get_items()) == items
    shown = [m.content for m in engram.history.all("openai-agents:photos")]
    assert [len(text) for text in shown] == [1_000_000, len(shown[1]), 1_000_000, 1_000_000]
    assert shown[3] == "ß" * (1_000_000 - len(CUT_MARK)) + CUT_MARK


def test_an_async_engram_keeps_the_session_in_its_engine(engram: Engram) -> None:
    # Given an AsyncEngram (asyncio code's engine), add_items stored nothing (its history's methods
    # are coroutines, never awaited) and get_items raised a TypeError.
    from engram.aio import AsyncEngram

    async def run() -> list[Any]:
        session = EngramSession("async-user", AsyncEngram(engram))
        await session.add_items([{"role": "user", "content": "Hi, I'm Ana"}])
        return await session.get_items()

    assert asyncio.run(run()) == [{"role": "user", "content": "Hi, I'm Ana"}]
    assert [m.content for m in engram.history.all("openai-agents:async-user")] == ["Hi, I'm Ana"]
    with pytest.raises(ValidationError) as err:
        EngramSession("async-user", "not an engine")  # type: ignore[arg-type]
    assert err.value.field == "engram"
