"""EngramMemoryService driven by a real Google ADK Runner over a real SQLite engram store. The
model is ADK's own Gemini class talking to a local server that speaks the Gemini API's wire format
and plays a scripted model, so ADK's real request building, ``load_memory`` tool and callbacks
run; nothing leaves 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk", reason="the google-adk extra is not installed: pip install 'engram-recall[google-adk]'")

from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.agents.callback_context import CallbackContext  # noqa: E402
from google.adk.cli.service_registry import get_service_registry, load_services_module  # noqa: E402
from google.adk.events.event import Event  # noqa: E402
from google.adk.memory.memory_entry import MemoryEntry  # noqa: E402
from google.adk.models.google_llm import Gemini  # noqa: E402
from google.adk.runners import Runner  # noqa: E402
from google.adk.sessions import InMemorySessionService, Session  # noqa: E402
from google.adk.tools import load_memory  # noqa: E402
from google.genai import types  # noqa: E402

from engram.aio import AsyncEngram  # noqa: E402
from engram.engine import Engram  # noqa: E402
from engram.errors import ValidationError  # noqa: E402
from engram.integrations.google_adk import EngramMemoryService  # noqa: E402
from engram.testing.llm_servers import GeminiServer, RecordedRequest, Reply  # noqa: E402

APP = "shop"
# google-genai's own aiohttp client subclasses aiohttp's ClientSession, which aiohttp warns about.
pytestmark = pytest.mark.filterwarnings("ignore:Inheritance class AiohttpClientSession:DeprecationWarning")


@pytest.fixture(params=[False, True], ids=["one-database", "per-agent-databases"])
def engram(isolated_home: Path, request: pytest.FixtureRequest) -> Iterator[Engram]:
    # Every behaviour in both layouts: with one database per agent, each user's is its own.
    mem = Engram.from_settings(embeddings={"provider": "none"}, per_agent_databases=request.param)
    yield mem
    mem.close()


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[GeminiServer]:
    monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
    with GeminiServer() as s:
        s.responder = _model
        yield s


def _model(request: RecordedRequest) -> Reply:
    """A model that searches memory for a question, answers with what the search gave back, and
    says "Noted" to anything else."""
    last = request.body["contents"][-1]["parts"]
    answered = [p["functionResponse"] for p in last if "functionResponse" in p]
    if answered:
        return Reply.say(json.dumps(answered[0]["response"], ensure_ascii=False))
    said = "".join(p.get("text", "") for p in last)
    return Reply.tools(("load_memory", {"query": said})) if said.endswith("?") else Reply.say("Noted")


async def _remember_session(callback_context: CallbackContext) -> None:
    # How an ADK app files a finished turn into memory: the context's own call, to the Runner's service.
    await callback_context.add_session_to_memory()


def _runner(server: GeminiServer, service: EngramMemoryService) -> Runner:
    agent = LlmAgent(name="helper", model=Gemini(model="scripted", base_url=server.base_url),
                     instruction="Answer from memory.", tools=[load_memory], after_agent_callback=_remember_session)
    return Runner(app_name=APP, agent=agent, session_service=InMemorySessionService(), memory_service=service)


async def _say(runner: Runner, user: str, text: str, session: Session | None = None) -> tuple[Session, str]:
    session = session or await runner.session_service.create_session(app_name=runner.app_name, user_id=user)
    reply = ""
    async for event in runner.run_async(user_id=user, session_id=session.id,
                                        new_message=types.Content(role="user", parts=[types.Part(text=text)])):
        if event.content and event.content.parts and event.content.parts[0].text:
            reply = event.content.parts[0].text
    return session, reply


def test_what_a_user_said_in_one_session_is_found_by_load_memory_in_the_next(
        engram: Engram, server: GeminiServer) -> None:
    service = EngramMemoryService(engram)

    async def scenario() -> tuple[str, str, str]:
        runner = _runner(server, service)
        await _say(runner, "alice", "My favourite colour is teal")
        _, later = await _say(runner, "alice", "What is my favourite colour?")
        _, other_user = await _say(runner, "bob", "What is my favourite colour?")
        _, other_app = await _say(Runner(app_name="other-app", agent=runner.agent, session_service=InMemorySessionService(),
                                         memory_service=service), "alice", "What is my favourite colour?")
        return later, other_user, other_app

    later, other_user, other_app = asyncio.run(scenario())
    # The model was shown the earlier session's turn, through ADK's load_memory tool.
    found = json.loads(later)["result"]["memories"]
    assert [(m["author"], m["content"]["parts"][0]["text"]) for m in found if "teal" in json.dumps(m)] == [
        ("user", "My favourite colour is teal")]
    # Another user of the app, and the same user of another app, find nothing of alice's.
    assert json.loads(other_user)["result"]["memories"] == [] and json.loads(other_app)["result"]["memories"] == []

    # In the SQLite file: another engine opened on it reads alice's memories, in her own agent.
    with Engram.from_settings(embeddings={"provider": "none"},
                              per_agent_databases=engram.agent_databases is not None) as reopened:
        alice = reopened.for_agent("adk:shop:alice")
        contents = sorted(m.content for m in alice.list(limit=50))
        assert reopened.count() == 0  # the engine's own agent holds none of them
    # Each turn once, although the callback added the whole session after every turn.
    assert contents.count("My favourite colour is teal") == 1 and "Noted" in contents
    assert "What is my favourite colour?" in contents


def test_content_comes_back_exactly_as_added(engram: Engram) -> None:
    service = EngramMemoryService(AsyncEngram(engram))
    text = "Café ☃ 𝄞 naïve\r\nline two\ttab  \u200b end\n"
    content = types.Content(role="user", parts=[types.Part(text=text), types.Part(text="second part")])
    event = Event(author="user", content=content, timestamp=1_700_000_000.25)

    async def scenario() -> list[MemoryEntry]:
        await service.add_events_to_memory(app_name=APP, user_id="alice", events=[event], session_id="s1",
                                           custom_metadata={"ttl": "30d"})
        return (await service.search_memory(app_name=APP, user_id="alice", query="naïve café")).memories

    [entry] = asyncio.run(scenario())
    assert entry.content.model_dump(exclude_none=True) == content.model_dump(exclude_none=True)
    assert entry.author == "user" and entry.custom_metadata == {"ttl": "30d"}
    assert entry.timestamp == "2023-11-14T22:13:20.250000+00:00"
    stored = engram.for_agent("adk:shop:alice").get(entry.id)
    assert stored.content == text + "\nsecond part"
    assert stored.created_at == 1_700_000_000.25 and stored.metadata["adk"]["session_id"] == "s1"


def test_delete_memory_is_per_user_and_the_deleted_event_is_not_added_back(engram: Engram) -> None:
    service = EngramMemoryService(engram)
    events = [Event(author="user", content=types.Content(role="user", parts=[types.Part(text=t)]))
              for t in ("I live in Lisbon", "I work as a nurse", "")]
    session = Session(id="s1", app_name=APP, user_id="alice", events=events)

    async def scenario() -> tuple[list[str], list[str], int]:
        await service.add_session_to_memory(session)
        [lisbon] = (await service.search_memory(app_name=APP, user_id="alice", query="Lisbon")).memories
        assert lisbon.id
        await service.delete_memory(app_name=APP, user_id="bob", memory_id=lisbon.id)  # not bob's: nothing
        kept = (await service.search_memory(app_name=APP, user_id="alice", query="Lisbon")).memories
        await service.delete_memory(app_name=APP, user_id="alice", memory_id=lisbon.id)
        await service.delete_memory(app_name=APP, user_id="alice", memory_id="no-such-id")  # as ADK's: nothing
        await service.add_session_to_memory(session)  # the whole session again, as ADK adds it
        gone = (await service.search_memory(app_name=APP, user_id="alice", query="Lisbon")).memories
        return [m.id for m in kept], [m.id for m in gone], engram.for_agent("adk:shop:alice").count()

    kept, gone, count = asyncio.run(scenario())
    assert len(kept) == 1 and gone == [] and count == 1  # the nurse is still there, once; the empty event never was


def test_explicit_memories_and_blank_queries(engram: Engram) -> None:
    service = EngramMemoryService(engram, limit=1)
    entries = [MemoryEntry(content=types.Content(parts=[types.Part(text="Prefers window seats")]), id="pref-1",
                           author="planner", timestamp="2026-01-02T03:04:05+00:00"),
               MemoryEntry(content=types.Content(parts=[types.Part(text="Allergic to peanuts")]))]

    async def scenario() -> tuple[list[MemoryEntry], list[MemoryEntry], list[MemoryEntry]]:
        await service.add_memory(app_name=APP, user_id="alice", memories=entries)
        await service.add_memory(app_name=APP, user_id="alice", memories=entries)  # the same again: no copies
        seats = (await service.search_memory(app_name=APP, user_id="alice", query="window seats")).memories
        blank = (await service.search_memory(app_name=APP, user_id="alice", query="  ")).memories
        nuts = (await service.search_memory(app_name=APP, user_id="alice", query="peanuts allergy")).memories
        return seats, blank, nuts

    seats, blank, nuts = asyncio.run(scenario())
    assert [(m.content.parts[0].text, m.author, m.timestamp) for m in seats] == [
        ("Prefers window seats", "planner", "2026-01-02T03:04:05+00:00")]
    assert blank == [] and [m.content.parts[0].text for m in nuts] == ["Allergic to peanuts"]
    assert engram.for_agent("adk:shop:alice").count() == 2


def test_no_user_id_an_application_lets_users_choose_reaches_another_users_memory(engram: Engram) -> None:
    # Ids a user could pick to land on someone else's agent if ids were only made valid: the
    # written form of another id, a digest-suffixed look-alike, a colon moving the app/user split,
    # and ids long enough to be cut.
    service = EngramMemoryService(engram)
    long_id = "u" * 200
    pairs = [(APP, "José"), (APP, "Jos@c3@a9"), (APP, "Jos-fe201568"), (APP, "ana@example.com"), (APP, "ana"),
             ("a", "b:c"), ("a:b", "c"), (APP, long_id), (APP, long_id + "x"), (APP, "user 1"), (APP, "user-1")]
    agents = [service.agent_for(app, user) for app, user in pairs]
    assert len(set(agents)) == len(pairs) and all(len(agent) <= 128 for agent in agents)
    assert agents[:4] == ["adk:shop:Jos@c3@a9", "adk:shop:Jos@40c3@40a9", "adk:shop:Jos-fe201568",
                          "adk:shop:ana@40example.com"]
    secret = MemoryEntry(content=types.Content(parts=[types.Part(text="José's door code is 4471")]))

    async def scenario() -> list[list[MemoryEntry]]:
        await service.add_memory(app_name=APP, user_id="José", memories=[secret])
        return [(await service.search_memory(app_name=app, user_id=user, query="door code")).memories
                for app, user in pairs]

    found = asyncio.run(scenario())
    assert [len(memories) for memories in found] == [1] + [0] * (len(pairs) - 1)
    with pytest.raises(ValidationError) as err:  # no prefix: the name would start with the app's "-"
        EngramMemoryService(engram, agent_prefix="").agent_for("-shop", "alice")
    assert err.value.field == "app_name"


def test_bad_input_names_its_field_and_stores_nothing(engram: Engram) -> None:
    service = EngramMemoryService(engram)
    event = Event(author="user", content=types.Content(role="user", parts=[types.Part(text="kept?")]))

    def refused(call: Any) -> ValidationError:
        with pytest.raises(ValidationError) as err:
            asyncio.run(call)
        return err.value

    assert refused(service.add_events_to_memory(app_name="", user_id="alice", events=[event])).field == "app_name"
    assert refused(service.search_memory(app_name=APP, user_id="  ", query="x")).field == "user_id"
    err = refused(service.add_events_to_memory(app_name=APP, user_id="alice", events=[event],
                                               custom_metadata={"when": object()}))
    assert err.field == "custom_metadata"
    no_text = MemoryEntry(content=types.Content(parts=[types.Part(function_call=types.FunctionCall(name="f"))]))
    with_text = MemoryEntry(content=types.Content(parts=[types.Part(text="kept?")]))
    err = refused(service.add_memory(app_name=APP, user_id="alice", memories=[with_text, no_text]))
    assert err.field == "memories[1].content"
    bad_time = MemoryEntry(content=types.Content(parts=[types.Part(text="kept?")]), timestamp="last Tuesday")
    assert refused(service.add_memory(app_name=APP, user_id="alice", memories=[bad_time])).field == "memories[0].timestamp"
    assert refused(service.delete_memory(app_name=APP, user_id="alice", memory_id=7)).field == "memory_id"  # type: ignore[arg-type]
    # Not MemoryEntry items: was an AttributeError (.content), and a string was read one letter an entry.
    assert refused(service.add_memory(app_name=APP, user_id="alice", memories=[with_text, "kept?"])).field == "memories[1]"
    assert refused(service.add_memory(app_name=APP, user_id="alice", memories="kept?")).field == "memories"  # type: ignore[arg-type]
    assert refused(service.add_memory(app_name=APP, user_id="alice", memories=with_text)).field == "memories"  # type: ignore[arg-type]
    assert engram.for_agent("adk:shop:alice").count() == 0

    for kwargs, field in (({"limit": 0}, "limit"), ({"category": "forever"}, "category"),
                          ({"agent_prefix": "!"}, "agent_prefix")):
        with pytest.raises(ValidationError) as err_info:
            EngramMemoryService(engram, **kwargs)
        assert err_info.value.field == field
    with pytest.raises(ValidationError) as err_info:
        EngramMemoryService(uri="sqlite:///x.db")
    assert err_info.value.field == "uri"


def test_an_event_engram_cannot_store_is_left_out_with_a_warning(engram: Engram, caplog: pytest.LogCaptureFixture) -> None:
    """A turn over ``max_content_chars``, or holding a NUL, would fail the agent's turn if it
    stopped the whole session: it is left out, named in the log, and the rest is stored."""
    service = EngramMemoryService(engram)
    long = "word " * (engram.max_content_chars // 5 + 1)
    events = [Event(author="user", content=types.Content(role="user", parts=[types.Part(text=t)]))
              for t in (long, "a NUL \x00 here", "short and kept")]
    with caplog.at_level(logging.WARNING, logger="engram.integrations.google_adk"):
        asyncio.run(service.add_events_to_memory(app_name=APP, user_id="alice", events=events, session_id="s"))
    assert [m.content for m in engram.for_agent("adk:shop:alice").list()] == ["short and kept"]
    assert "events[0]" in caplog.text and "maximum is 8000" in caplog.text and "ENGRAM_MAX_CONTENT_CHARS" in caplog.text
    assert "events[1]" in caplog.text and "NUL" in caplog.text


def test_a_nul_or_lone_surrogate_anywhere_an_event_is_kept_leaves_it_out_named(
        engram: Engram, caplog: pytest.LogCaptureFixture) -> None:
    """An event's author, id and whole content are kept in its memory's metadata, which the import
    path stores as given: a NUL there was stored (PostgreSQL's jsonb refuses one), and a lone
    surrogate in the text raised Python's own UnicodeEncodeError. Each such event is left out and
    named, as one with such a text; the rest is stored."""
    service = EngramMemoryService(engram)

    def said(text: str, *extra: types.Part) -> types.Content:
        return types.Content(role="user", parts=[types.Part(text=text), *extra])

    events = [Event(author="us\x00er", content=said("author with a NUL")),
              Event(author="user", content=said("a call's argument", types.Part(
                  function_call=types.FunctionCall(name="look", args={"q": "bad\ud800"})))),
              Event(author="user", content=said("lone \udc00 surrogate")),
              Event(author="user", id="ev\x00nt", content=said("an id with a NUL")),
              Event(author="user", content=said("kept as it is"))]
    with caplog.at_level(logging.WARNING, logger="engram.integrations.google_adk"):
        asyncio.run(service.add_events_to_memory(app_name=APP, user_id="alice", events=events, session_id="s"))
    stored = engram.for_agent("adk:shop:alice").list()
    assert [m.content for m in stored] == ["kept as it is"]
    for named in ("events[0].author", "events[1].content", "events[2].content.parts", "events[3].id"):
        assert f"{named} (" in caplog.text
    assert "surrogate" in caplog.text and "NUL" in caplog.text


def test_a_nul_or_lone_surrogate_in_an_explicit_item_or_the_call_is_refused_naming_it(engram: Engram) -> None:
    service = EngramMemoryService(engram)

    def entry(text: str = "Prefers tea", **fields: Any) -> MemoryEntry:
        return MemoryEntry(content=types.Content(parts=[types.Part(text=text)]), **fields)

    event = Event(author="user", content=types.Content(role="user", parts=[types.Part(text="fine")]))
    cases = [(lambda: service.add_memory(app_name=APP, user_id="alice", memories=[entry(), entry("te\ud800a")]),
              "memories[1].content.parts"),
             (lambda: service.add_memory(app_name=APP, user_id="alice", memories=[entry(), entry(id="id\ud800")]),
              "memories[1].id"),
             (lambda: service.add_memory(app_name=APP, user_id="alice", memories=[entry(author="pl\x00anner")]),
              "memories[0].author"),
             (lambda: service.add_memory(app_name=APP, user_id="alice", memories=[entry(custom_metadata={"k": "v\x00"})]),
              "memories[0].custom_metadata"),
             (lambda: service.add_memory(app_name="sh\x00op", user_id="alice", memories=[entry()]), "app_name"),
             (lambda: service.add_events_to_memory(app_name=APP, user_id="alice", events=[event], session_id="s\ud800"),
              "session_id")]
    for call, field in cases:
        with pytest.raises(ValidationError) as err:
            asyncio.run(call())
        assert err.value.field == field
    assert engram.for_agent("adk:shop:alice").count() == 0
    # An id no memory can hold deletes nothing (a lone surrogate was Python's UnicodeEncodeError).
    asyncio.run(service.add_memory(app_name=APP, user_id="alice", memories=[entry(id="pref-1")]))
    asyncio.run(service.delete_memory(app_name=APP, user_id="alice", memory_id="pref\ud800"))
    assert engram.for_agent("adk:shop:alice").count() == 1


def _agents_folder_naming_engram(tmp_path: Path) -> Path:
    """An ADK agents folder whose services.yaml registers engram's memory service for ``engram://``,
    loaded into ADK's service registry."""
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "services.yaml").write_text(
        "services:\n  - scheme: engram\n    type: memory\n"
        "    class: engram.integrations.google_adk.EngramMemoryService\n")
    load_services_module(str(agents))
    return agents


def test_adk_builds_the_service_from_a_uri_in_services_yaml(isolated_home: Path, tmp_path: Path) -> None:
    """``adk web --memory_service_uri=engram:///...``: ADK's registry reads the agents folder's
    services.yaml and builds the service with ``uri=`` (and ``agents_dir=``)."""
    agents = _agents_folder_naming_engram(tmp_path)
    home = tmp_path / "adk-home"
    service = get_service_registry().create_memory_service(f"engram://{home}", agents_dir=str(agents))
    assert isinstance(service, EngramMemoryService)
    try:
        event = Event(author="user", content=types.Content(role="user", parts=[types.Part(text="Call me Al")]))
        asyncio.run(service.add_events_to_memory(app_name=APP, user_id="alice", events=[event]))
    finally:
        service.close()
    with Engram.from_settings(home=home, embeddings={"provider": "none"}) as reopened:
        assert [m.content for m in reopened.for_agent("adk:shop:alice").list()] == ["Call me Al"]


def test_adk_s_own_service_factory_builds_the_service_with_what_it_passes(isolated_home: Path, tmp_path: Path) -> None:
    """``adk web``/``adk api_server`` build the memory service through ADK's own factory, which
    passes ``uri=`` and ``agents_dir=`` (google.adk.cli.utils.service_factory): both are taken."""
    from google.adk.cli.utils.service_factory import create_memory_service_from_options

    agents = _agents_folder_naming_engram(tmp_path)
    service = create_memory_service_from_options(base_dir=agents, memory_service_uri=f"engram://{tmp_path / 'home'}")
    assert isinstance(service, EngramMemoryService)
    service.close()


def test_a_keyword_the_service_does_not_take_is_refused_naming_it(engram: Engram) -> None:
    """A mistyped ``limt=5`` was swallowed (the keywords ADK's registry passes were all accepted),
    leaving ``limit`` at 10, unsaid: now only ``agents_dir`` is taken beside the service's own."""
    with pytest.raises(ValidationError) as err:
        EngramMemoryService(engram, bogus=1)
    assert err.value.field == "bogus"
    assert err.value.allowed is not None
    assert "agents_dir" in err.value.allowed and "limit" in err.value.allowed
    with pytest.raises(ValidationError) as err:
        EngramMemoryService(engram, limt=5)
    assert err.value.field == "limt"
    assert EngramMemoryService(engram, agents_dir="/srv/agents").limit == 10


def test_a_uri_beside_an_engine_is_refused(engram: Engram, tmp_path: Path) -> None:
    """The uri was left unused, unsaid: the memories went to the engine's store, not the uri's."""
    with pytest.raises(ValidationError) as err:
        EngramMemoryService(engram, uri=f"engram://{tmp_path / 'other'}")
    assert err.value.field == "uri"
    assert not (tmp_path / "other").exists()


def _note(text: str, **fields: Any) -> MemoryEntry:
    return MemoryEntry(content=types.Content(role="user", parts=[types.Part(text=text)]), **fields)


def test_an_entry_with_its_own_id_added_again_is_that_memory_brought_up_to_date(engram: Engram) -> None:
    """As ADK's SQLite service upserts an event it holds by id, an entry with an id is one memory
    per (app, user, id): added again, with another time or text, it takes the new text, author,
    metadata and time; the earlier text stays among the memory's versions."""
    service = EngramMemoryService(engram)

    async def scenario() -> tuple[list[MemoryEntry], list[MemoryEntry], list[MemoryEntry]]:
        await service.add_memory(app_name=APP, user_id="alice", memories=[
            _note("Prefers window seats", id="seat", author="planner", timestamp="2026-01-02T03:04:05+00:00",
                  custom_metadata={"source": "form"})])
        # The same id at another time, then with a new text and no time: one memory each time.
        await service.add_memory(app_name=APP, user_id="alice", memories=[
            _note("Prefers window seats", id="seat", author="planner", timestamp="2026-03-01T09:00:00+00:00",
                  custom_metadata={"source": "form"})])
        await service.add_memory(app_name=APP, user_id="alice", memories=[
            _note("Prefers aisle seats on long flights", id="seat", author="concierge",
                  custom_metadata={"source": "call"})], custom_metadata={"channel": "phone"})
        await service.add_memory(app_name=APP, user_id="bob", memories=[_note("Prefers the front row", id="seat")])
        aisle = (await service.search_memory(app_name=APP, user_id="alice", query="aisle seats")).memories
        # The old text is no second memory (the key, ``prefers-window-seats``, stays the memory's name).
        window = (await service.search_memory(app_name=APP, user_id="alice", query="window seats")).memories
        bob = (await service.search_memory(app_name=APP, user_id="bob", query="seats front row")).memories
        return aisle, window, bob

    aisle, window, bob = asyncio.run(scenario())
    assert [(m.id, m.content.parts[0].text, m.author, m.custom_metadata) for m in aisle] == [
        ("seat", "Prefers aisle seats on long flights", "concierge", {"channel": "phone", "source": "call"})]
    assert [m.content.parts[0].text for m in window] == ["Prefers aisle seats on long flights"]
    assert [(m.id, m.content.parts[0].text) for m in bob] == [("seat", "Prefers the front row")]
    with Engram.from_settings(embeddings={"provider": "none"},
                              per_agent_databases=engram.agent_databases is not None) as reopened:  # in the SQLite file
        alice = reopened.for_agent("adk:shop:alice")
        [memory] = alice.list(limit=10)
        assert memory.content == "Prefers aisle seats on long flights"
        assert [v.content for v in alice.versions(memory)] == ["Prefers window seats"]
        assert reopened.for_agent("adk:shop:bob").count() == 1


def test_an_entry_added_again_at_another_time_carries_the_new_time(engram: Engram) -> None:
    service = EngramMemoryService(engram)

    async def scenario() -> list[MemoryEntry]:
        for when in ("2026-01-02T03:04:05+00:00", "2026-03-01T09:00:00+01:00"):
            await service.add_memory(app_name=APP, user_id="alice",
                                     memories=[_note("Prefers window seats", id="seat", timestamp=when)])
        return (await service.search_memory(app_name=APP, user_id="alice", query="window seats")).memories

    assert [(m.id, m.timestamp) for m in asyncio.run(scenario())] == [("seat", "2026-03-01T08:00:00+00:00")]
    assert engram.for_agent("adk:shop:alice").count() == 1



def test_an_entry_changed_or_forgotten_in_engram_since_stays_so_and_the_log_says_why(
        engram: Engram, caplog: pytest.LogCaptureFixture) -> None:
    """engram's rule for a source that rewrites its records (``Record.refresh``): a text edited in
    engram since is kept, and a memory forgotten is not brought back; an explicit ``add_memory``
    says so in the log rather than dropping the caller's write silently."""
    service = EngramMemoryService(engram)
    alice = engram.for_agent("adk:shop:alice")

    async def scenario() -> list[MemoryEntry]:
        await service.add_memory(app_name=APP, user_id="alice", memories=[
            _note("Prefers window seats", id="seat"), _note("Allergic to peanuts", id="food")])
        [seat] = [m for m in alice.list() if "seats" in m.content]
        alice.update(seat, content="Prefers window seats, never row 13")  # a correction made in engram
        alice.forget(next(m for m in alice.list() if "peanuts" in m.content))
        with caplog.at_level(logging.WARNING, logger="engram.integrations.google_adk"):
            await service.add_memory(app_name=APP, user_id="alice", memories=[
                _note("Prefers aisle seats", id="seat"), _note("Allergic to peanuts and shellfish", id="food")])
        return (await service.search_memory(app_name=APP, user_id="alice", query="seats")).memories

    [seat] = asyncio.run(scenario())
    assert [m.content for m in alice.list()] == ["Prefers window seats, never row 13"]
    assert seat.content.parts[0].text == "Prefers window seats, never row 13"  # what engram holds, not the stale Content
    assert "memories[0]: the source's new text not brought over" in caplog.text
    assert "1 memory was forgotten in engram" in caplog.text


def test_delete_memory_takes_the_callers_id_of_that_user_or_the_engram_id(engram: Engram) -> None:
    service = EngramMemoryService(engram)
    alice = engram.for_agent("adk:shop:alice")
    shared = engram.remember("The shop opens at nine")  # a global memory: no ADK user's to delete

    async def scenario() -> tuple[list[str], list[str], list[str]]:
        await service.add_memory(app_name=APP, user_id="alice", memories=[
            _note("Prefers window seats", id="seat"), _note("Allergic to peanuts", id="food"), _note("Has a dog")])
        await service.add_memory(app_name=APP, user_id="bob", memories=[_note("Prefers window seats", id="seat")])
        found = (await service.search_memory(app_name=APP, user_id="alice", query="window seats peanuts dog")).memories
        await service.delete_memory(app_name=APP, user_id="alice", memory_id="seat")  # the caller's id
        food = next(m for m in alice.list() if m.content == "Allergic to peanuts")
        await service.delete_memory(app_name=APP, user_id="alice", memory_id=food.id)  # an engram id still works
        dog = next(m.id for m in found if m.content.parts[0].text == "Has a dog")
        await service.delete_memory(app_name=APP, user_id="bob", memory_id=dog)  # alice's id: not bob's
        for ref in (shared.memory.id, shared.memory.key, "no\x00such id"):  # nor is a global memory any user's
            await service.delete_memory(app_name=APP, user_id="alice", memory_id=ref)
        bob = (await service.search_memory(app_name=APP, user_id="bob", query="window seats")).memories
        return sorted(m.id for m in found), [m.content for m in alice.list()], [m.id for m in bob]

    found, left, bob = asyncio.run(scenario())
    own = [i for i in found if i in ("food", "seat")]
    assert own == ["food", "seat"] and len(found) == 3  # the entry without an id: its engram id
    assert left == ["Has a dog"] and bob == ["seat"]
    assert engram.get(shared.memory.id).content == "The shop opens at nine"


def test_the_id_a_search_gave_names_that_memory_when_added_again(engram: Engram) -> None:
    """An engram id (what a search returns for an event, or for an entry added without an id) is
    the memory itself when an entry carries it: added again, it updates that memory of that user;
    another user carrying it adds a memory of their own."""
    service = EngramMemoryService(engram)
    event = Event(author="user", content=types.Content(role="user", parts=[types.Part(text="I live in Lisbon")]))

    async def scenario() -> tuple[list[MemoryEntry], list[MemoryEntry]]:
        await service.add_events_to_memory(app_name=APP, user_id="alice", events=[event], session_id="s1")
        [lisbon] = (await service.search_memory(app_name=APP, user_id="alice", query="Lisbon")).memories
        moved = _note("I live in Porto since May", id=lisbon.id, author="user")
        await service.add_memory(app_name=APP, user_id="alice", memories=[moved])
        await service.add_memory(app_name=APP, user_id="bob", memories=[moved])
        alice = (await service.search_memory(app_name=APP, user_id="alice", query="Porto")).memories
        bob = (await service.search_memory(app_name=APP, user_id="bob", query="Porto")).memories
        assert [m.id for m in alice] == [lisbon.id] == [m.id for m in bob]
        return alice, bob

    alice, bob = asyncio.run(scenario())
    assert [m.content.parts[0].text for m in alice] == ["I live in Porto since May"]
    assert [m.content for m in engram.for_agent("adk:shop:alice").list()] == ["I live in Porto since May"]
    # bob's copy is his own memory, under another engram id: alice's is not his to change or delete.
    [bobs] = engram.for_agent("adk:shop:bob").list()
    assert bobs.id != alice[0].id and bobs.content == "I live in Porto since May"


@pytest.mark.parametrize("per_agent", [False, True], ids=["one-database", "per-agent-databases"])
def test_what_a_user_adds_that_user_finds_and_no_other_in_either_layout(tmp_path: Path, per_agent: bool) -> None:
    # With one database per agent, add_memory and add_session_to_memory wrote into the engine's
    # own agent's database ("app") while search_memory read the user's: nothing added was found.
    home = tmp_path / "home"
    with Engram.from_settings(home=home, agent="app", per_agent_databases=per_agent,
                              embeddings={"provider": "none"}) as mem:
        service = EngramMemoryService(mem)
        note = MemoryEntry(content=types.Content(parts=[types.Part(text="Alice likes blue umbrellas")]))
        event = Event(author="user", content=types.Content(role="user", parts=[types.Part(text="Bob's cat is Miso")]))

        async def scenario() -> dict[tuple[str, str], list[str]]:
            await service.add_memory(app_name=APP, user_id="alice", memories=[note])
            await service.add_session_to_memory(Session(id="s1", app_name=APP, user_id="bob", events=[event]))
            return {(user, query): [m.content.parts[0].text
                                    for m in (await service.search_memory(app_name=APP, user_id=user,
                                                                          query=query)).memories]
                    for user in ("alice", "bob") for query in ("umbrellas", "cat")}

        found = asyncio.run(scenario())
        counts = {user: mem.for_agent(f"adk:shop:{user}", reading=True).count() for user in ("alice", "bob")}
        app_count = mem.count()
    assert found == {("alice", "umbrellas"): ["Alice likes blue umbrellas"], ("alice", "cat"): [],
                     ("bob", "umbrellas"): [], ("bob", "cat"): ["Bob's cat is Miso"]}
    assert counts == {"alice": 1, "bob": 1} and app_count == 0  # nothing in the application's own agent
    if per_agent:  # each user's memories are in that user's own database, none in the application's
        assert sorted(p.name for p in (home / "agents").iterdir()) == ["adk+shop+alice", "adk+shop+bob", "app"]


def test_adding_a_growing_session_each_turn_takes_no_backup_and_changing_a_memory_takes_one(
        engram: Engram, isolated_home: Path) -> None:
    # ADK adds the whole session after every turn: each add took a whole-database backup before it
    # (an import's), so a chat made one a turn and a few turns pruned the older ones away.
    service = EngramMemoryService(engram)

    def import_backups() -> list[Path]:
        return sorted(isolated_home.rglob("*-import.db"))

    async def scenario() -> tuple[int, int, int]:
        events: list[Event] = []
        for turn in range(5):
            events.append(Event(author="user", content=types.Content(role="user", parts=[types.Part(text=f"turn {turn}")])))
            await service.add_session_to_memory(Session(id="s1", app_name=APP, user_id="alice", events=list(events)))
        after_turns = len(import_backups())
        await service.add_memory(app_name=APP, user_id="alice", memories=[_note("Prefers window seats", id="seat")])
        after_new_entry = len(import_backups())
        # The same entry with a new text changes a memory already stored: backed up first.
        await service.add_memory(app_name=APP, user_id="alice", memories=[_note("Prefers aisle seats", id="seat")])
        return after_turns, after_new_entry, len(import_backups())

    after_turns, after_new_entry, after_change = asyncio.run(scenario())
    assert engram.for_agent("adk:shop:alice", reading=True).count() == 6  # every turn and the entry stored
    assert (after_turns, after_new_entry, after_change) == (0, 0, 1)
