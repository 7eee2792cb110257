"""An import's conversation messages on a real SQLite home through ``Engram.import_from`` with
Letta's Agent File: each new message is screened for PII once (it was screened three times: to
tell whether the conversation holds it, by the check before the first write, and by the append),
with the same result; and a conversation that changes between that check and the append (its tool
call undone meanwhile) is reported in the import's warnings with none of its new messages
appended, while what the import wrote stays and is counted (it raised the check's refusal, which
stores nothing, after the memories were written)."""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path

import pytest

from engram.privacy import PiiPolicy
from tests.importers.test_import_refused_before_writing import CONVERSATION, agent_file, held, open_home

EMAIL = "chad@example.com"


def test_each_new_message_is_screened_once_and_stored_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    screened: Counter[str] = Counter()
    real = PiiPolicy.screen_message

    def counting(self: PiiPolicy, message):  # the real screening, counted per message text
        screened[message.content] += 1
        return real(self, message)

    monkeypatch.setattr(PiiPolicy, "screen_message", counting)
    document = agent_file()
    said = document["agents"][0]["messages"][1]["content"][0]
    said["text"] = f"{said['text']} Write to me at {EMAIL}."
    with open_home(tmp_path, privacy={"pii": "redact"}) as mem:
        summary = mem.import_from(json.dumps(document), "letta")
        assert summary.messages_imported == 4, summary
        assert set(screened.values()) == {1} and len(screened) == 4, screened  # each once
        messages = held(mem)[1]
        assert messages[0][0] == "user" and messages[0][1].endswith("Write to me at [REDACTED:email].")
        assert EMAIL not in json.dumps(messages)
        assert any("e-mail address" in warning for warning in summary.warnings), summary.warnings
        screened.clear()
        again = mem.import_from(json.dumps(document), "letta")  # every message held: screened once to tell so
        assert (again.messages_imported, again.messages_skipped) == (0, 4), again
        assert set(screened.values()) == {1} and len(screened) == 4, screened
        assert held(mem)[1] == messages


def test_a_conversation_changed_between_the_check_and_the_append_is_reported_and_nothing_else_is_lost(
        tmp_path: Path) -> None:
    full = agent_file()
    earlier = copy.deepcopy(full)
    earlier["agents"][0]["messages"] = earlier["agents"][0]["messages"][:3]  # the tool call, not yet its result
    with open_home(tmp_path) as mem:
        assert mem.import_from(json.dumps(earlier), "letta").messages_imported == 2
    later = copy.deepcopy(full)
    later["agents"][0]["passages"] = [{"id": "passage-0", "text": "Chad's boat is a sloop called Yak",
                                       "created_at": "2025-10-30T09:00:00+00:00"}]
    later["agents"][0]["messages"].insert(1, {**copy.deepcopy(full["agents"][0]["messages"][1]), "role": "summary",
                                              "id": "message-9"})
    later["agents"][0]["messages"][1]["content"][0]["text"] = "Chad talked about sailing."
    with open_home(tmp_path) as mem:
        sam = mem.for_agent("memgpt_agent")

        def undo_the_call(phase: str, done: int, total: int) -> None:
            # Between the check and the append (the memories are being stored): the agent's own
            # undo takes the tool call back, so the result the import brings answers no call.
            if phase.startswith("storing") and done == 0:
                assert sam.history.pop_newest(CONVERSATION).tool_calls

        summary = mem.import_from(json.dumps(later), "letta", progress=undo_the_call)
        assert summary.imported == 1 and summary.messages_imported == 0, summary
        changed = [w for w in summary.warnings if "changed during the import" in w]
        assert len(changed) == 1, summary.warnings
        assert changed[0].startswith(
            "letta:memgpt_agent (agent memgpt_agent): 2 new messages not imported: the conversation changed during "
            'the import and its append refused agents[0].messages[4].tool_call_id: no tool call "call_Q7pA9" in '
            "this conversation"), changed[0]
        contents, messages, summary_text = held(mem)
        assert "Chad's boat is a sloop called Yak" in contents  # the memories stay, counted as imported
        assert [role for role, _ in messages] == ["user"]  # none of the conversation's new messages: all or none
        assert summary_text == "Chad talked about sailing."  # the rest of the import went on
