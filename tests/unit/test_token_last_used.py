"""A token's ``last_used_at``: set by the requests that present it, written at most once a
``LAST_USED_RESOLUTION_S`` (a busy client must not cost a database write per request)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram import auth
from engram.auth import TokenStore


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
