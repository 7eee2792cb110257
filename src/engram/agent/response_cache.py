"""PtrClaw's ``ResponseCache``: skip the provider when the same call was answered recently.

Key: FNV-1a 64 over ``model``, the caller's ``scope`` (agent, session and conversation) and the
whole message list sent to the model - system prompt, summary and history included - with a
separator byte between the fields (so ``("ab", "c")`` and ``("a", "bc")`` differ) and each message
as canonical JSON of its role, content, tool calls and tool call id (never its timestamp). Only a
truly identical call by the same agent and session reuses an answer: the same question asked by
another agent, or after a different conversation, is a miss. Each entry also keeps its ``scope``
and a ``get`` from another scope is a miss even on a hash collision. Eviction on ``put``: first a
TTL pass drops entries older than ``ttl_s``; then, if still over ``max_entries``, an LRU pass
removes the least recently accessed with an O(n) selection (``numpy.argpartition``, the
counterpart of ``nth_element``). The cache is a JSON array written atomically (temp file +
fsync + rename) after every ``put`` (with no path, as for an encrypted store, it stays in memory);
all methods are thread-safe.

Under ``privacy.pii = "redact"`` (``privacy``) a call whose messages or answer hold PII is neither
cached nor looked up (``PiiPolicy.withholds``), and entries from before that hold PII are dropped
when the file is opened: the file then holds no PII, not even the hash of a prompt that held some,
and a hit still answers word for word what the live call answered (a redacted copy would not).
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from engram.errors import StorageError
from engram.model import Message
from engram.privacy import PiiPolicy

log = logging.getLogger("engram.agent.cache")

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
_MASK = 0xFFFFFFFFFFFFFFFF
SEPARATOR = b"\x00"


def fnv1a64(data: bytes) -> int:
    h = FNV_OFFSET
    for byte in data:
        h ^= byte
        h = (h * FNV_PRIME) & _MASK
    return h


def _canonical(message: Message) -> str:
    data = {"role": message.role.value, "content": message.content,
            "tool_calls": [call.to_dict() for call in message.tool_calls], "tool_call_id": message.tool_call_id}
    return json.dumps(data, sort_keys=True, ensure_ascii=False)


def _texts(messages: Sequence[Message]) -> Iterator[str]:
    """The text of ``messages`` a model is sent: each content, tool call id and arguments, and
    the id of the call a tool result answers."""
    for message in messages:
        yield message.content
        for call in message.tool_calls:
            yield call.id
            yield call.arguments
        if message.tool_call_id is not None:
            yield message.tool_call_id


def cache_key(model: str, scope: str, messages: Sequence[Message]) -> str:
    """The key of one provider call: ``model``, ``scope`` and every message sent, in order."""
    parts = [model, scope, *(_canonical(m) for m in messages)]
    data = SEPARATOR.join(part.encode("utf-8", "surrogatepass") for part in parts)
    return f"{fnv1a64(data):016x}"


def discard_plain_cache(path: Path) -> None:
    """Delete a cache file written before an encryption key was set: it holds earlier answers in
    clear, and a cache is never worth keeping a readable copy for. Raises ``StorageError`` when it
    cannot be deleted (the file would stay readable unsaid)."""
    try:
        path.unlink()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StorageError(f"cannot delete the plain-text response cache {path} (an encryption key is set): {exc}") from exc
    log.warning("deleted the plain-text response cache %s: with an encryption key set the cache is kept in memory only",
                path)


@dataclass(slots=True)
class CacheEntry:
    key: str
    response: str
    timestamp: float
    last_access: float
    scope: str = ""


class ResponseCache:
    def __init__(
        self,
        path: Path | None = None,
        *,
        ttl_s: float = 3600.0,
        max_entries: int = 100,
        clock: Callable[[], float] = time.time,
        privacy: PiiPolicy | None = None,
    ) -> None:
        self.path = path
        self.privacy = privacy if privacy is not None else PiiPolicy()
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self.clock = clock
        self._entries: dict[str, CacheEntry] = {}
        self._lock = threading.Lock()

    @classmethod
    def open(cls, path: Path | None, **kwargs: object) -> ResponseCache:
        """A cache loaded from ``path`` (a missing file is an empty cache; an unreadable one is
        logged and started afresh - a cache is never worth failing a turn for)."""
        cache = cls(path, **kwargs)  # type: ignore[arg-type]
        if path is not None and path.exists():
            try:
                for item in json.loads(path.read_text(encoding="utf-8")):
                    entry = CacheEntry(str(item["key"]), str(item["response"]), float(item["timestamp"]),
                                       float(item.get("last_access", item["timestamp"])), str(item.get("scope", "")))
                    cache._entries[entry.key] = entry
            except (OSError, ValueError, KeyError, TypeError) as exc:
                log.warning("response cache %s is unreadable (%s); starting empty", path, exc)
                cache._entries.clear()
            # Answers cached before ``redact`` was set may hold PII: dropped, and the file written without them.
            withheld = [k for k, e in cache._entries.items() if cache.privacy.withholds([e.response])]
            if withheld:
                for key in withheld:
                    del cache._entries[key]
                try:
                    cache._save()
                except StorageError as exc:
                    log.warning("%s", exc)
        return cache

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def get(self, model: str, scope: str, messages: Sequence[Message]) -> str | None:
        """The cached answer to exactly this call by this ``scope``, or None (always, for a call
        holding PII under ``redact``: none is cached)."""
        if self.privacy.withholds(_texts(messages)):
            return None
        key = cache_key(model, scope, messages)
        now = self.clock()
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry.scope != scope:
                return None
            if now - entry.timestamp > self.ttl_s:
                return None
            entry.last_access = now
            return entry.response

    def put(self, model: str, scope: str, messages: Sequence[Message], response: str) -> None:
        """Cache the answer to this call by this ``scope``, evict, and persist; raises
        ``StorageError`` when the file cannot be written. Under ``redact``, a call or answer
        holding PII is not cached (the module doc)."""
        if self.privacy.withholds([response, *_texts(messages)]):
            return
        key = cache_key(model, scope, messages)
        now = self.clock()
        with self._lock:
            self._entries[key] = CacheEntry(key, response, now, now, scope)
            self._evict(now)
            self._save()

    def keys(self) -> list[str]:
        with self._lock:
            return list(self._entries)

    def _evict(self, now: float) -> None:
        expired = [k for k, e in self._entries.items() if now - e.timestamp > self.ttl_s]
        for k in expired:
            del self._entries[k]
        excess = len(self._entries) - self.max_entries
        if excess <= 0:
            return
        keys = list(self._entries)
        access = np.fromiter((self._entries[k].last_access for k in keys), dtype=np.float64, count=len(keys))
        # argpartition selects the ``excess`` oldest in O(n) without sorting the rest.
        for index in np.argpartition(access, excess - 1)[:excess]:
            del self._entries[keys[int(index)]]

    def _save(self) -> None:
        if self.path is None:
            return
        data = json.dumps([asdict(e) for e in self._entries.values()])
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".response_cache.", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(data)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(tmp, self.path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise StorageError(f"cannot write response cache {self.path}: {exc}") from exc
