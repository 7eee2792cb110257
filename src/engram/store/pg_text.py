"""Which rows the PostgreSQL store ranks for a full-text query: all matches, or on large tables
only those holding the query's selective terms.

``ts_rank_cd`` reads and scores the ``tsvector`` of every row a query matches, and a question
OR-ed over a large table can match half of it (hundreds of milliseconds at 1M rows). As on
SQLite (``store/fts.py``, Lucene's common-terms idea), when the query's terms appear in more than
``full_text.max_ranked_rows`` rows together, the rarest terms whose rows fit that budget are
*selective* and decide which rows are ranked; every ranked row is still scored with the whole
query, so its score means what it always did (the common terms add to it). Rows holding only
common terms are left out.

How many rows hold a term comes from the statistics ``ANALYZE`` (and autovacuum) keeps on the
``search_all`` column: its most common lexemes with the share of rows holding each. A lexeme
missing from that list is rarer than the rarest listed one. A table without statistics (new, or
never analysed) is ranked in full, as are queries whose terms are all rare.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# Statistics change only when the table is analysed: reading them once a minute is plenty.
_STATS_TTL_S = 60.0
_STATS_SQL = (
    "SELECT c.reltuples, s.most_common_elems::text::text[], s.most_common_elem_freqs"
    " FROM pg_class c LEFT JOIN pg_stats s ON s.schemaname = current_schema() AND s.tablename = 'memories'"
    " AND s.attname = 'search_all' WHERE c.oid = 'memories'::regclass"
)


@dataclass(frozen=True)
class TermStats:
    """Estimated rows of the table and the share of rows holding each of its common lexemes."""

    rows: float
    shares: dict[str, float]
    floor: float  # share of the rarest listed lexeme: the most an unlisted one can have

    def rows_holding(self, lexemes: Sequence[str]) -> float:
        """Rows holding all ``lexemes`` (one query word may give several), at most."""
        if not lexemes:
            return 0.0
        return self.rows * min(self.shares.get(lexeme, self.floor) for lexeme in lexemes)


class TermStatistics:
    """The ``search_all`` statistics of one database, read at most once a minute."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stats: TermStats | None = None
        self._read_at = float("-inf")

    def get(self, conn: Any) -> TermStats | None:
        """None when the table has no lexeme statistics (never analysed, or too few rows)."""
        with self._lock:
            if time.monotonic() - self._read_at < _STATS_TTL_S:
                return self._stats
        row = conn.execute(_STATS_SQL).fetchone()
        stats = None
        if row is not None and row[1] and row[0] and row[0] > 0:
            elems, freqs = row[1], row[2]
            # The element frequencies are followed by their minimum, maximum and a null share.
            shares = dict(zip(elems, freqs[: len(elems)], strict=True))
            stats = TermStats(float(row[0]), shares, float(min(freqs[: len(elems)])))
        with self._lock:
            self._stats, self._read_at = stats, time.monotonic()
        return stats


def lexemes_of(conn: Any, terms: Sequence[str]) -> list[list[str]]:
    """Each term's lexemes as ``plainto_tsquery('english', term)`` searches them (none for a stopword)."""
    rows = conn.execute(
        "SELECT t.nth, COALESCE(array_agg(l.lexeme) FILTER (WHERE l.lexeme IS NOT NULL), '{}')"
        " FROM unnest(%s::text[]) WITH ORDINALITY AS t(term, nth)"
        " LEFT JOIN LATERAL unnest(tsvector_to_array(to_tsvector('english', t.term))) AS l(lexeme) ON true"
        " GROUP BY t.nth ORDER BY t.nth",
        [list(terms)],
    ).fetchall()
    return [list(row[1]) for row in rows]


def selective_terms(terms: Sequence[str], rows: Sequence[float], max_ranked_rows: int) -> list[str] | None:
    """The rarest terms whose rows fit ``max_ranked_rows`` (the rarest one always), or None when
    ranking every match fits the budget or every term would be selective anyway."""
    if max_ranked_rows <= 0 or sum(rows) <= max_ranked_rows:
        return None
    chosen: list[str] = []
    total = 0.0
    for term, count in sorted(zip(terms, rows, strict=True), key=lambda pair: pair[1]):
        if count <= 0:
            continue  # a stopword matches nothing: it decides nothing either
        if chosen and total + count > max_ranked_rows:
            break
        chosen.append(term)
        total += count
    if len(chosen) == sum(1 for count in rows if count > 0):
        return None
    return chosen
