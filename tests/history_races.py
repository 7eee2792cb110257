"""Removal races on a conversation, made deterministic with a barrier instead of timing.

Each scenario runs two parties (two processes forked on one storage, or two threads), each on
its own store handle. A party that must be caught between reading the conversation and changing
it gets its store wrapped in ``Paused``: after its first read past the point it is armed at, it
waits at the barrier until the other party has made its change. A removal that trusts a read
position (what engram did before ``discard_if_unchanged`` and ``pop_newest``) then lands on
other messages; a removal checked by the store against what was read does not.
"""

from __future__ import annotations

import multiprocessing
import queue
import threading
from collections.abc import Callable, Sequence
from typing import Any

from engram.history.base import HistoryStore
from engram.history.service import History
from engram.history.settings import CompactionSettings
from engram.model import Message, make_message

KEY = "telegram:7"
LIMIT = 30  # max_history_len, and the messages seeded: the next append trims
# A forced compaction of the 30 keeps the last 10.
SETTINGS = CompactionSettings(max_history_messages=20, min_messages=12, keep_recent=10)
_READS = ("count", "get_all", "get_recent")
_WAIT = 120  # seconds a party waits for the other before the barrier breaks (a failure, not a hang)

Opener = Callable[[], HistoryStore]


class Paused:
    """A store handle that, after its first read (once ``armed`` is called, or right away),
    waits at ``barrier``; ``twice`` waits again, for the other party to finish its change."""

    def __init__(self, store: HistoryStore, barrier: Any, *, twice: bool = False, after: str | None = None) -> None:
        self._store, self._barrier, self._twice = store, barrier, twice
        self._armed, self._after, self._done = after is None, after, False

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._store, name)
        if name == self._after:
            def arming(*args: Any, **kwargs: Any) -> Any:
                out = attr(*args, **kwargs)
                self._armed = True
                return out
            return arming
        if name not in _READS or not self._armed or self._done:
            return attr

        def read(*args: Any, **kwargs: Any) -> Any:
            out = attr(*args, **kwargs)
            self._done = True
            self._barrier.wait(_WAIT)
            if self._twice:
                self._barrier.wait(_WAIT)
            return out
        return read


class Listing:
    """A summariser whose summary names the messages it was given (so a test sees what it covered)."""

    def summarize(self, messages: Sequence[Message]) -> str:
        return "|".join(m.content for m in messages if m.role.value != "system")


def seed(store: HistoryStore, n: int = LIMIT) -> None:
    store.append_many(KEY, [make_message("user" if i % 2 == 0 else "assistant", f"m{i}", created_at=float(i))
                            for i in range(n)])


# --- the parties (each opens its own handle) -------------------------------------------------------
def _compact(open_store: Opener, barrier: Any, twice: bool) -> None:
    store = open_store()
    try:
        History(Paused(store, barrier, twice=twice), compaction=SETTINGS).compact(KEY, summarizer=Listing(), force=True)  # type: ignore[arg-type]
    finally:
        store.close()


def compacts_then_waits_for_the_other(open_store: Opener, barrier: Any) -> None:
    _compact(open_store, barrier, True)


def compacts_beside_the_other(open_store: Opener, barrier: Any) -> None:
    _compact(open_store, barrier, False)


def appends_in_between(open_store: Opener, barrier: Any) -> None:
    """Waits for the other party to have read, appends one message (the conversation is at the
    limit, so it trims the oldest), then lets the other party go on."""
    store = open_store()
    try:
        barrier.wait(_WAIT)
        History(store, max_history_len=LIMIT).append(KEY, "user", "new", created_at=1000.0)
        barrier.wait(_WAIT)
    finally:
        store.close()


def appends_and_trims_beside_the_other(text: str) -> Callable[[Opener, Any], None]:
    """Appends ``text`` at the limit; its trim reads, then waits until the other party's trim has read too."""
    def party(open_store: Opener, barrier: Any) -> None:
        store = open_store()
        try:
            History(Paused(store, barrier, after="append_many"), max_history_len=LIMIT).append(  # type: ignore[arg-type]
                KEY, "user", text, created_at=2000.0)
        finally:
            store.close()
    party.__name__ = f"appends_{text}"
    return party


def race(open_store: Opener, mode: str, parties: Sequence[Callable[[Opener, Any], None]]) -> None:
    """Run ``parties`` at once, in forked processes (``mode`` "process") or threads; re-raise a
    party's failure."""
    if mode == "process":
        context = multiprocessing.get_context("fork")
        barrier = context.Barrier(len(parties))
        procs = [context.Process(target=party, args=(open_store, barrier)) for party in parties]
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join()
        assert [proc.exitcode for proc in procs] == [0] * len(procs)
        return
    barrier = threading.Barrier(len(parties))
    errors: queue.Queue[BaseException] = queue.Queue()

    def run(party: Callable[[Opener, Any], None]) -> None:
        try:
            party(open_store, barrier)
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            barrier.abort()
            errors.put(exc)

    threads = [threading.Thread(target=run, args=(party,)) for party in parties]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if not errors.empty():
        raise errors.get()


def contents(open_store: Opener) -> tuple[list[str], str]:
    store = open_store()
    try:
        return [m.content for m in store.get_all(KEY)], store.get_summary(KEY)
    finally:
        store.close()


# --- the scenarios: each seeds, races, and checks nothing was lost -----------------------------------
def compaction_racing_an_append_that_trims(open_store: Opener, mode: str) -> None:
    store = open_store()
    seed(store)
    store.close()
    race(open_store, mode, [compacts_then_waits_for_the_other, appends_in_between])
    left, summary = contents(open_store)
    # The append trimmed m0; the compaction summarised what it discarded and kept the last 10.
    assert left == [f"m{i}" for i in range(21, 30)] + ["new"]
    assert summary.split("|") == [f"m{i}" for i in range(1, 21)]


def two_compactions_at_once(open_store: Opener, mode: str) -> None:
    store = open_store()
    seed(store)
    store.close()
    race(open_store, mode, [compacts_beside_the_other, compacts_beside_the_other])
    left, summary = contents(open_store)
    # One compaction discarded m0..m19; the other found 10 messages and the last 10 always stay.
    assert left == [f"m{i}" for i in range(20, 30)]
    assert summary.split("|") == [f"m{i}" for i in range(20)]


def two_trims_at_once(open_store: Opener, mode: str) -> None:
    store = open_store()
    seed(store)
    store.close()
    race(open_store, mode, [appends_and_trims_beside_the_other("x"), appends_and_trims_beside_the_other("y")])
    left, _ = contents(open_store)
    # Exactly the limit stays: the two oldest went, one for each append.
    assert len(left) == LIMIT
    assert left[:-2] == [f"m{i}" for i in range(2, 30)] and sorted(left[-2:]) == ["x", "y"]


SCENARIOS = [compaction_racing_an_append_that_trims, two_compactions_at_once, two_trims_at_once]
