"""Token checks over a real server (``TokenChecks``): requests that need the same token checked at
the same moment share one read of it, and one that comes after a revocation through this server
never shares a read begun before it. Real SQLite file, uvicorn on a socket, httpx clients."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from engram.auth import TokenInfo
from tests.interfaces.conftest import Served

WAIT_S = 10.0  # a bound on waiting for the other side, so a failing test fails instead of hanging


def test_requests_checking_one_token_at_once_share_one_read(served: Served) -> None:
    token, _ = served.tokens.create("erin")  # never checked yet: every request needs the read
    clients = 8
    find, checked_here = served.tokens._find, served.tokens.verified_recently
    reads: list[str] = []
    asked = [0]
    all_asked = threading.Event()

    def counted(tok: str) -> TokenInfo | None:  # on the event loop, each request's first look
        asked[0] += 1
        if asked[0] == clients:
            all_asked.set()
        return checked_here(tok)

    def slow_find(digest: str) -> tuple[Any, ...] | None:
        # Held until every request has asked for the token: each one then either joined this read
        # (before the loop hears it finished) or started one of its own.
        reads.append(digest)
        all_asked.wait(WAIT_S)
        return find(digest)

    served.tokens.verified_recently = counted  # type: ignore[method-assign]
    served.tokens._find = slow_find  # type: ignore[method-assign]

    def stats(_: int) -> int:
        with served.client(token) as c:
            return c.get("/api/v1/stats").status_code

    with ThreadPoolExecutor(clients) as pool:
        codes = list(pool.map(stats, range(clients)))
    assert codes == [200] * clients
    assert all_asked.is_set() and len(reads) == 1


def test_a_request_after_a_revocation_never_shares_a_read_begun_before_it(served: Served) -> None:
    token, info = served.tokens.create("frank")
    find = served.tokens._find
    read_live, go_on = threading.Event(), threading.Event()
    reads: list[str] = []

    def find_then_wait(digest: str) -> tuple[Any, ...] | None:
        row = find(digest)
        reads.append(digest)
        if len(reads) == 1:  # the first read sees the token live, then waits while it is revoked
            read_live.set()
            go_on.wait(WAIT_S)
        return row

    served.tokens._find = find_then_wait  # type: ignore[method-assign]

    def stats() -> int:
        with served.client(token) as other:
            return other.get("/api/v1/stats").status_code

    with ThreadPoolExecutor(1) as pool, served.client(token) as c:
        before = pool.submit(stats)
        assert read_live.wait(WAIT_S)
        served.tokens.revoke(info.id)
        # Shared with the read still in flight, this would be answered from the live row it read.
        assert c.get("/api/v1/stats").status_code == 401
        go_on.set()
        assert before.result(WAIT_S) == 200  # began before the revocation: as if it had finished first
    assert len(reads) == 2
    with served.client(token) as c:
        assert c.get("/api/v1/stats").status_code == 401


def test_a_read_older_than_the_recheck_interval_is_not_joined(served: Served, monkeypatch) -> None:  # noqa: ANN001
    # A read stuck behind a write lock must not answer requests that come later than a read of
    # their own would (a token revoked by another process meanwhile). The interval is made short
    # here so the first read is old after a brief wait.
    from engram.interfaces.http import auth as http_auth

    monkeypatch.setattr(http_auth, "VERIFIED_RECHECK_S", 0.05)
    token, _ = served.tokens.create("gina")
    find = served.tokens._find
    first_reading, go_on = threading.Event(), threading.Event()
    reads: list[str] = []

    def first_waits(digest: str) -> tuple[Any, ...] | None:
        reads.append(digest)
        if len(reads) == 1:
            first_reading.set()
            go_on.wait(WAIT_S)
        return find(digest)

    served.tokens._find = first_waits  # type: ignore[method-assign]

    def stats() -> int:
        with served.client(token) as c:
            return c.get("/api/v1/stats").status_code

    with ThreadPoolExecutor(2) as pool:
        try:
            first = pool.submit(stats)
            assert first_reading.wait(WAIT_S)
            threading.Event().wait(0.3)  # the first read is now older than the interval
            later = pool.submit(stats)
            assert later.result(WAIT_S / 2) == 200  # its own read: not held by the first one
        finally:
            go_on.set()
        assert first.result(WAIT_S) == 200
    assert len(reads) == 2
