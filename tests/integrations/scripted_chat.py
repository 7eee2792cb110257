"""Scripted models for the framework adapters' tests, answering on ``OpenAICompatServer`` (the
chat-completions wire format): one tool call per reply, then an answer repeating what the last
call gave back. Shared by the Agno and Strands tests and the docs' examples that run on them."""

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
    """A model that remembers what the user says, recalls for a question, and answers with what
    the tool gave back (the docs' examples run on it): engram's own tools, or Strands'
    MemoryManager tools (``add_memory`` / ``search_memory``) when those are what it is offered."""
    turn = this_turn(request.body["messages"])
    if turn[-1]["role"] == "tool":
        return Reply.say(turn[-1]["content"])
    text = said(turn[0])
    if "add_memory" in {t["function"]["name"] for t in request.body.get("tools", [])}:
        return Reply.tools(("search_memory", {"query": text}) if text.endswith("?") else ("add_memory", {"entries": [text]}))
    return Reply.tools(("recall", {"query": text}) if text.endswith("?") else ("remember", {"content": text}))
