"""A verified token kept in memory for ``VERIFIED_RECHECK_S`` (``TokenStore.verified_recently``):
refused tokens are never kept, a revocation through the store drops it at once, and a check that
overlapped a revocation keeps nothing. Real SQLite file."""

from __future__ import annotations

from pathlib import Path

from engram.auth import VERIFIED_RECHECK_S, TokenStore


def test_a_verified_token_is_kept_until_the_recheck_and_refusals_never_are(tmp_path: Path) -> None:
    now = [50.0]
    store = TokenStore.open(tmp_path / "auth.db")
    store.clock = lambda: now[0]
    try:
        token, info = store.create("alice")
        assert store.verified_recently(token) is None  # never checked yet
        assert store.verify(token) == store.verified_recently(token) and info.id == store.verify(token).id
        now[0] += VERIFIED_RECHECK_S
        assert store.verified_recently(token) is None
        assert store.verify(token + "x") is None and store.verified_recently(token + "x") is None
        assert store.verified_recently("not-a-token") is None
        store.verify(token)
        store.revoke(info.id)
        assert store.verified_recently(token) is None and store.verify(token) is None
    finally:
        store.close()


def test_a_check_that_overlapped_a_revocation_keeps_nothing(tmp_path: Path) -> None:
    store = TokenStore.open(tmp_path / "auth.db")
    try:
        token, info = store.create("alice")
        find = store._find

        def read_then_revoked(digest: str) -> tuple[object, ...] | None:
            row = find(digest)  # read while the token was live; revoked before the check returns
            store.revoke(info.id)
            return row

        store._find = read_then_revoked  # type: ignore[method-assign]
        assert store.verify(token) is not None
        store._find = find  # type: ignore[method-assign]
        assert store.verified_recently(token) is None and store.verify(token) is None
    finally:
        store.close()
