"""The HistoryStore contract suite, shipped so every backend (and a plug-in's) runs it unchanged.

Use it from a test module::

    from engram.testing.history_contract import HistoryBackend, HistoryStoreContract

    @pytest.fixture
    def history_backend(tmp_path):
        yield HistoryBackend("sqlite", lambda: SqliteHistoryStore.open(tmp_path / "h.db"),
                             target="engram.history.sqlite:SqliteHistoryStore.open",
                             kwargs={"path": str(tmp_path / "h.db")})

    class TestMyBackend(HistoryStoreContract):
        pass

The fixture yields a fresh, empty storage per test. ``open`` gives a new handle on that
storage, acting for the default agent (``for_agent`` reaches the others); ``target`` +
``kwargs`` (JSON-serialisable) let another process open it too, which the multi-process test
needs (a backend without them skips that test). ``persistent`` says whether a second handle
sees the first one's writes. ``failing(text)`` is a context in which the storage itself fails
to write a message whose content is ``text`` (a database trigger raising, a disk filling up
part-way through a file write), so the contract can check that a batch failing half-way leaves
nothing; a backend without it skips that test.

Run as ``python -m engram.testing.history_contract TARGET KWARGS KEY WORKER COUNT`` it is the
worker process of the multi-process tests: it appends COUNT messages and exits (with ``WORKER``
``pop``, it pops COUNT messages and prints each one's content on a line).
"""

from __future__ import annotations

import importlib
import json
import math
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

import pytest

from engram.errors import StorageError, ValidationError
from engram.history.base import HistoryStore
from engram.model import Message, Role, ToolCall, make_message

KEY = "telegram:42:"
OTHER = "slack:C1:t9"


@dataclass
class HistoryBackend:
    name: str
    open: Callable[[], HistoryStore]
    target: str | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)
    persistent: bool = True
    failing: Callable[[str], AbstractContextManager[None]] | None = None


def user(text: str, at: float = 0.0) -> Message:
    return make_message("user", text, created_at=at)


def assistant(text: str, at: float = 0.0, calls: Any = None) -> Message:
    return make_message("assistant", text, created_at=at, tool_calls=calls)


def open_target(target: str, kwargs: dict[str, Any]) -> HistoryStore:
    """Call ``module:attr[.attr]`` with ``kwargs`` (how a worker process opens the store)."""
    module_name, _, path = target.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj(**kwargs)


class HistoryStoreContract:
    """Every behaviour a HistoryStore promises. Needs a ``history_backend`` fixture."""

    @pytest.fixture
    def store(self, history_backend: HistoryBackend) -> Iterator[HistoryStore]:
        handle = history_backend.open()
        yield handle
        handle.close()

    # --- basics --------------------------------------------------------------------------
    def test_empty_conversation(self, store: HistoryStore) -> None:
        assert store.get_all(KEY) == []
        assert store.get_recent(KEY, 5) == []
        assert store.count(KEY) == 0
        assert store.get_summary(KEY) == ""
        assert store.conversations() == []

    def test_append_keeps_order_and_every_field(self, store: HistoryStore) -> None:
        call = ToolCall("call_1", "weather", '{"city": "Oslo"}')
        messages = [
            make_message("system", "You are helpful.", created_at=1.0),
            user("What's the weather in Oslo?", 2.0),
            assistant("", 3.0, calls=[call]),
            make_message("tool", '{"temp": 4}', tool_call_id="call_1", created_at=4.0, metadata={"ms": 12}),
            assistant("It is 4 °C in Oslo. ☃", 5.0),
        ]
        for message in messages:
            store.append(KEY, message)
        assert store.get_all(KEY) == messages
        assert store.count(KEY) == 5
        assert store.get_all(KEY)[2].tool_calls == (call,)
        assert store.get_all(KEY)[3].metadata == {"ms": 12}

    def test_get_recent_bounds(self, store: HistoryStore) -> None:
        messages = [user(f"message {i}", float(i)) for i in range(7)]
        for message in messages:
            store.append(KEY, message)
        assert store.get_recent(KEY, 0) == []
        assert store.get_recent(KEY, 1) == messages[-1:]
        assert store.get_recent(KEY, 3) == messages[-3:]
        assert store.get_recent(KEY, 7) == messages
        assert store.get_recent(KEY, 100) == messages
        # Past a 64-bit integer (SQLite's and PostgreSQL's bound): every message, as any count past
        # the end, never the driver's OverflowError.
        assert store.get_recent(KEY, 10**20) == messages
        with pytest.raises(ValidationError) as info:
            store.get_recent(KEY, -1)
        assert info.value.field == "n"

    def test_conversations_are_separate(self, store: HistoryStore) -> None:
        store.append(KEY, user("in telegram"))
        store.append(OTHER, user("in slack"))
        store.append(KEY, assistant("telegram answer"))
        assert [m.content for m in store.get_all(KEY)] == ["in telegram", "telegram answer"]
        assert [m.content for m in store.get_all(OTHER)] == ["in slack"]
        assert store.conversations() == sorted([KEY, OTHER])

    def test_key_without_thread_is_the_same_conversation(self, store: HistoryStore) -> None:
        store.append("telegram:42", user("hello"))
        assert store.count("telegram:42:") == 1
        assert store.conversations() == ["telegram:42:"]

    @pytest.mark.parametrize("bad", ["", "nocolon", "a:b:c:d", "a b:c", ":chat:", "chan::"])
    def test_bad_key_is_refused_and_nothing_is_stored(self, store: HistoryStore, bad: str) -> None:
        store.append(KEY, user("kept"))
        with pytest.raises(ValidationError) as info:
            store.append(bad, user("refused"))
        assert info.value.field.startswith("key")
        assert store.conversations() == [KEY]
        assert store.get_all(KEY) == [user("kept")]

    # --- batches ------------------------------------------------------------------------------
    def test_append_many_stores_the_batch_whole_and_in_order(self, history_backend: HistoryBackend) -> None:
        call = ToolCall("call_1", "weather", '{"city": "Oslo"}')
        before = user("already there", 0.5)
        batch = [
            make_message("system", "You are helpful.", created_at=1.0),
            user("What's the weather in Oslo?\r\n  ", 2.0),
            assistant("", 3.0, calls=[call]),
            make_message("tool", '{"temp": 4}', tool_call_id="call_1", created_at=4.0, metadata={"ms": 12}),
            assistant("It is 4 °C in Oslo. ☃ 🌧\ttab", 5.0),
            user("and tomorrow?", 6.0),
            assistant("Snow.", 7.0),
        ]
        store = history_backend.open()
        try:
            store.append(KEY, before)
            store.append_many(KEY, batch)
            store.append_many(KEY, [])  # nothing to write is fine
            store.append(KEY, user("after", 8.0))
            assert store.get_all(KEY) == [before, *batch, user("after", 8.0)]
            assert store.get_recent(KEY, 3) == [batch[-2], batch[-1], user("after", 8.0)]
        finally:
            store.close()
        if history_backend.persistent:
            again = history_backend.open()
            try:
                assert again.get_all(KEY) == [before, *batch, user("after", 8.0)]
            finally:
                again.close()

    @pytest.mark.parametrize(("bad", "field"), [
        ({"role": "user", "content": "a dict, not a Message"}, "messages[2]"),
        (Message(Role.USER, "lone \ud800 surrogate"), "messages[2].content"),
        (Message(Role.USER, "NUL \x00 inside"), "messages[2].content"),
    ])
    def test_append_many_refuses_a_bad_message_and_writes_nothing(self, store: HistoryStore, bad: Any,
                                                                   field: str) -> None:
        store.append(KEY, user("kept", 1.0))
        with pytest.raises(ValidationError) as info:
            store.append_many(KEY, [user("first", 2.0), assistant("second", 3.0), bad, user("fourth", 4.0)])
        assert info.value.field == field
        assert store.get_all(KEY) == [user("kept", 1.0)]
        assert store.conversations() == [KEY]

    @pytest.mark.parametrize("shape", ["several exchanges", "one exchange"])
    def test_append_many_failing_half_way_writes_nothing(self, history_backend: HistoryBackend, shape: str) -> None:
        if history_backend.failing is None:
            pytest.skip(f"{history_backend.name} cannot be made to fail a write")
        batch = {"several exchanges": [user("one", 2.0), assistant("two", 3.0), user("boom", 4.0), assistant("four", 5.0)],
                 "one exchange": [user("one", 2.0), assistant("two", 3.0), assistant("boom", 4.0)]}[shape]
        store = history_backend.open()
        try:
            store.append(KEY, user("kept", 1.0))
            with history_backend.failing("boom"), pytest.raises(StorageError):
                store.append_many(KEY, batch)
            assert store.get_all(KEY) == [user("kept", 1.0)] and store.count(KEY) == 1
            store.append_many(KEY, batch)  # the storage works again: the same batch goes in whole
            assert store.get_all(KEY) == [user("kept", 1.0), *batch]
        finally:
            store.close()

    # --- summaries, discard, purge --------------------------------------------------------
    def test_summary_replaces_the_previous_one(self, store: HistoryStore) -> None:
        store.set_summary(KEY, "first summary")
        store.set_summary(KEY, "second summary")
        assert store.get_summary(KEY) == "second summary"
        assert store.get_summary(OTHER) == ""
        assert store.conversations() == [KEY]

    def test_an_empty_summary_removes_it_and_leaves_no_conversation(self, store: HistoryStore) -> None:
        # Clearing the summary of a conversation that never was wrote an empty entry, which
        # conversations() listed (a conversation of 0 messages): "" leaves no entry.
        store.set_summary(KEY, "")
        assert store.conversations() == [] and store.get_summary(KEY) == ""
        store.append(OTHER, user("kept"))
        store.set_summary(OTHER, "to be cleared")
        store.set_summary(KEY, "only a summary")
        assert store.conversations() == sorted([KEY, OTHER])
        store.set_summary(KEY, "")
        store.set_summary(OTHER, "")
        assert store.conversations() == [OTHER] and store.get_summary(KEY) == store.get_summary(OTHER) == ""
        assert store.get_all(OTHER) == [user("kept")]

    @pytest.mark.parametrize("text", ["nul \x00 byte", "lone \ud800 surrogate"], ids=["nul", "lone surrogate"])
    def test_a_summary_no_store_can_hold_is_refused_naming_it(self, store: HistoryStore, text: str) -> None:
        # Refused alike by every backend before anything is written: SQLite used to store a NUL that
        # PostgreSQL refused, and a lone surrogate failed to encode on SQLite and JSONL.
        store.append(KEY, user("m0"))
        store.set_summary(KEY, "kept summary")
        read = store.get_all(KEY)
        for write in (lambda: store.set_summary(KEY, text),
                      lambda: store.discard_if_unchanged(KEY, read, 0, 1, summary=text)):
            with pytest.raises(ValidationError) as info:
                write()
            assert info.value.field == "summary"
        assert store.get_summary(KEY) == "kept summary" and store.get_all(KEY) == read

    def test_discard_removes_positions_from_the_oldest(self, store: HistoryStore) -> None:
        messages = [user(f"m{i}", float(i)) for i in range(6)]
        for message in messages:
            store.append(KEY, message)
        assert store.discard(KEY, 1, 4) == 3
        assert store.get_all(KEY) == [messages[0], messages[4], messages[5]]
        assert store.discard(KEY, 2, 2) == 0
        assert store.discard(KEY, 5, 9) == 0
        assert store.discard(KEY, 10**20, 10**21) == 0  # past a 64-bit integer: past the end
        store.append(KEY, user("after discard", 9.0))
        assert [m.content for m in store.get_all(KEY)] == ["m0", "m4", "m5", "after discard"]
        with pytest.raises(ValidationError):
            store.discard(KEY, 3, 1)

    def test_pop_newest_removes_and_returns_the_newest(self, store: HistoryStore) -> None:
        assert store.pop_newest(KEY) is None
        messages = [user("first", 1.0), assistant("second", 2.0, calls=[ToolCall("c1", "f", "{}")]),
                    make_message("tool", "third", tool_call_id="c1", created_at=3.0, metadata={"n": 3})]
        store.append_many(KEY, messages)
        store.append(OTHER, user("elsewhere"))
        assert store.pop_newest(KEY) == messages[2]
        assert store.pop_newest(KEY) == messages[1]
        store.append(KEY, user("after", 4.0))
        assert store.get_all(KEY) == [messages[0], user("after", 4.0)]
        assert store.for_agent("bob").pop_newest(KEY) is None  # another agent's pop takes none of them
        assert store.pop_newest(KEY) == user("after", 4.0) and store.pop_newest(KEY) == messages[0]
        assert store.pop_newest(KEY) is None and store.count(KEY) == 0
        assert store.get_all(OTHER) == [user("elsewhere")]

    def test_discard_if_unchanged_removes_what_was_read_with_its_summary(self, store: HistoryStore) -> None:
        store.append_many(KEY, [user(f"m{i}", float(i)) for i in range(6)])
        read = store.get_all(KEY)
        store.append(KEY, user("appended after the read", 9.0))  # appends do not change what was read
        assert store.discard_if_unchanged(KEY, read, 1, 4, summary="m1 to m3") is True
        assert [m.content for m in store.get_all(KEY)] == ["m0", "m4", "m5", "appended after the read"]
        assert store.get_summary(KEY) == "m1 to m3"
        assert store.discard_if_unchanged(KEY, store.get_all(KEY), 0, 0) is True  # nothing to remove
        assert store.count(KEY) == 4 and store.get_summary(KEY) == "m1 to m3"  # no summary given: kept

    @pytest.mark.parametrize("change", ["discard", "pop", "purge"])
    def test_discard_if_unchanged_refuses_after_another_removal(self, store: HistoryStore, change: str) -> None:
        store.append_many(KEY, [user(f"m{i}", float(i)) for i in range(6)])
        store.set_summary(KEY, "before")
        read = store.get_all(KEY)
        if change == "discard":
            store.discard(KEY, 0, 1)
        elif change == "pop":
            store.pop_newest(KEY)
        else:
            store.purge(KEY)
            store.append_many(KEY, read[:3])
            store.set_summary(KEY, "before")
        left = store.get_all(KEY)
        assert store.discard_if_unchanged(KEY, read, 0, 2, summary="after") is False
        assert store.get_all(KEY) == left and store.get_summary(KEY) == "before"  # nothing removed nor written

    def test_discard_if_unchanged_refuses_after_a_summary_set_since(self, store: HistoryStore) -> None:
        # A compaction passes the summary it read: one set by hand meanwhile is not overwritten.
        store.append_many(KEY, [user(f"m{i}", float(i)) for i in range(4)])
        read = store.get_all(KEY)
        store.set_summary(KEY, "written by hand")
        assert store.discard_if_unchanged(KEY, read, 0, 2, summary="compacted", summary_read="") is False
        assert store.get_all(KEY) == read and store.get_summary(KEY) == "written by hand"
        assert store.discard_if_unchanged(KEY, read, 0, 2, summary="built on it", summary_read="written by hand")
        assert store.count(KEY) == 2 and store.get_summary(KEY) == "built on it"
        with pytest.raises(ValidationError) as info:
            store.discard_if_unchanged(KEY, store.get_all(KEY), 0, 1, summary_read=5)  # type: ignore[arg-type]
        assert info.value.field == "summary_read"

    def test_discard_if_unchanged_refuses_bad_input(self, store: HistoryStore) -> None:
        store.append_many(KEY, [user("m0"), user("m1")])
        read = store.get_all(KEY)
        for args, named in (((read, 0, 3), "stop"), ((read, 2, 1), "stop"), ((read, -1, 1), "start"),
                            (("text", 0, 1), "read"), (([read[0], "m1"], 0, 1), "read[1]")):
            with pytest.raises(ValidationError) as info:
                store.discard_if_unchanged(KEY, *args)  # type: ignore[arg-type]
            assert info.value.field == named
        with pytest.raises(ValidationError) as info:
            store.discard_if_unchanged(KEY, read, 0, 1, summary=5)  # type: ignore[arg-type]
        assert info.value.field == "summary"
        assert store.get_all(KEY) == read

    def test_purge_removes_messages_and_summary_of_one_conversation(self, store: HistoryStore) -> None:
        store.append(KEY, user("gone"))
        store.set_summary(KEY, "gone too")
        store.append(OTHER, user("stays"))
        store.set_summary(OTHER, "stays too")
        store.purge(KEY)
        assert store.get_all(KEY) == [] and store.get_summary(KEY) == "" and store.count(KEY) == 0
        assert store.get_all(OTHER) == [user("stays")] and store.get_summary(OTHER) == "stays too"
        assert store.conversations() == [OTHER]
        store.purge("never:seen")  # purging nothing is fine

    # --- agents ------------------------------------------------------------------------------
    def test_agents_never_see_or_delete_each_others_conversations(self, store: HistoryStore) -> None:
        alice, bob = store.for_agent("alice"), store.for_agent("bob")
        assert (alice.agent, bob.agent) == ("alice", "bob")
        for message in (user("alice asks", 1.0), assistant("alice is answered", 2.0)):
            alice.append(KEY, message)
        alice.set_summary(KEY, "alice's summary")
        bob.append(KEY, user("bob asks", 3.0))
        bob.append(OTHER, user("bob elsewhere", 4.0))
        # Each reads only its own, under the very same key.
        assert [m.content for m in alice.get_all(KEY)] == ["alice asks", "alice is answered"]
        assert [m.content for m in bob.get_all(KEY)] == ["bob asks"]
        assert bob.get_recent(KEY, 10) == [user("bob asks", 3.0)] and bob.count(KEY) == 1
        assert bob.get_summary(KEY) == "" and alice.get_summary(KEY) == "alice's summary"
        assert alice.conversations() == [KEY] and bob.conversations() == sorted([KEY, OTHER])
        assert store.conversations() == [] and store.get_all(KEY) == []  # the default agent's: empty
        # Bob's discard, summary and purge of that key leave alice's conversation whole.
        assert bob.discard(KEY, 0, 5) == 1
        bob.set_summary(KEY, "bob's summary")
        bob.purge(KEY)
        bob.purge(OTHER)
        assert [m.content for m in alice.get_all(KEY)] == ["alice asks", "alice is answered"]
        assert alice.get_summary(KEY) == "alice's summary" and alice.conversations() == [KEY]
        assert bob.conversations() == [] and bob.get_all(KEY) == []
        # And the other way round.
        bob.append(KEY, user("bob again", 5.0))
        alice.purge(KEY)
        assert alice.get_all(KEY) == [] and bob.get_all(KEY) == [user("bob again", 5.0)]

    @pytest.mark.parametrize("bad", ["", "has space", "a/b", "x" * 129])
    def test_a_bad_agent_name_is_refused(self, store: HistoryStore, bad: str) -> None:
        with pytest.raises(ValidationError) as info:
            store.for_agent(bad)
        assert info.value.field == "agent"

    def test_an_agent_finds_its_conversations_through_a_new_handle(self, history_backend: HistoryBackend) -> None:
        if not history_backend.persistent:
            pytest.skip(f"{history_backend.name} keeps nothing between handles")
        first = history_backend.open()
        first.for_agent("alice").append(KEY, user("alice's", 1.0))
        first.close()
        second = history_backend.open()
        try:
            assert second.for_agent("alice").get_all(KEY) == [user("alice's", 1.0)]
            assert second.for_agent("bob").get_all(KEY) == [] and second.get_all(KEY) == []
        finally:
            second.close()

    # --- durability and concurrency ---------------------------------------------------------
    def test_a_new_handle_sees_what_was_written(self, history_backend: HistoryBackend) -> None:
        if not history_backend.persistent:
            pytest.skip(f"{history_backend.name} keeps nothing between handles")
        first = history_backend.open()
        first.append(KEY, user("survives", 1.0))
        first.set_summary(KEY, "summary survives")
        first.close()
        second = history_backend.open()
        try:
            assert second.get_all(KEY) == [user("survives", 1.0)]
            assert second.get_summary(KEY) == "summary survives"
        finally:
            second.close()

    def test_times_come_back_exactly(self, history_backend: HistoryBackend) -> None:
        """A time is returned as given, to the last bit: ``History`` gives a batch's messages
        times one float apart, and a conversation's turns are known by them."""
        at = 1_790_000_000.123456
        times = [at, math.nextafter(at, math.inf), math.nextafter(math.nextafter(at, math.inf), math.inf), 0.0]
        batch = [user("first", times[0]), assistant("second", times[1]), user("third", times[2]),
                 assistant("fourth", times[3])]
        first = history_backend.open()
        try:
            first.append_many(KEY, batch)
            assert [m.created_at for m in first.get_all(KEY)] == times
        finally:
            first.close()
        if history_backend.persistent:
            second = history_backend.open()
            try:
                assert [m.created_at for m in second.get_all(KEY)] == times
            finally:
                second.close()

    def test_line_and_paragraph_separators_in_a_message_survive_a_new_handle(self, history_backend: HistoryBackend) -> None:
        # U+2028, U+2029 and U+0085 stand unescaped in JSON text; the JSON-lines file was split at
        # them on reading, so such a message (and the one after it) was skipped as unreadable.
        if not history_backend.persistent:
            pytest.skip(f"{history_backend.name} keeps nothing between handles")
        texts = ["one\u2028two", "para\u2029graph", "next\u0085line", "vt\x0bff\x0cfs\x1cgs\x1drs\x1e", "after"]
        first = history_backend.open()
        for n, text in enumerate(texts, 1):
            first.append(KEY, user(text, float(n)))
        first.set_summary(KEY, "sum\u2028mary")
        first.close()
        second = history_backend.open()
        try:
            assert [m.content for m in second.get_all(KEY)] == texts
            assert second.get_summary(KEY) == "sum\u2028mary"
        finally:
            second.close()

    def test_concurrent_appends_from_threads_lose_nothing(self, store: HistoryStore) -> None:
        def worker(n: int) -> None:
            for i in range(25):
                store.append(KEY, user(f"t{n}-{i}"))

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        _check_interleaving([m.content for m in store.get_all(KEY)], "t", 4, 25)

    def test_concurrent_appends_from_processes_lose_nothing(self, history_backend: HistoryBackend) -> None:
        if history_backend.target is None:
            pytest.skip(f"{history_backend.name} cannot be opened from another process")
        workers, count = 4, 30
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        args = [sys.executable, "-m", "engram.testing.history_contract", history_backend.target,
                json.dumps(history_backend.kwargs), KEY]
        procs = [subprocess.Popen([*args, str(n), str(count)], env=env, stderr=subprocess.PIPE) for n in range(workers)]
        for proc in procs:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err.decode()
        reader = history_backend.open()
        try:
            _check_interleaving([m.content for m in reader.get_all(KEY)], "p", workers, count)
            assert reader.count(KEY) == workers * count
        finally:
            reader.close()


    def test_pops_from_processes_each_take_their_own_message(self, history_backend: HistoryBackend) -> None:
        if history_backend.target is None:
            pytest.skip(f"{history_backend.name} cannot be opened from another process")
        workers, count = 4, 10
        store = history_backend.open()
        try:
            store.append_many(KEY, [user(f"m{i}", float(i)) for i in range(workers * count + 5)])
        finally:
            store.close()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        args = [sys.executable, "-m", "engram.testing.history_contract", history_backend.target,
                json.dumps(history_backend.kwargs), KEY, "pop", str(count)]
        procs = [subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(workers)]
        popped = []
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err.decode()
            mine = out.decode().split()
            # Each worker's pops come newest first, and no two workers got the same message.
            assert mine == sorted(mine, key=lambda c: -int(c[1:]))
            popped += mine
        assert sorted(popped, key=lambda c: int(c[1:])) == [f"m{i}" for i in range(5, workers * count + 5)]
        reader = history_backend.open()
        try:
            assert [m.content for m in reader.get_all(KEY)] == [f"m{i}" for i in range(5)]
        finally:
            reader.close()


def _check_interleaving(contents: list[str], prefix: str, workers: int, count: int) -> None:
    """Every message of every worker is there exactly once, each worker's in its own order."""
    assert len(contents) == workers * count
    for n in range(workers):
        mine = [c for c in contents if c.startswith(f"{prefix}{n}-")]
        assert mine == [f"{prefix}{n}-{i}" for i in range(count)]


def _worker(argv: list[str]) -> None:
    target, kwargs, key, worker, count = argv
    store = open_target(target, json.loads(kwargs))
    try:
        for i in range(int(count)):
            if worker == "pop":
                popped = store.pop_newest(key)
                print(popped.content if popped is not None else "", flush=True)
            else:
                store.append(key, Message(Role.USER, f"p{worker}-{i}"))
    finally:
        store.close()


if __name__ == "__main__":
    _worker(sys.argv[1:])
