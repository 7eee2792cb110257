"""``engram migrate --to postgresql://…`` moves a 10,000-memory SQLite store: counts and
checksums verify, an interrupted copy resumes, and recall answers the same on both."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from engram.db.postgres import PgDatabase
from engram.db.transfer import copy_sqlite_to_postgres
from engram.engine import Engram
from engram.model import Memory, Scope
from engram.store.postgres import PostgresMemoryStore
from engram.store.sqlite import SqliteMemoryStore
from engram.testing.fakes import HashingEmbedder

N = 10_000
ENGRAM = [sys.executable, "-c", "from engram.interfaces.cli.app import main; main()"]
WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec"
         " romeo sierra tango uniform victor whiskey xray yankee zulu amber cobalt crimson indigo ivory jade lemon"
         " maroon olive orchid pearl ruby salmon silver teal violet").split()


def _build_sqlite(path: Path) -> SqliteMemoryStore:
    rng = random.Random(7)
    store = SqliteMemoryStore(path)
    memories = []
    for i in range(N):
        content = " ".join(rng.sample(WORDS, 6)) + f" note{i}"
        scope = Scope("alice") if i % 3 else Scope()
        links = (f"m{i - 1:05d}",) if i % 10 == 1 else ()
        memories.append(Memory(
            id=f"m{i:05d}", key=f"k{i}", content=content, scope=scope, tags=("t" + str(i % 7),),
            metadata={"n": i, "half": i * 0.5}, importance=(i % 10) / 10, created_at=1.7e9 + i,
            updated_at=1.7e9 + i, last_accessed=None if i % 2 else 1.7e9 + i + 0.25, recall_count=i % 4,
            links=links, superseded_by=f"m{i + 1:05d}" if i % 97 == 0 else None,
        ))
    assert store.import_memories(memories).imported == N
    embedder = HashingEmbedder()
    vectors = embedder.embed([m.content for m in memories])
    store.set_vectors(str(embedder.identity), list(zip([m.id for m in memories], vectors, strict=True)))
    Engram(store, agent="alice").remember("first version of k1", key="k1")  # a version row
    return store


class _Interrupt(Exception):
    pass


def test_migrate_10k_resumes_verifies_and_recalls_the_same(pg_url: str, tmp_path: Path) -> None:
    sqlite_path = tmp_path / "memory.db"
    _build_sqlite(sqlite_path).close()

    # An interrupted first run: stop after three batches of memories.
    def stop_early(table: str, done: int, total: int) -> None:
        if table == "memories" and done >= 3000:
            raise _Interrupt

    with pytest.raises(_Interrupt):
        copy_sqlite_to_postgres(sqlite_path, pg_url, progress=stop_early)

    env = {**os.environ, "ENGRAM_HOME": str(tmp_path / "home"), "COLUMNS": "200"}
    run = subprocess.run(
        [*ENGRAM, "--json", "migrate", "--from", str(sqlite_path), "--to", pg_url],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["verified"] is True
    memories = report["tables"]["memories"]
    assert (memories["source"], memories["target"], memories["skipped"], memories["copied"]) == (N, N, 3000, N - 3000)
    assert report["tables"]["memory_links"]["target"] == 2 * (N // 10)
    assert report["tables"]["memory_versions"]["target"] == 1
    assert report["tables"]["memory_vectors"]["target"] == N - 1  # updating k1 dropped its stale vector
    assert report["embedding_identity"] == "test:hashing:64"

    # Running again copies nothing and still verifies.
    again = subprocess.run(
        [*ENGRAM, "migrate", "--from", str(sqlite_path), "--to", pg_url],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert again.returncode == 0, again.stderr
    assert "memories" in again.stdout and "differs" not in again.stdout

    sqlite = Engram(SqliteMemoryStore(sqlite_path), agent="alice", embedder=HashingEmbedder())
    postgres = Engram(PostgresMemoryStore(PgDatabase.connect(pg_url)), agent="alice", embedder=HashingEmbedder())
    try:
        rng = random.Random(11)
        for i in rng.sample(range(2, N), 6):  # few: SQLite text search costs seconds at 10k (see report)
            query = sqlite.get(f"k{i}").content if i % 3 else sqlite.for_agent("bob").get(f"k{i}").content
            on_sqlite = sqlite.recall(query, limit=5, touch=False)
            on_postgres = postgres.recall(query, limit=5, touch=False)
            assert on_sqlite.mode == on_postgres.mode == "hybrid"
            if i % 97:
                assert on_sqlite.hits[0].memory.id == on_postgres.hits[0].memory.id == f"m{i:05d}"
            assert on_sqlite.hits[0].memory == on_postgres.hits[0].memory
    finally:
        sqlite.close()
        postgres.close()
