"""``forget(erase=True)`` on a store whose vectors are searched through the HNSW graph saved beside
the SQLite file (``<database>.usearch``): usearch keeps a removed entry's vector in its slot, and so
in the saved file, until a new entry takes the slot, so the erase overwrites it (``AnnIndex.remove``
fills freed slots with placeholders) and saves the graph. Real files read byte by byte; the vectors
come from the local server that speaks Ollama's wire format (``engram.testing.provider_servers``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engram.engine import Engram

pytest.importorskip("usearch")


def _graph_bytes(home: Path) -> bytes:
    return b"".join(f.read_bytes() for f in home.glob("memory.db.usearch*") if not f.name.endswith(".json"))


def _f16(engram: Engram, memory_id: str) -> bytes:
    """The vector of ``memory_id`` as the graph holds it: unit length, half precision."""
    with engram.store.db.read() as conn:
        blob = conn.execute("SELECT v.vector FROM memory_vectors v JOIN memories m ON m.rowid = v.memory_rowid"
                            " WHERE m.id = ?", (memory_id,)).fetchone()[0]
    vector = np.frombuffer(blob, dtype=np.float32)
    return (vector / np.linalg.norm(vector)).astype(np.float16).tobytes()


def test_an_erase_leaves_no_vector_of_the_memory_in_the_saved_graph(server, tmp_path: Path) -> None:
    home = tmp_path / "home"
    engram = Engram.from_settings(home=home, files={"enabled": False},
                                  embeddings={"provider": "ollama", "model": "nomic-embed-text", "base_url": server.url},
                                  vector_index={"threshold": 0, "merge_after": 1})
    try:
        kept = [engram.remember(f"note {i} about the garden and the weather").memory.id for i in range(40)]
        told = engram.remember("my bank password hint is Quixotrelliumz").memory.id
        forgotten = engram.remember("a memory merely forgotten").memory.id
        assert engram.recall("password hint", limit=3)  # builds the graph and saves it beside the file
        vector, plain = _f16(engram, told), _f16(engram, forgotten)
        assert vector in _graph_bytes(home), "the saved graph holds the vector (the test can see it)"
        engram.forget(forgotten)
        engram.forget(told, erase=True)
        raw = _graph_bytes(home)
        assert vector not in raw
        assert plain not in raw, "a memory forgotten before it, taken out of the graph with it, is overwritten too"
        found = engram.recall("note 7 about the garden and the weather", limit=5)
        assert found and {hit.memory.id for hit in found} <= set(kept)
    finally:
        engram.close()
    again = Engram.from_settings(home=home, files={"enabled": False},
                                 embeddings={"provider": "ollama", "model": "nomic-embed-text", "base_url": server.url},
                                 vector_index={"threshold": 0, "merge_after": 1})
    try:
        assert {hit.memory.id for hit in again.recall("note 3 about the garden and the weather", limit=5)} <= set(kept)
        assert again.store._vectors._graph is not None and again.store._vectors._graph.view, "reused, not rebuilt"
    finally:
        again.close()


def test_an_erase_saves_again_only_the_segment_that_held_the_vector(server, tmp_path: Path) -> None:
    """A large graph is several segments of ``segment_size`` entries, each its own file: an erase
    rewrites the one that held the erased vector and leaves the others as they were (rewriting them
    all made an erase cost the whole graph, however large)."""
    home = tmp_path / "home"
    engram = Engram.from_settings(home=home, files={"enabled": False},
                                  embeddings={"provider": "ollama", "model": "nomic-embed-text", "base_url": server.url},
                                  vector_index={"threshold": 0, "merge_after": 1, "segment_size": 100})
    try:
        told = engram.remember("my bank password hint is Quixotrelliumz").memory.id
        engram.remember_many([{"content": f"note {i} about the garden and the weather"} for i in range(250)])
        assert engram.recall("password hint", limit=3)
        files = sorted(home.glob("memory.db.usearch.[0-9]")) + [home / "memory.db.usearch"]
        assert len(files) == 3, files
        before = {f.name: f.stat().st_ino for f in files}
        vector = _f16(engram, told)
        assert vector in (home / "memory.db.usearch").read_bytes(), "the first segment holds it"
        engram.forget(told, erase=True)
        after = {f.name: f.stat().st_ino for f in files}
        assert vector not in _graph_bytes(home)
        assert [name for name in before if before[name] != after[name]] == ["memory.db.usearch"]
    finally:
        engram.close()
