"""Memories stored without an embedder (a core-only install later given the local model) have no
vector: a recall with the embedder says it answered from full text and how to embed them, rather
than silently answering as if nothing could be found by meaning."""

from __future__ import annotations

from pathlib import Path

from engram.engine import Engram
from engram.store.sqlite import SqliteMemoryStore
from engram.testing.fakes import HashingEmbedder


def test_recall_says_stored_memories_have_no_vector_yet_and_reindex_clears_it(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with Engram(SqliteMemoryStore(path)) as core_only:
        core_only.remember("User prefers Python for scripting")
    with Engram(SqliteMemoryStore(path), embedder=HashingEmbedder()) as upgraded:
        result = upgraded.recall("which language for scripting")
        assert result.mode == "text"
        assert any("no stored memory has a vector yet" in n and "engram reindex" in n for n in result.notes)
        upgraded.reindex()
        again = upgraded.recall("which language for scripting")
        assert again.mode == "hybrid" and not any("vector yet" in n for n in again.notes)


def test_an_empty_store_has_nothing_to_say(tmp_path: Path) -> None:
    with Engram(SqliteMemoryStore(tmp_path / "memory.db"), embedder=HashingEmbedder()) as fresh:
        assert not any("vector yet" in n for n in fresh.recall("anything at all").notes)
