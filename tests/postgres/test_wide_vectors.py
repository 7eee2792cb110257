"""Models wider than pgvector's HNSW limit for ``vector`` (2,000 dimensions: OpenAI's
text-embedding-3-large and Gemini's gemini-embedding-001 give 3,072) store and recall on
PostgreSQL: indexed as ``halfvec`` up to 4,000 dimensions, searched exactly past that. Storing
the first memory of such a model used to fail ("column cannot have more than 2000 dimensions
for hnsw index") and keep nothing."""

from __future__ import annotations

import numpy as np
import psycopg
import pytest

from engram.db.postgres import PgDatabase
from engram.engine import Engram
from engram.store.postgres import PostgresMemoryStore
from engram.testing.fakes import HashingEmbedder


def _index_definitions(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        return [r[0] for r in conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE tablename = 'memory_vectors' AND indexname LIKE '%hnsw%'")]


@pytest.mark.parametrize(("dims", "index"), [
    (3072, "USING hnsw (((embedding)::halfvec(3072)) halfvec_cosine_ops)"),
    (4096, None),
])
def test_a_model_wider_than_2000_dimensions_stores_and_recalls(pg_url: str, dims: int, index: str | None) -> None:
    embedder = HashingEmbedder(dims=dims)
    mem = Engram(PostgresMemoryStore(PgDatabase.connect(pg_url)), agent="a", embedder=embedder)
    try:
        for text in ("the turbine blades need inspection", "tulips in the spring garden", "invoice for March"):
            mem.remember(text)
        hits = mem.recall("garden tulips", mode="vector", limit=1, touch=False).hits
        assert [h.memory.content for h in hits] == ["tulips in the spring garden"]
        cosine = float(np.dot(embedder.embed_query("garden tulips"), embedder.embed(["tulips in the spring garden"])[0]))
        assert hits[0].parts.vector == pytest.approx(cosine, abs=1e-6)  # scored at full precision, not half
        assert len(mem.list()) == 3
    finally:
        mem.close()
    definitions = _index_definitions(pg_url)
    assert (definitions == []) if index is None else (len(definitions) == 1 and definitions[0].endswith(index)), definitions
