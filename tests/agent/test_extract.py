from __future__ import annotations

import pytest

from engram.agent.extract import LLMExtractor, NopExtractor, RuleExtractor, parse_fact_lines
from engram.llm.openai import OpenAIChat
from engram.testing.llm_servers import OpenAICompatServer, Reply


def test_sclaw_line_parsing():
    facts = parse_fact_lines("- User prefers dark mode\n\n* Name is Alice\n1. Lives in Oslo\n• Likes tea\n", source="s1")
    assert [f.content for f in facts] == ["User prefers dark mode", "Name is Alice", "Lives in Oslo", "Likes tea"]
    assert all(f.source == "s1" for f in facts)
    ids = [f.id for f in facts]
    assert len(set(ids)) == 4
    nano, index, seq = ids[1].split("-")
    assert int(nano) > 0 and index == "1" and int(seq) > 0
    assert parse_fact_lines("NONE") == [] and parse_fact_lines("none.") == [] and parse_fact_lines("") == []


def test_ids_unique_across_calls():
    ids = [f.id for _ in range(50) for f in parse_fact_lines("a\nb")]
    assert len(set(ids)) == 100


def test_llm_extractor_sends_sclaw_prompt():
    with OpenAICompatServer(Reply.say("- The user is vegetarian\n- The user lives in Lyon"), Reply.say("NONE")) as server:
        extractor = LLMExtractor(OpenAIChat("m", base_url=server.base_url))
        facts = extractor.extract("[Memory context]\n- x: y\n[/Memory context]\n\nI'm vegetarian, living in Lyon", "Noted!")
        assert [f.content for f in facts] == ["The user is vegetarian", "The user lives in Lyon"]
        prompt = server.requests[0].body["messages"][0]["content"]
        assert prompt.startswith("Analyze the following exchange and extract important facts about the user.")
        assert 'return "NONE"' in prompt and "Memory context" not in prompt
        assert extractor.extract("hello", "hi") == []
    assert NopExtractor().extract("My name is Bob") == []


@pytest.mark.parametrize("text, key, content", [
    ("My name is alice.", "user-name", "The user's name is Alice."),
    ("Hi, call me Bob", "user-name", "The user's name is Bob."),
    ("My favorite editor is vim.", "user-favourite-editor", "The user's favourite editor is vim."),
    ("I prefer tea over coffee", "user-prefers-coffee-or-tea", "The user prefers tea over coffee."),
    ("I prefer Python for scripting.", "user-prefers-for-scripting", "The user prefers Python for scripting."),
    ("I don't like olives.", "user-opinion-olives", "The user does not like olives."),
    ("I love hiking", "user-opinion-hiking", "The user loves hiking."),
    ("I live in Berlin.", "user-location", "The user lives in Berlin."),
    ("I work at Acme Corp.", "user-workplace", "The user works at Acme Corp."),
    ("I'm a software engineer", "user-occupation", "The user works as a software engineer."),
    ("I decided to learn Rust", "decision-learn-rust", "The user decided to learn Rust."),
])
def test_rule_extractor_statements(text, key, content):
    facts = RuleExtractor().extract(text)
    assert [(f.key, f.content) for f in facts] == [(key, content)]


def test_rule_extractor_ignores_questions_and_small_talk():
    ex = RuleExtractor()
    assert ex.extract("What is my name?") == []
    assert ex.extract("Hello there, how are you") == []
    assert ex.extract("I like it. I love you too. I prefer that.") == []
    assert ex.extract("[Memory context]\n- user-name: My name is Zed\n[/Memory context]\n\nhello") == []


def test_rule_extractor_several_facts_and_same_slot_changes():
    facts = RuleExtractor().extract("My name is Alice. I live in Paris, and I hate mornings.")
    assert [f.key for f in facts] == ["user-name", "user-location", "user-opinion-mornings"]
    a, b = RuleExtractor().extract("I like olives")[0], RuleExtractor().extract("I don't like olives")[0]
    assert a.key == b.key and a.content != b.content
    c, d = RuleExtractor().extract("I prefer tea over coffee")[0], RuleExtractor().extract("I prefer coffee to tea")[0]
    assert c.key == d.key


@pytest.mark.parametrize(("text", "expected"), [
    ("I love sci-fi movies and I live in Lisbon.",
     [("user-opinion-sci-fi-movies", "The user loves sci-fi movies."), ("user-location", "The user lives in Lisbon.")]),
    ("I like tea and I hate coffee",
     [("user-opinion-tea", "The user likes tea."), ("user-opinion-coffee", "The user does not like coffee.")]),
    ("I am John Smith and I work at Acme",
     [("user-name", "The user's name is John Smith."), ("user-workplace", "The user works at Acme.")]),
    ("Hi, I'm Alice.", [("user-name", "The user's name is Alice.")]),
    ("I live in Porto now", [("user-location", "The user lives in Porto.")]),
    ("I like salt and pepper", [("user-opinion-salt-and-pepper", "The user likes salt and pepper.")]),
    ("I am tired", []),
    ("I'm Not sure", []),
    ("I'm a software engineer", [("user-occupation", "The user works as a software engineer.")]),
])
def test_rule_extractor_one_fact_per_statement_and_stated_names(text, expected):
    assert [(f.key, f.content) for f in RuleExtractor().extract(text)] == expected


@pytest.mark.parametrize("text", [
    "Don't remember that my PIN is 1234",
    "Please don't remember that my PIN is 1234.",
    "Do not remember this: I live in Mordor",
    "Never store that my name is Mallory",
    "don’t save that I work at Acme",
])
def test_a_negated_remember_stores_nothing_from_its_sentence(text):
    # QA: "Don't remember that my PIN is 1234" stored the PIN.
    assert RuleExtractor().extract(text) == []


def test_a_negated_remember_leaves_other_sentences_alone():
    facts = RuleExtractor().extract("My name is Ada. Don't remember that my PIN is 1234.")
    assert [f.key for f in facts] == ["user-name"]
    # A statement about the user's memory is not a request.
    facts = RuleExtractor().extract("I don't remember the address but I live in Oslo")
    assert [f.key for f in facts] == ["user-location"]


@pytest.mark.parametrize(("text", "expected"), [
    # QA: stored both "I live in Oslo." and "The user lives in Oslo."
    ("Please remember that I live in Oslo", [("user-location", "The user lives in Oslo.")]),
    ("Remember that my favourite editor is vim.", [("user-favourite-editor", "The user's favourite editor is vim.")]),
    ("Remember that the deploy server is atlas", [(None, "The deploy server is atlas.")]),
    ("Remember my name is Ada and I work at Acme",
     [("user-name", "The user's name is Ada."), ("user-workplace", "The user works at Acme.")]),
])
def test_a_remember_request_holding_a_specific_fact_stores_that_fact_only(text, expected):
    assert [(f.key, f.content) for f in RuleExtractor().extract(text)] == expected


@pytest.mark.parametrize("text", [
    "My name is not important", "My name is unimportant.", "My name is irrelevant",
    "My name is none of your business", "Call me nobody", "My name is a secret",
])
def test_refusals_are_not_names(text):
    # QA: "My name is not important" stored the name "Not Important".
    assert [f for f in RuleExtractor().extract(text) if f.key == "user-name"] == []
