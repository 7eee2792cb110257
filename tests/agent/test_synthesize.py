"""Synthesis and reconciliation against a scripted OpenAI-compatible model."""

from __future__ import annotations

import json

import pytest

from engram.agent.extract import RuleExtractor
from engram.agent.synthesize import Synthesizer, conversation_window, notes_from_facts, reconcile
from engram.engine import Filters
from engram.errors import ProviderError
from engram.llm.base import assistant_message, user_message
from engram.llm.openai import OpenAIChat
from engram.model import Message, Role
from engram.testing.llm_servers import OpenAICompatServer, Reply


def notes(*items: dict) -> Reply:
    return Reply.say(json.dumps(list(items)))


@pytest.fixture
def server():
    with OpenAICompatServer() as s:
        yield s


@pytest.fixture
def synth(engram, server):
    return Synthesizer(engram, OpenAIChat("m", base_url=server.base_url, max_retries=0))


TALK = [user_message("I prefer tea in the morning"), assistant_message("Noted, tea it is.")]


def test_same_preference_three_times_is_one_entry(engram, server, synth):
    tea = {"key": "user-prefers-tea", "content": "The user prefers tea in the morning."}
    server.enqueue(notes(tea), notes(tea), notes({"key": None, "content": "The user prefers tea in the morning."}))
    outcomes = [synth.run(TALK).applied[0].outcome for _ in range(3)]
    assert outcomes == ["created", "unchanged", "same"]
    assert engram.count() == 1
    assert engram.versions("user-prefers-tea") == []


def test_same_words_under_another_key_is_not_a_second_entry(engram, server, synth):
    server.enqueue(notes({"key": "tea-pref", "content": "The user prefers tea in the morning."}),
                   notes({"key": "morning-drink", "content": "the user prefers tea in the morning"}))
    synth.run(TALK)
    applied = synth.run(TALK).applied[0]
    assert applied.outcome == "same" and applied.memory.key == "tea-pref"
    assert engram.count() == 1


def test_changed_preference_updates_and_keeps_history(engram, server, synth):
    server.enqueue(notes({"key": "user-drink", "content": "The user prefers tea."}),
                   notes({"key": "user-drink", "content": "The user now prefers coffee."}))
    synth.run(TALK)
    report = synth.run([user_message("Actually I switched to coffee"), assistant_message("Coffee, got it.")])
    assert report.applied[0].outcome == "updated"
    assert engram.count() == 1
    assert engram.get("user-drink").content == "The user now prefers coffee."
    assert [v.content for v in engram.versions("user-drink")] == ["The user prefers tea."]


def test_contradicted_fact_is_superseded_not_deleted(engram, server, synth):
    engram.remember("The user lives in Paris.", key="user-lives-paris")
    server.enqueue(notes({"key": "user-lives-berlin", "content": "The user moved to Berlin.",
                          "supersedes": ["user-lives-paris"]}))
    report = synth.run([user_message("I moved to Berlin last month"), assistant_message("Welcome to Berlin!")])
    assert report.applied[0].outcome == "superseding"
    new = engram.get("user-lives-berlin")
    old = engram.list(Filters(include_superseded=True, metadata=None), limit=10)
    paris = next(m for m in old if m.key == "user-lives-paris")
    assert paris.superseded_by == new.id and paris.content == "The user lives in Paris."
    assert [m.key for m in engram.recall("lives Paris Berlin").memories] == ["user-lives-berlin"]
    assert engram.count() == 1 and engram.count(Filters(include_superseded=True)) == 2


def test_notes_link_to_each_other_and_to_existing(engram, server, synth):
    engram.remember("Project Falcon uses Python", key="project-falcon")
    server.enqueue(notes(
        {"key": "user-role", "content": "The user leads Project Falcon.", "links": ["project-falcon", "user-team"]},
        {"key": "user-team", "content": "The user's team has five people."},
    ))
    synth.run(TALK)
    neighbours = {m.key for m in engram.neighbours("user-role")}
    assert neighbours == {"project-falcon", "user-team"}


def test_core_entries_are_not_overwritten(engram, server, synth):
    engram.remember("I am Ada", key="soul:identity", category="core")
    server.enqueue(notes({"key": "soul:identity", "content": "I am Bob"}))
    assert synth.run(TALK).applied[0].outcome == "skipped"
    assert engram.get("soul:identity").content == "I am Ada"


def test_request_shape(engram, server, synth):
    engram.remember("The user drinks tea.", key="tea")
    history = [user_message(f"old message {i}") for i in range(8)] + [
        Message(Role.TOOL, "tool output", tool_call_id="x"),
        user_message("[Memory context]\n- tea: The user drinks tea.\n[/Memory context]\n\nmore tea please"),
        assistant_message("Here is your tea."),
        user_message("and biscuits"),
    ]
    server.enqueue(Reply.say("[]"))
    assert synth.run(history).applied == []
    body = server.requests[0].body
    assert body["temperature"] == 0.3
    prompt = body["messages"][0]["content"]
    assert "- tea: The user drinks tea." in prompt  # existing entries are shown for reconciliation
    conversation = prompt.split("Conversation:\n", 1)[1]
    assert "[Memory context]" not in conversation and "tool output" not in conversation
    assert conversation.count("\n") + 1 == 10 and "old message 0" not in conversation
    assert len(conversation_window(history)) == 10


def test_invalid_json_is_repaired_once_then_fails(engram, server, synth):
    server.enqueue(Reply.say("here are notes: none"), Reply.say('[{"content": "The user likes jazz."}]'))
    assert synth.run(TALK).applied[0].outcome == "created"
    server.enqueue(Reply.say("nope"), Reply.say("still nope"))
    with pytest.raises(ProviderError):
        synth.run(TALK)
    assert engram.count() == 1


def test_rule_based_facts_reconcile_the_same_way(engram):
    extractor = RuleExtractor()
    for _ in range(3):
        reconcile(engram, notes_from_facts(extractor.extract("My favourite editor is vim.")))
    assert engram.count() == 1
    report = reconcile(engram, notes_from_facts(extractor.extract("My favourite editor is emacs now")))
    assert report.applied[0].outcome == "updated"
    assert engram.get("user-favourite-editor").content == "The user's favourite editor is emacs now."
    assert [v.content for v in engram.versions("user-favourite-editor")] == ["The user's favourite editor is vim."]


def test_an_agents_note_never_rewrites_a_global_memory_under_its_key(engram):
    # A global memory every agent reads; this agent's conversation says otherwise under its key.
    engram.remember("The team's favourite editor is vim.", key="user-favourite-editor", scope="global")
    report = reconcile(engram, notes_from_facts(RuleExtractor().extract("My favourite editor is emacs now")))
    assert report.applied[0].outcome == "created"
    mine = report.applied[0].memory
    assert mine.scope.agent == engram.scope.agent and mine.content == "The user's favourite editor is emacs now."
    # The global memory, and what another agent reads, are as they were: nothing of this
    # agent's conversation reaches them.
    other = engram.for_agent("bob")
    assert [m.content for m in other.recall("favourite editor").memories] == ["The team's favourite editor is vim."]
    assert engram.versions(engram.list(scope="global")[0]) == []
    # Said again, it updates this agent's own entry, not the global one.
    reconcile(engram, notes_from_facts(RuleExtractor().extract("My favourite editor is helix")))
    assert engram.find("user-favourite-editor").content == "The user's favourite editor is helix."
    assert engram.list(scope="global")[0].content == "The team's favourite editor is vim."
