"""Concurrent stores over HTTP share one embedding batch and one transaction (issue 21): a real
server on a SQLite file, real clients on real sockets. A bag-of-words provider holds its first
call until released, so the other clients' stores queue behind it, as they do behind a busy model."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from engram.auth import TokenStore
from engram.embed import Embedder, EmbeddingIdentity
from engram.engine import Engram
from engram.interfaces.http.app import create_app
from engram.interfaces.http.serve import BackgroundServer
from engram.store.sqlite import SqliteMemoryStore
from engram.testing.provider_servers import bag_of_words_vector


class GatedBagOfWords:
    """A real (hashed bag-of-words) provider whose first call waits until ``release`` is set."""

    def __init__(self) -> None:
        self.identity = EmbeddingIdentity("bow", "hashed", 16)
        self.batches: list[list[str]] = []
        self.entered = threading.Event()
        self.release = threading.Event()

    def embed_batch(self, texts: list[str]) -> list[list[float]]:
        self.batches.append(list(texts))
        self.entered.set()
        assert self.release.wait(30)
        return [bag_of_words_vector(t, self.identity.dims) for t in texts]


@dataclass
class Server:
    url: str
    token: str
    engram: Engram
    provider: GatedBagOfWords
    commits: list[str] = field(default_factory=list)

    def post(self, body: dict[str, object], out: dict[str, httpx.Response], name: str) -> None:
        with httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {self.token}"}, timeout=60) as c:
            out[name] = c.post("/api/v1/memory", json=body)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    db = tmp_path / "memory.db"
    store = SqliteMemoryStore(db)
    # A store-level refusal for one write of a batch: SQLite aborts inserting this content.
    with store.db.write() as conn:
        conn.execute("CREATE TRIGGER refuse_poison BEFORE INSERT ON memories WHEN NEW.content LIKE '%poison%'"
                     " BEGIN SELECT RAISE(ABORT, 'poisoned content refused'); END")
    provider = GatedBagOfWords()
    engram = Engram(store, embedder=Embedder(provider, batch_size=64))
    tokens = TokenStore.open(db)
    token, _ = tokens.create("alice", "test")
    running = BackgroundServer(create_app(engram, tokens, mcp=False)).start()
    served = Server(running.url, token, engram, provider)
    # Every COMMIT on the store's connection, as SQLite runs it.
    store.db.conn.set_trace_callback(lambda sql: served.commits.append(sql) if sql.strip().upper() == "COMMIT" else None)
    try:
        yield served
    finally:
        running.stop()
        tokens.close()
        engram.close()


def test_concurrent_stores_commit_in_one_transaction_each_with_its_own_answer(server: Server) -> None:
    answers: dict[str, httpx.Response] = {}
    first = threading.Thread(target=server.post, args=({"content": "the first memory"}, answers, "first"))
    first.start()
    assert server.provider.entered.wait(30)  # the first store is inside the model
    bodies = {f"c{i}": {"content": f"concurrent memory number {i}", "tags": [f"t{i}"]} for i in range(12)}
    bodies["poison"] = {"content": "a poison memory the database refuses"}
    bodies["bad"] = {"content": "a memory with an unreadable time", "valid_from": "not a time at all"}
    threads = {name: threading.Thread(target=server.post, args=(body, answers, name)) for name, body in bodies.items()}
    for t in threads.values():
        t.start()
    deadline = time.monotonic() + 30
    while server.engram.writes.waiting < 13 and time.monotonic() < deadline:  # all but "bad" queued
        time.sleep(0.01)
    assert server.engram.writes.waiting == 13
    threads["bad"].join(30)
    assert answers["bad"].status_code == 422  # refused on its own thread, before the queue
    assert answers["bad"].json()["field"] == "valid_from"
    server.commits.clear()
    server.provider.release.set()
    for t in [first, *threads.values()]:
        t.join(60)

    # The 13 queued stores: one model call and one commit (the first store's own commit came after clear()).
    assert [len(b) for b in server.provider.batches] == [1, 13]
    assert len(server.commits) == 2
    assert answers["first"].status_code == 201
    assert answers["poison"].status_code == 503
    # What failed and where, by the file's name: the server's path is the operator's (its log).
    assert answers["poison"].json()["detail"].startswith("SQLite error on …/memory.db: poisoned content refused")
    ids = {}
    for i in range(12):
        response = answers[f"c{i}"]
        assert response.status_code == 201, response.text
        body = response.json()
        assert body["action"] == "created" and body["memory"]["content"] == f"concurrent memory number {i}"
        assert body["memory"]["tags"] == [f"t{i}"]
        ids[body["memory"]["id"]] = body["memory"]["content"]
    assert len(ids) == 12  # each acknowledged with its own id
    store = server.engram.store
    stored = {m.id: m.content for m in store.get_many(list(ids))}
    assert stored == ids
    assert set(store.vectors_for(list(ids))) == set(ids)  # vectors committed with their rows
    assert server.engram.for_agent("alice").count() == 13  # the first and the 12; nothing of the poison or the bad one


def test_one_client_storing_alone_is_answered_at_once(server: Server) -> None:
    server.provider.release.set()
    answers: dict[str, httpx.Response] = {}
    for i in range(3):
        server.post({"content": f"alone {i}", "key": "same-key"}, answers, str(i))
        assert answers[str(i)].status_code == 201
    assert [a.json()["action"] for a in answers.values()] == ["created", "updated", "updated"]
    assert [len(b) for b in server.provider.batches] == [1, 1, 1]
    assert server.engram.for_agent("alice").count() == 1
