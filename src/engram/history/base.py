"""The HistoryStore contract: one narrow Protocol every history backend implements.

A store keeps, per conversation key (``history.keys``), an ordered list of ``Message`` records
and at most one summary. It is dumb on purpose: validation of tool-call pairs, trimming to
``max_history_len`` and semantic indexing live once in ``history.service``. Every method is
safe to call from several threads, and from several processes on the same storage.
``engram.testing.history_contract`` pins the behaviour; a backend is done when it passes.

A store acts for one agent (``agent``): it reads, changes and deletes only that agent's
conversations, so two agents may use the same conversation key without meeting. ``for_agent``
hands out another agent's store on the same storage (connection, pool or file).

Positions are counted from the oldest message (0-based), so ``discard(key, start, stop)`` keeps
meaning the same messages while other writers append at the end, but not while another writer
removes some (a trim, a compaction, a pop): what a caller decided from a read would then land on
other messages. So every removal engram makes is one atomic step of the store, checked against
what the caller read: ``pop_newest`` removes and returns the newest message, and
``discard_if_unchanged`` removes a range only if the conversation still begins with the messages
the caller read (messages appended since do not matter), writing the compaction summary in the
same step; otherwise it removes nothing and the caller reads again and decides again.

A plug-in store written before these two methods keeps working: ``pop_newest`` and
``discard_if_unchanged`` below (the functions every caller goes through) fall back to its
``count``/``get_all``/``discard`` under a lock of this process, with a warning once per class,
since another process can still slip in between; the contract suite fails until it implements
them.

``append_many`` is all or nothing: the batch is checked whole first, then written at once (one
transaction, one file write or rename), so a bad message or a failed write leaves none of it.
A store checks what it must to hold a message (a ``Message`` record, text it can encode); the
message's own rules (roles, tool calls, sizes) are ``model.make_message``'s, applied by ``History``.
"""

from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from engram import jsondoc
from engram.errors import ValidationError
from engram.model import MAX_MESSAGE_CHARS, Message, make_scope, usable_text
from engram.text import counted

DEFAULT_AGENT = "default"

log = logging.getLogger("engram.history")


@runtime_checkable
class HistoryStore(Protocol):
    name: str
    agent: str

    def for_agent(self, agent: str) -> HistoryStore:
        """The store of ``agent``'s conversations on the same storage; closing it leaves the
        storage open for this one. Raises ``ValidationError`` for a bad agent name."""
        ...

    def append(self, key: str, message: Message) -> None:
        """Add ``message`` at the end of the conversation. Raises ``ValidationError`` for a bad
        key or a message the store cannot hold (``check_message``), ``StorageError`` when the
        write failed (then nothing was written)."""
        ...

    def append_many(self, key: str, messages: Sequence[Message]) -> None:
        """Add ``messages`` at the end of the conversation, in order, all or none: every message
        is checked before anything is written, and the write is one transaction (or one file
        write), so readers see the whole batch or none of it. Raises ``ValidationError`` naming
        the message (``messages[2].content``; nothing is written) and ``StorageError`` (nothing
        was written)."""
        ...

    def get_recent(self, key: str, n: int) -> list[Message]:
        """The ``n`` most recent messages, oldest first (fewer when there are fewer; [] for 0).
        Raises ``ValidationError`` for a negative ``n`` or a bad key."""
        ...

    def get_all(self, key: str) -> list[Message]:
        """Every message of the conversation, oldest first."""
        ...

    def count(self, key: str) -> int:
        """How many messages the conversation holds (sclaw's ``Len``)."""
        ...

    def set_summary(self, key: str, summary: str) -> None:
        """Store the compaction summary, replacing any previous one; ``""`` removes it, leaving no
        entry (``conversations`` lists no conversation for an empty summary)."""
        ...

    def get_summary(self, key: str) -> str:
        """The stored summary, or ``""`` when there is none."""
        ...

    def discard(self, key: str, start: int, stop: int) -> int:
        """Remove the messages at positions ``start``..``stop - 1`` (oldest is 0); returns how many.
        Blind to removals by other writers since the caller counted: engram itself removes with
        ``discard_if_unchanged`` and ``pop_newest``."""
        ...

    def pop_newest(self, key: str) -> Message | None:
        """Remove the newest message and return it (None when there is none), in one step (a
        transaction, or under the store's lock), so two pops never return the same message nor
        remove one they do not return. Raises ``ValidationError`` for a bad key, ``StorageError``."""
        return _pop_by_position(self, key)

    def discard_if_unchanged(self, key: str, read: Sequence[Message], start: int, stop: int, *,
                             summary: str | None = None, summary_read: str | None = None) -> bool:
        """Remove ``read[start:stop]`` if the conversation still begins with ``read`` (its oldest
        messages as the caller read them; messages appended after them do not matter) and, when
        ``summary_read`` is given, its summary is still that text (``""``: none), and then set
        ``summary`` when given, all in one step: returns True. When a message of ``read`` was
        removed or is no longer where it was read (another trim, compaction or pop), or the
        summary was set since (by hand: ``set_summary``), removes nothing, writes no summary and
        returns False: the caller reads again and decides again. Raises ``ValidationError`` for
        a bad key, ``read``, ``start``/``stop`` (``stop`` at most ``len(read)``), ``summary`` or
        ``summary_read``, ``StorageError``."""
        return _discard_by_position(self, key, read, start, stop, summary, summary_read)

    def purge(self, key: str) -> None:
        """Remove every message and the summary of the conversation."""
        ...

    def conversations(self) -> list[str]:
        """Every conversation key that holds messages or a summary."""
        ...

    def close(self) -> None: ...


# --- removals, and their fallback for plug-in stores without them -----------------------------------
_FALLBACK_LOCK = threading.RLock()
_WARNED: set[str] = set()


def pop_newest(store: HistoryStore, key: str) -> Message | None:
    """``store.pop_newest(key)``, or for a plug-in store without it the same built on its
    ``count``/``get_recent``/``discard`` (atomic only within this process; warned once)."""
    method = getattr(store, "pop_newest", None)
    return method(key) if method is not None else _pop_by_position(store, key)


def discard_if_unchanged(store: HistoryStore, key: str, read: Sequence[Message], start: int, stop: int, *,
                         summary: str | None = None, summary_read: str | None = None) -> bool:
    """``store.discard_if_unchanged(...)``, or for a plug-in store without it the same built on
    its ``get_all``/``set_summary``/``discard`` (atomic only within this process; warned once).
    A plug-in store whose ``discard_if_unchanged`` predates ``summary_read`` gets the summary
    compared just before (a summary set in between is still overwritten; warned once)."""
    method = getattr(store, "discard_if_unchanged", None)
    if method is None:
        return _discard_by_position(store, key, read, start, stop, summary, summary_read)
    if summary_read is None:
        return bool(method(key, read, start, stop, summary=summary))
    if _takes_summary_read(method):
        return bool(method(key, read, start, stop, summary=summary, summary_read=check_summary_read(summary_read)))
    _warn_old(store)
    if store.get_summary(key) != check_summary_read(summary_read):
        return False
    return bool(method(key, read, start, stop, summary=summary))


def _takes_summary_read(method: object) -> bool:
    try:
        return "summary_read" in inspect.signature(method).parameters  # type: ignore[arg-type]
    except (TypeError, ValueError):  # no signature to read (a builtin): assume the older one
        return False


def _warn_old(store: object) -> None:
    name = f"{type(store).__qualname__}.summary_read"
    if name not in _WARNED:
        _WARNED.add(name)
        log.warning("history store %s: discard_if_unchanged takes no summary_read, so a summary set by hand while a "
                    "compaction runs may be overwritten; add it (engram.history.base.HistoryStore)",
                    type(store).__qualname__)


def _warn_fallback(store: object) -> None:
    name = type(store).__qualname__
    if name not in _WARNED:
        _WARNED.add(name)
        log.warning("history store %s has no pop_newest/discard_if_unchanged: removals are atomic only within "
                    "this process (another process may remove other messages than intended); implement them "
                    "(engram.history.base.HistoryStore)", name)


def _pop_by_position(store: HistoryStore, key: str) -> Message | None:
    _warn_fallback(store)
    with _FALLBACK_LOCK:
        total = store.count(key)
        if not total:
            return None
        newest = store.get_recent(key, 1)[0]
        store.discard(key, total - 1, total)
        return newest


def _discard_by_position(store: HistoryStore, key: str, read: Sequence[Message], start: int, stop: int,
                         summary: str | None, summary_read: str | None = None) -> bool:
    read, start, stop = check_read(read, start, stop)
    summary_read = None if summary_read is None else check_summary_read(summary_read)
    _warn_fallback(store)
    with _FALLBACK_LOCK:
        if store.get_all(key)[: len(read)] != read:
            return False
        if summary_read is not None and store.get_summary(key) != summary_read:
            return False
        if summary is not None:
            store.set_summary(key, summary)
        store.discard(key, start, stop)
        return True


def check_agent(agent: str) -> str:
    """Validate an agent name (as ``Scope`` does); raises ``ValidationError``."""
    make_scope(agent, None)
    return agent


def check_message(message: Message, where: str = "message") -> Message:
    """``message`` if a store can hold it: a ``Message`` whose text every backend can encode
    (``usable_text``: no NUL, no lone surrogate). Raises ``ValidationError`` naming ``where``
    (``content``, ``tool_call_id``, or ``where`` itself for something that is not a Message)."""
    if not isinstance(message, Message):
        raise ValidationError(where, f"got {type(message).__name__}", "a Message (engram.model.make_message builds one)")
    prefix = "" if where == "message" else f"{where}."
    usable_text(f"{prefix}content", message.content)
    if message.tool_call_id is not None:
        usable_text(f"{prefix}tool_call_id", message.tool_call_id)
    return message


def check_messages(messages: Sequence[Message]) -> list[Message]:
    """``append_many``'s batch, every message checked (``check_message``) before any is written;
    raises ``ValidationError`` naming the first bad one (``messages[2]``, ``messages[2].content``)."""
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise ValidationError("messages", f"got {type(messages).__name__}", "a list of Message records")
    return [check_message(message, f"messages[{i}]") for i, message in enumerate(messages)]


# The largest integer SQLite and PostgreSQL take as a parameter (a signed 64-bit one): a count or
# position past it is past every conversation's end, so it is read as this (all of them) rather
# than handed to the driver, which raises OverflowError on it.
MAX_POSITION = 2**63 - 1


def check_recent(n: int) -> int:
    """Validate ``get_recent``'s ``n`` (any count past a 64-bit integer read as one, i.e. every
    message); raises ``ValidationError``."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValidationError("n", f"{jsondoc.shown(n)} is not a message count", "an integer >= 0")
    return min(n, MAX_POSITION)


def check_range(start: int, stop: int) -> tuple[int, int]:
    """Validate ``discard``'s positions; raises ``ValidationError``."""
    for name, value in (("start", start), ("stop", stop)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValidationError(name, f"{jsondoc.shown(value)} is not a position", "an integer >= 0")
    if stop < start:
        raise ValidationError("stop", f"{stop} is before start {start}", "stop >= start")
    return min(start, MAX_POSITION), min(stop, MAX_POSITION)


def check_read(read: Sequence[Message], start: int, stop: int) -> tuple[list[Message], int, int]:
    """Validate ``discard_if_unchanged``'s ``read`` and range (``stop`` at most ``len(read)``);
    raises ``ValidationError``."""
    if isinstance(read, str | bytes) or not isinstance(read, Sequence):
        raise ValidationError("read", f"got {type(read).__name__}", "the list of messages the caller read")
    for i, message in enumerate(read):
        if not isinstance(message, Message):
            raise ValidationError(f"read[{i}]", f"got {type(message).__name__}", "a Message")
    start, stop = check_range(start, stop)
    if stop > len(read):
        raise ValidationError("stop", f"{stop} is past the {counted(len(read), 'message')} read", f"at most {len(read)}")
    return list(read), start, stop


def check_summary(summary: str) -> str:
    """Validate a summary to be stored: text every backend can hold (``usable_text``: no NUL, no
    lone surrogate, refused alike on SQLite, PostgreSQL and JSONL rather than stored by one and
    refused, or failing to encode, by another) within the message limit; raises ``ValidationError``."""
    return usable_text("summary", check_summary_read(summary, "summary"))


def check_summary_read(summary: str, field: str = "summary_read") -> str:
    """Validate the summary a caller read (compared, never written: one an earlier version stored
    with a NUL still matches); raises ``ValidationError`` naming ``field``."""
    if not isinstance(summary, str):
        raise ValidationError(field, f"got {type(summary).__name__}", "text")
    if len(summary) > MAX_MESSAGE_CHARS:
        raise ValidationError(field, f"is {len(summary)} characters", f"up to {MAX_MESSAGE_CHARS}")
    return summary
