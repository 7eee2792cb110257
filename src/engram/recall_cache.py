"""A short-lived cache of recall results (ClawCode: 5 minutes), invalidated by any write.

A result is reused only while the store's ``change_token()`` is unchanged: any write to the
store — from this process or, for SQLite, from another one — makes every cached result stale.
Stores that cannot tell cheaply (``None``, e.g. PostgreSQL shared by many hosts) are not cached.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable

from engram.model import RecallResult


class RecallCache:
    def __init__(self, ttl_s: float, *, max_entries: int = 256, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self.clock = clock
        self._entries: OrderedDict[str, tuple[float, Hashable, RecallResult]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str, token: Hashable | None) -> RecallResult | None:
        if token is None or self.ttl_s <= 0:
            return None
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            stored_at, stored_token, result = entry
            if stored_token != token or self.clock() - stored_at > self.ttl_s:
                del self._entries[key]
                return None
            self._entries.move_to_end(key)
            return result

    def put(self, key: str, token: Hashable | None, result: RecallResult) -> None:
        if token is None or self.ttl_s <= 0:
            return
        with self._lock:
            self._entries[key] = (self.clock(), token, result)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
