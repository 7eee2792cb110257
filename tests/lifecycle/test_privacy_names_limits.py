"""``privacy.pii = "redact"`` where a marker changes more than the text it replaces: text near a
length limit that redaction pushes past it, JSON names (two may become one),
the response cache (whose answers must come back as given) and consolidation's copy of merged
texts. Each runs the real engine on a real SQLite file; where the point is that nothing reaches the
file, the file's bytes and its write-ahead log are read."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from engram.agent.loop import MemoryAgent
from engram.agent.response_cache import ResponseCache
from engram.agent.settings import ChatSettings
from engram.engine import Engram
from engram.errors import ValidationError
from engram.lifecycle import consolidate
from engram.lifecycle.settings import ConsolidationSettings
from engram.llm.openai import OpenAIChat
from engram.model import MAX_MESSAGE_CHARS
from engram.privacy import PiiPolicy
from engram.testing.llm_servers import OpenAICompatServer, Reply
from tests.lifecycle.test_privacy_history import raw_bytes

EMAIL = "alice@example.com"
SHORT = "a@b.io"  # 6 characters; its marker, [REDACTED:email], is 16


def grown_past(limit: int, filler: str = "lorem ") -> str:
    """Text of ``limit - 5`` characters that is 25 characters past ``limit`` once its three short
    addresses are redacted."""
    tail = f" {SHORT} {SHORT} {SHORT}"
    body = (filler * (limit // len(filler) + 1))[: limit - 5 - len(tail)]
    return body + tail


@pytest.fixture
def redacting(tmp_path: Path):
    db = tmp_path / "memory.db"
    engram = Engram.from_settings(home=tmp_path, path=db, privacy={"pii": "redact"}, max_content_chars=500)
    yield engram, db
    engram.close()


# --- 1. limits --------------------------------------------------------------------------------

def test_a_history_message_that_redaction_pushes_past_the_limit_is_refused_at_each_library_door(redacting) -> None:
    engram, db = redacting
    history = engram.history
    history.append("web:1", "user", "kept before")
    text = grown_past(MAX_MESSAGE_CHARS, "zebrafill ")
    assert len(text) <= MAX_MESSAGE_CHARS
    for write in (lambda: history.append("web:1", "assistant", text),
                  lambda: history.append_reported("web:1", "assistant", text)):
        with pytest.raises(ValidationError) as refused:
            write()
        assert refused.value.field == "content"
        assert f"is {MAX_MESSAGE_CHARS + 25} characters once possible PII was redacted" in refused.value.problem
        assert refused.value.allowed == f"up to {MAX_MESSAGE_CHARS} characters once redacted"
    with pytest.raises(ValidationError) as refused:
        history.append_many_reported("web:1", [{"role": "assistant", "content": "fine"},
                                               {"role": "user", "content": text}])
    assert refused.value.field == "messages[1].content"
    # Nothing of the refused batch was written (its good first message neither), nothing lost.
    assert [m.content for m in history.all("web:1")] == ["kept before"]
    assert b"zebrafill" not in raw_bytes(db)


def test_a_summary_that_redaction_pushes_past_the_limit_is_refused_naming_it(redacting) -> None:
    engram, _ = redacting
    engram.history.set_summary("web:1", "the old summary")
    with pytest.raises(ValidationError) as refused:
        engram.history.set_summary("web:1", grown_past(MAX_MESSAGE_CHARS))
    assert refused.value.field == "summary" and "once possible PII was redacted" in refused.value.problem
    assert engram.history.summary("web:1") == "the old summary"


def test_a_memory_that_redaction_pushes_past_max_content_chars_is_refused_saying_why(redacting) -> None:
    engram, _ = redacting
    text = grown_past(500)
    with pytest.raises(ValidationError) as refused:
        engram.remember(text)
    assert refused.value.field == "content"
    assert refused.value.problem.startswith(f"is 525 characters once possible PII was redacted ({len(text)} as given")
    with pytest.raises(ValidationError) as refused:
        engram.remember("short", search_context=text)
    assert refused.value.field == "search_context" and "once possible PII was redacted" in refused.value.problem
    with pytest.raises(ValidationError) as refused:
        engram.remember_many([{"content": "fine"}, {"content": text}])
    assert refused.value.field == "items[1].content" and "once possible PII was redacted" in refused.value.problem
    assert engram.count() == 0


# --- 2. JSON names and tool call ids ----------------------------------------------------------

def test_metadata_names_are_redacted_before_the_file(redacting) -> None:
    engram, db = redacting
    stored = engram.remember("a note", metadata={EMAIL: "owner", "nested": {"by": {EMAIL: 1}}}).memory
    assert stored.metadata == {"[REDACTED:email]": "owner", "nested": {"by": {"[REDACTED:email]": 1}}}
    history = engram.history
    history.append("web:1", "user", "hi", metadata={EMAIL: "x"})
    assert history.all("web:1")[0].metadata == {"[REDACTED:email]": "x"}
    assert b"example.com" not in raw_bytes(db)


def test_names_that_redaction_would_make_one_are_refused_naming_the_object(redacting) -> None:
    engram, db = redacting
    with pytest.raises(ValidationError) as refused:
        engram.remember("a note", metadata={"people": {EMAIL: 1, "bob@example.com": 2}})
    assert refused.value.field == "metadata.people"
    assert refused.value.problem.startswith('two of its names become "[REDACTED:email]" once possible PII is redacted')
    with pytest.raises(ValidationError) as refused:
        engram.remember_many([{"content": "a", "metadata": {EMAIL: 1, "[REDACTED:email]": 2}}])
    assert refused.value.field == "items[0].metadata"
    history = engram.history
    with pytest.raises(ValidationError) as refused:
        history.append("web:1", "user", "hi", metadata={EMAIL: 1, "bob@example.com": 2})
    assert refused.value.field == "metadata"
    arguments = f'{{"{EMAIL}": 1, "bob@example.com": 2}}'
    with pytest.raises(ValidationError) as refused:
        history.append("web:1", "assistant", "", tool_calls=[{"id": "c1", "name": "send", "arguments": arguments}])
    assert refused.value.field == "tool_calls.arguments"
    # A tool's result that is JSON is screened as JSON: its names too.
    with pytest.raises(ValidationError) as refused:
        history.append_many("web:1", [{"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "f"}]},
                                      {"role": "tool", "content": arguments, "tool_call_id": "c1"}])
    assert refused.value.field == "messages[1].content"
    assert refused.value.problem.startswith('two of its names become "[REDACTED:email]"')
    assert engram.count() == 0 and history.all("web:1") == []
    assert b"example.com" not in raw_bytes(db)


def test_names_a_tool_call_repeats_itself_are_kept_as_given(redacting) -> None:
    engram, _ = redacting
    arguments = f'{{"{EMAIL}": 1, "{EMAIL}": 2, "n": 1e400}}'
    engram.history.append("web:1", "assistant", "", tool_calls=[{"id": "c1", "name": "send", "arguments": arguments}])
    assert engram.history.all("web:1")[0].tool_calls[0].arguments == arguments.replace(EMAIL, "[REDACTED:email]")


# --- 3. the response cache --------------------------------------------------------------------

def test_the_response_cache_keeps_no_pii_under_redact_and_a_hit_answers_as_the_live_call(tmp_path: Path) -> None:
    path = tmp_path / "response_cache.json"
    settings = ChatSettings(response_cache=True, synthesis=False, extractor="none", injection="none")
    with Engram.from_settings(home=tmp_path, path=tmp_path / "memory.db", privacy={"pii": "redact"}) as engram, \
            OpenAICompatServer() as server:
        cache = ResponseCache.open(path, privacy=engram.privacy)

        def ask(text: str, conversation: str):  # noqa: ANN202
            agent = MemoryAgent(engram, OpenAIChat("m", base_url=server.base_url, max_retries=0), settings,
                                conversation=conversation, cache=cache)
            return agent.process(text)

        for conversation, question, answer in (("t:1", "who runs ops?", f"Write to {EMAIL}."),
                                               ("t:2", f"I am {EMAIL}, hello", "Hello!")):
            server.enqueue(Reply.say(answer), Reply.say(answer))
            first, second = ask(question, conversation), ask(question, f"{conversation}b")
            assert first.reply == answer and not first.cached and not second.cached  # neither cached
        server.enqueue(Reply.say("Plain answer."))
        live = ask("a plain question", "t:3")
        hit = ask("a plain question", "t:3")  # the same call again: history, system prompt and all
        assert hit.cached and hit.reply == live.reply == "Plain answer."
        assert len(server.requests) == 5
    assert len(json.loads(path.read_text())) == 1
    assert b"example.com" not in path.read_bytes()


def test_answers_cached_before_redact_holding_pii_are_dropped_from_the_file(tmp_path: Path) -> None:
    from engram.llm.base import user_message

    path = tmp_path / "response_cache.json"
    before = ResponseCache.open(path, privacy=PiiPolicy("warn"))
    before.put("m", "s", [user_message("who?")], f"It is {EMAIL}.")
    before.put("m", "s", [user_message("hi")], "Hello!")
    assert EMAIL.encode() in path.read_bytes()
    after = ResponseCache.open(path, privacy=PiiPolicy("redact"))
    assert after.get("m", "s", [user_message("who?")]) is None
    assert after.get("m", "s", [user_message("hi")]) == "Hello!"
    assert b"example.com" not in path.read_bytes()


# --- 4. consolidation -------------------------------------------------------------------------

def test_consolidation_screens_the_merged_texts_it_copies_into_metadata(tmp_path: Path) -> None:
    from tests.lifecycle.conftest import FakeEmbedder

    db = tmp_path / "memory.db"
    with Engram.from_settings(home=tmp_path, path=db, privacy={"pii": "warn"}) as before:
        before.embedder = FakeEmbedder()
        before.remember(f"the ops lead is {EMAIL}", importance=0.9)
        before.remember(f"The ops lead is {EMAIL}!", importance=0.1)
    with Engram.from_settings(home=tmp_path, path=db, privacy={"pii": "redact"}) as engram:
        engram.embedder = FakeEmbedder()
        engram.reindex()
        report = consolidate.run(engram, ConsolidationSettings(threshold=0.95), now=engram.clock())
        assert len(report.removed) == 1
    with closing(sqlite3.connect(db)) as conn:
        (metadata,) = conn.execute("SELECT metadata FROM memories").fetchone()
    (merged,) = json.loads(metadata)["merged_from"]
    assert merged["content"] == "The ops lead is [REDACTED:email]!"


# --- 5. tag errors --------------------------------------------------------------------------

def test_tag_errors_spell_the_value_as_json_does(redacting) -> None:
    engram, _ = redacting
    with pytest.raises(ValidationError) as refused:
        engram.remember("a note", tags=["ok", "a,b"])
    assert str(refused.value) == 'tags: got "a,b", not a usable tag (allowed: up to 64 printable characters, no commas)'
    with pytest.raises(ValidationError) as refused:
        engram.remember("a note", tags=["ok", None])
    assert str(refused.value) == "tags: got null in the list (allowed: tags as text)"
