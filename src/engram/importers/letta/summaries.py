"""Letta's conversation summaries, recognised among an agent's messages.

When a conversation outgrows the context window, Letta (and MemGPT before it) moves the oldest
messages out and puts a summary of them in their place, as a message: a ``summary`` message in
Letta's newer message types, or a packed system alert in a user message, the text Letta's
``package_summarize_message`` writes::

    {"type": "system_alert",
     "message": "Note: prior messages (12 of 40 total messages) have been hidden from view due to
                 conversation memory constraints.\\nThe following is a summary of the previous 12
                 messages:\\n <summary>",
     "time": "..."}

(``package_summarize_message_no_counts`` writes it without the counts). Such a message is the
conversation's summary, which engram keeps beside the conversation (``engram history summary``),
not a message of it. Each summary covers the one before it (Letta summarises what leaves the
context, an earlier summary included), so the latest stands for all. The alert Letta writes when
it hides messages without summarising them (``... are stored in Recall Memory and can be viewed
using functions``) holds no summary: it stays a system alert.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from engram import jsondoc
from engram.history.keys import shown_key
from engram.importers.base import HistorySummary, Plan

# What precedes the summary in Letta's packed summary message, with or without the counts.
_PREAMBLE = re.compile(r"The following is a summary of the previous (?:\d+ )?messages:[ \t]*\n?")


@dataclass(frozen=True, slots=True)
class Summary:
    """A summary message of the conversation: its place in the file, its time and its text."""

    where: str
    created_at: float
    text: str


def in_alert(message: object) -> str | None:
    """The summary a packed system alert's ``message`` holds after Letta's preamble; None when the
    alert is not a summary."""
    if not isinstance(message, str):
        return None
    found = _PREAMBLE.search(message)
    if found is None:
        return None
    text = message[found.end():].strip()
    return text or None


def in_summary_message(text: str) -> str | None:
    """The summary a ``summary`` message holds: its text, unpacked when Letta packed it as a system
    alert, after the preamble when there is one. None when nothing is left."""
    said = text
    if text.lstrip().startswith("{"):
        try:
            value = jsondoc.loads(text)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, Mapping) and isinstance(value.get("message"), str):
            said = value["message"]
    return in_alert(said) or (said.strip() or None)


def add_summary(plan: Plan, found: list[Summary], key: str, agent: str | None) -> None:
    """Make the newest of a conversation's summaries (by its time; the later in the file when two
    share one) the summary of its conversation ``key``, and say so."""
    newest = max(reversed(found), key=lambda s: s.created_at)
    plan.summaries.append(HistorySummary(newest.where, key, newest.text, agent=agent))
    shown = shown_key(key)
    older = (f"; the {len(found) - 1} older {'summary is' if len(found) == 2 else 'summaries are'} left out, as "
             "the latest covers them") if len(found) > 1 else ""
    plan.warnings.append(f"{newest.where}: Letta's summary of the messages before it is imported as the summary of "
                         f"{shown} (engram history summary {shown}), not as a message{older}; the messages the file "
                         "holds are imported as they are")
