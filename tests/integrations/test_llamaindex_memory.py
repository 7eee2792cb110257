"""EngramMemoryBlock in a real LlamaIndex ``Memory`` (and a chat engine driven by LlamaIndex's
MockLLM), over a real SQLite store and the local embedding model."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("llama_index.core", reason="the llamaindex extra is not installed: pip install 'engram-recall[llamaindex]'")

from llama_index.core.base.llms.types import ChatMessage  # noqa: E402
from llama_index.core.chat_engine import SimpleChatEngine  # noqa: E402
from llama_index.core.llms import MockLLM  # noqa: E402
from llama_index.core.memory import Memory  # noqa: E402

from engram.embed import Embedder  # noqa: E402
from engram.engine import Engram, Filters  # noqa: E402
from engram.errors import ValidationError  # noqa: E402
from engram.integrations.llamaindex import EngramMemoryBlock, message_key  # noqa: E402
from engram.store.sqlite import SqliteMemoryStore  # noqa: E402

ALICE = [("user", "My dog is called Biscuit"), ("assistant", "Biscuit is a lovely name for a dog."),
         ("user", "I work at a bakery in Porto"), ("assistant", "Porto's bakeries are famous for pastel de nata."),
         ("user", "I prefer green tea to coffee"), ("assistant", "Noted: green tea."),
         ("user", "Tell me a joke"), ("assistant", "Why did the chicken cross the road?")]
BOB = [("user", "My dog is called Rex"), ("assistant", "Rex is a strong name."),
       ("user", "I live in Oslo"), ("assistant", "Oslo is cold in winter."),
       ("user", "Tell me a joke"), ("assistant", "Knock knock.")]


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    from engram.embed.local import LocalProvider, available_runtime

    if available_runtime() is None:
        pytest.skip("no local embedding runtime installed (pip install 'engram-recall[local]')")
    provider = LocalProvider()
    provider.warm_up()
    return Embedder(provider)


@pytest.fixture
def engram(tmp_path: Path, embedder: Embedder) -> Engram:
    mem = Engram(SqliteMemoryStore(tmp_path / "memory.db"), agent="alice", embedder=embedder)
    yield mem
    mem.close()


def _memory(engram: Engram, session: str, **block: object) -> Memory:
    # A small token limit, so that a few turns flush the oldest messages to the block.
    return Memory.from_defaults(session_id=session, token_limit=60, chat_history_token_ratio=0.5, token_flush_size=20,
                                memory_blocks=[EngramMemoryBlock(engram=engram, **block)])


def _chat(memory: Memory, turns: list[tuple[str, str]]) -> None:
    for role, text in turns:
        memory.put(ChatMessage(role=role, content=text))


def _memory_text(messages: list[ChatMessage]) -> str:
    system = [m for m in messages if m.role == "system"]
    return system[0].content if system else ""


def test_flushed_messages_are_recalled_for_the_latest_message_and_agents_stay_apart(engram: Engram) -> None:
    alice = _memory(engram, "alice-1")
    bob = _memory(engram.for_agent("bob"), "bob-1")
    _chat(alice, ALICE)
    _chat(bob, BOB)

    stored = engram.list()
    assert {m.content for m in stored} >= {"My dog is called Biscuit", "Biscuit is a lovely name for a dog."}
    assert len(alice.get_all()) == len(ALICE) and len(alice.get()) < len(ALICE)  # flushed from short-term memory
    first = next(m for m in stored if m.content == "My dog is called Biscuit")
    assert (first.category.value, first.type, first.key) == ("conversation", "conversation",
                                                            message_key("user", "My dog is called Biscuit"))
    assert set(first.tags) == {"llamaindex", "user"} and first.source == "llamaindex:alice-1"
    assert not {m.content for m in stored} & {text for _, text in BOB}

    recalled = _memory_text(alice.get(input="What is my dog's name?"))
    assert "<engram>" in recalled and "user: My dog is called Biscuit" in recalled
    assert "Rex" not in recalled and "Oslo" not in recalled
    assert "Rex" in _memory_text(bob.get(input="What is my dog's name?"))
    # Memories put in the chat are used (marked recalled, so the lifecycle jobs keep them); a look is not.
    counts = {m.id: m.recall_count for m in engram.list()}
    assert counts[first.id] >= 1
    looked = Memory.from_defaults(session_id="alice-1", memory_blocks=[EngramMemoryBlock(engram=engram, touch=False)])
    assert "Biscuit" in _memory_text(looked.get(input="What is my dog's name?"))
    assert {m.id: m.recall_count for m in engram.list()} == counts


def test_the_same_messages_put_again_store_nothing_twice(engram: Engram) -> None:
    memory = _memory(engram, "s1")
    _chat(memory, ALICE)
    before = {(m.key, m.content, m.updated_at) for m in engram.list()}
    assert before
    # The history set again (a restarted app) flushes the same messages once more, and so does
    # a block given them directly.
    again = Memory.from_defaults(session_id="s1", chat_history=[ChatMessage(role=r, content=t) for r, t in ALICE],
                                 token_limit=60, chat_history_token_ratio=0.5, token_flush_size=20,
                                 memory_blocks=[EngramMemoryBlock(engram=engram)])
    again.put(ChatMessage(role="user", content="And one more thing"))
    asyncio.run(EngramMemoryBlock(engram=engram).aput([ChatMessage(role=r, content=t) for r, t in ALICE]))
    after = {(m.key, m.content, m.updated_at) for m in engram.list()}
    assert {k for k, _, _ in after} == {message_key(r, t) for r, t in ALICE}
    assert before < after and len(after) == len(ALICE)  # nothing twice, nothing stored changed
    assert all(engram.versions(m.id) == [] for m in engram.list())


def test_what_is_stored_and_what_is_not(engram: Engram, caplog: pytest.LogCaptureFixture) -> None:
    block = EngramMemoryBlock(engram=engram)
    call = ChatMessage(role="assistant", content=None, additional_kwargs={"tool_calls": [{"id": "c1"}]})
    too_long = "x" * (engram.max_content_chars + 50)
    with caplog.at_level(logging.WARNING, logger="engram.integrations.llamaindex"):
        asyncio.run(block.aput([
            ChatMessage(role="system", content="You are a helpful assistant."),
            ChatMessage(role="user", content="What's the weather in Porto?"), call,
            ChatMessage(role="tool", content="sunny, 24C"),
            ChatMessage(role="assistant", content="  It is sunny in Porto.\r\n  "),
            ChatMessage(role="user", content="   \n\t "),  # blank: nothing to remember
            ChatMessage(role="user", content=too_long),
            ChatMessage(role="assistant", content="That is a lot of x."),
        ]))
    stored = {m.content: m for m in engram.list()}
    # Each text byte for byte as sent; the over-long one neither cut nor stored, and said so.
    assert set(stored) == {"What's the weather in Porto?", "  It is sunny in Porto.\r\n  ", "That is a lot of x."}
    assert stored["  It is sunny in Porto.\r\n  "].search_context == "What's the weather in Porto?"  # found by its question
    assert stored["That is a lot of x."].search_context is None  # its question was left out
    assert "messages[6].content" in caplog.text and f"is {len(too_long)} characters" in caplog.text
    assert "ENGRAM_MAX_CONTENT_CHARS" in caplog.text
    # The key leaves the ends' whitespace out, as memories stored stripped before were keyed: the
    # message stripped, put again, is that memory, not a second one.
    asyncio.run(block.aput([ChatMessage(role="assistant", content="It is sunny in Porto.")]))
    assert engram.count() == 3


def test_a_long_message_flushed_by_a_real_memory_fails_no_turn(engram: Engram, caplog: pytest.LogCaptureFixture) -> None:
    memory = _memory(engram, "long")
    long = "word " * (engram.max_content_chars // 5 + 1)
    with caplog.at_level(logging.WARNING, logger="engram.integrations.llamaindex"):
        _chat(memory, [("user", "My cat is called Miso"), ("assistant", "Miso is a sweet name."),
                       ("user", long), ("assistant", "That was long."), *ALICE])
    contents = {m.content for m in engram.list()}
    assert {"My cat is called Miso", "Miso is a sweet name.", "That was long."} <= contents
    assert long not in contents and not any(c.startswith("word word") for c in contents)
    assert "left out of memory" in caplog.text


def test_what_get_returns_is_bounded(engram: Engram) -> None:
    engram.remember_many([{"content": f"Fact {i} about the user's garden: it has {i} apple trees"} for i in range(20)])
    block = EngramMemoryBlock(engram=engram, k=20, max_chars=150)
    text = asyncio.run(block.aget([ChatMessage(role="user", content="how many apple trees are in the garden?")]))
    assert 0 < len(text) <= 150 and text.count("\n") == len(text.splitlines()) - 1
    assert all(line.startswith("- Fact ") for line in text.splitlines())
    assert len(asyncio.run(EngramMemoryBlock(engram=engram, k=2).aget(
        [ChatMessage(role="user", content="apple trees in the garden")])).splitlines()) == 2
    tiny = asyncio.run(EngramMemoryBlock(engram=engram, max_chars=10).aget([ChatMessage(role="user", content="garden")]))
    assert len(tiny) == 10 and tiny.endswith("…")  # the best memory's start rather than nothing
    assert asyncio.run(block.aget([])) == "" and asyncio.run(block.aget([ChatMessage(role="user", content="  ")])) == ""
    # Memory asks a block with a priority to shrink when the chat does not fit: the least relevant lines go first
    lines = text.splitlines()
    assert asyncio.run(block.atruncate(text, 1)) == "\n".join(lines[:-1])
    assert asyncio.run(block.atruncate(text, 10_000)) is None


def test_filters_narrow_recall(engram: Engram) -> None:
    engram.remember("The user's garden has three apple trees", tags=["garden"])
    asyncio.run(EngramMemoryBlock(engram=engram).aput([ChatMessage(role="user", content="My apple trees need pruning")]))
    query = [ChatMessage(role="user", content="apple trees")]
    everything = asyncio.run(EngramMemoryBlock(engram=engram).aget(query))
    assert "three apple trees" in everything and "need pruning" in everything
    garden = asyncio.run(EngramMemoryBlock(engram=engram, filters=Filters(tags=["garden"])).aget(query))
    assert garden == "- The user's garden has three apple trees"


def test_a_real_chat_engine_sends_the_recalled_memories_to_the_model(engram: Engram) -> None:
    # MockLLM answers with the prompt it was sent, so its answer shows what reached the model.
    engine = SimpleChatEngine.from_defaults(llm=MockLLM(), memory=_memory(engram, "chat"))
    engine.chat("My dog is called Biscuit")
    engine.chat("I work at a bakery in Porto")
    assert "My dog is called Biscuit" in {m.content for m in engram.list()}  # flushed by the engine's own puts
    answer = engine.chat("What is my dog's name?").response
    assert "<engram>" in answer and "user: My dog is called Biscuit" in answer
    answer = asyncio.run(engine.achat("And my dog's name again?")).response
    assert "user: My dog is called Biscuit" in answer


@pytest.mark.parametrize(("fields", "field"), [
    ({"k": 0}, "k"), ({"k": 101}, "k"), ({"max_chars": 0}, "max_chars"), ({"max_chars": True}, "max_chars"),
    ({"k": "2"}, "k"), ({"min_relevance": 2}, "min_relevance"), ({"filters": {"tags": ["x"]}}, "filters"),
    ({"engram": None}, "engram"), ({"category": "episodic"}, "category"), ({"limit": 3}, "limit"),
])
def test_a_bad_field_names_itself(engram: Engram, fields: dict, field: str) -> None:
    with pytest.raises(ValidationError) as err:
        EngramMemoryBlock(**{"engram": engram, **fields})
    assert err.value.field == field


@pytest.mark.parametrize(("fields", "field"), [
    ({"touch": "no"}, "touch"), ({"touch": 1}, "touch"), ({"accept_short_term_memory": "no"}, "accept_short_term_memory"),
    ({"accept_short_term_memory": None}, "accept_short_term_memory"), ({"name": 1}, "name"), ({"name": " "}, "name"),
    ({"description": 1}, "description"), ({"priority": "1"}, "priority"), ({"priority": -1}, "priority"),
])
def test_a_field_pydantic_would_read_or_refuse_itself_is_engram_s_to_refuse(engram: Engram, fields: dict,
                                                                              field: str) -> None:
    """pydantic read ``touch="no"`` as False (a per-call ``touch="no"`` is refused) and "1" as 1, and
    refused a name of 1 in its own words: each is engram's ``ValidationError`` naming the field."""
    with pytest.raises(ValidationError) as err:
        EngramMemoryBlock(**{"engram": engram, **fields})
    assert err.value.field == field and err.value.allowed


def test_flags_and_priority_as_given(engram: Engram) -> None:
    block = EngramMemoryBlock(engram=engram, touch=False, accept_short_term_memory=False, priority=2, name="recalled")
    assert (block.touch, block.accept_short_term_memory, block.priority, block.name) == (False, False, 2, "recalled")
    assert EngramMemoryBlock(engram=engram, touch=None).touch is None


def test_a_message_engram_cannot_store_is_left_out_and_named(engram: Engram, caplog: pytest.LogCaptureFixture) -> None:
    # A NUL or a lone surrogate in what a user typed must not fail the chat's turn (the flush runs
    # inside Memory.put) nor raise Python's own UnicodeEncodeError: it is named and left out.
    block = EngramMemoryBlock(engram=engram)
    with caplog.at_level(logging.WARNING, logger="engram.integrations.llamaindex"):
        asyncio.run(block.aput([ChatMessage(role="user", content="fine"), ChatMessage(role="tool", content="skipped"),
                                ChatMessage(role="assistant", content="bad\x00text"),
                                ChatMessage(role="user", content="lone \ud800 surrogate")]))
    assert [m.content for m in engram.list()] == ["fine"]
    assert "messages[2].content" in caplog.text and "NUL" in caplog.text
    assert "messages[3].content" in caplog.text and "surrogate" in caplog.text


def test_a_bad_message_is_named_by_its_place_and_nothing_is_stored(engram: Engram) -> None:
    block = EngramMemoryBlock(engram=engram)
    with pytest.raises(ValidationError) as err:
        asyncio.run(block.aput([ChatMessage(role="user", content="fine"), ChatMessage(role="tool", content="skipped"),
                                ChatMessage(role="assistant", content="ok", additional_kwargs={"session_id": "s\x00"})]))
    assert err.value.field == "messages[2].source"
    assert engram.count() == 0


def test_memory_works_without_network(tmp_path: Path) -> None:
    # LlamaIndex counts tokens with tiktoken and may use nltk; both load data they could download.
    # The data ships in llama-index-core's wheel: with every connection refused, Memory still works.
    script = f"""
import socket
def refuse(*args, **kwargs):
    raise OSError("network disabled by the test")
socket.socket.connect = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import Memory
from llama_index.core.utils import globals_helper
from engram.engine import Engram
from engram.store.sqlite import SqliteMemoryStore
from engram.integrations.llamaindex import EngramMemoryBlock
mem = Engram(SqliteMemoryStore({str(tmp_path / "offline.db")!r}), agent="a")
memory = Memory.from_defaults(session_id="s", token_limit=40, chat_history_token_ratio=0.5, token_flush_size=10,
                              memory_blocks=[EngramMemoryBlock(engram=mem)])
for i in range(6):
    memory.put(ChatMessage(role="user" if i % 2 == 0 else "assistant", content=f"message {{i}} about the red bicycle"))
assert mem.count() > 0
assert "red bicycle" in memory.get(input="the red bicycle")[0].content
assert globals_helper.stopwords and globals_helper.punkt_tokenizer
print("ok")
"""
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("TIKTOKEN_CACHE_DIR", "NLTK_DATA")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_category_chooses_what_flushed_turns_become(engram: Engram) -> None:
    # knowledge: kept past hygiene's seven days for conversation memories
    block = EngramMemoryBlock(engram=engram, category="knowledge")
    asyncio.run(block.aput([ChatMessage(role="user", content="My dog is called Biscuit")]))
    [stored] = engram.list()
    assert (stored.category.value, stored.type) == ("knowledge", "conversation")


def test_an_async_engram_is_taken_for_its_engine(engram: Engram) -> None:
    # asyncio code holds an AsyncEngram, as the other adapters take it; it was refused ("an engram Engram").
    from engram.aio import AsyncEngram

    block = EngramMemoryBlock(engram=AsyncEngram(engram))
    assert block.engram is engram
    asyncio.run(block.aput([ChatMessage(role="user", content="My dog is called Biscuit")]))
    assert [m.content for m in engram.list()] == ["My dog is called Biscuit"]
    assert "Biscuit" in asyncio.run(block.aget([ChatMessage(role="user", content="what is my dog called?")]))
