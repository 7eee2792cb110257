"""AsyncEngram: work runs in engram's threads, never on the event loop; remembers made at once share
the write queue's batches, and writes are applied in the order they were made."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from engram.aio import AsyncEngram
from engram.embed import Embedder
from engram.engine import Engram
from engram.errors import NotFoundError, StorageError, ValidationError
from engram.store.sqlite import SqliteMemoryStore
from engram.testing.fakes import HashingEmbedder
from tests.unit.held_writes import HeldModel, eventually, threads_waiting_to_write


class GatedEmbedder(HashingEmbedder):
    """Embeds like HashingEmbedder, but a text containing SLOW waits until the test opens the gate
    (a remote embedding service taking its time). Waits at most a minute, then fails the write, so
    an implementation that blocks the loop fails the test instead of hanging it."""

    def __init__(self) -> None:
        super().__init__()
        self.started = threading.Event()
        self.gate = threading.Event()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if any("SLOW" in t for t in texts):
            self.started.set()
            if not self.gate.wait(60):
                raise RuntimeError("the gate was never opened")
        return super().embed(texts)


def _engine(tmp_path: Path, embedder: HashingEmbedder | None = None) -> Engram:
    return Engram(SqliteMemoryStore(tmp_path / "memory.db"), agent="alice", embedder=embedder)


def test_fifty_recalls_finish_while_a_slow_write_is_in_progress(tmp_path: Path) -> None:
    embedder = GatedEmbedder()
    engine = _engine(tmp_path, embedder)
    engine.remember_many({"content": f"python tip number {i}"} for i in range(40))

    async def scenario() -> None:
        ticks = 0
        stop = asyncio.Event()

        async def ticker() -> None:  # advances only while the loop is free to run other tasks
            nonlocal ticks
            while not stop.is_set():
                ticks += 1
                await asyncio.sleep(0.001)

        async with AsyncEngram(engine) as mem:
            ticking = asyncio.create_task(ticker())
            write = asyncio.create_task(mem.remember("SLOW note about python packaging"))
            assert await asyncio.to_thread(embedder.started.wait, 60), "the write never reached the embedder"
            ticks_at_write_start = ticks
            recalls = [asyncio.create_task(mem.recall("python tip", touch=False)) for _ in range(50)]
            done, _ = await asyncio.wait(recalls, timeout=60)  # a bound against hanging, not a measurement
            assert len(done) == 50
            assert not write.done(), "the recalls finished only after the write"
            assert all(len(task.result()) > 0 for task in done)
            assert ticks > ticks_at_write_start  # the loop kept running other tasks meanwhile
            embedder.gate.set()
            result = await write
            assert result.action == "created" and not result.warnings
            stop.set()
            await ticking
            assert (await mem.stats()).memories == 41

    asyncio.run(scenario())


def test_writes_are_serialised_in_the_order_they_were_made(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with AsyncEngram(_engine(tmp_path)) as mem:
            await asyncio.gather(*(mem.remember(f"version {i}", key="doc") for i in range(20)))
            assert (await mem.get("doc")).content == "version 19"
            assert [v.content for v in await mem.versions("doc")] == [f"version {i}" for i in range(19)]

    asyncio.run(scenario())


def test_errors_listeners_views_and_close(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    threads: list[str] = []
    loop_thread = threading.current_thread().name

    async def scenario() -> None:
        mem = AsyncEngram(engine)
        mem.subscribe(lambda event: threads.append(threading.current_thread().name))
        with pytest.raises(ValidationError) as err:
            await mem.remember("   ")
        assert err.value.field == "content"
        await mem.remember("Alice's plan", key="plan")
        bob = mem.for_agent("bob")
        assert bob.scope.agent == "bob"
        with pytest.raises(NotFoundError):
            await bob.get("plan")
        await bob.close()  # a view's close leaves the shared store open
        assert (await mem.count()) == 1
        await mem.close()

    asyncio.run(scenario())
    # Listeners run where the batch is written: a thread leading the write queue, not the loop.
    assert len(threads) == 1 and threads[0].startswith("engram-leader") and loop_thread != threads[0]
    with pytest.raises(StorageError):  # the store is closed with the engine
        engine.store.count(engine._filter())


def test_open_from_settings(isolated_home: Path) -> None:
    async def scenario() -> None:
        async with await AsyncEngram.open(agent="bot", embeddings={"provider": "none"}) as mem:
            await mem.remember("opened off the loop")
            assert [m.content for m in await mem.list()] == ["opened off the loop"]
            assert (await mem.stats()).memories == 1

    asyncio.run(scenario())
    assert (isolated_home / "memory.db").exists()


def test_async_remembers_made_at_once_are_embedded_together(tmp_path: Path) -> None:
    model = HeldModel()
    engine = Engram(SqliteMemoryStore(tmp_path / "memory.db"), embedder=Embedder(model, batch_size=64))

    async def scenario() -> None:
        async with AsyncEngram(engine) as mem:
            first = asyncio.create_task(mem.remember("the first write holds the model"))
            assert await asyncio.to_thread(model.first_call.wait, 20)
            rest = [asyncio.create_task(mem.for_agent(f"a{i}").remember(f"note {i}")) for i in range(16)]
            assert await asyncio.to_thread(eventually, lambda: engine.writes.waiting == 16)
            assert threads_waiting_to_write() == 0
            model.release.set()
            results = await asyncio.gather(first, *rest)
            assert [r.action for r in results] == ["created"] * 17
            assert model.batches == [1, 16]
            assert (await mem.stats()).memories == 17

    try:
        asyncio.run(scenario())
    finally:
        model.release.set()


def test_async_writes_are_applied_in_the_order_they_were_made(tmp_path: Path) -> None:
    engine = Engram(SqliteMemoryStore(tmp_path / "memory.db"))

    async def scenario() -> None:
        async with AsyncEngram(engine) as mem:
            # A remember, an update on the writer thread, a remember again, made at once.
            await asyncio.gather(mem.remember("one", key="doc"), mem.update("doc", content="two"),
                                 mem.remember("three", key="doc"), mem.forget("doc"),
                                 mem.remember("four", key="doc"))
            assert (await mem.get("doc")).content == "four"

    asyncio.run(scenario())


def test_a_write_cancelled_while_in_its_thread_still_holds_back_the_writes_made_after_it(tmp_path: Path) -> None:
    # The cancelled await does not stop remember_many in the writer thread (documented), so the
    # remember made after it must still be applied after it, not slip into the queue meanwhile.
    embedder = GatedEmbedder()
    engine = _engine(tmp_path, embedder)

    async def scenario() -> None:
        async with AsyncEngram(engine) as mem:
            bulk = asyncio.create_task(mem.remember_many([{"content": "SLOW first version", "key": "doc"}]))
            assert await asyncio.to_thread(embedder.started.wait, 60)
            bulk.cancel()
            later = asyncio.create_task(mem.remember("second version", key="doc"))
            # A bound for the old behaviour to show (the remember committed at once); with the
            # write held back it just waits, and the assertions below hold whatever the timing.
            await asyncio.wait([later], timeout=1)
            embedder.gate.set()
            assert (await later).action == "updated"
            assert (await mem.get("doc")).content == "second version"
            assert [v.content for v in await mem.versions("doc")] == ["SLOW first version"]

    try:
        asyncio.run(scenario())
    finally:
        embedder.gate.set()


def test_close_waits_for_calls_in_flight_and_refuses_later_ones_clearly(tmp_path: Path) -> None:
    embedder = GatedEmbedder()
    engine = _engine(tmp_path, embedder)
    engine.remember("python packaging notes", key="notes")

    async def scenario() -> None:
        mem = AsyncEngram(engine)
        view = mem.for_agent("bob")
        recall = asyncio.create_task(mem.recall("SLOW python packaging", touch=False))  # held in the model
        assert await asyncio.to_thread(embedder.started.wait, 60)
        closing = asyncio.create_task(mem.close())
        await asyncio.wait([closing], timeout=1)  # (the old close finished here, under the recall)
        assert mem.closed and view.closed
        # In Engram's words, read or write as the call would have (was "open a new one" alone).
        for refused, to in ((mem.recall("python"), "read"), (mem.remember("too late"), "write"), (view.count(), "read"),
                            (mem.update("notes", importance=1), "write"), (mem.history.recent("cli:s1"), "read"),
                            (mem.history.append("cli:s1", "user", "too late"), "write")):
            with pytest.raises(StorageError) as caught:
                await refused
            assert str(caught.value) == f"this engram is closed: open a new one to {to}"
        embedder.gate.set()
        assert [hit.memory.key for hit in await recall] == ["notes"]  # made before close: answered
        await closing
        await mem.close()  # a second close returns at once, as Engram.close does
        with pytest.raises(StorageError, match="closed"):
            await mem.get("notes")

    try:
        asyncio.run(scenario())
    finally:
        embedder.gate.set()
    assert engine.closed
    # The closed engine refuses in the same words, from the same place.
    for call, to in ((lambda: engine.recall("python"), "read"), (lambda: engine.remember("too late"), "write")):
        with pytest.raises(StorageError) as caught:
            call()
        assert str(caught.value) == f"this engram is closed: open a new one to {to}"


def test_two_event_loops_in_two_threads_share_one_async_engram(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    mem = AsyncEngram(engine)
    errors: list[BaseException] = []

    def agent_loop(name: str) -> None:
        async def work() -> None:
            for i in range(30):
                await asyncio.gather(mem.remember(f"{name} note {i}", key=f"{name}-{i}"),
                                     mem.update(f"{name}-{i}", importance=0.9), mem.recall("note", touch=False))
        try:
            asyncio.run(work())
        except BaseException as exc:  # noqa: BLE001 - reported by the test below
            errors.append(exc)

    # Daemon threads with a bound: a loop hung on the other loop's futures fails the test, not the run.
    threads = [threading.Thread(target=agent_loop, args=(name,), daemon=True) for name in ("ann", "ben")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not any(thread.is_alive() for thread in threads), "a loop hung"
    assert errors == []
    assert engine.count() == 60
    assert {m.importance for m in engine.list(limit=100)} == {0.9}
    asyncio.run(mem.close())


# What Engram has that AsyncEngram deliberately offers otherwise (docs/integrations.md says why).
SYNC_ONLY = {
    "from_settings": "AsyncEngram.open",
    "remember_soon": "remember",
    "embedder": "read on `mem.engram`",
}
PLAIN = {"for_agent", "for_session", "subscribe", "closed", "history"}  # no storage work: not awaited


def test_every_public_method_of_engram_has_an_awaitable_twin_with_its_signature() -> None:
    import inspect

    from tests.test_docs import INTEGRATIONS

    for name in (n for n in dir(Engram) if not n.startswith("_")):
        if name in SYNC_ONLY:
            assert f"`{name}`" in INTEGRATIONS and SYNC_ONLY[name] in INTEGRATIONS, name
            continue
        twin = getattr(AsyncEngram, name, None)
        assert twin is not None, f"AsyncEngram has no {name}"
        if name in PLAIN:
            continue
        assert inspect.iscoroutinefunction(twin), name
        assert inspect.signature(twin) == inspect.signature(getattr(Engram, name)), name


# What History has that AsyncHistory leaves on `mem.engram.history` (docs/integrations.md says why).
HISTORY_SYNC_ONLY = {"for_agent": "mem.for_agent(agent).history", "on_close": "`on_close`",
                     "close_with": "`close_with`", "close": "closes with the engine"}


def test_every_public_method_of_history_has_an_awaitable_twin_with_its_signature() -> None:
    import inspect

    from engram.aio import AsyncHistory
    from engram.history.service import History
    from tests.test_docs import INTEGRATIONS

    for name in (n for n in dir(History) if not n.startswith("_")):
        if name in HISTORY_SYNC_ONLY:
            assert HISTORY_SYNC_ONLY[name] in INTEGRATIONS, name
            continue
        twin = getattr(AsyncHistory, name, None)
        assert twin is not None, f"AsyncHistory has no {name}"
        if isinstance(getattr(History, name), property):  # no storage work: not awaited
            assert isinstance(twin, property), name
            continue
        assert inspect.iscoroutinefunction(twin), name
        assert inspect.signature(twin) == inspect.signature(getattr(History, name)), name
        assert f"`{name}`" in INTEGRATIONS, name


def test_async_history_on_a_sqlite_file_keeps_order_and_runs_off_the_loop(
        isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Appends, pops and compactions awaited together from many tasks land in the order they were
    made, each store call in the engine's writer or reader threads, none on the loop's thread."""
    from engram.history.sqlite import SqliteHistoryStore

    ran: list[tuple[str, str]] = []  # (store method, thread name)
    for name in ("append_many", "get_recent", "get_all", "count", "pop_newest", "discard_if_unchanged",
                 "set_summary", "get_summary"):
        method = getattr(SqliteHistoryStore, name)

        def recorded(self, *args, __name=name, __method=method, **kwargs):  # type: ignore[no-untyped-def]
            ran.append((__name, threading.current_thread().name))
            return __method(self, *args, **kwargs)

        monkeypatch.setattr(SqliteHistoryStore, name, recorded)

    async def scenario() -> None:
        async with await AsyncEngram.open(agent="alice", embeddings={"provider": "none"}) as mem:
            history = mem.history
            assert history.agent == "alice" and mem.for_agent("bob").history.agent == "bob"
            # 20 appends to one conversation and 10 to another, made at once and interleaved.
            calls = []
            for i in range(20):
                calls.append(history.append("web:a", "user" if i % 2 == 0 else "assistant", f"a{i}"))
                if i % 2 == 0:
                    calls.append(history.append("web:b", "user", f"b{i // 2}"))
            calls.append(history.count("web:a"))  # a read beside them (its answer depends on timing)
            stored = await asyncio.gather(*calls)
            assert [m.content for m in stored[:3]] == ["a0", "b0", "a1"]
            assert [m.content for m in await history.all("web:a")] == [f"a{i}" for i in range(20)]
            assert [m.content for m in await history.all("web:b")] == [f"b{i}" for i in range(10)]
            # Two pops, an append and two more pops made together: each pop takes its own message,
            # in order; the append lands between them.
            popped = await asyncio.gather(history.pop_newest("web:a"), history.pop_newest("web:a"),
                                          history.append("web:a", "user", "again"),
                                          history.pop_newest("web:a"), history.pop_newest("web:a"))
            assert [popped[0].content, popped[1].content, popped[3].content, popped[4].content] == [
                "a19", "a18", "again", "a17"]
            compacted, after = await asyncio.gather(history.compact("web:a", force=True), history.append(
                "web:a", "assistant", "after compaction"))
            assert compacted.compacted
            kept = [m.content for m in await history.all("web:a")]
            assert kept[-1] == "after compaction" and "a0" not in kept and len(kept) == 11
            assert await history.summary("web:a") == compacted.summary
            assert await history.conversations() == ["web:a", "web:b"]
            assert (await history.restore("web:b"))[0].content == "b0"
            with pytest.raises(ValidationError) as err:
                await history.append("web:a", "wizard", "hi")
            assert err.value.field == "role"
            # Close answers the history calls made before it, and refuses the ones after.
            late = [asyncio.ensure_future(history.append("web:b", "assistant", f"late{i}")) for i in range(3)]
            await asyncio.sleep(0)  # the tasks take their turns before close begins
            await mem.close()
            assert [t.result().content for t in late] == ["late0", "late1", "late2"]
            with pytest.raises(StorageError):
                await history.count("web:b")
        loop_thread = threading.current_thread().name
        writes = {"append_many", "pop_newest", "discard_if_unchanged"}
        assert ran and all(thread != loop_thread for _, thread in ran)
        assert {thread.split("_")[0] for name, thread in ran if name in writes} == {"engram-writer"}
        assert any(thread.startswith("engram-reader") for name, thread in ran if name == "get_all")

    asyncio.run(scenario())
    with Engram.from_settings(agent="alice", embeddings={"provider": "none"}) as engine:
        assert [m.content for m in engine.history.all("web:b")][-3:] == ["late0", "late1", "late2"]


def test_history_calls_racing_at_first_use_open_one_history(
        isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write (writer thread) and a read (reader pool) made at once both reach the engine's
    history on its first use: it is opened once, not once per thread (a second store left open)."""
    import engram.root

    opened: list[str] = []
    both = threading.Barrier(2, timeout=2)  # two opens at once meet here; one alone goes on after
    real = engram.root.open_history

    def open_history(*args, **kwargs):  # type: ignore[no-untyped-def]
        opened.append(threading.current_thread().name)
        try:
            both.wait()
        except threading.BrokenBarrierError:
            pass
        return real(*args, **kwargs)

    monkeypatch.setattr(engram.root, "open_history", open_history)

    async def scenario() -> None:
        async with await AsyncEngram.open(agent="alice", embeddings={"provider": "none"}) as mem:
            stored, count = await asyncio.gather(mem.history.append("web:a", "user", "hi"), mem.history.count("web:a"))
            assert stored.content == "hi" and count in (0, 1)

    asyncio.run(scenario())
    assert len(opened) == 1


def test_the_methods_added_for_parity_answer_as_the_engine_does(isolated_home: Path) -> None:
    async def scenario() -> None:
        async with await AsyncEngram.open(agent="alice", embeddings={"provider": "none"}) as mem:
            engine = mem.engram  # the same engine, called synchronously: each answer must match
            await mem.remember("the draft", key="draft")
            await mem.remember("the plan", key="plan", links=["draft"])
            await mem.forget("draft")
            plan = await mem.get("plan")
            assert await mem.link_keys([plan]) == engine.link_keys([plan]) == [[]]
            trail = await mem.audit_trail()
            assert [e.action for e in trail] == [e.action for e in engine.audit_trail()]
            gone = next(e.memory_id for e in trail if e.action == "forgotten")
            assert await mem.forgotten([(gone, "alice")]) == engine.forgotten([(gone, "alice")]) == {(gone, "alice")}
            assert await mem.audit_of(gone) == engine.audit_of(gone) != []
            await mem.mark_used([plan])
            assert (await mem.get("plan")).recall_count == plan.recall_count + 1
            summary = await mem.import_from(engine.export_snapshot())
            assert (summary.kind, summary.imported, summary.skipped) == ("snapshot", 0, 1)
            await mem.check_remember("fine")
            for call, field in ((mem.check_remember("x", importance=7), "importance"),
                                (mem.audit_trail(action="exploded"), "action"),
                                (mem.import_from(42), "source")):
                with pytest.raises(ValidationError) as err:
                    await call
                assert err.value.field == field

    asyncio.run(scenario())
