"""The single writer's embedding-identity look-up (engram.writes): a batch is embedded without
waiting for the commit of the batch before it, and a model switched by another handle meanwhile
still ends in stored memories with a warning, not refused writes. Real SQLite files."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from engram import writes
from engram.audit import AuditQuery
from engram.embed import Embedder, EmbeddingIdentity
from engram.engine import Engram
from engram.events import MemoryEvent
from engram.files.sync import FileSync
from engram.store.sqlite import SqliteMemoryStore
from engram.testing.provider_servers import bag_of_words_vector
from tests.unit.held_writes import eventually


class BagOfWords:
    """A real hashed bag-of-words provider that tells ``on_call`` when it is asked to embed."""

    def __init__(self, name: str = "hashed", dims: int = 16) -> None:
        self.identity = EmbeddingIdentity("bow", name, dims)
        self.on_call: Callable[[], None] = lambda: None
        self.calls = 0

    def embed_batch(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        self.on_call()
        return [bag_of_words_vector(t, self.identity.dims) for t in texts]


def test_a_batch_is_embedded_while_the_database_lock_is_held_by_a_commit(tmp_path: Path) -> None:
    store = SqliteMemoryStore(tmp_path / "memory.db")
    provider = BagOfWords()
    mem = Engram(store, embedder=Embedder(provider, batch_size=64))
    try:
        mem.remember("the first memory looks the store's embedding identity up")
        embedded = threading.Event()
        provider.on_call = embedded.set
        answers: list[object] = []
        with store.db.lock:  # as the batch before holds it while it commits
            writer = threading.Thread(target=lambda: answers.append(mem.remember("the second memory")))
            writer.start()
            # Before, the identity look-up took this lock first: the model waited for the commit.
            assert embedded.wait(20), "the second batch waited for the database lock before embedding"
        writer.join(20)
        stored = mem.get(answers[0].memory.id)  # type: ignore[attr-defined]
        assert stored is not None and stored.content == "the second memory"
        assert store.vectors_for([stored.id]), "the second memory was stored without its vector"
    finally:
        mem.close()


@dataclass
class Switched:
    """An engine whose store another handle has just reindexed for another model."""

    mem: Engram
    store: SqliteMemoryStore
    provider: BagOfWords
    first_id: str


@pytest.fixture
def switched(tmp_path: Path) -> Iterator[Switched]:
    db = tmp_path / "memory.db"
    store = SqliteMemoryStore(db)
    provider = BagOfWords()
    mem = Engram(store, embedder=Embedder(provider, batch_size=64))
    other = SqliteMemoryStore(db)
    try:
        first = mem.remember("stored with this model's vector")
        assert store.vectors_for([first.memory.id])
        # Another process reindexes the file for another model within the second the look-up is trusted.
        other.clear_vectors()
        other.set_vectors("bow:other:16", [(first.memory.id, bag_of_words_vector("x", 16))])
        yield Switched(mem, store, provider, first.memory.id)
    finally:
        other.close()
        mem.close()


def test_a_model_switched_by_another_handle_meanwhile_stores_without_vectors_and_warns(switched: Switched) -> None:
    second = switched.mem.remember("stored after the switch")
    assert second.action == "created"
    assert switched.mem.get(second.memory.id) is not None
    assert not switched.store.vectors_for([second.memory.id])
    assert any("bow:other:16" in w and "reindex" in w for w in second.warnings), second.warnings
    calls = switched.provider.calls
    third = switched.mem.remember("the switch is known now: nothing is embedded for nothing")
    assert switched.provider.calls == calls and any("reindex" in w for w in third.warnings)


def test_the_identity_is_looked_up_again_after_a_second(switched: Switched, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writes, "IDENTITY_RECHECK_S", 0.0)  # the second has passed
    calls = switched.provider.calls
    second = switched.mem.remember("the look-up sees the switch before embedding")
    assert switched.provider.calls == calls, "a text whose vector cannot be kept was embedded"
    assert any("reindex" in w for w in second.warnings)


def test_a_batch_of_concurrent_writes_is_announced_once_to_the_mirror_and_the_audit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Agents storing at once through one engine: the writes that queued behind the first batch
    # are stored as the next one, and its events reach each batch listener in one call (the
    # memory folder is written once for them, the audit rows are inserted together), while a
    # per-event listener still sees one event per write; each with its own agent.
    provider = BagOfWords()
    release = threading.Event()
    first_call = threading.Event()

    def hold_the_first_batch() -> None:
        if not first_call.is_set():
            first_call.set()
            assert release.wait(20)

    provider.on_call = hold_the_first_batch
    reflected: list[int] = []
    passes = FileSync._reflect

    def counting(self: FileSync, batches_of_events: list[list[MemoryEvent]]) -> list[None]:
        reflected.append(sum(len(b) for b in batches_of_events))
        return passes(self, batches_of_events)

    monkeypatch.setattr(FileSync, "_reflect", counting)
    mem = Engram.from_settings(home=tmp_path, path=tmp_path / "memory.db")
    mem.embedder = Embedder(provider, batch_size=64)
    batches: list[list[tuple[str, str]]] = []
    singles: list[str] = []
    mem.events.subscribe_batches(lambda events: batches.append([(e.kind, str(e.scope)) for e in events]))
    mem.subscribe(lambda event: singles.append(event.memories[0].content))
    agents = [f"agent{i}" for i in range(6)]
    threads = [threading.Thread(target=mem.for_agent(agent).remember, args=(f"{agent} likes tea number {i}",))
               for i, agent in enumerate(agents)]
    try:
        threads[0].start()
        assert first_call.wait(20)
        for thread in threads[1:]:
            thread.start()
        assert eventually(lambda: mem.writes.waiting == len(agents) - 1)
        release.set()
        for thread in threads:
            thread.join(20)
    finally:
        release.set()
    try:
        assert batches == [[("stored", "agent:agent0")],
                           [("stored", f"agent:{agent}") for agent in agents[1:]]]
        assert sorted(singles) == sorted(f"{agent} likes tea number {i}" for i, agent in enumerate(agents))
        assert reflected == [1, len(agents) - 1]  # one mirror pass per batch
        for i, agent in enumerate(agents):
            text = (tmp_path / "memory" / "agents" / agent / "knowledge.md").read_text("utf-8")
            assert f"{agent} likes tea number {i}" in text
        rows = mem.backend.audit_log().query(AuditQuery(action="stored"))
        assert sorted(r.actor_scope for r in rows) == sorted(f"agent:{a}" for a in agents)
    finally:
        mem.close()
