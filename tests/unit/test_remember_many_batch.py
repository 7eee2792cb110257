"""``Engram.remember_many`` writes its memories as one batch (all or none; the storage failing
half-way is the contract's ``test_remember_many_failing_half_way_stores_nothing``): the model runs
first, 100 items a call, and the rows, vectors and events follow together. Real SQLite files; the
embedder is the only stand-in."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from engram.engine import Engram
from engram.errors import EmbeddingError, StorageError
from engram.events import MemoryEvent
from engram.store.sqlite import SqliteMemoryStore
from engram.testing.fakes import FakeClock, HashingEmbedder


class FailingFromCall(HashingEmbedder):
    """Embeds ``good_calls`` model calls, then fails as a provider past its retries does."""

    def __init__(self, good_calls: int) -> None:
        super().__init__()
        self.good_calls = good_calls
        self.batches: list[int] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.batches.append(len(texts))
        if len(self.batches) > self.good_calls:
            raise EmbeddingError("the provider is down")
        return super().embed(texts)


class SwitchingModels(HashingEmbedder):
    """Embeds, while another engine on the same file stores a vector of another model (as another
    process switching models between this one's look-up and its write does)."""

    def __init__(self, other: Engram) -> None:
        super().__init__()
        self.other = other

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.other.for_agent("bob").remember("another process, another model")
        return super().embed(texts)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


@pytest.fixture
def open_engram(path: Path) -> Iterator[list[Engram]]:
    opened: list[Engram] = []
    yield opened
    for engram in opened:
        engram.close()


def _engram(opened: list[Engram], path: Path, embedder: HashingEmbedder | None) -> Engram:
    engram = Engram(SqliteMemoryStore(path), agent="alice", clock=FakeClock(), embedder=embedder)
    opened.append(engram)
    return engram


def test_progress_counts_each_100_embedded_and_the_end_once_all_is_stored(open_engram: list[Engram],
                                                                           path: Path) -> None:
    embedder = HashingEmbedder()
    mem = _engram(open_engram, path, embedder)
    seen: list[tuple[int, int, int]] = []
    mem.remember_many(({"content": f"note number {i} on the garden"} for i in range(250)),
                      progress=lambda done, total: seen.append((done, total, mem.count())))
    # Nothing is stored before the batch is written whole; the end is told once it is.
    assert seen == [(100, 250, 0), (200, 250, 0), (250, 250, 250)]
    assert embedder.calls == 250 and not mem.store.missing_vectors()


def test_a_model_failing_part_way_keeps_the_vectors_made_and_warns_the_rest(open_engram: list[Engram],
                                                                           path: Path) -> None:
    model = FailingFromCall(good_calls=1)
    mem = _engram(open_engram, path, model)
    events: list[MemoryEvent] = []
    mem.subscribe(events.append)
    results = mem.remember_many({"content": f"fact {i} about tomatoes"} for i in range(230))
    assert model.batches == [100, 100]  # not called again once it failed
    assert [r.action for r in results] == ["created"] * 230 and mem.count() == 230
    embedded = mem.store.vectors_for([r.memory.id for r in results])
    assert set(embedded) == {r.memory.id for r in results[:100]}
    assert all(not r.warnings for r in results[:100])
    assert all(len(r.warnings) == 1 and r.warnings[0].startswith("not embedded (the provider is down)")
               for r in results[100:])
    assert [(e.kind, len(e.memories)) for e in events] == [("stored", 230)]
    model.good_calls = len(model.batches) + 1  # the model is back: the rest is embedded later
    assert mem.embed_missing() == 130 and not mem.store.missing_vectors()


def test_a_keyed_item_whose_text_is_unchanged_keeps_its_vector_unembedded(open_engram: list[Engram],
                                                                            path: Path) -> None:
    embedder = HashingEmbedder()
    mem = _engram(open_engram, path, embedder)
    (first,) = mem.remember_many([{"content": "the deploy runs on Mondays", "key": "deploy"}])
    vector = mem.store.vectors_for([first.memory.id])[first.memory.id]
    assert embedder.calls == 1
    retagged, reworded = mem.remember_many([
        {"content": "the deploy runs on Mondays", "key": "deploy", "tags": ["ops"]},
        {"content": "the deploy runs on Tuesdays", "key": "other", "tags": ["ops"]},
    ])
    assert (retagged.action, reworded.action) == ("updated", "created")
    assert embedder.calls == 2  # only the new text went to the model
    assert mem.store.vectors_for([first.memory.id])[first.memory.id].tolist() == vector.tolist()


def test_models_switched_meanwhile_store_the_batch_without_vectors(open_engram: list[Engram], path: Path) -> None:
    other = _engram(open_engram, path, HashingEmbedder(model="other"))
    mem = _engram(open_engram, path, SwitchingModels(other))
    results = mem.remember_many([{"content": "first of two"}, {"content": "second of two"}])
    assert [r.action for r in results] == ["created", "created"]
    assert all(any("reindex" in w for w in r.warnings) for r in results)
    assert mem.store.vectors_for([r.memory.id for r in results]) == {}
    assert mem.count() == 2


class OtherWriterMeanwhile(HashingEmbedder):
    """Embeds while another engine on the same file changes what is stored (another process
    writing while this one's model runs): ``write(other)`` runs once, at the first model call."""

    def __init__(self, other: Engram, write: Callable[[Engram], object]) -> None:
        super().__init__()
        self.other, self.write = other, write

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.write is not None:
            write, self.write = self.write, None
            write(self.other)
        return super().embed(texts)


def test_a_keyed_item_keeps_the_tags_and_metadata_stored_when_it_is_written(open_engram: list[Engram],
                                                                           path: Path) -> None:
    # The stored tags and metadata a keyed item keeps were read before the model ran: another
    # process's change to them meanwhile (minutes, for a large batch) was silently reverted.
    other = _engram(open_engram, path, HashingEmbedder())
    other.remember("the plan is to ship on Friday", key="plan", tags=["work"], metadata={"owner": "ana"})
    mem = _engram(open_engram, path, OtherWriterMeanwhile(other, lambda o: o.remember(
        "the plan is to ship on Friday", key="plan", tags=["work", "urgent"], metadata={"owner": "bo"})))
    (result,) = mem.remember_many([{"content": "the plan is to ship on Monday", "key": "plan"}])
    assert result.action == "updated"
    stored = mem.get("plan")
    assert stored.content == "the plan is to ship on Monday"
    assert stored.tags == ("work", "urgent") and stored.metadata == {"owner": "bo"}
    assert not mem.store.missing_vectors()


def test_a_keyed_item_whose_stored_text_changed_meanwhile_gets_its_vector(open_engram: list[Engram],
                                                                          path: Path) -> None:
    # The item says what was stored when the batch began, so the model was not asked for it; another
    # process changed the text meanwhile, so the item's write changes it back and needs its vector.
    other = _engram(open_engram, path, HashingEmbedder())
    other.remember("the deploy runs on Mondays", key="deploy")
    mem = _engram(open_engram, path, OtherWriterMeanwhile(other, lambda o: o.remember(
        "the deploy runs on Fridays", key="deploy")))
    results = mem.remember_many([{"content": "the deploy runs on Mondays", "key": "deploy"},
                                 {"content": "a new note on the garden"}])
    assert [r.action for r in results] == ["updated", "created"]
    assert mem.get("deploy").content == "the deploy runs on Mondays"
    assert not mem.store.missing_vectors() and not results[0].warnings


class StoreBeforeAllOrNothing(SqliteMemoryStore):
    """A plug-in store written before ``write_batch`` took ``all_or_nothing``: its batch keeps each
    write that succeeds, as the contract then asked."""

    def write_batch(self, writes, *, now, identity):  # noqa: ANN001, ANN201 - the plug-in's own, older signature
        return super().write_batch(writes, now=now, identity=identity)


def test_a_store_that_cannot_write_all_or_nothing_is_named_and_nothing_is_stored(path: Path) -> None:
    # It raised Python's TypeError (write_batch() got an unexpected keyword argument) after the model ran.
    embedder = HashingEmbedder()
    mem = Engram(StoreBeforeAllOrNothing(path), agent="alice", clock=FakeClock(), embedder=embedder)
    try:
        with pytest.raises(StorageError) as err:
            mem.remember_many([{"content": "first of two"}, {"content": "second of two"}])
        assert "all or nothing" in str(err.value) and "remember" in str(err.value)
        assert mem.count() == 0 and embedder.calls == 0
        assert mem.remember("one at a time still works").action == "created"  # the write queue's own batches
    finally:
        mem.close()
