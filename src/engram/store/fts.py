"""Ranked full-text search over the SQLite store's FTS5 index, bounded in work on large stores.

FTS5's ``bm25()`` scores every row a query matches (~1 µs a row here), and a natural question
OR-ed over a large store can match half of it: at 100k conversational memories that is ~35-50 ms.
Ranked retrieval engines bound this by treating very common terms differently (Lucene's
common-terms query; MaxScore): a row can only rank near the top when it holds one of the query's
*selective* terms, and the common ones add to its score.

So when the query's terms appear in more than ``max_ranked_rows`` rows together, the terms are split
by document frequency: the rarest terms whose rows fit half the budget are *selective*, the rest
*common*. Two ranked queries then cover every row holding a selective term:

- ``(selective) AND (common)`` scores those rows with every query term, exactly as the full OR;
- ``(selective)`` scores the rest (rows holding no common term get their exact score; rows that
  do but were not among the first query's best keep a lower bound).

Rows holding only common terms are left out. Each query scores at most about half the budget's rows.
Small stores, and queries whose terms are rare, run the single exact OR query.

Above ``index_threshold`` rows, with the Tantivy index available (``store/sqlite_text.py``), neither
applies: the index proposes the query's best rows and ``store/bm25.py`` scores them exactly as
FTS5 would, as it does the rows the vector side found (``indexed``, ``indexed_scores``). The LIKE fallback
for queries FTS cannot match scans every row, so it runs only on stores within the budget; larger
stores search word prefixes through the index instead.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engram.store.bm25 import ExactBm25, totals
from engram.store.index_settings import FullTextSettings
from engram.store.sqlite_text import SqliteTextIndex

# bm25 column weights: key, content, search_context, time_words (see store/sqlite.py's module docstring).
BM25_WEIGHTS = "2.0, 1.0, 0.3, 1.0"
_STEM_CACHE_SIZE = 10_000
# Rows of a query's full-text ranking kept for scoring its vector candidates on text (scores_for).
SCORE_DEPTH = 1000
_RECENT_RANKINGS = 8


def or_match(terms: Sequence[str], *, prefix: bool = False) -> str:
    """An FTS5 query matching rows that hold any of ``terms`` (word tokens, quoted), or with
    ``prefix`` any word starting with one of them."""
    star = "*" if prefix else ""
    return " OR ".join(f'"{term}"{star}' for term in terms)


@dataclass(frozen=True)
class TermSplit:
    selective: list[str]
    common: list[str]


def split_terms(terms: Sequence[str], doc_freq: dict[str, int], max_ranked_rows: int) -> TermSplit | None:
    """Selective and common terms, or None when ranking every matching row fits the budget.

    Selective terms' rows fit half the budget (two queries rank them). The rarest term is always
    selective, even alone over that: it bounds the work anyway."""
    if sum(doc_freq.get(term, 0) for term in terms) <= max_ranked_rows:
        return None
    selective: list[str] = []
    rows = 0
    for term in sorted(terms, key=lambda t: doc_freq.get(t, 0)):
        if selective and rows + doc_freq.get(term, 0) > max_ranked_rows // 2:
            break
        selective.append(term)
        rows += doc_freq.get(term, 0)
    common = [term for term in terms if term not in selective]
    return TermSplit(selective, common) if common else None


class FtsRanker:
    """Top rows of ``memories_fts`` by bm25 for a list of query terms, on one connection."""

    def __init__(self, settings: FullTextSettings | None = None, index: SqliteTextIndex | None = None) -> None:
        self.settings = settings or FullTextSettings()
        self.index = index
        self._exact = ExactBm25()
        self._stems: dict[str, str | None] = {}
        self._prepared = False
        self._lock = threading.Lock()
        # (terms, index version) -> (rows ranked, ranking): the last few queries' rankings.
        self._recent: dict[tuple[tuple[str, ...], object], tuple[int, list[tuple[int, float]]]] = {}
        self._df_recent: dict[tuple[tuple[str, ...], object], dict[str, int]] = {}
        # (terms, index version) -> (rows scored exactly, their scores): a recall scores the index's
        # candidates, then its vector candidates, some of which the first pass already scored.
        self._scored: dict[tuple[tuple[str, ...], object], tuple[set[int], dict[int, float]]] = {}
        # term -> rows matching it, while the index version is _term_df_version (indexed path).
        self._term_df: dict[str, int] = {}
        self._term_df_version: object = None

    def ranked(self, conn: Any, terms: Sequence[str], fetch: int, *, version: object = None) -> list[tuple[int, float]]:
        """``(rowid, score)`` of the best ``fetch`` rows, best first (score = -bm25, positive).

        With a ``version`` (anything that changes when the index does), the ranking is kept for the
        next call with the same terms: recall asks again for the scores of its vector candidates
        (``scores_for``), and FTS5 pays for scoring every match whatever the LIMIT, so the first
        call ranks ``SCORE_DEPTH`` rows and the second is free."""
        if version is None:
            return self._ranked(conn, terms, fetch)
        key = (tuple(terms), version)
        with self._lock:
            cached = self._recent.get(key)
        if cached is not None and (fetch <= cached[0] or len(cached[1]) < cached[0]):
            return cached[1][:fetch]
        depth = max(fetch, SCORE_DEPTH)
        rows = self._ranked(conn, terms, depth, version)
        with self._lock:
            if len(self._recent) >= _RECENT_RANKINGS:
                self._recent.pop(next(iter(self._recent)))
            self._recent[key] = (depth, rows)
        return rows[:fetch]

    def _ranked(self, conn: Any, terms: Sequence[str], fetch: int, version: object = None) -> list[tuple[int, float]]:
        budget = self.settings.max_ranked_rows
        if budget and self._row_estimate(conn) > budget:
            split = split_terms(terms, self.doc_freq(conn, terms, version=version), budget)
            if split is not None:
                return self._ranked_split(conn, split, fetch)
        return _bm25(conn, or_match(terms), fetch)

    def uses_index(self, conn: Any, terms: Sequence[str]) -> bool:
        """Whether this query ranks through the Tantivy index: a large store, and terms FTS5 reads
        as single tokens (``foo_bar`` is a phrase to FTS5; those queries stay on FTS5)."""
        if self.index is None or not terms or any("_" in term for term in terms):
            return False
        return self.index.wanted(self._row_estimate(conn))

    def indexed(self, conn: Any, terms: Sequence[str], fetch: int, *, version: object, own_writes: int,
                scopes: Sequence[tuple[str, str]] | None = None) -> list[tuple[int, float]] | None:
        """Like ``ranked``, through the index: its best ``index_candidates`` rows (or ``fetch``, if
        more; of ``scopes`` only when given), scored exactly as FTS5's bm25. None when the index
        cannot answer now (another process is writing it): the caller ranks with FTS5."""
        assert self.index is not None
        k = max(fetch, self.settings.index_candidates)
        rowids = self.index.candidates(terms, k, own_writes, scopes)
        if rowids is None:
            return None
        scores = self.indexed_scores(conn, terms, rowids, version=version)
        return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:fetch]

    def indexed_scores(self, conn: Any, terms: Sequence[str], rowids: Sequence[int], *,
                       version: object) -> dict[int, float]:
        """FTS5's bm25 score (positive) of each given row holding a query term, computed for just
        those rows (``store/bm25.py``): the vector side's candidates on a large store. Rows already
        scored for these terms at this ``version`` (the index's candidates, moments before) are
        not scored again."""
        stems = {term: stem for term, stem in self._stemmed(conn, terms).items() if stem}
        if not stems or not rowids:
            return {}
        key = (tuple(terms), version)
        with self._lock:
            seen, known = self._scored.get(key, (set(), {})) if version is not None else (set(), {})
        missing = [rowid for rowid in rowids if rowid not in seen]
        if missing:
            fresh = self._exact.scores(conn, stems, missing, self.term_doc_freq(conn, terms, version=version))
            seen, known = seen | set(missing), {**known, **fresh}
            if version is not None:
                with self._lock:
                    self._scored.pop(key, None)
                    if len(self._scored) >= _RECENT_RANKINGS:
                        self._scored.pop(next(iter(self._scored)))
                    self._scored[key] = (seen, known)
        return {rowid: known[rowid] for rowid in rowids if rowid in known}

    def term_doc_freq(self, conn: Any, terms: Sequence[str], *, version: object) -> dict[str, int]:
        """Rows holding each (single-token) term, as FTS5's bm25 counts them: ``count(*)`` of the
        term's MATCH, which walks its doclist without positions (~2x cheaper than ``fts5vocab``,
        whose counts are the same for such terms), kept per term while the index does not change:
        the common terms that cost most recur from query to query."""
        with self._lock:
            if self._term_df_version != version or len(self._term_df) > _STEM_CACHE_SIZE:
                self._term_df, self._term_df_version = {}, version
            known = dict(self._term_df)
        missing = [term for term in terms if term not in known]
        if missing:
            stems = self._stemmed(conn, missing)
            for term in missing:
                known[term] = int(conn.execute(
                    "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", (f'"{term}"',)
                ).fetchone()[0]) if stems.get(term) else 0
            with self._lock:
                if self._term_df_version == version:
                    self._term_df.update((term, known[term]) for term in missing)
        return {term: known[term] for term in terms}

    def ranked_prefix(self, conn: Any, terms: Sequence[str], fetch: int) -> list[tuple[int, float]]:
        """Like ``ranked`` for rows holding a word that starts with one of ``terms``: the large
        store's stand-in for the LIKE scan when no whole word matched (rare, so not bounded)."""
        return _bm25(conn, or_match(terms, prefix=True), fetch)

    def _ranked_split(self, conn: Any, split: TermSplit, fetch: int) -> list[tuple[int, float]]:
        selective = or_match(split.selective)
        scores = dict(_bm25(conn, f"({selective}) AND ({or_match(split.common)})", fetch))
        for rowid, score in _bm25(conn, selective, fetch):
            scores.setdefault(rowid, score)
        return sorted(scores.items(), key=lambda item: -item[1])[:fetch]

    def scores_for(self, conn: Any, terms: Sequence[str], rowids: Sequence[int], *, version: object) -> dict[int, float]:
        """The bm25 score of each given row among the query's best ``SCORE_DEPTH`` (the others are
        absent: they hold no query word, or score below all of those): how recall scores on full
        text the memories the vector side found. Asking FTS5 for single rows' scores costs a
        whole query each (~0.3 ms), so this reads the ranking ``ranked`` kept."""
        if not rowids or not terms:
            return {}
        wanted = set(rowids)
        return {rowid: score for rowid, score in self.ranked(conn, terms, SCORE_DEPTH, version=version)
                if rowid in wanted}

    def ceiling(self, conn: Any, terms: Sequence[str], *, version: object = None) -> float:
        """The bm25 score of a row of typical length holding each query term once in its content:
        the sum of the terms' IDFs as FTS5 computes them (``log((N - n + 0.5) / (n + 0.5))``,
        floored at 1e-6). A score divided by it says how much of the query's information a row
        matched, which means the same from one query to the next, unlike dividing by the best
        row's score (where the best of a poor set of matches scores 1). Terms found nowhere count
        in full: the text side explained none of that part of the query.

        The row count is FTS5's own (its averages record, ``bm25.totals``), the one its scores'
        IDFs are computed with, not ``row_estimate`` (max(rowid), which counts forgotten rows):
        with one memory of five forgotten, a word in 2 of the 4 left scored 1e-6 (its IDF floor)
        against a ceiling of log(3.5 / 2.5), so a row holding every word of the query had a text
        part of 5e-06, where PostgreSQL, counting the rows it scores with, said 1.0."""
        if not terms:
            return 0.0
        rows = max(totals(conn)[0], 1)
        # The same counts either way for the index's single-token terms; the per-term ones cost less.
        freq = (self.term_doc_freq(conn, terms, version=version) if self.uses_index(conn, terms)
                else self.doc_freq(conn, terms, version=version))
        return sum(max(math.log((rows - freq.get(t, 0) + 0.5) / (freq.get(t, 0) + 0.5)), 1e-6) for t in terms)

    def scans_affordable(self, conn: Any) -> bool:
        """Whether a query may scan every row (the LIKE fallback, ~8 µs a row): within the budget."""
        budget = self.settings.max_ranked_rows
        return not budget or self._row_estimate(conn) <= budget

    @staticmethod
    def row_estimate(conn: Any) -> int:
        """The store's size as the budgets read it: max(rowid), an index lookup never below the row count."""
        return int(conn.execute("SELECT coalesce(max(rowid), 0) FROM memories").fetchone()[0])

    _row_estimate = row_estimate

    def doc_freq(self, conn: Any, terms: Sequence[str], *, version: object = None) -> dict[str, int]:
        """Rows holding each term (stemmed as the index stems it); 0 for unknown terms. With a
        ``version``, kept for the next call (bounded ranking and the query's ceiling both ask)."""
        key = (tuple(terms), version)
        if version is not None:
            with self._lock:
                kept = self._df_recent.get(key)
            if kept is not None:
                return kept
        counts = self._doc_freq(conn, terms)
        if version is not None:
            with self._lock:
                if len(self._df_recent) >= _RECENT_RANKINGS:
                    self._df_recent.pop(next(iter(self._df_recent)))
                self._df_recent[key] = counts
        return counts

    def _doc_freq(self, conn: Any, terms: Sequence[str]) -> dict[str, int]:
        stems = self._stemmed(conn, terms)
        wanted = sorted({stem for stem in stems.values() if stem})
        if not wanted:
            return {}
        counts = dict(conn.execute(
            f"SELECT term, doc FROM temp.engram_doc_freq WHERE term IN ({','.join('?' * len(wanted))})", wanted
        ).fetchall())
        return {term: int(counts.get(stem, 0)) for term, stem in stems.items() if stem}

    def _stemmed(self, conn: Any, terms: Sequence[str]) -> dict[str, str | None]:
        """Each term as the index's tokenizer stores it (porter), by tokenizing it in a temp table."""
        self._prepare(conn)
        missing = [term for term in terms if term not in self._stems]
        if missing:
            if len(self._stems) + len(missing) > _STEM_CACHE_SIZE:
                self._stems.clear()
            conn.execute("DELETE FROM temp.engram_query_terms")
            conn.executemany(
                "INSERT INTO temp.engram_query_terms (rowid, term) VALUES (?, ?)", list(enumerate(missing, 1))
            )
            found: dict[int, str] = {}
            for doc, stem in conn.execute("SELECT doc, term FROM temp.engram_query_stems ORDER BY doc, offset"):
                found.setdefault(int(doc), str(stem))
            for number, term in enumerate(missing, 1):
                self._stems[term] = found.get(number)
        return {term: self._stems[term] for term in terms}

    def _prepare(self, conn: Any) -> None:
        if self._prepared:
            return
        # Temp objects live in this connection only; the tokenizer must match memories_fts's.
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.engram_query_terms USING fts5(term, tokenize = 'porter unicode61')"
        )
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.engram_query_stems"
            " USING fts5vocab(temp, engram_query_terms, 'instance')"
        )
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.engram_doc_freq USING fts5vocab(main, memories_fts, 'row')"
        )
        self._prepared = True


def _bm25(conn: Any, match: str, fetch: int) -> list[tuple[int, float]]:
    rows = conn.execute(
        f"SELECT rowid, -bm25(memories_fts, {BM25_WEIGHTS}) FROM memories_fts WHERE memories_fts MATCH ?"
        f" ORDER BY bm25(memories_fts, {BM25_WEIGHTS}) LIMIT ?",
        (match, fetch),
    ).fetchall()
    return [(int(rowid), float(score)) for rowid, score in rows]
