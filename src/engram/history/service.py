"""``History``: the pipeline around a HistoryStore (sclaw's steps 7b, 8 and 13).

It validates what the store takes as given: roles and fields (``make_message``), and that a
tool result answers a tool call still in the conversation. After each append it trims the
conversation to ``max_history_len`` messages (oldest first, never leaving a tool result without
its call; a JSONL store keeps Clawless's own bound instead, ``trims``), indexes each completed
exchange in the semantic store when there is one, and
assembles what a recreated session restores: the summary first, then the recent messages.
``append_many`` appends a batch all or nothing (validated whole, then one store write); a single
append is a batch of one, so both take the same path (``_add``); ``check_many`` checks a batch by
the same rule (``_checked``) without writing, for a caller that must refuse before writing elsewhere.
Semantic indexing is best effort: a failing embedder is logged, the append has already happened.
A ``History`` acts for its store's agent; ``for_agent`` gives another agent's on the same storage.
Every message and summary is screened by the engine's PII policy (``privacy.pii``) before it is
written, whichever door it came through: redacted first under ``redact``, so neither the store,
its full-text index nor the exchange embedder sees a finding; under ``warn`` the kinds found are
answered by ``append_reported``/``append_many_reported`` and ``set_summary`` (the doors report
them as they report a memory's), and logged by the plain ``append``/``append_many``/``add`` and by
compaction, whose answers have no room for them.
Switched off (``history.enabled = false``, Clawless's ``CONVERSATION_HISTORY_ENABLED=false``),
an append is validated and answered but neither stored nor indexed, as Clawless skips its append
path; what was stored before stays readable. ``enabled`` lets each door say so.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from engram import jsondoc
from engram.errors import EngramError, StorageError, ValidationError
from engram.history.base import HistoryStore, check_message, discard_if_unchanged, pop_newest
from engram.history.compaction import (
    ATTEMPTS,
    CompactionResult,
    Extractor,
    Purger,
    Summarizer,
    compact_conversation,
)
from engram.history.keys import key_or_chat, normal_key, shown_key
from engram.history.recap import pair_exchanges
from engram.history.semantic import ExchangeIndex, SemanticRecall
from engram.history.settings import MAX_RECAP_TOP_K, CompactionSettings
from engram.model import MAX_MESSAGE_CHARS, Appended, Message, Role, make_message, parse_integer, parse_query, sent_at
from engram.privacy import PiiPolicy, check_redacted_length
from engram.text import counted

log = logging.getLogger("engram.history")

SUMMARY_HEADING = "[Conversation summary]"
# What a door says when an append was not stored, in the setting's own words.
HISTORY_OFF = "conversation history is off (history.enabled = false)"
# ... and when memory is turned off with the history left to follow it (``history.disabled``).
MEMORY_OFF = "conversation history is off with memory (backend = disabled; history.backend set to a store keeps it)"
# Why semantic recall finds nothing whatever it is asked: no exchange index (``History.semantic``).
SEMANTIC_OFF = "semantic recall is off (history.semantic = false, or no embedding model: embeddings.provider = none)"
# What a message given to ``append_many`` as a mapping may hold: ``append``'s arguments.
_MESSAGE_FIELDS = ("role", "content", "tool_calls", "tool_call_id", "metadata", "created_at")


def summary_message(summary: str) -> Message:
    """How a stored summary enters the context: a system message ahead of the recent history."""
    return Message(Role.SYSTEM, f"{SUMMARY_HEADING}\n{summary}")


def without_orphans(messages: Sequence[Message]) -> list[Message]:
    """``messages`` minus leading tool results (their call was trimmed away)."""
    start = 0
    while start < len(messages) and messages[start].role is Role.TOOL:
        start += 1
    return list(messages[start:])


def _untimed(item: Message | Mapping[str, Any]) -> bool:
    """Whether ``append_many`` gives ``item`` its time (a mapping without ``created_at``)."""
    return isinstance(item, Mapping) and item.get("created_at") is None


def _distinct_times(batch: list[Message], untimed: set[int] | frozenset[int], before: float | None) -> list[Message]:
    """``batch`` with each ``untimed`` message's time moved, when it is not past the time of the
    message before it (``before``: the last stored), to the least float past that: turns are known
    by their time, and one batch (or a clock that did not move) would give two turns the same."""
    out: list[Message] = []
    for i, message in enumerate(batch):
        if i in untimed and before is not None and message.created_at <= before:
            message = dataclasses.replace(message, created_at=math.nextafter(before, math.inf))
        out.append(message)
        before = message.created_at
    return out



@dataclasses.dataclass(frozen=True, slots=True)
class Screened:
    """Built messages as the history stores them (screened by its PII policy, each within its length
    as redacted) with each one's PII warnings, made by ``History.screen``: a caller that must check a
    batch before appending it (an import, before it writes its memories) screens each message once,
    then checks (``check_many``) and appends (``append_screened``) what was screened."""

    messages: tuple[Message, ...]
    warnings: tuple[tuple[str, ...], ...]


class History:
    def __init__(
        self,
        store: HistoryStore,
        *,
        max_history_len: int = 100,
        compaction: CompactionSettings | None = None,
        semantic: ExchangeIndex | None = None,
        purge: Purger | None = None,
        recap_top_k: int = 3,
        clock: Callable[[], float] = time.time,
        on_close: Callable[[], None] | None = None,
        enabled: bool = True,
        off_reason: str = HISTORY_OFF,
        privacy: PiiPolicy | None = None,
        unread: Callable[[], None] | None = None,
        trims: bool = True,
    ) -> None:
        """``on_close`` runs after the store closes (a history backend opened for this history);
        ``enabled`` False: appends are not stored (see the module doc), ``off_reason`` saying why
        (``HISTORY_OFF``, ``MEMORY_OFF``) for each door to say it; ``privacy`` is the engine's
        PII policy (``engram.root`` passes it), applied to every message and summary written.
        ``unread``: called when a read comes back empty while another system's history lies unread
        in the home (``root.open_history``: Clawless's file), to say so once. ``trims`` False: a
        store that bounds itself (JSONL: Clawless's ``max_entries`` lines per agent, FIFO) is not
        trimmed to ``max_history_len``, which then bounds only what a session restores (sclaw's
        ``GetRecent(key, MaxHistoryLen)``): the trim deleted half of a Clawless file's lines of a
        chat that Clawless keeps."""
        if max_history_len < 2:
            raise ValidationError("max_history_len", f"{max_history_len} is too small", "2 or more")
        self.store = store
        self._closed = False
        self._parent: History | None = None  # set by ``for_agent``: closing that one closes this one's storage
        self.enabled = enabled
        self.off_reason = off_reason
        self.max_history_len = max_history_len
        self.trims = trims
        self.compaction = compaction or CompactionSettings()
        self.semantic = semantic
        self.purge_hook = purge
        self.recap_top_k = recap_top_k
        self.clock = clock
        self.privacy = privacy if privacy is not None else PiiPolicy()
        self.unread = unread
        # Called with the conversation key and its message count when an assistant answer ends a
        # turn (transcript indexing), so a background job sees the conversation as it was then.
        self.turn_hook: Callable[[str, int], None] | None = None
        # Called by ``pop_newest`` with the key and the whole conversation before and after the pop,
        # so a turn indexed as a memory (transcripts) that the pop undid is forgotten.
        self.undo_hook: Callable[[str, list[Message], list[Message]], None] | None = None
        self._on_close: list[Callable[[], None]] = []
        self._after_close: list[Callable[[], None]] = [on_close] if on_close is not None else []
        self._indexed_file: object = None  # the shared file as its exchanges were last indexed (``_catch_up``)

    def _live_store(self) -> HistoryStore:
        """The backend, refused once this history (or the one it was made from) is closed, as the
        engine's reads and writes are: a JSON-lines or in-memory store would go on answering and
        storing as if open, and SQLite would give its raw "closed database" error."""
        if self._is_closed():
            raise StorageError("this conversation history is closed: open a new engram to read or write it")
        return self.store

    def _is_closed(self) -> bool:
        return self._closed or (self._parent is not None and self._parent._is_closed())

    @property
    def agent(self) -> str:
        """The agent whose conversations this history holds."""
        return self.store.agent

    def for_agent(self, agent: str, *, purge: Purger | None = None) -> History:
        """``agent``'s history on the same storage and settings; closing it leaves the storage
        open. ``purge`` is that agent's compaction hook. Raises ``ValidationError``."""
        view = History(self._live_store().for_agent(agent), max_history_len=self.max_history_len, compaction=self.compaction,
                       semantic=None if self.semantic is None else self.semantic.for_agent(agent), purge=purge,
                       recap_top_k=self.recap_top_k, clock=self.clock, enabled=self.enabled, off_reason=self.off_reason,
                       privacy=self.privacy, unread=self.unread, trims=self.trims)
        view._parent = self
        return view

    # --- writing -------------------------------------------------------------------------
    def append(
        self,
        key: str,
        role: str | Role,
        content: str,
        *,
        tool_calls: Any = None,
        tool_call_id: str | None = None,
        metadata: Any = None,
        created_at: float | None = None,
    ) -> Message:
        """Validate and append a message, trim to ``max_history_len``, index a finished exchange.
        With history off the message is validated and returned, not stored (``enabled``). Returns
        the message as stored (PII redacted under ``privacy.pii = "redact"``; a warning is logged
        under ``warn``: ``append_reported`` answers it instead).

        Raises ``ValidationError`` (bad role or field, or a tool result whose call is not in the
        conversation: nothing is written) and ``StorageError``.
        """
        return self._logged(key, self.append_reported(key, role, content, tool_calls=tool_calls, tool_call_id=tool_call_id,
                                                      metadata=metadata, created_at=created_at)).messages[0]

    def append_reported(
        self,
        key: str,
        role: str | Role,
        content: str,
        *,
        tool_calls: Any = None,
        tool_call_id: str | None = None,
        metadata: Any = None,
        created_at: float | None = None,
    ) -> Appended:
        """``append``, answered with what a door reports: the message as stored, whether it was
        stored and the PII warnings (``Appended``). Raises as ``append`` does."""
        key = normal_key(key)
        now = self.clock()
        message = make_message(role, content, tool_calls=tool_calls, tool_call_id=tool_call_id, metadata=metadata,
                               created_at=now if created_at is None else created_at, now=now)
        return self._add(key, [message], lambda i, name: name, untimed={0} if created_at is None else set())

    def add(self, key: str, message: Message) -> Message:
        """Append an already built ``Message`` (see ``append``): a batch of one (``append_many``),
        its fields named without the batch's ``messages[0].``."""
        key = normal_key(key)
        if self.enabled:
            check_message(message)
        # Its time read as append reads one given (``model.sent_at``): a built Message is checked by no constructor.
        sent = sent_at(message.created_at, self.clock())
        if sent != message.created_at:
            message = dataclasses.replace(message, created_at=message.created_at if sent is None else sent)
        return self._logged(key, self._add(key, [message], lambda i, name: name)).messages[0]

    def append_many(self, key: str, messages: Sequence[Message | Mapping[str, Any]], *,
                    names: Sequence[str] | None = None) -> list[Message]:
        """Validate every message, then append them all in order in one write (one transaction):
        a bad message or a failed write leaves none of them stored. Each is a ``Message`` or a
        mapping of ``append``'s arguments (``role``, ``content``, and optionally ``tool_calls``,
        ``tool_call_id``, ``metadata``, ``created_at``, which defaults to now); a tool result may
        answer a call made earlier in the batch. Trimming, semantic indexing and the turn hook
        run once for the batch, as ``append`` runs them for one message. With history off the
        messages are validated and returned, not stored. Returns the messages as stored.
        ``names`` (one per message) is how errors name each message, for a caller whose messages
        have places of their own (an import's ``chats[3].messages[7]``); by default ``messages[i]``.

        Raises ``ValidationError`` naming the message and field (``messages[2].content``; nothing
        is written), or ``messages`` for an empty list, and ``StorageError`` (nothing is written).
        PII is screened as ``append`` says.
        """
        return list(self._logged(key, self.append_many_reported(key, messages, names=names)).messages)

    def append_many_reported(self, key: str, messages: Sequence[Message | Mapping[str, Any]], *,
                             names: Sequence[str] | None = None) -> Appended:
        """``append_many``, answered with what a door reports (``Appended``); each PII warning
        begins with the name of the message it is about (``messages[2]: ...``). Raises as
        ``append_many`` does."""
        key = normal_key(key)
        if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Sequence):
            raise ValidationError("messages", f"got {type(messages).__name__}", "a list of messages")
        if not messages:  # refused here, for every door alike: "appended 0 messages" was an answer to nothing
            raise ValidationError("messages", "the list is empty", "a list of at least 1 message")
        if names is None:
            names = [f"messages[{i}]" for i in range(len(messages))]
        elif len(names) != len(messages):
            raise ValidationError("names", f"{counted(len(names), 'name')} for {counted(len(messages), 'message')}",
                                  "one name per message")
        now = self.clock()
        batch = [self._built(where, item, now) for where, item in zip(names, messages, strict=True)]
        untimed = {i for i, item in enumerate(messages) if _untimed(item)}
        return self._add(key, batch, lambda i, field: f"{names[i]}.{field}", untimed=untimed,
                         where=lambda i: f"{names[i]}: ")

    @staticmethod
    def _built(where: str, item: Message | Mapping[str, Any], now: float) -> Message:
        """``item`` validated as ``make_message`` validates ``append``'s arguments."""
        if isinstance(item, Message):
            fields: dict[str, Any] = {"role": item.role, "content": item.content, "tool_calls": item.tool_calls,
                                      "tool_call_id": item.tool_call_id, "metadata": item.metadata,
                                      "created_at": item.created_at}
        elif isinstance(item, Mapping):
            fields = dict(item)
            unknown = sorted(str(name) for name in fields if name not in _MESSAGE_FIELDS)
            if unknown:
                raise ValidationError(f"{where}.{unknown[0]}", "is not a message field", _MESSAGE_FIELDS)
        else:
            raise ValidationError(where, f"got {type(item).__name__}", "a Message, or a mapping with role and content")
        if fields.get("created_at") is None:
            fields["created_at"] = now
        try:
            # A message without content is an empty text, as append's default (an assistant message that only calls tools).
            return make_message(fields.pop("role", None), fields.pop("content", ""), **fields, now=now)
        except ValidationError as exc:
            raise ValidationError(f"{where}.{exc.field}", exc.problem, exc.allowed) from None

    def _add(self, key: str, batch: list[Message], name: Callable[[int, str], str], *,
             untimed: set[int] | frozenset[int] = frozenset(),
             where: Callable[[int], str] = lambda i: "", screened: Screened | None = None) -> Appended:
        """The one append path (``add`` is a batch of one): pair tool results with their calls,
        give the ``untimed`` messages (given no time: the clock's) times past the one before,
        screen them for PII, write the batch at once, trim, index the exchanges it ended and report
        its ended turns. ``name`` names a field of the batch's i-th message in an error, ``where``
        begins its PII warnings; ``screened``: the batch as ``screen`` made it, not screened again."""
        if not self.enabled or not batch:
            return Appended(tuple(batch), self.enabled)
        recent = self._live_store().get_recent(key, self.max_history_len)
        if untimed:
            batch = _distinct_times(batch, untimed, recent[-1].created_at if recent else None)
        batch, warnings = self._checked(recent, batch, name, where, screened=screened)
        self._live_store().append_many(key, batch)
        window = [*recent, *batch]
        if self.trims and len(window) > self.max_history_len:
            self._trim(key)
        # An assistant answer that calls no tool ends a turn.
        ends = [i for i, m in enumerate(batch) if m.role is Role.ASSISTANT and not m.tool_calls]
        if ends:
            if self.semantic is not None:
                self._index(key, recent, window)
            if self.turn_hook is not None:
                total = self._live_store().count(key)
                for i in ends:
                    # The turn's last message is the count-th (after trimming); a turn trimmed away is skipped.
                    count = total - (len(batch) - 1 - i)
                    if count > 0:
                        self.turn_hook(key, count)
        return Appended(tuple(batch), True, tuple(warnings))

    def screen(self, messages: Sequence[Message], *, names: Sequence[str]) -> Screened:
        """The built ``messages`` as an append would store them, screened once (``Screened``).
        Raises ``ValidationError`` naming the message by ``names`` and the field (two names of a
        tool result's JSON redaction makes one, a text over its limit only as redacted)."""
        return self._screened(list(messages), lambda i, field: f"{names[i]}.{field}")

    def check_many(self, key: str, messages: Sequence[Message] | Screened, *, names: Sequence[str],
                   held: Sequence[Message] | None = None) -> None:
        """Refuse what ``append_many`` would refuse of the built ``messages`` appended to ``key`` now,
        as it would, without writing anything: for a caller that must refuse before writing
        elsewhere (an import, before its memories). ``messages`` screened already (``screen``) are
        not screened again. ``held``: the conversation's messages to check against instead of the
        stored ones (``()`` for an agent whose database is not made yet). Nothing is refused with
        history off (``enabled``), as ``append_many`` stores nothing then.
        Raises ``ValidationError`` naming the message by ``names`` and the field."""
        batch = list(messages.messages if isinstance(messages, Screened) else messages)
        if not self.enabled or not batch:
            return
        recent = self._live_store().get_recent(normal_key(key), self.max_history_len) if held is None else held
        self._checked(recent, batch, lambda i, field: f"{names[i]}.{field}",
                      screened=messages if isinstance(messages, Screened) else None)

    def append_screened(self, key: str, screened: Screened, *, names: Sequence[str]) -> Appended:
        """Append messages ``screen`` screened (and ``check_many`` checked) in one write, as
        ``append_many_reported`` appends built ones, without screening them again: only the tool
        calls their results answer are checked against the conversation as it is now, which may
        have changed since the check. Raises ``ValidationError`` naming the message by ``names``
        (nothing is written), ``StorageError``."""
        key = normal_key(key)
        if not screened.messages:
            raise ValidationError("messages", "the list is empty", "a list of at least 1 message")
        return self._add(key, list(screened.messages), lambda i, field: f"{names[i]}.{field}",
                         where=lambda i: f"{names[i]}: ", screened=screened)

    def _screened(self, batch: list[Message], name: Callable[[int, str], str]) -> Screened:
        """``batch`` screened by the PII policy, each message once: the one place an appended
        message is screened. Raises ``ValidationError`` named by ``name``."""
        out: list[Message] = []
        found: list[tuple[str, ...]] = []
        for i, message in enumerate(batch):
            try:
                stored, warnings = self.privacy.screen_message(message)
                check_redacted_length("content", message.content, stored.content, MAX_MESSAGE_CHARS)
            except ValidationError as exc:
                raise ValidationError(name(i, exc.field), exc.problem, exc.allowed) from None
            out.append(stored)
            found.append(tuple(warnings))
        return Screened(tuple(out), tuple(found))

    def _checked(self, recent: Sequence[Message], batch: list[Message], name: Callable[[int, str], str],
                 where: Callable[[int], str] = lambda i: "", *,
                 screened: Screened | None = None) -> tuple[list[Message], list[str]]:
        """``batch`` as it is to be stored after ``recent`` (the conversation's last messages) and
        its PII warnings, or the ``ValidationError`` the append gives: the one rule ``_add`` writes
        by and ``check_many`` checks by. Screened first (unless ``screened`` is the batch as
        ``screen`` made it): a tool result is paired with its call by the ids as stored (redacted
        the same way), in ``recent`` or earlier in the batch."""
        if screened is None:
            screened = self._screened(batch, name)
        out = list(screened.messages)
        warnings = [where(i) + warning for i, found in enumerate(screened.warnings) for warning in found]
        calls = {call.id for m in recent for call in m.tool_calls}
        for i, message in enumerate(out):
            if message.role is Role.TOOL and message.tool_call_id not in calls:
                raise ValidationError(name(i, "tool_call_id"), f"no tool call {jsondoc.shown(message.tool_call_id)} in this "
                                      "conversation", "the id of a tool call made by an earlier assistant message")
            calls.update(call.id for call in message.tool_calls)
        return out, warnings

    def _logged(self, key: str, appended: Appended) -> Appended:
        """``appended``, its PII warnings logged: for the callers whose answer has no room for them.
        A warning under ``warn`` (PII was stored); only a note under ``redact``, where none was."""
        level = logging.WARNING if self.privacy.mode == "warn" else logging.INFO
        for warning in appended.warnings:
            log.log(level, "conversation %s: %s", shown_key(key), warning)
        return appended

    def _trim(self, key: str) -> None:
        # The cut is decided on what was read and made only if that is still the conversation
        # (another trim, compaction or pop may have removed messages since): else read again.
        for _ in range(ATTEMPTS):
            messages = self._live_store().get_all(key)
            if len(messages) <= self.max_history_len:
                return
            kept = without_orphans(messages[-self.max_history_len:])
            if discard_if_unchanged(self._live_store(), key, messages, 0, len(messages) - len(kept)):
                return
        log.warning("conversation %s changed under each of %d trims; the next append trims it", key, ATTEMPTS)

    def _index(self, key: str, before: Sequence[Message], window: Sequence[Message]) -> None:
        """Index the exchanges the appended messages completed or changed (``window`` is
        ``before`` plus them), in one embedding call."""
        known = set(pair_exchanges(key, before))
        exchanges = [e for e in pair_exchanges(key, window) if e not in known]
        if not exchanges:
            return
        try:
            self.semantic.add(exchanges)  # type: ignore[union-attr]
        except EngramError as exc:
            log.warning("exchange not indexed for semantic recall (%s); history is stored", exc)

    def set_summary(self, key: str, summary: str) -> tuple[str, ...]:
        """Replace the conversation's summary, screened for PII as a message is; returns the PII
        warnings (the kinds found, never the values). A blank summary is refused, as a memory's blank
        content is: stored, it left the conversation with no summary, unsaid (an empty variable in
        ``--set "$SUMMARY"``); ``clear_summary`` removes one. Raises ``ValidationError``, ``StorageError``."""
        screened, warnings = self.checked_summary(summary)
        self._live_store().set_summary(normal_key(key), screened)
        return warnings

    def checked_summary(self, summary: str) -> tuple[str, tuple[str, ...]]:
        """``summary`` as ``set_summary`` stores it (screened for PII) and its PII warnings, or the
        ``ValidationError`` it raises (naming ``summary``), nothing written: ``set_summary``'s rule,
        for a caller that must refuse before writing elsewhere (an import, before its memories)."""
        if isinstance(summary, str) and not summary.strip():
            raise ValidationError("summary", "must not be empty",
                                  "some text; clear_summary (engram history summary KEY --clear) removes a summary")
        screened, warnings = self.privacy.screen(summary, field="summary")
        return check_redacted_length("summary", summary, screened, MAX_MESSAGE_CHARS), tuple(warnings)

    def clear_summary(self, key: str) -> None:
        """Remove the conversation's summary (its messages stay; ``purge`` forgets both). A
        compaction running meanwhile finds the summary it read gone and tries again, as after
        ``set_summary``. Raises ``ValidationError`` (a bad key), ``StorageError``."""
        self._live_store().set_summary(normal_key(key), "")  # "" is the store's "no summary" (HistoryStore)

    def _screened_summary(self, key: str, summary: str) -> str:
        """A compaction's summary as stored; its PII warnings logged (no caller is there to answer).
        Read as plain text even when it is JSON: it is cut to fit afterwards anyway, and two names
        redaction made one would otherwise stop the compaction rather than refuse a caller."""
        summary, warnings = self.privacy.screen(summary, as_json=False)
        self._logged(key, Appended((), True, tuple(f"summary: {warning}" for warning in warnings)))
        return summary

    def pop_newest(self, key: str) -> Message | None:
        """Remove and return the newest message (None when there is none), in one step of the
        store: two pops never return the same message. An undo is not recalled: the exchange it
        ended leaves the semantic index, and the turn it belonged to, when indexed as a memory
        (``transcript:<key>:<n>``), is forgotten (``undo_hook``), unlike the exchanges and turns
        a trim or a compaction discards. Raises ``ValidationError``, ``StorageError``."""
        key = normal_key(key)
        popped = pop_newest(self._live_store(), key)
        if popped is None or (self.semantic is None and self.undo_hook is None):
            return popped
        try:
            # Read once. The undo hook needs the whole conversation, not the window: a turn is
            # numbered (and known) from the conversation's start, as indexing numbers it, and the
            # store may hold more than the window (a smaller ``max_history_len`` than it was
            # written with). The semantic index needs only the window's end, which both hold.
            rest = self._live_store().get_all(key) if self.undo_hook is not None else \
                self._live_store().get_recent(key, self.max_history_len)
        except EngramError as exc:  # the message is already popped: the caller must still get it
            log.warning("popped message's exchange and turn left in memory (%s)", exc)
            return popped
        if self.semantic is not None:
            self._unindex(key, rest, popped)
        if self.undo_hook is not None:
            try:
                self.undo_hook(key, [*rest, popped], rest)
            except EngramError as exc:  # the message is already popped: the caller must still get it
                log.warning("popped message's turn left in memory (%s)", exc)
        return popped

    def _unindex(self, key: str, rest: list[Message], popped: Message) -> None:
        """Forget the exchanges that ``popped``, just removed from the end of the conversation
        (``rest`` is what is left of it, its window at least), completed: those the conversation made with it
        and no longer makes without it. Only exact matches go, so an identical exchange said
        earlier (and trimmed) stays searchable. (An answer whose question was already trimmed,
        or a pop raced by an append, leaves its exchange indexed: what is removed is never more
        than the popped message ended.)"""
        gone = set(pair_exchanges(key, [*rest, popped])) - set(pair_exchanges(key, rest))
        if not gone:
            return
        try:
            self.semantic.forget_exchanges(list(gone))  # type: ignore[union-attr]
        except EngramError as exc:  # the message is already popped: the caller must still get it
            log.warning("popped message's exchange left in the semantic index (%s)", exc)

    def purge(self, key: str) -> int:
        """Forget the conversation: messages, summary and its semantic entries. Returns how many
        messages it held (counted just before, so every door reports the same number)."""
        key = normal_key(key)
        held = self._live_store().count(key)
        self._live_store().purge(key)
        if self.semantic is not None:
            self.semantic.forget_conversation(key)
        return held

    # --- reading -------------------------------------------------------------------------
    def _empty(self, found: Any) -> Any:
        """``found`` as it is; when it is empty and so is this agent's whole history, the ``unread``
        hint said (once) first (a key not used yet beside conversations held needs none)."""
        if not found and self.unread is not None and not self.store.conversations():
            self.unread()
        return found

    def recent(self, key: str, n: int | None = None) -> list[Message]:
        return self._empty(self._live_store().get_recent(normal_key(key), self.max_history_len if n is None else n))

    def all(self, key: str) -> list[Message]:
        return self._empty(self._live_store().get_all(normal_key(key)))

    def count(self, key: str) -> int:
        return self._empty(self._live_store().count(normal_key(key)))

    def summary(self, key: str) -> str:
        return self._live_store().get_summary(normal_key(key))

    def conversations(self) -> list[str]:
        """This agent's conversation keys as users write them (``telegram:42``, ``slack:C1:T7``),
        sorted; each is taken back by every method here."""
        return self._empty(sorted(shown_key(key) for key in self._live_store().conversations()))

    def restore(self, key: str) -> list[Message]:
        """What a recreated session starts with: the last ``max_history_len`` messages, never
        beginning with a tool result whose call is gone."""
        return without_orphans(self.recent(key))

    def assemble(self, key: str, system_prompt: str | None = None) -> list[Message]:
        """The context for the next model call: system prompt, then the summary, then history (sclaw).

        ``system_prompt`` replaces a system prompt stored at the head of the conversation (one
        system prompt, the caller's); without it (or empty) the stored one stays first. Raises
        ``ValidationError`` for a ``system_prompt`` that is not text: it became a system message
        holding a number, which a provider then refused far from the call that made it."""
        if system_prompt is not None and not isinstance(system_prompt, str):
            raise ValidationError("system_prompt", f"got {type(system_prompt).__name__}", "text, or None for the stored one")
        history = self.restore(key)
        stored: list[Message] = []
        while history and history[0].role is Role.SYSTEM:
            stored.append(history.pop(0))
        head = [Message(Role.SYSTEM, system_prompt)] if system_prompt else stored
        summary = self.summary(key)
        if summary:
            head.append(summary_message(summary))
        return [*head, *history]

    def semantic_recall(self, query: str, *, key: str | None = None, top_k: int | None = None) -> SemanticRecall:
        """Exchanges like ``query`` (only ``key``'s when given), oldest first, with a recap block;
        each names its conversation as ``conversations`` lists it (``telegram:42``).
        Without a semantic store (no embedder) the answer is empty. Raises ``ValidationError`` for
        an empty query or one no store can hold (NUL, a lone surrogate), and for a ``top_k`` that is
        not a whole number from 1 to ``MAX_RECAP_TOP_K`` (None: ``recap_top_k``), the range every
        door (CLI, HTTP, MCP) allows, since they call through here."""
        query = parse_query(query, "query")
        top_k = self.recap_top_k if top_k is None else parse_integer(top_k, "top_k", 1, MAX_RECAP_TOP_K)  # with no index too
        if key is not None:
            key_or_chat(key)  # and the chat id or key: a malformed one is refused whether recall is on or off
        self._live_store()  # refused once closed, as every read is (the semantic store closes with it)
        if self.semantic is None:
            return self._recalled(SemanticRecall((), ""))
        self._catch_up()
        return self._recalled(self.semantic.recall(query, conversation=key, top_k=top_k))

    def _catch_up(self) -> None:
        """Index the exchanges another program wrote into a file this history shares (Clawless
        appending to the JSONL file engram reads) since it was last indexed: engram indexes its own
        as it writes them, and the others were indexed only when engram next started. A store that
        cannot tell (no ``file_signature``: a database only engram writes) has nothing to catch up."""
        signature = getattr(self.store, "file_signature", None)
        now = signature() if signature is not None else None
        if now is None or now == self._indexed_file:
            return
        try:
            self.semantic.warm(self.store)  # type: ignore[union-attr]  (only exchanges not indexed are embedded)
        except EngramError as exc:  # recall answers from what is indexed; the next one tries again
            log.warning("exchanges written to the history file by another program not indexed (%s)", exc)
            return
        self._indexed_file = now

    def _recalled(self, recalled: SemanticRecall) -> SemanticRecall:
        self._empty(recalled.hits)
        return recalled

    # --- compaction ----------------------------------------------------------------------
    def compact(
        self,
        key: str,
        *,
        summarizer: Summarizer | None = None,
        extract: Extractor | None = None,
        reported_tokens: int | None = None,
        force: bool = False,
    ) -> CompactionResult:
        """Compact the conversation if it is past its limits (``force``: anyway); see ``history.compaction``.
        ``reported_tokens``, the provider's count of the conversation, is a whole number of at least
        0 (None: estimated); raises ``ValidationError`` naming it otherwise."""
        key = normal_key(key)
        if reported_tokens is not None:  # (text reached a comparison deep inside: a bare TypeError)
            reported_tokens = parse_integer(reported_tokens, "reported_tokens", 0)
        # Whichever summariser wrote it, the summary may hold PII: a model's may quote what it
        # summarised, the count summary copies the previous summary (messages and summaries stored
        # before ``redact`` was set, or kept under ``warn``). Screened as a summary set by hand is.
        return compact_conversation(
            self._live_store(), key, self.compaction, summarizer=summarizer, extract=extract,
            purge=self.purge_hook, reported_tokens=reported_tokens, force=force,
            screen=lambda text: self._screened_summary(key, text),
        )

    def on_close(self, hook: Callable[[], None]) -> None:
        """Run ``hook`` first when the history closes (a background indexer finishing its queue)."""
        self._on_close.append(hook)

    def close(self) -> None:
        if self._closed:
            return
        for hook in self._on_close:  # before the store shuts: they may still read it
            hook()
        self._on_close.clear()
        self._closed = True
        self.store.close()
        if self.semantic is not None:
            self.semantic.close()
        while self._after_close:
            self._after_close.pop()()

    def close_with(self, closer: Callable[[], None]) -> None:
        """Run ``closer`` when this history closes, after its own storage (the backend it was opened on)."""
        self._after_close.insert(0, closer)

