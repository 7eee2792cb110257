"""An import the conversation history would refuse stores nothing: the refusal comes before the
first write, memories included, with the error the history gives and the message's place in the
source. Three refusals the history makes of what an import appends, each on a real SQLite home
through ``Engram.import_from`` with Letta's Agent File (its blocks and passages are memories, its
messages a conversation with tool calls): two names of a tool result's JSON that ``privacy.pii =
"redact"`` makes one, a tool result whose call the conversation no longer holds (trimmed away
since an earlier import), and a summary whose JSON names redaction makes one."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from engram.config import load_settings
from engram.engine import Engram
from engram.errors import SnapshotError
from tests.importers.test_import_cli import FIXTURES

AGENT_FILE = FIXTURES / "letta.af"
CONVERSATION = "letta:memgpt_agent"
COLLIDING = json.dumps({"a@b.io": "sent", "c@d.io": "bounced"})  # both names become [REDACTED:email]


def agent_file() -> dict[str, Any]:
    return json.loads(AGENT_FILE.read_text(encoding="utf-8"))


def open_home(home: Path, **settings: Any) -> Engram:
    return Engram.from_settings(load_settings(home=home, embeddings={"provider": "none"}, **settings))


def held(mem: Engram) -> tuple[list[str], list[tuple[str, str]], str]:
    """What the Letta agent holds: its memories' contents, its conversation's messages, its summary."""
    sam = mem.for_agent("memgpt_agent")
    return (sorted(m.content for m in sam.list()), [(m.role.value, m.content) for m in sam.history.all(CONVERSATION)],
            sam.history.summary(CONVERSATION))


def refused_for_its_tool_result(mem: Engram) -> None:
    """Import the agent file with a tool result whose two names redaction makes one: refused,
    naming the result's content."""
    document = agent_file()
    result = document["agents"][0]["messages"][3]
    result["content"][0]["text"] = result["tool_returns"][0]["func_response"] = COLLIDING
    with pytest.raises(SnapshotError) as refused:
        mem.import_from(json.dumps(document), "letta")
    assert str(refused.value).startswith('agents[0].messages[3].content: two of its names become "[REDACTED:email]"'), \
        str(refused.value)


def test_a_tool_result_redaction_would_make_two_names_of_is_refused_before_the_memories(tmp_path: Path) -> None:
    with open_home(tmp_path, privacy={"pii": "redact"}) as mem:
        refused_for_its_tool_result(mem)
        assert held(mem) == ([], [], "")
        assert mem.list() == []


def test_a_tool_result_whose_call_was_trimmed_away_is_refused_before_the_memories(tmp_path: Path) -> None:
    # An export taken before the tool answered, and a later one where it has: in between the
    # conversation (at most 2 messages) let the call go, so the result answers a call it no longer holds.
    earlier = agent_file()
    messages = earlier["agents"][0]["messages"]
    result = messages.pop(3)
    later_user = copy.deepcopy(messages[1])
    later_user.update(id="message-5", created_at="2025-10-31T22:57:20+00:00")
    later_user["content"][0]["text"] = "Windy!"
    messages.append(later_user)
    settings = {"history": {"max_history_len": 2}}
    with open_home(tmp_path, **settings) as mem:
        assert mem.import_from(json.dumps(earlier), "letta").imported == 2
        before = held(mem)
    assert [role for role, _ in before[1]] == ["assistant", "user"]  # the call trimmed away
    later = copy.deepcopy(earlier)
    later["agents"][0]["messages"].append({**result, "created_at": "2025-10-31T22:58:00+00:00"})
    later["agents"][0]["passages"] = [{"id": "passage-0", "text": "Chad's boat is a sloop called Yak",
                                       "created_at": "2025-10-30T09:00:00+00:00"}]
    with open_home(tmp_path, **settings) as mem:
        with pytest.raises(SnapshotError) as refused:
            mem.import_from(json.dumps(later), "letta")
        assert str(refused.value).startswith('agents[0].messages[5].tool_call_id: no tool call "call_Q7pA9" in this '
                                             "conversation"), str(refused.value)
        assert held(mem) == before  # not the passage
        assert mem.for_agent("memgpt_agent").count() == 2


def test_a_summary_redaction_would_make_two_names_of_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    document = agent_file()
    messages = document["agents"][0]["messages"]
    summary = copy.deepcopy(messages[1])
    summary.update(role="summary", id="message-9")
    summary["content"][0]["text"] = COLLIDING
    messages.insert(1, summary)
    with open_home(tmp_path, privacy={"pii": "redact"}) as mem:
        with pytest.raises(SnapshotError) as refused:
            mem.import_from(json.dumps(document), "letta")
        assert str(refused.value).startswith('agents[0].messages[1].summary: two of its names become "[REDACTED:email]"'), \
            str(refused.value)
        assert held(mem) == ([], [], "")
        assert mem.list() == []


def test_with_a_database_per_agent_the_refusal_makes_no_agents_database(tmp_path: Path) -> None:
    # The Letta agent has no database yet: its messages are checked, by the home's PII policy,
    # against a conversation that holds nothing, and the refused import makes no database for it.
    with open_home(tmp_path, agent="app", per_agent_databases=True, privacy={"pii": "redact"}) as mem:
        refused_for_its_tool_result(mem)
        assert not (tmp_path / "agents" / "memgpt_agent").exists()  # (before held opens its database to read it)
        assert held(mem) == ([], [], "")
    # The same file without the colliding names goes into that agent's own database.
    with open_home(tmp_path, agent="app", per_agent_databases=True, privacy={"pii": "redact"}) as mem:
        summary = mem.import_from(json.dumps(agent_file()), "letta")
        assert (summary.imported, summary.messages_imported) == (2, 4), summary
        assert (tmp_path / "agents" / "memgpt_agent" / "memory.db").exists()
        assert [role for role, _ in held(mem)[1]] == ["user", "assistant", "tool", "assistant"]
