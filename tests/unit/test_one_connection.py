"""One SQLite connection per database per process: the memory store, every agent's history, the
exchange index, the audit trail and the token store all share the backend's connection. Counted
from the operating system (open file descriptors on the database file), not from our objects."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engram import Engram
from engram.audit import AuditQuery
from engram.root import open_tokens
from engram.testing.fakes import HashingEmbedder

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts descriptors through /proc")


def connections_to(path: Path) -> int:
    """How many descriptors this process holds on the database file itself (one per connection)."""
    target = str(path.resolve())
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == target:
                count += 1
        except OSError:
            continue
    return count


def test_every_store_of_a_database_shares_one_connection(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    with Engram.from_settings(home=tmp_path, path=db, embeddings={"provider": "none"}) as mem:
        mem.remember("The staging server is called kestrel")
        mem.history.append("telegram:42", "user", "hello")
        alice, bob = mem.for_agent("alice"), mem.for_agent("bob")
        alice.history.append("telegram:42", "user", "alice here")
        bob.history.append("telegram:42", "user", "bob here")
        from engram.history.semantic import ExchangeIndex

        index = mem.backend.exchange_index(HashingEmbedder(), "alice")
        assert isinstance(index, ExchangeIndex)
        index.add([])
        tokens = open_tokens(mem.settings, mem.backend)
        tokens.create("alice")
        assert mem.backend.audit_log().query(AuditQuery(limit=5))
        assert connections_to(db) == 1
        tokens.close()
        assert [m.content for m in bob.history.all("telegram:42")] == ["bob here"]  # still open
    assert connections_to(db) == 0
