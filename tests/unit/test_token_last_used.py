"""A token's ``last_used_at``: set by the requests that present it, written at most once a
``LAST_USED_RESOLUTION_S`` (a busy client must not cost a database write per request)."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from engram import auth
from engram.auth import TokenStore
from engram.config import Settings
from engram.root import open_tokens


def test_a_verified_token_is_marked_used_at_most_once_a_minute(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1_800_000_000.0]
    monkeypatch.setattr(auth.time, "time", lambda: now[0])
    store = TokenStore.open(tmp_path / "auth.db")
    try:
        token, info = store.create("alice")
        other, _ = store.create("bob")
        assert [t.last_used_at for t in store.list()] == [None, None]
        writes: list[str] = []
        mark = store.mark_used
        monkeypatch.setattr(store, "mark_used", lambda token_id, at: writes.append(token_id) or mark(token_id, at))
        assert store.verify(token) is not None
        now[0] += auth.LAST_USED_RESOLUTION_S - 1
        for _ in range(5):
            assert store.verify(token) is not None
        assert writes == [info.id]
        assert store.list("alice")[0].last_used_at == 1_800_000_000.0
        now[0] += 1
        store.verify(token)
        assert store.list("alice")[0].last_used_at == now[0] and len(writes) == 2
        assert store.list("bob")[0].last_used_at is None  # only the token presented
        assert store.verify(other + "x") is None and len(writes) == 2
    finally:
        store.close()


def test_token_list_shows_when_each_token_was_last_used(tmp_path: Path) -> None:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}, "ENGRAM_HOME": str(tmp_path),
           "COLUMNS": "200", "TZ": "UTC"}

    def engram(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "engram", *args], capture_output=True, text=True, env=env,
                              timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    used = engram("token", "create", "--agent", "alice").split()[0]
    engram("token", "create", "--agent", "bob")
    store = open_tokens(Settings(home=tmp_path))
    try:
        assert store.verify(used) is not None  # what a request presenting it does
        stamp = store.list("alice")[0].last_used_at
    finally:
        store.close()
    rows = engram("token", "list").splitlines()
    assert "last used" in rows[1]
    shown = datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%d %H:%M")
    alice, bob = (next(r for r in rows if f" {a} " in r) for a in ("alice", "bob"))
    assert alice.split("│")[5].strip() == shown  # id, agent, name, created, last used
    assert bob.split("│")[5].strip() == "-"
