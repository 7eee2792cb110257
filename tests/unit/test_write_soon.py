"""Writes that do not wait (``Engram.remember_soon``, under ``AsyncEngram.remember`` and the HTTP
store route): they join the single writer's batches as futures, with no thread waiting for each,
and answer exactly what ``remember`` answers. Real SQLite files."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path

import pytest

from engram.drain import Drain
from engram.embed import Embedder
from engram.engine import Engram
from engram.errors import NotFoundError, ValidationError
from engram.model import WriteResult
from engram.store.sqlite import SqliteMemoryStore
from tests.unit.held_writes import HeldModel, eventually, threads_waiting_to_write


@pytest.fixture
def held(tmp_path: Path) -> Iterator[tuple[Engram, HeldModel]]:
    model = HeldModel()
    mem = Engram(SqliteMemoryStore(tmp_path / "memory.db"), embedder=Embedder(model, batch_size=64))
    try:
        yield mem, model
    finally:
        model.release.set()
        mem.close()


def test_writes_queued_as_futures_share_one_batch_and_no_thread_waits_for_them(held: tuple[Engram, HeldModel]) -> None:
    mem, model = held
    first = mem.remember_soon("the first write holds the model")
    assert model.first_call.wait(20)
    threads_before = set(threading.enumerate())
    agents = [f"agent{i}" for i in range(6)]
    queued = [mem.for_agent(agent).remember_soon(f"{agent} prefers green tea") for agent in agents]
    assert mem.writes.waiting == len(agents)
    started = set(threading.enumerate()) - threads_before  # (threads that ended meanwhile do not count)
    assert not started, f"a thread was started per queued write: {started}"
    assert threads_waiting_to_write() == 0
    model.release.set()
    results = [future.result(20) for future in [first, *queued]]
    assert model.batches == [1, len(agents)]  # the six waited together and were embedded together
    assert [r.action for r in results] == ["created"] * (len(agents) + 1)
    for agent, result in zip(agents, results[1:], strict=True):
        assert result.memory.scope.agent == agent
        assert mem.for_agent(agent).get(result.memory.id).content == f"{agent} prefers green tea"
        assert mem.store.vectors_for([result.memory.id])


def test_bad_input_raises_at_once_and_queues_nothing(held: tuple[Engram, HeldModel]) -> None:
    mem, model = held
    model.release.set()
    mem.remember("kept before the bad write", tags=["keep"])
    with pytest.raises(ValidationError) as err:
        mem.remember_soon("   ")
    assert err.value.field == "content"
    with pytest.raises(ValidationError) as err:
        mem.remember_soon("fine content", importance=7)
    assert err.value.field == "importance"
    assert mem.writes.waiting == 0
    assert [m.content for m in mem.list()] == ["kept before the bad write"]


def test_an_unknown_link_target_refuses_that_write_alone(held: tuple[Engram, HeldModel]) -> None:
    mem, model = held
    target = mem.remember_soon("a real target", key="target")  # its batch holds the model
    assert model.first_call.wait(20)
    linked = mem.remember_soon("links to the target", links=["target"])
    broken = mem.remember_soon("links to nothing", links=["no-such-memory"])
    after = mem.remember_soon("stored after the broken one")
    model.release.set()
    with pytest.raises(NotFoundError):
        broken.result(20)
    assert after.result(20).action == "created"
    assert linked.result(20).memory.links == (target.result(20).memory.id,)
    assert model.batches == [1, 2]  # the refused write was not embedded
    assert "links to nothing" not in [m.content for m in mem.list(limit=100)]


def test_a_keyed_update_keeps_the_stored_tags_and_metadata_it_was_not_given(
        held: tuple[Engram, HeldModel], monkeypatch: pytest.MonkeyPatch) -> None:
    mem, model = held
    model.release.set()
    mem.remember("first wording", key="plan", tags=["work", "q3"], metadata={"owner": "ana"})
    reads: list[str] = []
    get = mem.store.get
    monkeypatch.setattr(mem.store, "get", lambda ref, *args, **kwargs: reads.append(ref) or get(ref, *args, **kwargs))
    updated = mem.remember_soon("second wording", key="plan").result(20)
    # One read of the stored row serves the tags it keeps and the check whether its text changed.
    assert reads == ["plan"]
    monkeypatch.undo()
    assert updated.action == "updated"
    assert set(updated.memory.tags) == {"work", "q3"}
    assert updated.memory.metadata == {"owner": "ana"}
    replaced = mem.remember_soon("third wording", key="plan", tags=[]).result(20)
    assert replaced.memory.tags == () and replaced.memory.metadata == {"owner": "ana"}


def test_remember_many_keeps_what_a_keyed_item_does_not_give_as_remember_does(tmp_path: Path) -> None:
    mem = Engram(SqliteMemoryStore(tmp_path / "memory.db"))
    try:
        mem.remember("first wording", key="plan", tags=["work"], metadata={"owner": "ana"})
        (kept,) = mem.remember_many([{"content": "second wording", "key": "plan"}])
        assert kept.action == "updated"
        assert mem.get("plan").tags == ("work",) and mem.get("plan").metadata == {"owner": "ana"}
        # Given ones replace (even empty), and a later item of the same call keeps what an earlier stored.
        mem.remember_many([{"content": "third", "key": "plan", "tags": []},
                           {"content": "fourth", "key": "plan", "metadata": {"owner": "bo"}}])
        stored = mem.get("plan")
        assert (stored.content, stored.tags, stored.metadata) == ("fourth", (), {"owner": "bo"})
    finally:
        mem.close()


def test_a_future_cancelled_while_queued_is_not_stored(held: tuple[Engram, HeldModel]) -> None:
    mem, model = held
    blocker = mem.remember_soon("the first write holds the model")
    assert model.first_call.wait(20)
    dropped = mem.remember_soon("cancelled before its batch")
    kept = mem.remember_soon("queued beside the cancelled one")
    assert dropped.cancel()
    model.release.set()
    assert blocker.result(20).action == "created" and kept.result(20).action == "created"
    assert model.batches == [1, 1]
    contents = [m.content for m in mem.list()]
    assert "cancelled before its batch" not in contents and "queued beside the cancelled one" in contents


def test_waiting_callers_and_futures_share_batches(held: tuple[Engram, HeldModel]) -> None:
    mem, model = held
    blocker = mem.remember_soon("the first write holds the model")
    assert model.first_call.wait(20)
    answers: list[WriteResult] = []
    caller = threading.Thread(target=lambda: answers.append(mem.remember("from a waiting thread")))
    caller.start()
    assert eventually(lambda: mem.writes.waiting == 1)
    soon = mem.remember_soon("from a future")
    model.release.set()
    caller.join(20)
    assert blocker.result(20).action == "created" and soon.result(20).action == "created"
    assert [a.action for a in answers] == ["created"]
    assert model.batches == [1, 2]


def test_a_future_gets_the_error_of_a_batch_that_failed(tmp_path: Path) -> None:
    def run(items: list[str]) -> list[str]:
        if "boom" in items:
            raise RuntimeError("the batch failed")
        return [item.upper() for item in items]

    drain: Drain[str, str] = Drain(run, max_weight=4)
    failed: Future[str] = drain.submit_soon("boom")
    with pytest.raises(RuntimeError, match="the batch failed"):
        failed.result(20)
    assert drain.submit_soon("fine").result(20) == "FINE"
    assert drain.submit("again") == "AGAIN"


def test_closing_waits_for_the_writes_already_queued(tmp_path: Path) -> None:
    # A caller that queued writes and closed without awaiting them (an asyncio app shutting
    # down) gets them stored: close used to close the file under the batch, failing most of them.
    model = HeldModel()
    mem = Engram(SqliteMemoryStore(tmp_path / "memory.db"), embedder=Embedder(model, batch_size=64))
    first = mem.remember_soon("the first write holds the model")
    assert model.first_call.wait(20)
    queued = [mem.remember_soon(f"queued fact number {i}") for i in range(40)]
    closing = threading.Thread(target=mem.close)
    closing.start()
    closing.join(0.3)
    assert closing.is_alive(), "close returned while writes were still queued"
    model.release.set()
    closing.join(20)
    assert not closing.is_alive()
    assert [f.result(0).action for f in [first, *queued]] == ["created"] * 41
    reopened = Engram(SqliteMemoryStore(tmp_path / "memory.db"))
    try:
        assert reopened.count() == 41
    finally:
        reopened.close()


def test_a_listener_closing_its_engine_does_not_wait_for_its_own_batch(tmp_path: Path) -> None:
    mem = Engram(SqliteMemoryStore(tmp_path / "memory.db"))
    closed = threading.Event()

    def close_on_store(event: object) -> None:
        mem.close()
        closed.set()

    mem.subscribe(close_on_store)
    mem.remember_soon("stored, then the listener closes the engine").result(20)
    assert closed.is_set()


def test_a_drain_is_idle_only_once_every_batch_is_answered() -> None:
    started, release = threading.Event(), threading.Event()

    def run(items: list[int]) -> list[int]:
        started.set()
        assert release.wait(20)
        return [i * 2 for i in items]

    drain: Drain[int, int] = Drain(run, max_weight=8)
    futures = [drain.submit_soon(i) for i in range(3)]
    assert started.wait(20)
    assert not drain.wait_idle(0.05)
    release.set()
    assert drain.wait_idle(20)
    assert [f.result(0) for f in futures] == [0, 2, 4]


def test_writing_after_close_is_refused_at_once_saying_so(tmp_path: Path) -> None:
    from engram.errors import StorageError

    mem = Engram(SqliteMemoryStore(tmp_path / "memory.db"))
    mem.remember("stored before closing")
    mem.close()
    for write in (lambda: mem.remember("too late"), lambda: mem.remember_soon("too late")):
        with pytest.raises(StorageError, match="closed"):
            write()
    reopened = Engram(SqliteMemoryStore(tmp_path / "memory.db"))
    try:
        assert [m.content for m in reopened.list()] == ["stored before closing"]
    finally:
        reopened.close()


@pytest.mark.parametrize("private", [{"updating": None}, {"new_key": True}, {"derive_valid_from": False}, {"colour": "red"}])
def test_remember_soon_and_check_remember_take_only_remembers_arguments(tmp_path: Path, private: dict) -> None:
    # They passed every keyword on to the private write maker: its internal flags (an update's
    # "updating", the memory folder's "new_key") and, for a misspelt one, Python's error naming
    # _pending_write, a name the caller never used.
    (name,) = private
    with Engram(SqliteMemoryStore(tmp_path / "memory.db")) as mem:
        for call in (mem.remember_soon, mem.check_remember):
            with pytest.raises(TypeError, match=f"{call.__name__}\\(\\) got an unexpected keyword argument '{name}'"):
                call("Ada drinks tea", key="tea", **private)
        assert mem.count() == 0


def test_remember_soon_and_check_remember_take_every_argument_remember_takes(tmp_path: Path) -> None:
    import inspect

    given = {"category": "core", "type": "fact", "tags": ["drinks"], "metadata": {"cup": "blue"}, "importance": 0.75,
             "related_entity": "Ada", "source": "chat", "search_context": "morning", "valid_from": 1_700_000_000.0}
    names = set(inspect.signature(Engram.remember).parameters) - {"self", "content", "key", "layer", "scope", "links",
                                                                   "created_at", "valid_until"}
    assert names == set(given)  # a new argument of remember is added here too
    with Engram(SqliteMemoryStore(tmp_path / "memory.db")) as mem:
        mem.check_remember("Ada drinks tea", key="tea", **given)
        stored = mem.remember_soon("Ada drinks tea", key="tea", **given).result(timeout=30).memory
        assert (stored.key, stored.tags, stored.metadata, stored.related_entity) == ("tea", ("drinks",), {"cup": "blue"}, "Ada")
