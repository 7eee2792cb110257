"""History compaction: PtrClaw's algorithm with sclaw's summary and emergency path.

Trigger: the history has more than ``min_messages`` (12) messages AND either more than
``max_history_messages`` (50) or an estimated token count past ``token_threshold`` (75%) of
``token_limit`` (128,000). Then, in this order:

1. knowledge extraction runs over the messages about to go (a hook the caller passes), so
   nothing is discarded before what it taught has been kept; if it fails, nothing is discarded;
2. a leading system prompt is kept as it is;
3. the middle is summarised: by the ``Summarizer`` when one is given (it sees the previous
   summary too), else by PtrClaw's count summary; the summary, screened by the caller's
   ``screen`` (``History.compact``'s: the PII policy), replaces the previous one and comes back
   first on the next assembly;
4. the last ``keep_recent`` (10) messages stay; a cut that lands on a tool result walks back
   so a tool call is never separated from its results;
5. conversation memories older than ``conversation_max_age_s`` are purged (a hook; the engine's
   forgets only the agent's own, never global ones nor another agent's).

Concurrency: the summary and the discard are one step of the store
(``discard_if_unchanged``), taken only if the conversation still begins with the messages the
compaction read and its summary is still the one it read; when another compaction, a trim or a
pop removed messages in between, or a summary was set by hand (``set_summary``), nothing is
written and the compaction reads again and decides again (up to ``ATTEMPTS`` times). A summary
set by hand is then the previous summary the new one builds on, as if it had been set just
before the compaction began: the count summary keeps its text and adds the counts, the LLM
summariser is given it as the summary so far. What a try costs is not paid twice: the
extraction hook sees only the messages no earlier try of this compaction extracted (none again
when the retry discards what was already extracted, so facts are stored once), and the
summariser is not asked again for the same messages and previous summary.

Emergency path: past ``emergency_ratio`` x ``token_limit`` the window is critically exceeded;
only ``emergency_retain`` messages stay (the cut walks forward past tool results instead, so
the bound holds), with a count summary (no LLM call on an overflowing context).
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from engram.errors import EngramError
from engram.history.base import HistoryStore, discard_if_unchanged
from engram.history.settings import CompactionSettings
from engram.model import Message, Role
from engram.tokens import estimate_messages

log = logging.getLogger("engram.history.compaction")

MAX_SUMMARY_CHARS = 8000
# How many times a removal decided on a read is tried again after the conversation changed under it.
ATTEMPTS = 5
_COUNTS = re.compile(
    r"\[Conversation history compacted\. Previous discussion covered: (\d+) user messages, "
    r"(\d+) assistant responses, (\d+) tool calls\]"
)


class Summarizer(Protocol):
    """Turns messages into a short summary (an LLM summariser implements this)."""

    def summarize(self, messages: Sequence[Message]) -> str: ...


Extractor = Callable[[Sequence[Message]], object]
Purger = Callable[[float], int]


@dataclass(frozen=True, slots=True)
class CompactionResult:
    compacted: bool
    emergency: bool = False
    kept: tuple[Message, ...] = ()
    discarded: tuple[Message, ...] = ()
    summary: str = ""
    summarizer: str = ""  # "llm", "count" or "" when nothing was compacted
    tokens_before: int = 0
    purged: int = 0
    notes: tuple[str, ...] = ()


def is_critical(messages: Sequence[Message], settings: CompactionSettings, *, reported_tokens: int | None = None) -> bool:
    """Whether the context window is critically exceeded (the emergency path's trigger)."""
    tokens = estimate_messages(messages, reported=reported_tokens)
    return len(messages) > settings.emergency_retain and tokens > settings.emergency_ratio * settings.token_limit


def should_compact(
    messages: Sequence[Message], settings: CompactionSettings, *, reported_tokens: int | None = None
) -> bool:
    """PtrClaw's trigger: more than ``min_messages`` and past the message or token limit."""
    if len(messages) <= settings.min_messages:
        return is_critical(messages, settings, reported_tokens=reported_tokens)
    if len(messages) > settings.max_history_messages:
        return True
    return estimate_messages(messages, reported=reported_tokens) > settings.token_threshold * settings.token_limit


def _below_limits(count: int, tokens: int, settings: CompactionSettings) -> str:
    """Why ``should_compact`` said no: each limit not reached, named as in the configuration."""
    unmet = []
    if count <= settings.min_messages:
        unmet.append(f"not more than history.compaction.min_messages = {settings.min_messages}")
    limit = settings.token_threshold * settings.token_limit
    if count <= settings.max_history_messages and tokens <= limit:
        unmet.append(f"not more than history.compaction.max_history_messages = {settings.max_history_messages}, "
                     f"nor past history.compaction.token_threshold x history.compaction.token_limit = "
                     f"{settings.token_threshold:g} x {settings.token_limit} = {limit:g} tokens")
    return f"{count} message{'s' * (count != 1)} and ~{tokens} tokens, {'; '.join(unmet)}; --force compacts anyway"


def _emergency_note(tokens: int, settings: CompactionSettings) -> str:
    return (f"emergency path: ~{tokens} tokens, past history.compaction.emergency_ratio x history.compaction.token_limit"
            f" = {settings.emergency_ratio:g} x {settings.token_limit}: kept only the last "
            f"history.compaction.emergency_retain = {settings.emergency_retain} messages, with a count summary "
            "(no LLM call)")


def cut_point(messages: Sequence[Message], keep: int, *, head: int = 0, forward: bool = False) -> int:
    """Index of the first message kept when keeping the last ``keep`` after ``head`` fixed ones.

    A cut on a tool result moves back to its call (or, ``forward``, past the results) so the
    pair is never split. Returns ``head`` when nothing can be discarded.
    """
    cut = max(head, len(messages) - keep)
    if forward:
        while cut < len(messages) and messages[cut].role is Role.TOOL:
            cut += 1
        return cut
    while head < cut < len(messages) and messages[cut].role is Role.TOOL:
        cut -= 1
    return cut


def count_summary(discarded: Sequence[Message], previous: str = "") -> str:
    """PtrClaw's summary of what went, adding to the counts of a previous count summary."""
    users = sum(m.role is Role.USER for m in discarded)
    answers = sum(m.role is Role.ASSISTANT for m in discarded)
    calls = sum(len(m.tool_calls) for m in discarded)
    rest = previous
    match = _COUNTS.search(previous)
    if match:
        users, answers, calls = users + int(match[1]), answers + int(match[2]), calls + int(match[3])
        rest = (previous[: match.start()] + previous[match.end():]).strip()
    line = (f"[Conversation history compacted. Previous discussion covered: {users} user messages, "
            f"{answers} assistant responses, {calls} tool calls]")
    text = f"{rest}\n{line}" if rest else line
    return fitted(text, "count")


def fitted(summary: str, summarizer: str) -> str:
    """``summary`` cut to ``MAX_SUMMARY_CHARS``: a count summary keeps its end, the counts line
    the next compaction adds to (and what it carried over from before goes first); a model's keeps
    its beginning. Applied once made and again once screened (``compact_conversation``): a
    ``[REDACTED:kind]`` marker can be longer than what it replaced, and the summary is engram's own
    text, so it is cut to fit, as a period summary is cut to ``max_content_chars``, not refused.
    For the same reason a character no store can hold (NUL, a lone surrogate: a model's answer can
    carry either as a JSON escape), which a summary set by hand is refused for, is left out."""
    summary = _UNSTORABLE.sub("", summary)
    return summary[-MAX_SUMMARY_CHARS:] if summarizer == "count" else summary[:MAX_SUMMARY_CHARS]


# What ``usable_text`` refuses: NUL, and a surrogate (in a str, one is always alone: a pair decodes
# to the one character it encodes).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def compact_messages(
    messages: Sequence[Message],
    settings: CompactionSettings,
    *,
    previous_summary: str = "",
    summarizer: Summarizer | None = None,
    extract: Extractor | None = None,
    reported_tokens: int | None = None,
    force: bool = False,
) -> CompactionResult:
    """Decide and compute a compaction of ``messages`` (see the module docstring); stores nothing.

    ``force`` compacts even below the limits (still keeping ``keep_recent``). Raises only what
    ``extract`` or ``summarizer`` raise outside engram's error tree.
    """
    tokens = estimate_messages(messages, reported=reported_tokens)
    emergency = is_critical(messages, settings, reported_tokens=reported_tokens)
    if not (emergency or force or should_compact(messages, settings, reported_tokens=reported_tokens)):
        return CompactionResult(False, kept=tuple(messages), tokens_before=tokens,
                                notes=(_below_limits(len(messages), tokens, settings),))
    head = 1 if messages and messages[0].role is Role.SYSTEM else 0
    if emergency:
        cut = cut_point(messages, settings.emergency_retain, head=head, forward=True)
    else:
        cut = cut_point(messages, settings.keep_recent, head=head)
    if cut <= head:
        count = len(messages) - head
        why = (f"only {count} message{'s' * (count != 1)}, the last {settings.keep_recent} are always kept"
               if len(messages) - head <= settings.keep_recent
               else "nothing can be discarded without splitting a tool call from its result")
        return CompactionResult(False, kept=tuple(messages), tokens_before=tokens, notes=(why,))
    discarded, kept = tuple(messages[head:cut]), (*messages[:head], *messages[cut:])
    notes = [_emergency_note(tokens, settings)] if emergency else []
    if extract is not None:
        try:
            extract(discarded)
        except EngramError as exc:
            if not emergency:
                log.warning("knowledge extraction failed (%s); history kept uncompacted", exc)
                return CompactionResult(False, kept=tuple(messages), tokens_before=tokens,
                                        notes=(f"extraction failed, nothing discarded: {exc}",))
            notes.append(f"extraction failed during an emergency compaction: {exc}")
    summary, used = "", "count"
    if summarizer is not None and not emergency:
        context = [Message(Role.SYSTEM, f"Summary so far:\n{previous_summary}")] if previous_summary else []
        try:
            summary = fitted(summarizer.summarize([*context, *discarded]).strip(), "llm")
            used = "llm"
        except EngramError as exc:
            notes.append(f"summariser failed ({exc}); used the count summary")
    if not summary:
        summary, used = count_summary(discarded, previous_summary), "count"
    return CompactionResult(True, emergency, tuple(kept), discarded, summary, used, tokens, 0, tuple(notes))


def compact_conversation(
    store: HistoryStore,
    key: str,
    settings: CompactionSettings,
    *,
    summarizer: Summarizer | None = None,
    extract: Extractor | None = None,
    purge: Purger | None = None,
    reported_tokens: int | None = None,
    force: bool = False,
    screen: Callable[[str], str] | None = None,
) -> CompactionResult:
    """Compact a stored conversation: the summary and the discard in one step of the store (only
    if the conversation is still as read; else read again), then the memory purge.

    ``screen`` turns the summary into the text stored (and answered): ``History.compact`` passes
    its PII policy, so whichever summariser made it (the model, or the count summary, which copies
    the previous summary's text: one stored before ``redact`` was set) it is written only as screened.

    Raises ``StorageError`` from the store and ``ValidationError`` for a bad key.
    """
    once = _Once(summarizer, extract)
    for _ in range(ATTEMPTS):
        messages = store.get_all(key)
        previous = store.get_summary(key)
        result = compact_messages(
            messages, settings, previous_summary=previous, summarizer=once if summarizer is not None else None,
            extract=once.extract if extract is not None else None, reported_tokens=reported_tokens, force=force,
        )
        if not result.compacted:
            return result
        if screen is not None:
            result = dataclasses.replace(result, summary=fitted(screen(result.summary), result.summarizer))
        head = 1 if messages and messages[0].role is Role.SYSTEM else 0
        if discard_if_unchanged(store, key, messages, head, head + len(result.discarded), summary=result.summary,
                                summary_read=previous):
            break
        log.info("conversation %s changed while it was compacted; reading it again", key)
    else:
        return CompactionResult(False, kept=tuple(messages), tokens_before=result.tokens_before, notes=(
            f"the conversation changed during each of {ATTEMPTS} attempts (other compactions, trims or pops); "
            "nothing was discarded",))
    purged = 0
    if purge is not None and settings.conversation_max_age_s > 0:
        purged = purge(settings.conversation_max_age_s)
    return CompactionResult(result.compacted, result.emergency, result.kept, result.discarded, result.summary,
                            result.summarizer, result.tokens_before, purged, result.notes)


class _Once:
    """One compaction's extraction and summariser across its tries: a retry after losing a race
    (``discard_if_unchanged`` found the conversation changed) must not pay a provider again for
    the same work, nor store the same facts twice. ``extract`` is given only the messages no
    earlier try extracted (after it succeeded for them); ``summarize`` answers the same messages
    (previous summary included) with the summary it made for them."""

    def __init__(self, summarizer: Summarizer | None, extract: Extractor | None) -> None:
        self._summarizer, self._extract = summarizer, extract
        self._extracted: list[Message] = []  # (a list: a Message's metadata is a dict, so not hashable)
        self._summarized: tuple[list[Message], str] | None = None

    def extract(self, discarded: Sequence[Message]) -> object:
        new = [m for m in discarded if m not in self._extracted]
        if not new or self._extract is None:
            return None
        outcome = self._extract(new)
        self._extracted.extend(new)
        return outcome

    def summarize(self, messages: Sequence[Message]) -> str:
        if self._summarized is not None and self._summarized[0] == list(messages):
            return self._summarized[1]
        assert self._summarizer is not None
        summary = self._summarizer.summarize(messages)
        self._summarized = (list(messages), summary)
        return summary
