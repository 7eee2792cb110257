"""EngramMemory driven by a real AutoGen AssistantAgent over a real SQLite engram store. The model
is autogen-ext's own OpenAIChatCompletionClient talking to a local server that speaks the
chat-completions wire format and plays a scripted model, so AutoGen's real memory step, model
context and request building run; nothing leaves 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("autogen_core", reason="the autogen extra is not installed: pip install 'engram-recall[autogen]'")
pytest.importorskip("autogen_agentchat", reason="the tests drive an AssistantAgent (installed by the dev extra)")
pytest.importorskip("autogen_ext.models.openai", reason="the tests' model client (installed by the dev extra)")

from autogen_agentchat.agents import AssistantAgent  # noqa: E402
from autogen_agentchat.messages import MemoryQueryEvent  # noqa: E402
from autogen_core import Image  # noqa: E402
from autogen_core.memory import Memory, MemoryContent, MemoryMimeType  # noqa: E402
from autogen_core.model_context import UnboundedChatCompletionContext  # noqa: E402
from autogen_core.models import SystemMessage, UserMessage  # noqa: E402
from autogen_ext.models.openai import OpenAIChatCompletionClient  # noqa: E402
from PIL import Image as PILImage  # noqa: E402

from engram.aio import AsyncEngram  # noqa: E402
from engram.backends.sqlite import backups_for  # noqa: E402
from engram.engine import Engram, Filters  # noqa: E402
from engram.errors import StorageError, ValidationError  # noqa: E402
from engram.integrations.autogen import EngramMemory, EngramMemoryConfig  # noqa: E402
from engram.store.inmemory import InMemoryMemoryStore  # noqa: E402
from engram.testing.llm_servers import OpenAICompatServer, RecordedRequest, Reply  # noqa: E402

# A model name autogen-ext does not know needs its capabilities said. AutoGen's memories add their
# SystemMessage after the conversation, which the client refuses unless the model takes several.
MODEL_INFO: Any = {"vision": False, "function_calling": True, "json_output": False, "family": "unknown",
                   "structured_output": False, "multiple_system_messages": True}


@pytest.fixture
def engram(engram: Engram) -> Engram:
    # The shared store (tests/integrations/conftest.py), as alice's agent.
    return engram.for_agent("alice")


@pytest.fixture
def server(server: OpenAICompatServer) -> OpenAICompatServer:
    server.responder = _echo_memory
    return server


def _echo_memory(request: RecordedRequest) -> Reply:
    """A model that answers with the last system message it was shown (the memories, if any)."""
    system = [m["content"] for m in request.body["messages"] if m["role"] == "system"]
    return Reply.say(system[-1].strip())


def _agent(server: OpenAICompatServer, *memory: Memory) -> AssistantAgent:
    client = OpenAIChatCompletionClient(model="scripted", api_key="test-key", base_url=server.base_url,
                                        model_info=MODEL_INFO)
    return AssistantAgent("helper", model_client=client, memory=list(memory), system_message="Answer from memory.")


def _text(value: str, **metadata: Any) -> MemoryContent:
    return MemoryContent(content=value, mime_type=MemoryMimeType.TEXT, metadata=metadata or None)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_relevant_memories_are_put_before_the_model_call(engram: Engram, server: OpenAICompatServer) -> None:
    memory = EngramMemory(engram)

    async def scenario() -> tuple[Any, Any]:
        await memory.add(_text("The user's favourite colour is teal"))
        await memory.add(_text("The office is in Lisbon"))
        # Bob's memory, in the same store, says otherwise: alice's agent never sees it.
        await EngramMemory(engram.for_agent("bob")).add(_text("The user's favourite colour is red"))
        agent = _agent(server, memory)
        first = await agent.run(task="What is my favourite colour?")
        second = await agent.run(task="Tell me a joke")
        return first, second

    first, second = run(scenario())
    sent = server.requests[0].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "system"]
    assert sent[2]["content"] == "\nRelevant memory content:\n1. The user's favourite colour is teal"
    assert first.messages[-1].content == "Relevant memory content:\n1. The user's favourite colour is teal"
    # AutoGen reports what memory gave, as the MemoryContent query hands back.
    [event] = [m for m in first.messages if isinstance(m, MemoryQueryEvent)]
    [found] = event.content
    assert found.content == "The user's favourite colour is teal" and found.mime_type == MemoryMimeType.TEXT
    assert engram.get(found.metadata["id"]).content == found.content

    # Nothing relevant to the second message: no memory message is added for it.
    assert not any(isinstance(m, MemoryQueryEvent) for m in second.messages)
    assert [m["role"] for m in server.requests[1].body["messages"]] == ["system", "user", "system", "assistant", "user"]


def test_update_context_queries_the_latest_user_message(engram: Engram) -> None:
    engram.remember("Deploys happen on Fridays")
    engram.remember("Lunch is at noon")
    context = UnboundedChatCompletionContext()

    async def scenario() -> Any:
        await context.add_message(UserMessage(content="When is lunch?", source="user"))
        # The latest user message decides, its text parts only (an image is left out).
        image = Image(PILImage.new("RGB", (2, 2)))
        await context.add_message(UserMessage(content=["When do deploys happen?", image], source="user"))
        return await EngramMemory(engram).update_context(context)

    result = run(scenario())
    assert [m.content for m in result.memories.results] == ["Deploys happen on Fridays"]
    added = run(context.get_messages())[-1]
    assert isinstance(added, SystemMessage) and added.content.endswith("\n1. Deploys happen on Fridays")

    empty = UnboundedChatCompletionContext()
    run(empty.add_message(SystemMessage(content="When is lunch?")))  # no user message: no query
    assert run(EngramMemory(engram).update_context(empty)).memories.results == []
    assert len(run(empty.get_messages())) == 1


def test_add_and_query_keep_text_byte_for_byte(engram: Engram) -> None:
    memory = EngramMemory(AsyncEngram(engram), k=2)
    texts = ["Ünïcode façade: the café's naïve rôle — ✓ 日本語 \r\nsecond line\r\n  ",
             "# Notes\r\n\r\n- the café opens at 8\t",
             "the café closes at 18"]

    async def scenario() -> tuple[Any, ...]:
        await memory.add(_text(texts[0], source="chat", turn=3))
        await memory.add(MemoryContent(content=texts[1], mime_type="text/markdown"))
        await memory.add(_text(texts[2]))
        by_text = await memory.query("café")
        one = await memory.query(MemoryContent(content="naïve rôle", mime_type=MemoryMimeType.TEXT), k=1)
        blank = await memory.query("  ")
        return by_text, one, blank

    by_text, one, blank = run(scenario())
    assert len(by_text.results) == 2  # k
    assert blank.results == []
    [found] = one.results
    assert found.content == texts[0] and found.mime_type == MemoryMimeType.TEXT
    assert found.metadata["source"] == "chat" and found.metadata["turn"] == 3
    assert isinstance(found.metadata["score"], float) and found.metadata["id"]
    stored = {m.content: m for m in engram.list()}
    assert set(stored) == set(texts)  # in engram itself, as given
    assert stored[texts[0]].source == "autogen"
    # What AutoGen reads is what the agent uses: marked recalled, so the lifecycle jobs keep it.
    assert stored[texts[0]].recall_count >= 1  # found by the MemoryContent query
    assert sum(m.recall_count for m in stored.values()) == 2 + 1  # k=2, then k=1
    markdown = run(memory.query("Notes", k=5)).results
    assert [(m.content, m.mime_type) for m in markdown] == [(texts[1], MemoryMimeType.MARKDOWN)]


def test_the_contents_own_score_and_id_are_kept_and_engrams_go_beside_them(engram: Engram) -> None:
    # The content's own metadata is the user's data: a "score" or "id" of theirs comes back as it
    # was added, and engram's (AutoGen's ChromaDB memory's keys) go under engram_score / engram_id.
    memory = EngramMemory(engram)
    run(memory.add(_text("the ferry leaves at nine", score="A+", id="ticket-7", source="chat")))
    run(memory.add(_text("the ferry is late on sundays")))
    results = {m.content: m.metadata for m in run(memory.query("ferry")).results}
    own = results["the ferry leaves at nine"]
    assert own["score"] == "A+" and own["id"] == "ticket-7" and own["source"] == "chat"
    assert isinstance(own["engram_score"], float) and engram.get(own["engram_id"]).content == "the ferry leaves at nine"
    plain = results["the ferry is late on sundays"]  # no clash: the keys AutoGen's ChromaDB memory sets
    assert set(plain) == {"score", "id"} and engram.get(plain["id"]).content == "the ferry is late on sundays"


def test_json_content_comes_back_as_it_was_added(engram: Engram) -> None:
    memory = EngramMemory(engram)
    preferences = {"diet": "végétarien", "allergies": ["peanuts"], "spice": 3, "nested": {"ok": True, "none": None}}
    run(memory.add(MemoryContent(content=preferences, mime_type=MemoryMimeType.JSON, metadata={"kind": "prefs"})))

    [found] = run(memory.query("peanuts")).results
    assert found.content == preferences and found.mime_type == MemoryMimeType.JSON
    assert found.metadata["kind"] == "prefs"
    [stored] = engram.list()
    assert json.loads(stored.content) == preferences and "végétarien" in stored.content  # its JSON text
    # A JSON query is searched as its text.
    assert run(memory.query(MemoryContent(content={"diet": "végétarien"}, mime_type="application/json"))).results

    context = UnboundedChatCompletionContext()
    run(context.add_message(UserMessage(content="any allergies? peanuts?", source="user")))
    run(memory.update_context(context))
    assert run(context.get_messages())[-1].content.endswith(f"\n1. {stored.content}")


@pytest.mark.parametrize(("content", "field"), [
    (MemoryContent(content=Image(PILImage.new("RGB", (2, 2))), mime_type=MemoryMimeType.IMAGE), "content.mime_type"),
    (MemoryContent(content=b"\x00\x01", mime_type=MemoryMimeType.BINARY), "content.mime_type"),
    (MemoryContent(content="<p>hi</p>", mime_type="text/html"), "content.mime_type"),
    (MemoryContent(content={"a": 1}, mime_type=MemoryMimeType.TEXT), "content.content"),
    (MemoryContent(content='{"a": 1}', mime_type=MemoryMimeType.JSON), "content.content"),
    (MemoryContent(content={"a": float("nan")}, mime_type=MemoryMimeType.JSON), "content.content"),
    (MemoryContent(content="   ", mime_type=MemoryMimeType.TEXT), "content.content"),
    (MemoryContent(content="x" * 9000, mime_type=MemoryMimeType.TEXT), "content.content"),
    (MemoryContent(content="nul\x00here", mime_type=MemoryMimeType.TEXT), "content.content"),
    (MemoryContent(content="fine", mime_type=MemoryMimeType.TEXT, metadata={"when": object()}), "content.metadata"),
    ("just a string", "content"),
])
def test_content_engram_cannot_keep_is_refused_naming_the_field(engram: Engram, content: Any, field: str) -> None:
    with pytest.raises(ValidationError) as err:
        run(EngramMemory(engram).add(content))
    assert err.value.field == field
    assert engram.count() == 0


def test_bad_arguments_are_refused_naming_them(engram: Engram) -> None:
    memory = EngramMemory(engram)
    image = MemoryContent(content=Image(PILImage.new("RGB", (2, 2))), mime_type=MemoryMimeType.IMAGE)
    for call, field in [
        (lambda: EngramMemory(engram, k=0), "k"),
        (lambda: EngramMemory(engram, k=True), "k"),
        (lambda: EngramMemory("engram"), "engram"),  # type: ignore[arg-type]
        (lambda: EngramMemory(engram, home="/elsewhere"), "home"),
        (lambda: EngramMemory(agent="not a name"), "agent"),
        (lambda: run(memory.query("x", limit=3)), "limit"),
        (lambda: run(memory.query("x", k=101)), "k"),
        (lambda: run(memory.query(image)), "query.mime_type"),
        (lambda: run(memory.query(42)), "query"),  # type: ignore[arg-type]
    ]:
        with pytest.raises(ValidationError) as err:
            call()
        assert err.value.field == field


def test_clear_forgets_this_agents_memories_only(engram: Engram) -> None:
    alice, bob = EngramMemory(engram), EngramMemory(engram.for_agent("bob"))
    run(alice.add(_text("alice likes tea")))
    run(alice.add(_text("alice lives in Porto")))
    engram.remember("alice lived in Braga", key="old")
    engram.remember("alice moved to Porto", key="new")
    engram.supersede("old", "new")  # out of recall, still stored: cleared too
    run(bob.add(_text("bob likes tea")))
    engram.remember("the team meets on Mondays", scope="global")

    settings = engram.settings
    assert settings is not None
    backups = backups_for(settings, settings.database_path())
    assert backups.list() == []

    run(alice.clear())

    assert engram.count(Filters(include_superseded=True), scope="agent") == 0
    assert [m.content for m in engram.list()] == ["the team meets on Mondays"]  # global: every agent's
    assert [m.content for m in engram.for_agent("bob").list(scope="agent")] == ["bob likes tea"]
    assert [r.content for r in run(bob.query("tea")).results] == ["bob likes tea"]
    # Each forget is in the audit trail, as AutoGen's.
    trail = engram.audit_trail(action="forgotten")
    assert len(trail) == 4 and {(e.origin, e.reason) for e in trail} == {("autogen", "autogen clear")}
    # A bulk forget, so the automatic backup is taken first, as engram's own bulk forgets take it.
    assert [b.reason for b in backups.list()] == ["bulk-forget"]


def test_component_config_reopens_the_store(engram: Engram, server: OpenAICompatServer,
                                            isolated_home: Path) -> None:
    run(EngramMemory(engram).add(_text("The user's favourite colour is teal")))
    dumped = EngramMemory(engram, k=3).dump_component()
    assert dumped.provider == "engram.integrations.autogen.EngramMemory"
    assert dumped.config == {"home": str(isolated_home), "agent": "alice", "k": 3}

    # As AutoGen Studio loads it: JSON, through AutoGen's loader, with the whole agent.
    agent = _agent(server, EngramMemory(engram))
    loaded_agent = AssistantAgent.load_component(json.loads(agent.dump_component().model_dump_json()))

    async def scenario() -> Any:
        result = await loaded_agent.run(task="What is my favourite colour?")
        loaded = Memory.load_component(json.loads(dumped.model_dump_json()))
        assert isinstance(loaded, EngramMemory) and loaded.k == 3
        found = await loaded.query("favourite colour")
        opened = loaded.engram
        await loaded.close()
        assert opened.closed
        for own in loaded_agent._memory or []:
            await own.close()
        return result, found, loaded

    result, found, loaded = run(scenario())
    assert result.messages[-1].content.endswith("1. The user's favourite colour is teal")
    assert [m.content for m in found.results] == ["The user's favourite colour is teal"]
    # The loaded memory closed the store it opened; the engine it was dumped from is still open.
    with pytest.raises(StorageError):
        run(loaded.add(_text("too late")))
    assert engram.count() == 1 and not engram.closed


def test_a_memory_built_from_config_opens_its_store_on_first_use(tmp_path: Path, isolated_home: Path) -> None:
    home = tmp_path / "another-home"
    memory = EngramMemory.load_component({"provider": "engram.integrations.autogen.EngramMemory",
                                          "config": {"home": str(home), "agent": "carol"}})
    assert not home.exists()  # nothing opened by building it
    run(memory.add(_text("carol's note")))
    run(memory.close())
    with Engram.from_settings(home=home, agent="carol") as reopened:
        assert [m.content for m in reopened.list()] == ["carol's note"]
    assert memory.dump_component().config == {"home": str(home), "agent": "carol", "k": 5}

    with pytest.raises(Exception, match="limit"):  # a mistyped key is refused, not ignored
        EngramMemory.load_component({"provider": "engram.integrations.autogen.EngramMemory", "config": {"limit": 3}})


@pytest.mark.parametrize(("config", "field"), [
    ({"limit": 3}, "limit"), ({"k": "x"}, "k"), ({"k": "5"}, "k"), ({"k": True}, "k"), ({"k": 0}, "k"),
    ({"home": 7}, "home"), ({"agent": ["carol"]}, "agent"),
])
def test_a_bad_config_is_refused_as_engram_s_error_naming_the_key(isolated_home: Path, config: dict,
                                                                  field: str) -> None:
    """pydantic refused a mistyped key or ``"k": "x"`` in its own words and read ``"k": "5"`` as 5,
    where ``EngramMemory(k="5")`` is refused: a config (loaded, or made in code) is checked as the
    constructor's arguments are, with engram's ``ValidationError`` naming the key."""
    with pytest.raises(ValidationError) as err:
        EngramMemory.load_component({"provider": "engram.integrations.autogen.EngramMemory", "config": config})
    assert err.value.field == field and err.value.allowed
    with pytest.raises(ValidationError) as err:
        EngramMemoryConfig(**config)
    assert err.value.field == field
    assert EngramMemoryConfig.model_validate({"k": 3, "agent": "carol"}).k == 3


def test_a_store_chosen_in_code_by_path_reopens_from_its_config(tmp_path: Path, isolated_home: Path) -> None:
    # Engram.from_settings(path=..., backend=...) names a file outside the home: the config carries
    # it, so the memory loaded from that config opens the same store, not the home's memory.db.
    chosen = tmp_path / "elsewhere" / "notes.json"
    with Engram.from_settings(agent="dana", backend="jsonfile", path=chosen,
                              embeddings={"provider": "none"}) as mem:
        run(EngramMemory(mem).add(_text("dana's boat is called Yak")))
        config = EngramMemory(mem).dump_component().config
    assert config == {"home": str(isolated_home), "backend": "jsonfile", "path": str(chosen), "agent": "dana", "k": 5}
    loaded = EngramMemory.load_component({"provider": "engram.integrations.autogen.EngramMemory", "config": config})
    found = run(loaded.query("boat"))
    run(loaded.close())
    assert [m.content for m in found.results] == ["dana's boat is called Yak"]
    assert loaded.dump_component().config == config
    with pytest.raises(ValidationError) as err:
        EngramMemory(Engram(InMemoryMemoryStore()), path=str(chosen))
    assert err.value.field == "path"


def test_an_engine_built_by_hand_cannot_be_named_in_a_config() -> None:
    memory = EngramMemory(Engram(InMemoryMemoryStore()))
    with pytest.raises(ValidationError) as err:
        memory.dump_component()
    assert err.value.field == "engram"


def test_close_leaves_an_engine_it_was_given_open(engram: Engram) -> None:
    memory = EngramMemory(engram)
    run(memory.close())
    assert not engram.closed and not memory.engram.closed
    run(memory.add(_text("still here")))
    assert engram.count() == 1


def test_a_session_view_clears_its_session_too_and_keeps_it_in_its_config(engram: Engram) -> None:
    session = engram.for_session("chat-7")
    session.remember("said in this chat", scope="session")
    engram.for_session("chat-8").remember("said in another chat", scope="session")
    memory = EngramMemory(session)
    run(memory.add(_text("alice's own")))  # to the agent's scope, as engram writes by default
    assert memory.dump_component().config["session"] == "chat-7"

    run(memory.clear())
    assert session.count() == 0
    assert [m.content for m in engram.for_session("chat-8").list()] == ["said in another chat"]
