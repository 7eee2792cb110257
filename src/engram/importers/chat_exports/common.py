"""What the ChatGPT and Claude.ai readers share: JSON paths, the export's conversations as a list,
and ``Conversations``, which turns each conversation's shown messages into history entries and
counts what it leaves out.

Both exports are one person's account, so everything joins the importing agent (no entry names an
agent, and ``--into-agent`` changes nothing). Each conversation is the conversation ``<kind>:<id>``
(``chatgpt:6740…``, ``claude:8f3a…``; an id that cannot be a key's part keeps its usable
characters and 8 hex digits of its hash), its messages in the order the person saw them, at their
own times. Every message keeps the source's ids in ``metadata[kind]`` (``conversation``,
``message``); the first also the conversation's ``title``, which the import's summary lists too.
What is not imported is counted per reason over the whole export, in one warning: an export holds
thousands of conversations, and a line per conversation would bury the few that matter.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engram import jsondoc
from engram.history.keys import conversation_key, usable_part
from engram.importers.base import HistoryEntry, Plan, fail, timestamp, wrong_type

Documents = Sequence[tuple[str, str]]
"""The export's files of conversations as ``(file name, text)``: its one ``conversations.json``,
or the shards a larger ChatGPT export splits it into (``conversations-000.json``, ...), in order.
A name of ``""`` is a document given alone (its text), whose places need no file name."""


def conversations(text: str, shape: str, name: str = "") -> list[Any]:
    """The document's JSON array of conversations; raises ``SnapshotError`` naming the line of
    malformed JSON (in the file ``name``, when given), or the document when it is no array."""
    try:
        data = jsondoc.loads(text)
    except json.JSONDecodeError as exc:
        raise fail(f"{name} line {exc.lineno}".strip(), f"malformed JSON: {exc.msg} (column {exc.colno})",
                   shape) from None
    if not isinstance(data, list):
        raise wrong_type(name or "document", data, shape)
    return data


def title_of(value: Any, where: str) -> str:
    """A conversation's title as the export gives it (none is ``""``)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise wrong_type(where, value, "the conversation's title as text")
    return value


@dataclass
class Conversations:
    """The conversations of one export being read into ``plan``: ``start`` one, ``add`` its shown
    messages in order, ``skip`` what is left out (with the reason, counted), ``finish`` the export."""

    plan: Plan
    kind: str
    left_out: Counter[str] = field(default_factory=Counter)
    seen: dict[str, tuple[str, Mapping[str, Any]]] = field(default_factory=dict)  # id -> (where, object)
    count: int = 0
    empty: int = 0
    # The conversation being read.
    key: str = ""
    conversation_id: str = ""
    title: str = ""
    started: float | None = None
    last: float | None = None
    entries: list[HistoryEntry] = field(default_factory=list)

    def start(self, item: Mapping[str, Any], where: str, conversation_id: str, id_field: str, title: str,
              started: float | None) -> bool:
        """Begin a conversation; False when it repeats an earlier one of the export exactly (read
        once). The same id with other content is refused: both would land in one conversation."""
        earlier = self.seen.get(conversation_id)
        if earlier is not None:
            if earlier[1] == item:
                return False
            raise fail(f"{where}.{id_field}", f"{jsondoc.shown(conversation_id)} repeats {earlier[0]}, which differs",
                       "an id of its own, or an identical copy of that conversation")
        self.seen[conversation_id] = (where, item)
        self.count += 1
        self.key = conversation_key(self.kind, usable_part(conversation_id))
        self.conversation_id, self.title, self.started, self.last = conversation_id, title, started, None
        self.entries = []
        return True

    def time(self, value: Any, where: str) -> float | None:
        """A message's time; one the export leaves out is the previous message's (else the
        conversation's start), so the order the person saw is kept. None when neither is known
        (``add`` refuses such a message; a skipped one needs no time)."""
        at = timestamp(value, where)
        if at is None:
            at = self.last if self.last is not None else self.started
        else:
            self.last = at
        return at

    def add(self, where: str, role: str, content: str, at: float | None, time_field: str,
            provenance: Mapping[str, Any]) -> None:
        """One shown message, byte for byte; the first of the conversation carries its title."""
        if at is None:
            raise fail(f"{where}.{time_field}", "is missing, and so is the conversation's own time",
                       "the message's time (seconds since the epoch, or ISO 8601)")
        own: dict[str, Any] = {"conversation": self.conversation_id, **provenance}
        if not self.entries and self.title:
            own["title"] = self.title
        self.entries.append(HistoryEntry(where, self.key, role, content, at, {self.kind: own},
                                         fields={"created_at": f".{time_field}"}))

    def skip(self, reason: str, n: int = 1) -> None:
        if n:
            self.left_out[reason] += n

    def end(self) -> None:
        """The conversation read: its messages join the plan, its title the listed conversations."""
        if not self.entries:
            self.empty += 1
            return
        self.plan.history += self.entries
        self.plan.titles[self.key] = self.title

    def finish(self, notes: Mapping[str, str]) -> None:
        """One warning for the whole export: what was left out, per reason (``notes`` says why)."""
        if self.empty:
            self.left_out["conversations with no message to import"] += self.empty
        if not self.left_out:
            return
        parts = [f"{reason} ({n})" + (f": {notes[reason]}" if reason in notes else "")
                 for reason, n in self.left_out.most_common()]
        read = f"{self.count} conversation{'' if self.count == 1 else 's'} read"
        self.plan.warnings.append(f"{read}; not imported: " + "; ".join(parts))


def lists_of(data: Any, key: str, kind: type) -> bool:
    """Whether ``data`` is a non-empty list whose first conversations each hold ``key`` as a
    ``kind`` (ChatGPT's ``mapping``, Claude.ai's ``chat_messages``): whose export it is."""
    return (isinstance(data, list) and bool(data)
            and all(isinstance(c, Mapping) and isinstance(c.get(key), kind) for c in data[:5]))


def read_export(documents: Documents, kind: str, shape: str, notes: Mapping[str, str],
                one: Callable[[Conversations, Any, str], None]) -> Plan:
    """The plan of one service's conversations, from every document of the export in order:
    ``one`` reads each conversation (at its place ``[i]``, after its file's name when the export
    has several files: ``conversations-001.json [3]``) into the shared ``Conversations``, so a
    conversation repeated across files is read once; then the counts of what was left out become
    warnings, each with its ``notes``. Raises ``SnapshotError`` (nothing imported)."""
    plan = Plan(kind, kind)
    found = Conversations(plan, kind)
    for name, text in documents:
        name = name if len(documents) > 1 else ""  # one file: its places alone, as ever
        for i, item in enumerate(conversations(text, shape, name)):
            one(found, item, f"{name} [{i}]" if name else f"[{i}]")
    found.finish(notes)
    return plan
