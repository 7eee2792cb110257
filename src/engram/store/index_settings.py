"""Settings of the SQLite store's search indexes: the approximate vector index kept beside its file
(``store/ann.py``) and the bounds on ranked full-text search (``store/fts.py``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from engram.settings_section import SettingsSection


class VectorIndexSettings(SettingsSection):
    """``[vector_index]``: when and how the SQLite store searches vectors approximately (HNSW).

    At or below ``threshold`` vectors the store searches exactly (numpy, ~0.4 ms at 10k); above it
    an HNSW index (usearch, cosine) persisted as ``<database>.usearch`` answers in about a
    millisecond where exact search would take ~20 ms at 100k and ~190 ms at 1M.
    """

    enabled: bool = True
    threshold: int = Field(20_000, ge=0)
    # f16 halves memory and file size; on MiniLM embeddings it loses no measurable recall.
    dtype: Literal["f16", "f32"] = "f16"
    connectivity: int = Field(16, ge=4, le=64)
    expansion_add: int = Field(64, ge=8, le=1024)
    # ef at query time. Real MiniLM embeddings need ~64 for recall@10 >= 0.97 against exact search
    # (tests/unit/test_vector_index_quality.py); denser synthetic 100k sets need ~200 (bench/speed.py:
    # 0.92 at 64, 0.96 at 128, 0.98 at 256). 256 costs ~1-2 ms a query at 100k.
    expansion_search: int = Field(256, ge=8, le=4096)
    # Candidates the graphs return that the store re-scores by exact cosine on the stored float32
    # vectors, one indexed read of that many rows (+45% on search_vector at 25k on a busy host,
    # bench/ann_recall.py); 0 keeps the graphs' f16 order and scores, which misorder cosines that
    # differ in the fourth decimal and merge segments on them.
    rerank: int = Field(100, ge=0, le=4096)
    # Entries per HNSW graph: a larger index is several graphs searched in turn. One graph of 1M
    # dense near-duplicates finds 60% of the exact top 10 (bench/ann_recall.py); graphs of 100k ~98%.
    segment_size: int = Field(100_000, ge=100)
    # Vectors newer than the saved graph are searched exactly until this many accumulate; then they
    # join the graph and the file is saved again (a save of 100k vectors takes ~0.2 s).
    merge_after: int = Field(1024, ge=1)
    # Rebuild the graph when this share of its entries was deleted or replaced.
    rebuild_stale_share: float = Field(0.25, gt=0.0, le=1.0)


class FullTextSettings(SettingsSection):
    """``[full_text]``: how much work one ranked full-text query may do (SQLite: ``store/fts.py``;
    PostgreSQL: ``store/pg_candidates.py``, from ANALYZE's term statistics)."""

    # Rows bm25 scores per query, about (~1 µs each; on PostgreSQL ~2-4 µs, mostly reading the
    # row's heap page). When a query's terms appear in more rows together, rows holding only its
    # most common terms are not ranked (store/fts.py; PostgreSQL: store/pg_candidates.py). 0 ranks
    # every matching row: exact, but ~25-50 ms a question at 100k conversational memories. The
    # LIKE fallback (when FTS matches nothing) scans every row, so it runs on stores this small only;
    # larger ones search word prefixes instead.
    max_ranked_rows: int = Field(10_000, ge=0)
    # Above this many rows (and with tantivy installed: the ``fulltext`` extra) a Tantivy index kept
    # beside the file as ``<database>.tantivy`` proposes each query's best rows (block-max WAND: its
    # cost does not grow with how many rows a common term matches) and the store scores them with
    # FTS5's own bm25 formula (store/text_index.py, store/bm25.py); max_ranked_rows no longer applies.
    index_enabled: bool = True
    index_threshold: int = Field(200_000, ge=0)
    # Rows the index proposes per query (at least the rows asked for), each scored exactly: more
    # keeps more of the exact top 10 where Tantivy's BM25 and FTS5's disagree, ~30 µs a row.
    index_candidates: int = Field(100, ge=10, le=10_000)
