"""FTS5's ``bm25()`` of chosen rows, computed without FTS5 scanning every row a query matches.

FTS5 computes a query's IDFs by walking each term's whole doclist, so even a query restricted to
a few rowids costs as much as ranking every match. This module gives the same score for a given
set of rows from parts that cost little at any store size:

- each row's per-column term counts, by tokenizing just those rows with the same tokenizer in a
  temporary FTS5 table of this connection (``fts5vocab`` 'instance' lists their tokens);
- each row's length in tokens, from ``memories_fts_docsize``;
- the row count and total tokens, from FTS5's own "averages" record (``memories_fts_data`` id 1);
- each term's document count, from the caller (``FtsRanker.doc_freq`` or the text index).

The formula is FTS5's (``fts5_aux.c``): for each query phrase i, with f the column-weighted count
of i in the row and D the row's length, ``idf_i * f * (k1 + 1) / (f + k1 * (1 - b + b * D / avgdl))``,
``idf = log((N - n + 0.5) / (n + 0.5))`` floored at 1e-6, k1 = 1.2, b = 0.75. Only single-token
terms are scored this way (a term FTS5 splits into a phrase, like ``foo_bar``, is the caller's to
route elsewhere).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

K1 = 1.2
B = 0.75
# The same column weights as fts.BM25_WEIGHTS: key, content, search_context, time_words.
COLUMN_WEIGHTS = (2.0, 1.0, 0.3, 1.0)
_COLUMNS = ("key", "content", "search_context", "time_words")


def _varints(blob: bytes) -> list[int]:
    """SQLite's varints (big-endian, 7 bits a byte, 9th byte whole) as FTS5 writes its records."""
    out, i = [], 0
    while i < len(blob):
        value = 0
        for n in range(9):
            byte = blob[i]
            i += 1
            if n == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out


def totals(conn: Any) -> tuple[int, float]:
    """(rows, mean row length in tokens) of ``memories_fts``, from FTS5's averages record."""
    row = conn.execute("SELECT block FROM memories_fts_data WHERE id = 1").fetchone()
    if row is None or not row[0]:
        return 0, 0.0
    values = _varints(bytes(row[0]))
    rows = values[0]
    return rows, (sum(values[1:]) / rows if rows else 0.0)


def idf(rows: int, doc_count: int) -> float:
    """FTS5's IDF of a term found in ``doc_count`` of ``rows`` rows (floored at 1e-6)."""
    return max(math.log((rows - doc_count + 0.5) / (doc_count + 0.5)), 1e-6)


class ExactBm25:
    """Scores rows of ``memories_fts`` exactly as ``-bm25(memories_fts, 2.0, 1.0, 0.3, 1.0)``."""

    def scores(self, conn: Any, stems: Mapping[str, str], rowids: Sequence[int],
               doc_freq: Mapping[str, int]) -> dict[int, float]:
        """The score of each row in ``rowids`` holding at least one query stem (others absent).

        ``stems`` maps each query term to its single stem as the index tokenizes it; ``doc_freq``
        gives each term's document count (the same keys)."""
        if not rowids or not stems:
            return {}
        self._prepare(conn)
        rows, avgdl = totals(conn)
        if not rows or avgdl <= 0:
            return {}
        # Contentless: 'delete-all' empties it without tokenizing the previous rows again (a DELETE
        # from a table that keeps its text does: it cost as much as the insert below).
        conn.execute("INSERT INTO temp.engram_rescore (engram_rescore) VALUES ('delete-all')")
        # The rows' own text, tokenized by the same tokenizer as memories_fts (stems, not words).
        conn.execute(
            "INSERT INTO temp.engram_rescore (rowid, key, content, search_context, time_words)"
            " SELECT m.rowid, m.key, m.content, m.search_context, m.time_words"
            " FROM json_each(?) j CROSS JOIN memories m ON m.rowid = j.value",
            [json.dumps(list(rowids))],
        )
        weight_of_stem: dict[str, float] = {}
        for term, stem in stems.items():
            weight_of_stem[stem] = weight_of_stem.get(stem, 0.0) + idf(rows, doc_freq.get(term, 0))
        wanted = sorted(weight_of_stem)
        freq: dict[int, dict[str, float]] = {}
        for doc, col, term in conn.execute(
            "SELECT doc, col, term FROM temp.engram_rescore_instance"
            f" WHERE term IN ({','.join('?' * len(wanted))})", wanted,
        ):
            counts = freq.setdefault(int(doc), {})
            counts[term] = counts.get(term, 0.0) + COLUMN_WEIGHTS[_COLUMNS.index(col)]
        if not freq:
            return {}
        marks = ",".join("?" * len(freq))
        lengths = {
            # Column sizes below 128 are one byte each: the common case, summed without decoding.
            int(rowid): sum(size) if max(size, default=0) < 0x80 else sum(_varints(bytes(size)))
            for rowid, size in conn.execute(f"SELECT id, sz FROM memories_fts_docsize WHERE id IN ({marks})", list(freq))
        }
        out: dict[int, float] = {}
        for rowid, counts in freq.items():
            norm = K1 * (1 - B + B * lengths.get(rowid, 0) / avgdl)
            # A stem two query terms share counts once per term, as FTS5 counts each phrase.
            out[rowid] = sum(weight_of_stem[stem] * f * (K1 + 1) / (f + norm) for stem, f in counts.items())
        return out

    @staticmethod
    def _prepare(conn: Any) -> None:
        # Temp tables live in one connection; IF NOT EXISTS costs microseconds and holds for any.
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.engram_rescore USING fts5("
            "key, content, search_context, time_words, content = '', tokenize = 'porter unicode61')"
        )
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.engram_rescore_instance"
            " USING fts5vocab(temp, engram_rescore, 'instance')"
        )
