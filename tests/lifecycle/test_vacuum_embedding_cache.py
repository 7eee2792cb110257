"""``engram vacuum`` rebuilds the embedding cache file too (one per home, beside the databases):
its freed pages (vectors evicted past ``embeddings.cache_max_entries``, or dropped by an erase)
were reused but never given back, since vacuum rebuilt the database files alone. The CLI
in-process against a real home, embedding through a local server speaking Ollama's API."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from engram.embed.cache import EmbeddingCache
from engram.testing.provider_servers import ProviderServer
from tests.cli_in_process import cli_output


@pytest.fixture()
def embedder() -> Iterator[dict[str, str]]:
    with ProviderServer(api_key=None) as server:
        yield {
            "ENGRAM_EMBEDDINGS__PROVIDER": "ollama",
            "ENGRAM_EMBEDDINGS__MODEL": "nomic-embed-text",
            "ENGRAM_EMBEDDINGS__BASE_URL": server.url,
            "ENGRAM_FILES__ENABLED": "false",
        }


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


def _free_pages(path: Path) -> None:
    """Free pages in the file, as evicted vectors leave them, for a vacuum to give back."""
    for statement in (
        "CREATE TABLE scratch AS SELECT randomblob(400000) AS b",
        "DROP TABLE scratch",
        "PRAGMA wal_checkpoint(TRUNCATE)",
    ):
        with contextlib.closing(sqlite3.connect(path)) as conn:
            conn.execute(statement)
            conn.commit()


def _rows(path: Path) -> int:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return conn.execute("SELECT count(*) FROM embedding_cache").fetchone()[0]


def test_vacuum_rebuilds_the_embedding_cache_file_and_reports_its_sizes(tmp_path: Path, embedder: dict[str, str]) -> None:
    home = tmp_path / "home"
    cli_output(home, "remember", "the user drinks green tea", env=embedder)
    cache = home / "embedding-cache.db"
    rows = _rows(cache)
    assert rows >= 1
    _free_pages(cache)
    before = _size(cache)

    done = json.loads(cli_output(home, "--json", "vacuum", env=embedder))
    assert set(done) == {"before_bytes", "after_bytes", "embedding_cache"}
    assert done["embedding_cache"] == {"before_bytes": before, "after_bytes": _size(cache)}
    assert _size(cache) < before - 300_000 and _rows(cache) == rows  # the pages given back, every vector kept

    _free_pages(cache)
    shown = cli_output(home, "vacuum", env=embedder)
    assert "embedding cache vacuumed: " in shown and shown.rstrip().endswith(f"-> {_size(cache)} bytes")

    # The scheduled vacuum job (engram maintain) rebuilds it too, and says so.
    _free_pages(cache)
    before = _size(cache)
    ran = json.loads(cli_output(home, "--json", "maintain", "--job", "vacuum", "--force", env=embedder))["ran"]
    [job] = [r for r in ran if r["job"] == "vacuum"]
    assert f"embedding cache {before} -> {_size(cache)} bytes" in json.dumps(job) and _size(cache) < before

    # Without embeddings (no cache in use), vacuum reports the database alone, as before.
    off = json.loads(cli_output(home, "--json", "vacuum", env={**embedder, "ENGRAM_EMBEDDINGS__CACHE": "false"}))
    assert set(off) == {"before_bytes", "after_bytes"}


def test_an_embedding_cache_without_a_file_has_nothing_to_vacuum(tmp_path: Path) -> None:
    assert EmbeddingCache(None).vacuum() is None
    path = tmp_path / "embedding-cache.db"
    cache = EmbeddingCache(path)
    assert cache.vacuum() is None and not path.exists()  # none made by a vacuum
    cache.put_many("fake:1:4", ["a", "b"], np.ones((2, 4), dtype=np.float32))
    before, after = cache.vacuum()
    assert after == _size(path) and after <= before
    assert set(cache.get_many("fake:1:4", ["a", "b"])) == {"a", "b"}
    cache.close()
