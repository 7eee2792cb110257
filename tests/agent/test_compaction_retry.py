"""A compaction that loses a race tries again without paying the provider twice for the same work,
and without overwriting a summary set by hand meanwhile. The race is real: another engine on the
same SQLite file (another process, as far as the store knows) pops or sets the summary while the
compaction waits on its model, a scripted OpenAI-compatible server on a socket."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from engram.engine import Engram
from engram.history.compaction import CompactionResult
from engram.root import compact_conversation
from engram.testing.llm_servers import OpenAICompatServer, RecordedRequest, Reply

from .conftest import scripted_respond

KEY = "telegram:42"
LIKES = ["green tea", "long walks", "jazz records", "rainy days", "old maps", "sourdough bread", "chess", "kites"]


def _prompt(request: RecordedRequest) -> str:
    return request.body["messages"][-1].get("content") or ""


def _open(tmp_path: Path, server: OpenAICompatServer | None = None) -> Engram:
    llm = {"provider": "openai", "model": "gpt-test", "base_url": server.base_url, "api_key": "test"} if server else {}
    return Engram.from_settings(home=tmp_path, path=tmp_path / "memory.db", embeddings={"provider": "none"},
                                llm=llm or {"provider": "none"})


def _seed(tmp_path: Path) -> None:
    with _open(tmp_path) as mem:
        for n, thing in enumerate(LIKES):
            mem.history.append(KEY, "user", f"I like {thing}.", created_at=1_790_000_000.0 + 10 * n)
            mem.history.append(KEY, "assistant", f"Noted, {thing}.", created_at=1_790_000_001.0 + 10 * n)


def _compact(tmp_path: Path, respond: Callable[[RecordedRequest], Reply]) -> tuple[CompactionResult, list[str]]:
    """A forced compaction of the seeded conversation through a fake provider answering with
    ``respond`` (which may change the conversation from another engine meanwhile): its result and
    the prompts the provider was sent."""
    with OpenAICompatServer(responder=respond) as server:
        mem = _open(tmp_path, server)
        try:
            result = compact_conversation(mem, mem.settings, KEY, force=True)
        finally:
            mem.close()
        return result, [_prompt(r) for r in server.requests]


def test_a_retried_compaction_extracts_each_message_once(tmp_path: Path) -> None:
    _seed(tmp_path)
    other = _open(tmp_path)  # the user's other session, undoing the last answer mid-compaction

    def respond(request: RecordedRequest) -> Reply:
        if _prompt(request).startswith("Extract durable knowledge") and other.history.count(KEY) == 16:
            other.history.pop_newest(KEY)  # the compaction's discard will find the conversation changed
        return scripted_respond(request)

    try:
        result, prompts = _compact(tmp_path, respond)
        assert result.compacted and len(result.discarded) == 5 and len(result.kept) == 10  # decided again on 15
        # The messages the first try extracted are not sent again: one extraction call, not two.
        assert sum(p.startswith("Extract durable knowledge") for p in prompts) == 1
        # The summary covers what the retry discards (5 messages, not the 6 of the first try): asked again.
        assert sum(p.startswith("Summarise the conversation") for p in prompts) == 2
        facts = [m.key for m in other.list(limit=50) if m.key and m.key.startswith("likes-")]
        assert sorted(facts) == ["likes-green-tea", "likes-jazz-records", "likes-long-walks"]
    finally:
        other.close()


def test_a_summary_set_by_hand_during_a_compaction_is_built_on_not_overwritten(tmp_path: Path) -> None:
    _seed(tmp_path)
    other = _open(tmp_path)
    hand = "The user is planning a trip to Lisbon in April."

    def respond(request: RecordedRequest) -> Reply:
        if _prompt(request).startswith("Summarise the conversation") and not other.history.summary(KEY):
            other.history.set_summary(KEY, hand)  # written by hand while the compaction's summary is being made
        return scripted_respond(request)

    try:
        result, prompts = _compact(tmp_path, respond)
        summaries = [p for p in prompts if p.startswith("Summarise the conversation")]
        # The first summary, made without the hand-written one, is not stored; the retry builds on it.
        assert len(summaries) == 2 and hand not in summaries[0] and hand in summaries[1]
        assert sum(p.startswith("Extract durable knowledge") for p in prompts) == 1  # same messages: not again
        assert result.compacted and other.history.summary(KEY) == result.summary
        assert other.history.count(KEY) == 10
    finally:
        other.close()
