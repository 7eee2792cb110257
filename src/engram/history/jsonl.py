"""The JSONL HistoryStore (Clawless): a human-readable file, one exchange per line, bounded.

Each line is one exchange in Clawless's format,
``{"userMessage", "botResponse", "chatId", "platform", "timestamp"}``, so files written by either
tool read in the other. Clawless's code spells the fields ``user_message``, ``bot_response``,
``chat_id`` (``history/clawless_lines``): such lines are read too, and a file whose newest line is
spelt so gets its new lines spelt so, for Clawless to keep reading the file; a changed line keeps
its own spelling. engram adds ``"messages"`` (the exact messages of the exchange: roles,
tool calls, metadata, exact times) so nothing is lost on the way back; a line without it is read as a
user message and its answer, at its ``timestamp``. ``timestamp`` is written as Clawless writes it,
JavaScript's ``toISOString`` (``2026-02-10T08:15:00.000Z``, always milliseconds); any ISO 8601 time
is read (earlier engram versions wrote microseconds, or none when they were zero). ``platform`` is
the key's channel and ``chatId`` its ``chat`` (and ``:thread``). A user message starts a new
exchange; any other message joins the conversation's latest exchange.

Agents: each line names its agent (``"agent"``); a store acts for one agent and sees only its
lines, and ``for_agent`` gives another agent's store on the same file. A line without an agent
(written before agents were recorded, or by Clawless) belongs to ``unowned_agent``: the default
agent, or the file's own agent for a per-agent file.

Bounds: at most ``max_entries`` lines per agent (FIFO: the agent's oldest lines go first, and an
agent's writes only ever trim its own lines, so one agent's traffic never pushes out another's),
each message capped at ``max_chars_per_entry`` characters, and ``recap`` output capped at
``max_total_chars``.

Side files: summaries are kept in ``summaries_path`` and the lock in ``lock_path``, both engram's
own (Clawless keeps neither). The composition root puts them in engram's home
(``backends.simple.jsonl_side_path``), so nothing of engram's lands beside a file that may be
another program's; a store built with neither keeps them beside the file (``<name>.summaries.json``,
``<name>.lock``).

Safety: every read-modify-write holds an exclusive ``fcntl.flock`` on the lock file (a side
file, because a rename swaps the data file's inode under any lock held on it) plus a thread
lock (Windows has no ``flock``: there, as for the memory folder's sync lock, one process per
file). A new exchange that needs no rotation is appended in one write and fsynced (a failed write
is cut back off); everything else (rotation, a changed exchange, a batch of several exchanges,
discard, purge) writes a temporary file and renames it over the old one, so a crash leaves the
old file or the new one, never a mix (``append_many`` says why a batch is not appended). A line that cannot be read is skipped
with a warning and kept as it is, so the rest of the file stays readable and nothing is dropped.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import os
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engram import jsondoc
from engram.errors import StorageError, ValidationError
from engram.history.base import (
    DEFAULT_AGENT,
    check_agent,
    check_message,
    check_messages,
    check_range,
    check_read,
    check_recent,
    check_summary,
    check_summary_read,
)
from engram.history.clawless_lines import SNAKE, is_snake_case
from engram.history.clawless_lines import field as clawless_field
from engram.history.keys import normal_key, parse_conversation_key
from engram.history.recap import format_recap, pair_exchanges
from engram.model import Message, Role, message_from_dict
from engram.temporal.instants import iso

try:
    import fcntl
except ImportError:  # Windows: no flock; one process per file (the thread lock still holds within it)
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger("engram.history.jsonl")

TRUNCATION_MARK = "…"


@dataclass
class _Line:
    """One line of the file: its text, and the exchange it holds (None when unreadable)."""

    raw: str
    key: str | None = None
    agent: str | None = None
    messages: list[Message] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    snake: bool = False  # spelt as Clawless's code writes it (user_message, ...): written back so


class JsonlHistoryStore:
    name = "jsonl"

    def __init__(
        self,
        path: Path | str,
        *,
        max_entries: int = 100,
        max_chars_per_entry: int = 2000,
        max_total_chars: int = 8000,
        agent: str = DEFAULT_AGENT,
        unowned_agent: str = DEFAULT_AGENT,
        lock_path: Path | str | None = None,
        summaries_path: Path | str | None = None,
    ) -> None:
        for name, value in (("max_entries", max_entries), ("max_chars_per_entry", max_chars_per_entry),
                            ("max_total_chars", max_total_chars)):
            if value < 1:
                raise ValidationError(name, f"{value} is too small", "1 or more")
        self.path = Path(path)
        # Every process writing the file must name the same lock file, or they do not exclude each other.
        self.lock_path = Path(lock_path) if lock_path is not None else self.path.with_name(self.path.name + ".lock")
        self.summaries_path = (Path(summaries_path) if summaries_path is not None
                               else self.path.with_name(self.path.name + ".summaries.json"))
        self.max_entries = max_entries
        self.max_chars_per_entry = max_chars_per_entry
        self.max_total_chars = max_total_chars
        self.agent = check_agent(agent)
        self.unowned_agent = check_agent(unowned_agent)
        self._thread_lock = threading.RLock()
        self._cache: tuple[tuple[int, int, int], list[_Line], bool] | None = None

    def for_agent(self, agent: str) -> JsonlHistoryStore:
        """``agent``'s conversations in the same file (same bounds, same thread lock)."""
        other = JsonlHistoryStore(self.path, max_entries=self.max_entries, max_chars_per_entry=self.max_chars_per_entry,
                                  max_total_chars=self.max_total_chars, agent=agent, unowned_agent=self.unowned_agent,
                                  lock_path=self.lock_path, summaries_path=self.summaries_path)
        other._thread_lock = self._thread_lock
        return other

    def _mine(self, line: _Line, key: str) -> bool:
        return line.key == key and self._owned(line)

    def _owned(self, line: _Line) -> bool:
        """Whether ``line`` is one of this agent's (an unreadable line is nobody's)."""
        return line.key is not None and (line.agent or self.unowned_agent) == self.agent

    # --- locking and file access ---------------------------------------------------------------
    @contextlib.contextmanager
    def _locked(self, *, reading: bool = False) -> Iterator[None]:
        """The file lock around a read-modify-write. A read (``reading``) takes it only when the
        lock file is there: a read never creates the lock file, nor the JSONL file's folder when
        missing (a Clawless folder read by ``engram history list`` is left as it was). Without the lock file no engram writer has
        written yet; one starting meanwhile appends in one write or renames, and a line cut off
        mid-append is skipped when read, as after a crash."""
        with self._thread_lock:
            if fcntl is None or (reading and not self.lock_path.exists()):
                yield
                return
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.lock_path.parent.mkdir(parents=True, exist_ok=True)
                handle = open(self.lock_path, "a+b")  # noqa: SIM115 - held for the whole block
            except OSError as exc:
                raise StorageError(f"cannot open lock file {self.lock_path}: {exc}") from exc
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
                handle.close()

    def file_signature(self) -> tuple[int, int, int] | None:
        """The file as it stands (inode, size, modification time; None when there is none): how a
        history sharing it tells that another program, Clawless, wrote to it since (``History``)."""
        try:
            stat = self.path.stat()
        except OSError:
            return None
        return (stat.st_ino, stat.st_size, stat.st_mtime_ns)

    def _read(self) -> tuple[list[_Line], bool]:
        """Every line of the file, and whether the file ends with a newline (or is empty).

        The parse is reused while the file is unchanged: every write either appends (the size
        grows) or renames a new file in (the inode changes), so (inode, size, mtime) tells.
        """
        try:
            stat = self.path.stat()
            raw = self.path.read_text("utf-8", errors="replace") if (
                self._cache is None or self._cache[0] != (stat.st_ino, stat.st_size, stat.st_mtime_ns)) else None
        except FileNotFoundError:
            return [], True
        except OSError as exc:
            raise StorageError(f"cannot read {self.path}: {exc}") from exc
        if raw is None and self._cache is not None:
            return list(self._cache[1]), self._cache[2]
        signature = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
        lines = []
        # A byte order mark (a Windows editor's "UTF-8 with BOM") is no part of the first line's JSON:
        # left on, that line was unreadable and its exchange skipped.
        for number, text in enumerate(jsondoc.lines(raw.removeprefix("\ufeff")), start=1):
            if not text.strip():
                continue
            line = _parse_line(text)
            if line.key is None:
                log.warning("%s line %d is not a readable history entry; skipped (kept in the file)", self.path, number)
            lines.append(line)
        ends = raw == "" or raw.endswith("\n")
        if len(raw.encode("utf-8", errors="replace")) == stat.st_size:  # not changed while we read it
            self._cache = (signature, list(lines), ends)
        return lines, ends

    def _rewrite(self, lines: list[_Line]) -> None:
        """Replace the file atomically with ``lines``, keeping only this agent's newest
        ``max_entries``; every other line (another agent's, an unreadable one) stays as it is."""
        excess = sum(map(self._owned, lines)) - self.max_entries
        kept = []
        for line in lines:
            if excess > 0 and self._owned(line):
                excess -= 1
                continue
            kept.append(line)
        _atomic_write(self.path, "".join(line.raw + "\n" for line in kept))

    def _append_line(self, line: _Line, ends_with_newline: bool) -> None:
        """Append ``line`` in one write and fsync it; on an error, cut the file back to its old
        size (the lock is held, so nobody else wrote since) and raise ``StorageError``."""
        data = (("" if ends_with_newline else "\n") + line.raw + "\n").encode("utf-8")
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        except OSError as exc:
            raise StorageError(f"cannot append to {self.path}: {exc}") from exc
        try:
            size = os.fstat(fd).st_size
            try:
                _write_all(fd, data)
                os.fsync(fd)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, size)
                raise StorageError(f"cannot append to {self.path}: {exc}") from exc
        finally:
            os.close(fd)

    def _read_summaries(self) -> dict[tuple[str, str], str]:
        """Every agent's summaries, keyed by (agent, conversation)."""
        try:
            data = json.loads(self.summaries_path.read_text("utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("cannot read summaries %s (%s); treating as empty", self.summaries_path, exc)
            return {}
        if not isinstance(data, dict):
            return {}
        return {(str(v.get("agent") or self.unowned_agent), str(v.get("conversation") or k)): v["summary"]
                for k, v in data.items() if isinstance(v, dict) and isinstance(v.get("summary"), str)}

    def _write_summaries(self, summaries: dict[tuple[str, str], str]) -> None:
        now = dt.datetime.now(dt.UTC).isoformat()
        # A default-agent summary keeps its plain key, so files written before agents read the same.
        body = {(key if agent == DEFAULT_AGENT else f"{agent} {key}"):
                {"summary": v, "agent": agent, "conversation": key, "updated_at": now}
                for (agent, key), v in sorted(summaries.items())}
        _atomic_write(self.summaries_path, json.dumps(body, ensure_ascii=False, indent=1) + "\n")

    # --- the contract ----------------------------------------------------------------------------
    def append(self, key: str, message: Message) -> None:
        self._append(normal_key(key), [check_message(message)])

    def append_many(self, key: str, messages: Sequence[Message]) -> None:
        """Append ``messages`` in order, all or none, in one write.

        A batch that only adds one new line (a user message and what follows it) is appended
        to the file in one ``write`` and fsynced; one that adds several lines, changes the
        conversation's latest line or rotates is written as a whole new file renamed over the
        old one. Why not every batch appended: a crash (power lost, the process killed) during
        a write can leave a prefix of it in the file. A prefix of one line is not a readable
        line, so it is skipped (and kept, with a warning) and none of the batch is seen; a prefix
        of several lines would hold the batch's first lines whole, a part of the batch. After a
        rename the file is the old one or the new one. A write that fails with an error (a full
        disk) is taken back before the error is raised: nothing of the batch stays."""
        self._append(normal_key(key), check_messages(messages))

    def _append(self, key: str, messages: list[Message]) -> None:
        if not messages:
            return
        messages = [self._capped(m) for m in messages]
        with self._locked():
            lines, ends_with_newline = self._read()
            latest = self._last_index(lines, key)
            # A user message starts a new exchange; any other joins the latest one (this batch's,
            # else the conversation's latest line).
            joined: list[Message] = []
            fresh: list[list[Message]] = []
            for message in messages:
                if message.role is Role.USER or (latest is None and not fresh):
                    fresh.append([message])
                elif fresh:
                    fresh[-1].append(message)
                else:
                    joined.append(message)
            snake = _file_spelling(lines)
            new = [_serialise(key, self.agent, group, {}, snake) for group in fresh]
            if not joined and len(new) == 1 and sum(map(self._owned, lines)) + 1 <= self.max_entries:
                self._append_line(new[0], ends_with_newline)
                return
            if joined:
                old = lines[latest]  # type: ignore[index]  # joined is empty when there is no latest line
                lines[latest] = _serialise(key, self.agent, [*old.messages, *joined], old.extra, old.snake)  # type: ignore[index]
            self._rewrite([*lines, *new])

    def get_recent(self, key: str, n: int) -> list[Message]:
        n = check_recent(n)
        return self.get_all(key)[-n:] if n else []

    def get_all(self, key: str) -> list[Message]:
        key = normal_key(key)
        with self._locked(reading=True):
            lines, _ = self._read()
        return [m for line in lines if self._mine(line, key) for m in line.messages]

    def count(self, key: str) -> int:
        return len(self.get_all(key))

    def set_summary(self, key: str, summary: str) -> None:
        key, summary = normal_key(key), check_summary(summary)
        with self._locked():
            summaries = self._read_summaries()
            if summary:
                summaries[(self.agent, key)] = summary
            elif summaries.pop((self.agent, key), None) is None:
                return  # no summary to clear: the file is left as it was, no empty entry added
            self._write_summaries(summaries)

    def get_summary(self, key: str) -> str:
        key = normal_key(key)
        with self._locked(reading=True):
            return self._read_summaries().get((self.agent, key), "")

    def discard(self, key: str, start: int, stop: int) -> int:
        key = normal_key(key)
        start, stop = check_range(start, stop)
        if stop == start:
            return 0
        with self._locked():
            lines, _ = self._read()
            out, removed = self._without(lines, key, start, stop)
            if removed:
                self._rewrite(out)
            return removed

    def pop_newest(self, key: str) -> Message | None:
        key = normal_key(key)
        # Read, cut and rewritten under the file lock: no other pop, append or discard comes between.
        with self._locked():
            lines, _ = self._read()
            latest = self._last_index(lines, key)
            if latest is None or not lines[latest].messages:
                return None
            line = lines[latest]
            newest = line.messages[-1]
            if len(line.messages) == 1:
                del lines[latest]
            else:
                lines[latest] = _serialise(key, self.agent, line.messages[:-1], line.extra, line.snake)
            self._rewrite(lines)
            return newest

    def discard_if_unchanged(self, key: str, read: Sequence[Message], start: int, stop: int, *,
                             summary: str | None = None, summary_read: str | None = None) -> bool:
        key = normal_key(key)
        read, start, stop = check_read(read, start, stop)
        summary = None if summary is None else check_summary(summary)
        summary_read = None if summary_read is None else check_summary_read(summary_read)
        with self._locked():
            lines, _ = self._read()
            # Compared as read, under the file lock: the messages removed are the ones the caller saw.
            if [m for line in lines if self._mine(line, key) for m in line.messages][: len(read)] != read:
                return False
            if summary_read is not None and self._read_summaries().get((self.agent, key), "") != summary_read:
                return False
            if summary is not None:
                # The summary goes first (a second file): a crash before the rewrite leaves more context, never less.
                summaries = self._read_summaries()
                summaries[(self.agent, key)] = summary
                self._write_summaries(summaries)
            out, removed = self._without(lines, key, start, stop)
            if removed:
                self._rewrite(out)
            return True

    def _without(self, lines: list[_Line], key: str, start: int, stop: int) -> tuple[list[_Line], int]:
        """``lines`` without the conversation's messages at positions ``start``..``stop - 1``
        (a line left empty goes), and how many went."""
        position, removed, out = 0, 0, []
        for line in lines:
            if not self._mine(line, key):
                out.append(line)
                continue
            keep = []
            for message in line.messages:
                if start <= position < stop:
                    removed += 1
                else:
                    keep.append(message)
                position += 1
            if len(keep) == len(line.messages):
                out.append(line)
            elif keep:
                out.append(_serialise(key, self.agent, keep, line.extra, line.snake))
        return out, removed

    def purge(self, key: str) -> None:
        key = normal_key(key)
        with self._locked():
            lines, _ = self._read()
            kept = [line for line in lines if not self._mine(line, key)]
            if len(kept) != len(lines):
                self._rewrite(kept)
            summaries = self._read_summaries()
            if summaries.pop((self.agent, key), None) is not None:
                self._write_summaries(summaries)

    def conversations(self) -> list[str]:
        with self._locked(reading=True):
            lines, _ = self._read()
            summaries = self._read_summaries()
        mine = {line.key for line in lines if self._owned(line)}
        # An empty summary (one a clear wrote before clearing removed the entry) is no conversation.
        return sorted(mine | {key for (agent, key), text in summaries.items() if agent == self.agent and text})

    def recap(self, key: str) -> str:
        """Recent exchanges of the conversation as a recap block of at most ``max_total_chars``."""
        return format_recap(pair_exchanges(normal_key(key), self.get_all(key)), self.max_total_chars)

    def close(self) -> None:
        pass

    def _last_index(self, lines: list[_Line], key: str) -> int | None:
        for index in range(len(lines) - 1, -1, -1):
            if self._mine(lines[index], key):
                return index
        return None

    def _capped(self, message: Message) -> Message:
        cap = self.max_chars_per_entry
        if len(message.content) <= cap:
            return message
        return replace(message, content=message.content[: cap - len(TRUNCATION_MARK)] + TRUNCATION_MARK)


# --- the line format ---------------------------------------------------------------------------
def _epoch(text: Any) -> float:
    if isinstance(text, int | float):
        return float(text) / (1000.0 if text > 1e11 else 1.0)  # JavaScript's Date.now() is in ms
    if isinstance(text, str) and text:
        stamp = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=dt.UTC)
        return stamp.timestamp()
    return 0.0


def _file_spelling(lines: list[_Line]) -> bool:
    """Whether a new line is spelt as Clawless's code writes it: as the file's newest readable line
    is (Clawless appending to the file now), camelCase in a new file."""
    return next((line.snake for line in reversed(lines) if line.key is not None), False)


def _serialise(key: str, agent: str, messages: list[Message], extra: dict[str, Any], snake: bool = False) -> _Line:
    parts = parse_conversation_key(key)
    user = next((m.content for m in messages if m.role is Role.USER), "")
    answers = [m.content for m in messages if m.role is Role.ASSISTANT and m.content]
    first = messages[0].created_at if messages else 0.0
    # Clawless's form, JavaScript's toISOString (always milliseconds: 2026-02-10T08:15:00.000Z). The
    # exact times travel in "messages", which is what engram reads back; "timestamp" only for a line without them.
    stamp = iso(first, timespec="milliseconds")
    chat = f"{parts.chat}:{parts.thread}" if parts.thread else parts.chat
    said = {"userMessage": user, "botResponse": answers[-1] if answers else "", "chatId": chat}
    if snake:  # in the order Clawless's code writes them
        exchange = {"timestamp": stamp, SNAKE["chatId"]: chat, SNAKE["userMessage"]: said["userMessage"],
                    SNAKE["botResponse"]: said["botResponse"], "platform": parts.channel}
    else:
        exchange = {**said, "platform": parts.channel, "timestamp": stamp}
    record = {**extra, **exchange, "messages": [m.to_dict() for m in messages], "agent": agent}
    return _Line(json.dumps(record, ensure_ascii=False), key, agent, list(messages), dict(extra), snake)


_KNOWN = {"userMessage", "botResponse", "chatId", *SNAKE.values(), "platform", "timestamp", "messages", "agent"}


def _parse_line(text: str) -> _Line:
    """A line as an exchange; an unreadable one comes back with ``key`` None (and is kept raw)."""
    try:
        data = json.loads(text)
        if not isinstance(data, dict):
            return _Line(text)
        chat_id, _ = clawless_field(data, "chatId")
        if not isinstance(chat_id, str | int):
            return _Line(text)
        chat, _, thread = str(chat_id).partition(":")
        key = normal_key(f"{data.get('platform') or 'default'}:{chat}:{thread}")
        at = _epoch(data.get("timestamp"))
        if isinstance(data.get("messages"), list):
            messages = [message_from_dict(m) for m in data["messages"]]
        else:
            messages = []
            for role, field_name in ((Role.USER, "userMessage"), (Role.ASSISTANT, "botResponse")):
                content = clawless_field(data, field_name)[0] or ""
                if not isinstance(content, str):
                    return _Line(text)
                if content.strip():
                    messages.append(Message(role, content, created_at=at))
        extra = {k: v for k, v in data.items() if k not in _KNOWN}
        agent = data.get("agent") if isinstance(data.get("agent"), str) and data.get("agent") else None
        return _Line(text, key, agent, messages, extra, is_snake_case(data))
    except (ValueError, ValidationError, TypeError, AttributeError):
        return _Line(text)


def _write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` (``os.write`` may write less than it was given)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a fsynced temporary file and a rename."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            try:
                _write_all(fd, text.encode("utf-8"))
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
    except OSError as exc:
        raise StorageError(f"cannot write {path}: {exc}") from exc
