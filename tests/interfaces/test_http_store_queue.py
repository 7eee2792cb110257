"""HTTP stores wait in the write queue as futures: while a batch holds the model, the stores
behind it hold no server thread each, and then share one batch. A real server on a socket, real
clients (the standard library's), a real SQLite file."""

from __future__ import annotations

import http.client
import json
import threading
from pathlib import Path

from engram.auth import TokenStore
from engram.embed import Embedder
from engram.engine import Engram
from engram.interfaces.http.app import create_app
from engram.interfaces.http.serve import BackgroundServer
from engram.store.sqlite import SqliteMemoryStore
from tests.unit.held_writes import HeldModel, eventually, threads_waiting_to_write


def test_http_stores_wait_in_the_queue_without_a_thread_each(tmp_path: Path) -> None:
    model = HeldModel()
    db = tmp_path / "memory.db"
    mem = Engram(SqliteMemoryStore(db), embedder=Embedder(model, batch_size=64))
    tokens = TokenStore.open(db)
    token, _ = tokens.create("default")
    server = BackgroundServer(create_app(mem, tokens, mcp=False)).start()
    host, port = server.url.removeprefix("http://").split(":")
    answers: dict[int, tuple[int, dict[str, object]]] = {}

    def store(i: int) -> None:
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        conn.request("POST", "/api/v1/memory", body=json.dumps({"content": f"stored over http {i}"}),
                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        response = conn.getresponse()
        answers[i] = (response.status, json.loads(response.read()))
        conn.close()

    clients = [threading.Thread(target=store, args=(i,)) for i in range(8)]
    try:
        clients[0].start()
        assert model.first_call.wait(20)
        for client in clients[1:]:
            client.start()
        assert eventually(lambda: mem.writes.waiting == 7)
        assert threads_waiting_to_write() == 0, "a server thread waits for each queued store"
        model.release.set()
        for client in clients:
            client.join(30)
        assert sorted(answers) == list(range(8))
        assert {status for status, _ in answers.values()} == {201}
        assert model.batches == [1, 7]
        for i, (_, body) in answers.items():
            assert body["memory"]["content"] == f"stored over http {i}"  # type: ignore[index]
    finally:
        model.release.set()
        server.stop()
        tokens.close()
        mem.close()
