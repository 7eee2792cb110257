"""A remote client never reads the server's paths: a storage failure while `engram serve` runs
(here the database locked by another process, past the busy timeout) is answered over HTTP and
MCP over HTTP with what failed, that it is storage, and the database file's name, not its folder;
the server's log keeps the whole text for the operator. Real server, real sockets, real lock."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client

from engram.auth import TokenStore
from engram.engine import Engram
from engram.interfaces.http.app import create_app
from engram.interfaces.http.serve import BackgroundServer
from engram.interfaces.present import without_paths
from engram.interfaces.settings import ServerSettings
from tests.interfaces.conftest import Served
from tests.interfaces.test_mcp import _error_text, _http


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    # A folder name with a space, as macOS's "Application Support": the whole path must go.
    home = tmp_path / "Server Data" / "engram"
    home.mkdir(parents=True)
    db_path = home / "memory.db"
    engram = Engram.from_settings(home=home, path=db_path, busy_timeout_ms=200)
    tokens = TokenStore.open(home / "auth.db")
    alice, _ = tokens.create("alice", "test")
    server = BackgroundServer(create_app(engram, tokens, ServerSettings())).start()
    try:
        yield Served(server.url, engram, tokens, alice, "", db_path)
    finally:
        server.stop()
        tokens.close()
        engram.close()


# Run in another process: SQLite's locks are the process's (POSIX), so a second connection in this
# one, through another SQLite library, would not be seen.
_LOCKER = """
import sqlite3, sys
other = sqlite3.connect(sys.argv[1], isolation_level=None)
other.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.read()
"""


@contextlib.contextmanager
def locked(db_path: Path) -> Iterator[None]:
    """Another process's write lock on the database, held until the block ends."""
    with subprocess.Popen([sys.executable, "-c", _LOCKER, str(db_path)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) as locker:
        assert locker.stdout is not None and locker.stdin is not None
        assert locker.stdout.readline().strip() == "locked"
        try:
            yield
        finally:
            locker.stdin.close()
            locker.wait(30)


def test_http_storage_error_names_no_server_path(served: Served, caplog: pytest.LogCaptureFixture) -> None:
    folder = str(served.db_path.parent)
    with served.client(served.alice) as client:
        assert client.post("/api/v1/memory", json={"content": "before the lock"}).status_code == 201
        with caplog.at_level(logging.ERROR, logger="engram.http"), locked(served.db_path):
            answer = client.post("/api/v1/memory", json={"content": "while locked"})
    assert answer.status_code == 503
    problem = answer.json()
    assert problem["type"].endswith("/storage-unavailable")
    assert problem["detail"] == "SQLite error on …/memory.db: database is locked (the server's log names the full path)"
    assert folder not in answer.text and "Server" not in answer.text
    assert any(str(served.db_path) in record.getMessage() for record in caplog.records)  # the operator's copy


def test_mcp_over_http_storage_error_names_no_server_path(served: Served, caplog: pytest.LogCaptureFixture) -> None:
    async def run() -> str:
        async with Client(_http(served, served.alice)) as client:
            with locked(served.db_path):
                return _error_text(await client.call_tool("remember", {"content": "while locked"}))

    with caplog.at_level(logging.ERROR, logger="engram.mcp"):
        text = asyncio.run(run())
    assert text == ("Error executing tool remember: memory storage failed: SQLite error on …/memory.db: "
                    "database is locked (the server's log names the full path)")
    assert any(str(served.db_path) in record.getMessage() for record in caplog.records)


@pytest.mark.parametrize(("text", "served_text"), [
    ("the folder /Users/Jo Ann/Library/Application Support/engram is not writable",
     "the folder …/engram is not writable"),
    ("cannot open lock file /srv/e/h.lock: [Errno 13] Permission denied: '/srv/e/h.lock'",
     "cannot open lock file …/h.lock: [Errno 13] Permission denied: '…/h.lock'"),
    ("config file C:\\Users\\me\\engram\\config.toml: bad value", "config file …/config.toml: bad value"),
    ("cannot create the engram home ~/.engram: no space", "cannot create the engram home …/.engram: no space"),
    ("PostgreSQL error on recall: see https://www.postgresql.org/docs/ and a/b",
     "PostgreSQL error on recall: see https://www.postgresql.org/docs/ and a/b"),  # no server path: kept
])
def test_paths_are_cut_to_their_last_name(text: str, served_text: str) -> None:
    assert without_paths(text) == served_text
