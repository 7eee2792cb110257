"""Two ``engram serve`` processes on different ports over one PostgreSQL database: what one
stores, the other recalls. Real subprocesses (``--port 0``), real sockets, a real httpx client;
tokens, history and the audit trail are shared through the database too."""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from engram.auth import PostgresTokenStore

ENGRAM = [sys.executable, "-c", "from engram.interfaces.cli.app import main; main()"]
_PAGE = re.compile(r"web page:\s+(http://[0-9.:]+)/\?token=(\S+)")


class Server:
    def __init__(self, url: str, home: Path) -> None:
        env = {**os.environ, "ENGRAM_HOME": str(home), "ENGRAM_DATABASE_URL": url, "COLUMNS": "400",
               # Text recall is enough to show sharing; the local model would cost each process seconds.
               "ENGRAM_EMBEDDINGS__PROVIDER": "none"}
        self.proc = subprocess.Popen([*ENGRAM, "serve", "--port", "0", "--no-mcp"], env=env,
                                     stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.log: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()
        self.base, self.page_token = self._wait_for_address()

    def _pump(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.put(line)

    def _wait_for_address(self) -> tuple[str, str]:
        while True:
            try:
                line = self.lines.get(timeout=120)
            except queue.Empty:
                raise AssertionError("engram serve printed no address:\n" + "".join(self.log)) from None
            self.log.append(line)
            found = _PAGE.search(line)
            if found:
                return found.group(1), found.group(2)

    def client(self, token: str) -> httpx.Client:
        return httpx.Client(base_url=self.base, headers={"Authorization": f"Bearer {token}"}, timeout=30)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def two_servers(pg_url: str, tmp_path: Path) -> Iterator[tuple[Server, Server]]:
    servers: list[Server] = []
    try:
        for name in ("host-a", "host-b"):
            servers.append(Server(pg_url, tmp_path / name))
        yield servers[0], servers[1]
    finally:
        for server in servers:
            server.stop()


def test_a_memory_stored_through_one_server_is_recalled_through_the_other(
    two_servers: tuple[Server, Server], pg_url: str, tmp_path: Path
) -> None:
    a, b = two_servers
    assert a.base != b.base
    tokens = PostgresTokenStore.connect(pg_url)
    try:
        alice, _ = tokens.create("alice", "shared")  # created once, accepted by both servers
    finally:
        tokens.close()
    with a.client(alice) as via_a, b.client(alice) as via_b:
        stored = via_a.post("/api/v1/memory", json={"content": "The staging database lives in Frankfurt",
                                                    "key": "staging-db", "tags": ["infra"]})
        assert stored.status_code == 201, stored.text
        memory_id = stored.json()["memory"]["id"]

        found = via_b.get("/api/v1/memory/search", params={"q": "where is the staging database"})
        assert found.status_code == 200, found.text
        hits = found.json()["hits"]
        assert hits and hits[0]["memory"]["id"] == memory_id
        assert hits[0]["memory"]["content"] == "The staging database lives in Frankfurt"

        # An update through B is what A reads next; the version history is shared too.
        updated = via_b.post("/api/v1/memory", json={"content": "The staging database moved to Dublin",
                                                     "key": "staging-db"})
        assert updated.status_code == 201 and updated.json()["memory"]["id"] == memory_id
        assert via_a.get("/api/v1/memory/staging-db").json()["content"] == "The staging database moved to Dublin"
        versions = via_a.get("/api/v1/memory/staging-db/versions").json()["versions"]
        assert [v["content"] for v in versions] == ["The staging database lives in Frankfurt"]

        # History appended through A is read through B, and each server's audit shows both writes.
        assert via_a.post("/api/v1/history/web:u1", json={"role": "user", "content": "hi from A"}).status_code == 201
        messages = via_b.get("/api/v1/history/web:u1").json()["messages"]
        assert [m["content"] for m in messages] == ["hi from A"]
        # Recalls are audited too (reads); the writes are the two newest changes.
        actions = [e["action"] for e in via_b.get("/api/v1/audit").json()["entries"] if e["action"] != "recalled"]
        assert actions[:2] == ["updated", "stored"]

    # Each server's own page token (agent "default") works on the other server as well.
    with b.client(a.page_token) as cross:
        assert cross.get("/api/v1/stats").status_code == 200
    with a.client("eg_00000000_not-a-token") as nobody:
        assert nobody.get("/api/v1/stats").status_code == 401
    assert not list(tmp_path.glob("*/auth.db")) and not list(tmp_path.glob("*/memory.db"))  # all in PostgreSQL
