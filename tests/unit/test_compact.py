"""Compaction on real message sequences with tool calls, applied to a real SQLite history."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

import pytest

from engram.engine import Engram
from engram.errors import ProviderError
from engram.history.compaction import (
    compact_messages,
    count_summary,
    cut_point,
    is_critical,
    should_compact,
)
from engram.history.service import SUMMARY_HEADING, History
from engram.history.settings import CompactionSettings
from engram.history.sqlite import SqliteHistoryStore
from engram.model import Message, Role, make_message
from tests.lifecycle.conftest import remember_at

KEY = "cli:local:"


def conversation(turns: int, *, seed: int = 7, system: bool = True) -> list[Message]:
    """A realistic sequence: user asks, assistant sometimes calls 1-3 tools, tools answer, assistant replies."""
    rng = random.Random(seed)
    out = [make_message("system", "You are a careful assistant.", created_at=0.0)] if system else []
    t = 1.0
    for turn in range(turns):
        out.append(make_message("user", f"question {turn} about the deployment pipeline", created_at=t))
        if rng.random() < 0.5:
            calls = [{"id": f"c{turn}-{k}", "name": "search", "arguments": json.dumps({"q": turn})}
                     for k in range(rng.randint(1, 3))]
            out.append(make_message("assistant", "", tool_calls=calls, created_at=t + 0.1))
            for call in calls:
                out.append(make_message("tool", f"result for {call['id']}", tool_call_id=call["id"], created_at=t + 0.2))
        out.append(make_message("assistant", f"answer {turn} with details", created_at=t + 0.3))
        t += 1
    return out


def assert_pairs_intact(kept: Sequence[Message], discarded: Sequence[Message]) -> None:
    kept_calls = {c.id for m in kept for c in m.tool_calls}
    for m in kept:
        if m.role is Role.TOOL:
            assert m.tool_call_id in kept_calls, "a kept tool result lost its call"
    kept_results = {m.tool_call_id for m in kept if m.role is Role.TOOL}
    for m in discarded:
        for call in m.tool_calls:
            assert call.id not in kept_results, "a discarded call left its result behind"


SETTINGS = CompactionSettings()


def test_tool_pair_invariant_holds_at_every_cut_point() -> None:
    for seed in range(20):
        messages = conversation(30, seed=seed)
        for keep in range(1, len(messages)):
            for forward in (False, True):
                cut = cut_point(messages, keep, head=1, forward=forward)
                assert 1 <= cut <= len(messages)
                assert_pairs_intact([messages[0], *messages[cut:]], messages[1:cut])
                if forward:
                    assert len(messages) - cut <= keep


def test_triggers_follow_ptrclaw() -> None:
    small = [make_message("user", "hi") for _ in range(12)]
    assert not should_compact(small, SETTINGS)  # 12 is not more than 12
    assert should_compact(small + small[:1] * 39, SETTINGS)  # 52 > 50 messages
    assert not should_compact(small + small[:1] * 30, SETTINGS)  # 43: under both limits
    assert should_compact(small + small[:1], SETTINGS, reported_tokens=96_001)  # past 75% of 128k
    assert not should_compact(small + small[:1], SETTINGS, reported_tokens=96_000)


def test_compaction_keeps_system_prompt_and_last_ten_without_splitting_pairs() -> None:
    messages = conversation(25)
    assert len(messages) > 50
    extracted: list[tuple[Message, ...]] = []
    result = compact_messages(messages, SETTINGS, extract=lambda discarded: extracted.append(tuple(discarded)))
    assert result.compacted and not result.emergency
    assert result.kept[0] == messages[0]
    assert len(result.kept) - 1 >= 10
    assert result.kept[1:] == tuple(messages[len(messages) - len(result.kept) + 1:])
    assert extracted == [result.discarded]
    assert_pairs_intact(result.kept, result.discarded)
    users = sum(m.role is Role.USER for m in result.discarded)
    assert result.summary.startswith(f"[Conversation history compacted. Previous discussion covered: {users} user messages")
    assert result.summarizer == "count"


class Recorder:
    """A summariser that records what it was asked (the LLM one comes from the llm package)."""

    def __init__(self, fail: bool = False) -> None:
        self.seen: list[list[Message]] = []
        self.fail = fail

    def summarize(self, messages: Sequence[Message]) -> str:
        self.seen.append(list(messages))
        if self.fail:
            raise ProviderError("model unavailable")
        return f"LLM summary of {len(messages)} messages"


def test_summary_is_stored_and_comes_back_first_on_next_assembly(tmp_path: Path) -> None:
    store = SqliteHistoryStore.open(tmp_path / "memory.db")
    history = History(store, max_history_len=500)
    for m in conversation(25):
        history.add(KEY, m)
    order: list[str] = []
    summarizer = Recorder()

    total = store.count(KEY)

    def extract(discarded: Sequence[Message]) -> None:
        order.append("extract")
        assert store.count(KEY) == total and store.get_summary(KEY) == ""  # nothing discarded yet

    purged: list[float] = []
    history.purge_hook = lambda age: purged.append(age) or 3
    result = history.compact(KEY, summarizer=summarizer, extract=extract)
    assert order == ["extract"] and result.compacted and result.summarizer == "llm"
    assert result.purged == 3 and purged == [SETTINGS.conversation_max_age_s]
    assert store.get_summary(KEY) == result.summary
    assert store.get_all(KEY) == list(result.kept)
    context = history.assemble(KEY)
    assert context[0].role is Role.SYSTEM and context[0].content == "You are a careful assistant."
    assert context[1].content == f"{SUMMARY_HEADING}\n{result.summary}"
    assert context[2:] == list(result.kept[1:])
    # A second compaction hands the previous summary to the summariser, then replaces it.
    for m in conversation(25, seed=3, system=False):
        history.add(KEY, m)
    again = history.compact(KEY, summarizer=summarizer)
    assert summarizer.seen[1][0].content.endswith(result.summary)
    assert store.get_summary(KEY) == again.summary != result.summary
    store.close()


class Garbled:
    """A summariser whose answer carries what no store holds, as a model's JSON escapes can."""

    def summarize(self, messages: Sequence[Message]) -> str:
        return "summary with a NUL \x00 and a lone \ud800 surrogate"


@pytest.mark.parametrize("backend", ["sqlite", "jsonl"])
def test_a_models_summary_no_store_can_hold_is_stored_without_those_characters(tmp_path: Path, backend: str) -> None:
    # A summary set by hand holding them is refused; engram's own is made to fit, as it is cut to
    # length: the compaction failed (surrogate), or SQLite stored a NUL PostgreSQL would refuse.
    with Engram.from_settings(home=tmp_path, files={"enabled": False}, history={"backend": backend}) as engram:
        for m in conversation(25):
            engram.history.add(KEY, m)
        result = engram.history.compact(KEY, summarizer=Garbled(), force=True)
        assert result.compacted and result.summarizer == "llm"
        assert engram.history.summary(KEY) == result.summary == "summary with a NUL  and a lone  surrogate"


def test_extraction_failure_discards_nothing(tmp_path: Path) -> None:
    store = SqliteHistoryStore.open(tmp_path / "memory.db")
    history = History(store, max_history_len=500)
    messages = conversation(25)
    for m in messages:
        history.add(KEY, m)

    def broken(_: Sequence[Message]) -> None:
        raise ProviderError("extraction model down")

    result = history.compact(KEY, extract=broken)
    assert not result.compacted and "extraction failed" in result.notes[0]
    assert store.get_all(KEY) == messages and store.get_summary(KEY) == ""
    store.close()


def test_summariser_failure_falls_back_to_count_summary() -> None:
    result = compact_messages(conversation(25), SETTINGS, summarizer=Recorder(fail=True))
    assert result.compacted and result.summarizer == "count"
    assert "summariser failed" in result.notes[0]


def test_count_summaries_accumulate() -> None:
    first = count_summary([make_message("user", "a"), make_message("assistant", "b")])
    second = count_summary([make_message("user", "c")], previous=first)
    assert "covered: 2 user messages, 1 assistant responses, 0 tool calls" in second
    assert second.count("[Conversation history compacted") == 1


def test_emergency_path_triggers_only_past_its_threshold() -> None:
    settings = CompactionSettings(token_limit=10_000, emergency_retain=4)
    messages = conversation(8)  # under 50 messages and 12+ of them
    assert len(messages) > 12
    at_limit = compact_messages(messages, settings, reported_tokens=10_000)
    assert at_limit.compacted and not at_limit.emergency  # past 75%, not past 100%: normal path
    assert not is_critical(messages, settings, reported_tokens=10_000)
    assert is_critical(messages, settings, reported_tokens=10_001)
    extracted: list[int] = []
    past = compact_messages(messages, settings, reported_tokens=10_001, summarizer=Recorder(),
                            extract=lambda d: extracted.append(len(d)))
    assert past.emergency and past.compacted
    assert past.kept[0] == messages[0] and len(past.kept) - 1 <= 4
    assert extracted == [len(past.discarded)]
    assert past.summarizer == "count"  # no LLM call on an overflowing window
    assert_pairs_intact(past.kept, past.discarded)


def test_below_the_limits_nothing_happens_unless_forced() -> None:
    messages = conversation(5)
    assert not compact_messages(messages, SETTINGS).compacted
    forced = compact_messages(messages, SETTINGS, force=True)
    assert forced.compacted and len(forced.kept) >= 11


def test_settings_refuse_keep_recent_not_below_min_messages() -> None:
    with pytest.raises(ValueError):
        CompactionSettings(keep_recent=12, min_messages=12)


def test_compaction_forgets_only_the_agents_own_old_conversation_memories(tmp_path: Path) -> None:
    """An agent's compaction purges its own old conversation memories, never global ones nor
    another agent's: one agent never deletes another's memories."""
    month = 30 * 86400.0
    with Engram.from_settings(home=tmp_path) as engram:
        now = engram.clock()
        alice, bob = engram.for_agent("alice"), engram.for_agent("bob")
        remember_at(bob, now - month, "shared global conversation fact", scope="global", category="conversation")
        remember_at(bob, now - month, "bob own old conversation", category="conversation")
        remember_at(alice, now - month, "alice old conversation", category="conversation")
        remember_at(alice, now - 60, "alice recent conversation", category="conversation")
        # Hygiene's protected types (summaries, items) are never purged by its job, nor by this one.
        remember_at(alice, now - month, "alice old conversation summary", category="conversation", type="summary")
        # Learned a month ago elsewhere (an import's kind of time), arriving now: not old here yet.
        alice.remember("alice conversation brought from elsewhere", category="conversation", created_at=now - month)
        alice.remember("alice old knowledge", created_at=now - month)

        def contents(view: Engram) -> list[str]:
            return sorted(m.content for m in view.list(limit=100))

        for n in range(7):
            alice.history.append("telegram:1", "user", f"question {n}")
            alice.history.append("telegram:1", "assistant", f"answer {n}")
        result = alice.history.compact("telegram:1", force=True)
        assert result.compacted and result.purged == 1
        assert contents(bob) == ["bob own old conversation", "shared global conversation fact"]
        assert contents(alice) == ["alice conversation brought from elsewhere", "alice old conversation summary",
                                   "alice old knowledge", "alice recent conversation",
                                   "shared global conversation fact"]
        # The default agent's history (the engine's own, not a view's) keeps to its own as well.
        for n in range(7):
            engram.history.append("telegram:1", "user", f"question {n}")
            engram.history.append("telegram:1", "assistant", f"answer {n}")
        assert engram.history.compact("telegram:1", force=True).purged == 0
        assert contents(bob) == ["bob own old conversation", "shared global conversation fact"]
