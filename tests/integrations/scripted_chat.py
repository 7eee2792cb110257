"""Scripted models for the framework adapters' tests, answering on ``OpenAICompatServer`` (the
chat-completions wire format): one tool call per reply, then an answer repeating what the last
call gave back. Shared by the Agno and Strands tests and the docs' examples that run on them,
with the bad tool calls both toolsets must refuse in engram's words."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engram.testing.llm_servers import RecordedRequest, Reply


def this_turn(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages from the latest user message on: what the model answers now."""
    return messages[max(i for i, m in enumerate(messages) if m["role"] == "user"):]


def said(message: dict[str, Any]) -> str:
    """A message's text. Some frameworks (Strands) send a list of parts: what was said is the first
    (memory injection appends another)."""
    content = message["content"]
    return content if isinstance(content, str) else content[0].get("text", "")


def scripted(*calls: tuple[str, dict[str, Any]]) -> Callable[[RecordedRequest], Reply]:
    """A model that makes ``calls`` (one per reply), then answers with the last tool message."""

    def respond(request: RecordedRequest) -> Reply:
        turn = this_turn(request.body["messages"])
        step = sum(m["role"] == "assistant" for m in turn)
        if step < len(calls):
            return Reply.tools(calls[step])
        return Reply.say(turn[-1]["content"] if turn[-1]["role"] == "tool" else "nothing to do")

    return respond


def remembers_then_recalls(request: RecordedRequest) -> Reply:
    """A model that remembers what the user says (a CrewAI task's description), recalls for a
    question, and answers with what the tool gave back (the docs' examples run on it): engram's own
    tools, or Strands' MemoryManager tools (``add_memory`` / ``search_memory``) when those are what
    it is offered."""
    turn = this_turn(request.body["messages"])
    if turn[-1]["role"] == "tool":
        return Reply.say(turn[-1]["content"])
    text = said(turn[0])
    if "\nCurrent Task: " in text:  # CrewAI's task prompt: what the user said is the task's description
        text = text.split("\nCurrent Task: ", 1)[1].split("\n", 1)[0]
    if "add_memory" in {t["function"]["name"] for t in request.body.get("tools", [])}:
        return Reply.tools(("search_memory", {"query": text}) if text.endswith("?") else ("add_memory", {"entries": [text]}))
    return Reply.tools(("recall", {"query": text}) if text.endswith("?") else ("remember", {"content": text}))


# A bad argument the model sends, and the start of what its failed call must say.
REFUSED_BY_THE_TOOLS = [
    ("remember", {"content": "The sky is green", "importance": 7.0}, "invalid importance: 7.0 is out of range"),
    ("remember", {"content": "   "}, "invalid content"),
    ("remember", {"content": "Fact", "category": "forever"}, "invalid category"),
    ("recall", {"query": "anything", "limit": 500}, "invalid limit"),
    ("forget", {"query": "sky", "tag": "colours"}, "invalid forget: got query, tag (allowed: exactly one of memory_id, key"),
    ("forget", {"memory_id": "no-such-memory"},
     'memory not found: "no-such-memory"; recall first to find the right memory_id or key'),
    ("versions", {"memory_id": "no-such-memory"},
     'memory not found: "no-such-memory"; recall first to find the right memory_id or key'),
    ("versions", {"key": "no-such-key"},
     'memory named by key not found: "no-such-key"; recall first to find the right memory_id or key'),
    ("versions", {"memory_id": "a", "key": "b"},
     "invalid versions: got memory_id, key (allowed: exactly one of memory_id, key)"),
]
# A bad argument an application passes calling a tool directly, and the field it must name.
REFUSED_IN_DIRECT_CALLS = [
    ("remember", {"content": ""}, "content"),
    ("remember", {"content": "Fact", "tags": ["ok", "x" * 200]}, "tags"),
    ("remember", {"content": "Fact", "key": "k" * 500}, "key"),
    ("recall", {"query": "x", "min_relevance": 2.0}, "min_relevance"),
    ("forget", {}, "forget"),
    ("forget", {"memory_id": "a", "key": "b"}, "forget"),
    ("forget", {"older_than_days": -1.0}, "older_than"),
    ("versions", {}, "versions"),
    ("versions", {"memory_id": "a", "key": "b"}, "versions"),
    ("versions", {"key": "   "}, "key"),
]
