"""PostgreSQL going away under a running engram: an ``Engram`` held across a restart of the
server (or its connections ended by the server) needs no restart of its own. The next call after
the server is back succeeds; while it is down, calls fail at once with a StorageError naming the
(redacted) database, never after waiting out the pool's timeout.

The shared session server is not restarted (other tests use it): ending every connection of the
test's database with ``pg_terminate_backend`` is what a restart does to them (the server says
goodbye and closes). A server of the test's own is stopped and started for the outage."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from engram.db.pg_settings import PostgresSettings
from engram.engine import Engram
from engram.errors import StorageError
from engram.store.postgres import PostgresMemoryStore
from engram.testing import pg_server


def _engram(url: str, pool_min_size: int) -> Engram:
    from engram.db.postgres import PgDatabase

    db = PgDatabase.connect(url, PostgresSettings(pool_min_size=pool_min_size, timeout_s=20))
    return Engram(PostgresMemoryStore(db), agent="a")


def _end_connections(admin_url: str, database: str) -> int:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        ended = conn.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = %s"
            " AND pid <> pg_backend_pid()", (database,)).fetchone()
    assert ended is not None
    return int(ended[0])


def test_every_call_after_the_servers_connections_end_succeeds(pg: pg_server.PgTestServer, pg_url: str) -> None:
    mem = _engram(pg_url, pool_min_size=4)
    try:
        mem.remember("the deploy host is db1", key="deploy")
        assert _end_connections(pg.url(), pg_url.rsplit("/", 1)[1]) >= 4
        time.sleep(0.3)  # the goodbyes reach the client's sockets
        # Each of the pool's four dead connections used to fail one call (StorageError: 503).
        for _ in range(6):
            assert [h.memory.key for h in mem.recall("deploy host", mode="text").hits] == ["deploy"]
        mem.remember("stored after the connections ended", key="after")
        assert mem.count() == 2
    finally:
        mem.close()


@pytest.fixture
def own_server() -> Iterator[pg_server.PgTestServer]:
    folder = Path(tempfile.mkdtemp(prefix="engram-pg-restart-"))
    server = pg_server.start(folder / "data")
    try:
        server.execute("CREATE DATABASE engram")
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


def test_a_restarted_server_fails_calls_at_once_while_down_and_serves_the_next_when_back(
        own_server: pg_server.PgTestServer) -> None:
    mem = _engram(own_server.url("engram"), pool_min_size=2)
    try:
        mem.remember("the deploy host is db1", key="deploy")
        own_server.stop()
        for _ in range(4):
            started = time.monotonic()
            with pytest.raises(StorageError, match=r"PostgreSQL postgresql://postgres@127\.0\.0\.1:\d+/engram"):
                mem.recall("deploy host", mode="text")
            # It used to wait out postgres.timeout_s (20 s here) for the pool once its dead
            # connections were used up.
            assert time.monotonic() - started < 5
        time.sleep(3)  # the pool's reconnection backs off (1 s, 2 s, ...) meanwhile
        pg_server.start(own_server.pgdata, port=own_server.port)
        started = time.monotonic()
        assert [h.memory.key for h in mem.recall("deploy host", mode="text").hits] == ["deploy"]
        mem.remember("stored after the restart", key="after")
        assert mem.count() == 2
        # It used to wait for the pool's next attempt, seconds after the server was back.
        assert time.monotonic() - started < 3
    finally:
        mem.close()


def test_the_cli_reports_a_server_gone_down_as_its_own_error_without_psycopgs_warnings(
        own_server: pg_server.PgTestServer, tmp_path: Path) -> None:
    """The server stops while `engram chat` runs: its next turn fails with one `error: PostgreSQL ...
    is unreachable` line. psycopg's pool used to add `warning: discarding closed connection:
    <psycopg.Connection [BAD] ...>` and `warning: error connecting in 'engram': ...` before it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(ENGRAM_HOME=str(tmp_path), ENGRAM_DATABASE_URL=own_server.url("engram"), ENGRAM_EMBEDDINGS__PROVIDER="none")
    chat = subprocess.Popen([sys.executable, "-c", "from engram.interfaces.cli.app import main; main()", "chat"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert chat.stdin is not None and chat.stdout is not None
        chat.stdin.write("remember that the deploy host is db1\n")
        chat.stdin.flush()
        assert "deploy host is db1" in chat.stdout.readline()  # the turn went through the pool's connection
        own_server.stop()
        time.sleep(0.3)
        out, err = chat.communicate("what is the deploy host?\n", timeout=60)
    finally:
        if chat.poll() is None:
            chat.kill()
            chat.wait()
    assert chat.returncode == 1 and out == ""
    lines = [line for line in err.splitlines() if line and not line[0].isspace()]
    assert lines[0].startswith("Synthesis is off")  # the banner
    assert len(lines) == 2, err
    assert re.match(r"error: PostgreSQL postgresql://postgres@127\.0\.0\.1:\d+/engram is unreachable: ", lines[1])
    assert "psycopg" not in err and "warning" not in err


def _backend_pid(db: object) -> int:
    with db.read() as conn:  # type: ignore[attr-defined]
        row = conn.execute("SELECT pg_backend_pid()").fetchone()
    assert row is not None
    return int(row[0])


def test_the_pool_serves_again_after_it_gave_up_reconnecting(pg: pg_server.PgTestServer, pg_url: str) -> None:
    """An outage longer than the pool's reconnection attempts (psycopg_pool's ``reconnect_timeout``,
    5 minutes) leaves it with no connection and none coming. Calls bridged with connections of
    their own, and nothing asked the pool again: once the server was back, every call connected
    anew (a connection, its authentication and a type lookup per call) for as long as engram ran."""
    from engram.db.postgres import PgDatabase

    database = pg_url.rsplit("/", 1)[1]
    db = PgDatabase.connect(pg_url, PostgresSettings(pool_min_size=1, timeout_s=5))
    db.pool.reconnect_timeout = 0.5  # give up at the first failed attempt, not after 5 minutes
    try:
        _backend_pid(db)
        with psycopg.connect(pg.url(), autocommit=True) as admin:
            admin.execute(f"ALTER DATABASE {database} ALLOW_CONNECTIONS false")
            try:
                assert _end_connections(pg.url(), database) >= 1
                time.sleep(0.3)
                with pytest.raises(StorageError):
                    _backend_pid(db)
                time.sleep(2.5)  # the pool's attempt (after ~1 s) fails and it gives up
                assert db.pool.get_stats()["pool_size"] == 0
            finally:
                admin.execute(f"ALTER DATABASE {database} ALLOW_CONNECTIONS true")
        pids = [_backend_pid(db) for _ in range(4)]
        assert len(set(pids[1:])) == 1, pids  # the pool's connection again, not one per call
    finally:
        db.close()


def test_calls_beside_a_busy_pool_after_a_loss_open_at_most_its_size(pg: pg_server.PgTestServer, pg_url: str) -> None:
    """After a lost connection, a call that finds no free pooled connection opens its own. Under
    load every pooled one is busy, so each request did: connections past ``pool_max_size``, up to
    the server's ``max_connections`` ("too many clients"). At most the pool's size open beside it;
    the other calls wait in the pool's queue, as they would without the loss."""
    import threading

    from engram.db.postgres import PgDatabase

    database = pg_url.rsplit("/", 1)[1]
    db = PgDatabase.connect(pg_url, PostgresSettings(pool_min_size=2, pool_max_size=2, timeout_s=20))
    held = [db.pool.getconn() for _ in range(2)]  # every pooled connection busy
    db._lost.set()  # a dead one was met (what ``_connection`` records when it finds one)
    most, done = [0], threading.Event()

    def watch() -> None:
        with psycopg.connect(pg.url(), autocommit=True) as admin:
            while not done.is_set():
                row = admin.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s"
                                    " AND query LIKE 'SELECT pg_sleep%%'", (database,)).fetchone()
                most[0] = max(most[0], int(row[0]) if row else 0)
                time.sleep(0.02)

    def call() -> None:
        with db.read() as conn:
            conn.execute("SELECT pg_sleep(0.6)")

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        callers = [threading.Thread(target=call) for _ in range(6)]
        for thread in callers:
            thread.start()
        time.sleep(0.3)
        for conn in held:  # the pool's connections free again: the waiting calls take them
            db.pool.putconn(conn)
        for thread in callers:
            thread.join(timeout=30)
        assert not any(thread.is_alive() for thread in callers)
    finally:
        done.set()
        watcher.join()
        db.close()
    # Two beside the pool, then the pool's two: never six at once.
    assert 2 <= most[0] <= 4, most[0]
