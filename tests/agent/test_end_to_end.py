"""MemoryAgent against a local OpenAI-compatible server whose scripted model calls the memory
tools: ten turns with compaction; early facts stay recallable and the history stays bounded."""

from __future__ import annotations

from engram.agent.loop import MemoryAgent
from engram.agent.settings import ChatSettings
from engram.history.service import History
from engram.history.settings import CompactionSettings
from engram.history.sqlite import SqliteHistoryStore
from engram.llm.openai import OpenAIChat
from engram.testing.llm_servers import OpenAICompatServer

TURNS = [
    "Remember that my name is Alice.",
    "Remember that my home city is Lisbon.",
    "Remember that my dog's name is Pixel.",
    "I like sailing on weekends.",
    "I like jazz records.",
    "The weather has been lovely this week, with long evenings by the river.",
    "I like fresh figs.",
    "Tell me something about Portuguese tiles and their history please.",
    "What is my home city?",
    "What is my dog's name?",
]


def test_ten_turns_with_tools_and_compaction(engram, tmp_path, scripted_model):
    compaction = CompactionSettings(max_history_messages=16, min_messages=12, keep_recent=10)
    history = History(SqliteHistoryStore.open(tmp_path / "history.db"), max_history_len=100, compaction=compaction)
    with OpenAICompatServer(responder=scripted_model) as server:
        provider = OpenAIChat("scripted", base_url=server.base_url, max_retries=0)
        agent = MemoryAgent(engram, provider, ChatSettings(synthesis_interval=5), history=history,
                            conversation="test:e2e")
        results = [agent.process(text) for text in TURNS]

        # The model stored the first three facts with memory_store ...
        assert [r.tool_calls for r in results[:3]] == [("memory_store",)] * 3
        assert {"user-name", "user-home-city", "user-dog-s-name"} <= {k for r in results[:3] for k in r.stored}
        # ... and answered the late questions from memory_recall, after compaction had run.
        assert results[8].tool_calls == ("memory_recall",)
        assert "Lisbon" in results[8].reply and "Pixel" in results[9].reply
        compactions = [r.compaction for r in results if r.compaction is not None]
        assert compactions, "compaction never ran"
        assert all(c.summarizer == "llm" for c in compactions)
        first_compaction = next(i for i, r in enumerate(results) if r.compaction is not None)
        assert first_compaction < 8

        # Early facts are recallable after the messages that stated them were discarded.
        for query, expected in (("name", "Alice"), ("home city", "Lisbon"), ("dog", "Pixel")):
            assert any(expected in m.content for m in engram.recall(query).memories), query
        # Synthesis (periodic and forced before compaction) kept the "I like" statements.
        likes = {m.key for m in engram.list(limit=100) if m.key.startswith("likes-")}
        assert likes == {"likes-sailing-on-weekends", "likes-jazz-records", "likes-fresh-figs"}

        # The history is bounded, in the session and in the store, with a summary in front.
        assert len(agent.messages) <= compaction.max_history_messages
        assert history.count("test:e2e") <= compaction.max_history_messages
        assert history.summary("test:e2e").startswith("The user talked about")
        assert "Remember that my name is Alice" not in " ".join(m.content for m in history.all("test:e2e"))

        # What went to the model: tools offered, enrichment in the user message, summary in context.
        last_chat = [r for r in server.requests if r.body.get("tools")][-1].body
        assert {t["function"]["name"] for t in last_chat["tools"]} == {
            "memory_store", "memory_recall", "memory_forget", "memory_link", "memory_versions"}
        assert any(m["role"] == "system" and m["content"].startswith("[Conversation summary]") for m in last_chat["messages"])
        synthesis_calls = [r for r in server.requests if r.body["messages"][-1]["content"].startswith("Extract durable")]
        assert synthesis_calls and all(r.body["temperature"] == 0.3 for r in synthesis_calls)

    # A recreated session restores the bounded history and its summary from the store.
    again = MemoryAgent(engram, None, history=history, conversation="test:e2e").restore()
    assert again.summary == history.summary("test:e2e")
    assert [m.content for m in again.messages] == [m.content for m in history.all("test:e2e")]
    history.close()
