from __future__ import annotations

import json
import re

import pytest

from engram.engine import Engram
from engram.store.sqlite import SqliteMemoryStore
from engram.testing.llm_servers import RecordedRequest, Reply


class Clock:
    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def engram(tmp_path, clock):
    with Engram(SqliteMemoryStore(tmp_path / "memory.db"), agent="tester", clock=clock) as e:
        yield e


# A scripted model for agent tests: it decides each reply from the request, like a real one.
# - a synthesis prompt: one note per "I like X" the user said in the conversation shown;
# - a summary prompt: a short summary naming the user's statements;
# - a chat turn with tools: "Remember that my X is Y" -> memory_store; "What is my X?" ->
#   memory_recall; after a tool result -> a text answer quoting it; anything else -> small talk.
def _slug(text: str) -> str:
    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))


def _text(message: dict) -> str:
    return message.get("content") or ""


def scripted_respond(request: RecordedRequest) -> Reply:
    messages = request.body["messages"]
    last = messages[-1]
    prompt = _text(last)
    if prompt.startswith("Extract durable knowledge"):
        conversation = prompt.split("Conversation:\n", 1)[1]
        likes = re.findall(r"^user: I like ([^.\n]+)", conversation, re.MULTILINE)
        return Reply.say(json.dumps([{"key": f"likes-{_slug(x)}", "content": f"The user likes {x}."} for x in likes]))
    if prompt.startswith("Summarise the conversation"):
        said = re.findall(r"^user: (.+)$", prompt, re.MULTILINE)
        return Reply.say("The user talked about: " + "; ".join(s[:40] for s in said))
    if last["role"] == "tool":
        return Reply.say(f"Done. {last['content']}")
    user = re.sub(r"\[Memory context\].*?\[/Memory context\]\s*", "", prompt, flags=re.DOTALL)
    match = re.match(r"Remember that my (.+?) is (.+?)\.?$", user)
    if match and request.body.get("tools"):
        thing, value = match.groups()
        return Reply.tool("memory_store", key=f"user-{_slug(thing)}", content=f"The user's {thing} is {value}.")
    match = re.match(r"What is my (.+?)\?$", user)
    if match and request.body.get("tools"):
        return Reply.tool("memory_recall", query=match.group(1))
    return Reply.say(f"Interesting! ({len(user.split())} words)")


@pytest.fixture
def scripted_model():
    return scripted_respond
