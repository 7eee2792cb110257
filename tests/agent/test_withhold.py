"""A request not to keep something ("Don't remember that my PIN is 1234") is honoured by every
extractor: the rule-based one, the LLM one and synthesis, through one rule (``agent.withhold``).

QA: the rule extractor learned to keep nothing from such a sentence, but the LLM extractor still
stored the PIN. The LLM runs behind a local server speaking OpenAI's wire format, so the real
client code runs; the scripted model proposes the withheld fact as a careless model would.
"""

from __future__ import annotations

import pytest

from engram.agent.extract import LLMExtractor, RuleExtractor
from engram.agent.loop import MemoryAgent
from engram.agent.settings import ChatSettings
from engram.engine import Engram
from engram.history.inmemory import InMemoryHistoryStore
from engram.history.service import History
from engram.llm.openai import OpenAIChat
from engram.testing.llm_servers import OpenAICompatServer, Reply


def llm_extract(model_says: str, user: str, assistant: str = "") -> tuple[list[str], str]:
    """The LLM extractor's facts when the model answers ``model_says``, and the user part it sent."""
    with OpenAICompatServer(Reply.say(model_says)) as server:
        facts = LLMExtractor(OpenAIChat("m", base_url=server.base_url, max_retries=0)).extract(user, assistant)
        prompt = server.requests[0].body["messages"][0]["content"]
    return [f.content for f in facts], prompt.split("\nAssistant:", 1)[0]


@pytest.mark.parametrize(("said", "proposed"), [
    ("Don't remember that my PIN is 1234", "The user's PIN is 1234"),
    ("Please don't remember that my PIN is 1234.", "- User PIN: 1234"),
    ("Do not remember this: I live in Mordor", "The user lives in Mordor"),
    ("Never store that my name is Mallory", "The user's name is Mallory"),
    ("don’t save that I work at Acme", "The user works at Acme"),
])
def test_both_extractors_keep_nothing_a_withholding_sentence_says(said: str, proposed: str) -> None:
    facts, sent = llm_extract(proposed, said)
    assert facts == []
    assert sent.endswith("User: ")  # the model was never shown the sentence
    assert RuleExtractor().extract(said) == []


def test_other_sentences_of_the_message_are_still_extracted() -> None:
    facts, sent = llm_extract("- The user's name is Ada\n- The user's PIN is 1234",
                              "My name is Ada. Don't remember that my PIN is 1234.",
                              "Nice to meet you, Ada. I won't keep your PIN 1234.")
    assert facts == ["The user's name is Ada"]  # the PIN the model read in the reply is still withheld
    assert "1234" not in sent and "My name is Ada." in sent
    assert [f.content for f in RuleExtractor().extract("My name is Ada. Don't remember that my PIN is 1234.")] == [
        "The user's name is Ada."]


def test_a_word_also_said_outside_the_request_is_not_withheld() -> None:
    facts, _ = llm_extract("- The user's name is Ada\n- The user was once called Bob",
                           "My name is Ada. Don't store that my name was Bob.")
    assert facts == ["The user's name is Ada"]


def test_a_statement_about_someones_memory_is_not_a_request() -> None:
    facts, sent = llm_extract("The user lives in Oslo", "I don't remember the address but I live in Oslo")
    assert facts == ["The user lives in Oslo"] and "I live in Oslo" in sent


def test_a_request_covers_its_own_sentence_only() -> None:
    # docs/agent.md's example: "Never record my health. I have diabetes." keeps the second sentence
    # (the word "health" is said only in the request; "diabetes" is not), for the rules too.
    facts, sent = llm_extract("The user has diabetes", "Never record my health. I have diabetes.")
    assert facts == ["The user has diabetes"] and "I have diabetes." in sent and "health" not in sent
    assert [f.content for f in RuleExtractor().extract("Never record my health. I live in Paris.")] == [
        "The user lives in Paris."]


def _agent(engram: Engram, server: OpenAICompatServer, settings: ChatSettings) -> MemoryAgent:
    return MemoryAgent(engram, OpenAIChat("m", base_url=server.base_url, max_retries=0), settings,
                       history=History(InMemoryHistoryStore()), conversation="t:1")


def _stored(engram: Engram) -> list[str]:
    return sorted(m.content for m in engram.store.iter_all())


def test_the_chat_agent_with_the_llm_extractor_stores_what_was_not_withheld(engram: Engram) -> None:
    with OpenAICompatServer(Reply.say("Noted, and I will forget the PIN."),
                            Reply.say("- The user's PIN is 1234\n- The user lives in Oslo")) as server:
        agent = _agent(engram, server, ChatSettings(extractor="llm", synthesis=False))
        agent.process("Don't remember that my PIN is 1234. I live in Oslo.")
    assert _stored(engram) == ["The user lives in Oslo"]


def test_synthesis_honours_the_same_request(engram: Engram) -> None:
    notes = ('[{"key": "pin", "content": "The user\'s PIN is 1234."},'
             ' {"key": "home", "content": "The user lives in Oslo."}]')
    with OpenAICompatServer(Reply.say("Noted."), Reply.say(notes)) as server:
        agent = _agent(engram, server, ChatSettings(extractor="none", synthesis_interval=1))
        result = agent.process("Don't remember that my PIN is 1234. I live in Oslo.")
        conversation = server.requests[1].body["messages"][0]["content"].split("Conversation:\n", 1)[1]
    assert result.stored == ("home",)
    assert _stored(engram) == ["The user lives in Oslo."]
    assert "1234" not in conversation.split("assistant:")[0]
