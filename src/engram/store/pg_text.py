"""How the PostgreSQL store scores full text: BM25 as SQLite's FTS5 computes it, and the term and
corpus statistics it reads. Which rows are scored on large tables is decided apart, in
``store/pg_candidates.py``: every row ranked, whichever set it came from, is scored here by
the whole query, so choosing fewer rows never changes what a score means.

The score is FTS5's ``bm25()`` (``store/bm25.py``: same k1, b, IDF floor and column weights: key
2.0, content 1.0, search_context 0.3, time words 1.0), so a text score means the same on both
backends and recall fuses them with the same constants. ``ts_rank_cd``, used before, has no
inverse document frequency: it ranked first the rows repeating a query's commonest words. Parts:

- term frequency: from the row's ``search_all`` tsvector, each position counted with its
  column's weight (key A, content and time words B, search_context C), precomputed per row in
  the ``search_counts`` column (migration 0010; ``bm25_sql``);
- row length: the row's words as FTS5 counts them, stopwords included (``search_length``,
  migration 0014; the tsvector's positions, ``search_counts``' length, leave PostgreSQL's
  stopwords out, so rows without one keep that);
- row count and mean length: exact on small tables, from ANALYZE's row estimate and a fixed page
  sample on large ones (an exact pass reads every row's tsvector);
- document frequency: counted through the GIN index for terms outside ANALYZE's most common
  lexemes (they are rare: few rows to count), estimated as share x rows for the common ones
  (counting those reads a posting list as long as what the bound in ``store/pg_candidates.py``
  avoids ranking).

How many rows hold a term comes from the statistics ``ANALYZE`` (and autovacuum) keeps on the
``search_all`` column: its most common lexemes with the share of rows holding each. A lexeme
missing from that list is rarer than the rarest listed one.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engram.store import bm25

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
    """Each term's lexemes as ``plainto_tsquery('english', engram_words(term))`` searches them
    (none for a stopword)."""
    rows = conn.execute(
        "SELECT t.nth, COALESCE(array_agg(l.lexeme) FILTER (WHERE l.lexeme IS NOT NULL), '{}')"
        " FROM unnest(%s::text[]) WITH ORDINALITY AS t(term, nth)"
        " LEFT JOIN LATERAL unnest(tsvector_to_array(to_tsvector('english', engram_words(t.term)))) AS l(lexeme) ON true"
        " GROUP BY t.nth ORDER BY t.nth",
        [list(terms)],
    ).fetchall()
    return [list(row[1]) for row in rows]


# --- BM25 ---------------------------------------------------------------------------------

# Tables up to this many rows have their row count and mean length computed exactly per query.
_EXACT_ROWS = 5_000
# Rows read (about: whole pages) to estimate a large table's mean row length.
_SAMPLE_ROWS = 10_000
# A rare term's rows are counted up to this many; more means the statistics' floor was wrong.
_COUNT_CAP = 20_000
# A row's length in words as FTS5 counts them: migration 0014's column, or where it is NULL (a row
# from before it without a stopword) the tsvector's positions, the same count (migration 0010).
_ROW_LENGTH = "COALESCE(m.search_length, (m.search_counts -> '')::float8)"


# --- words without a lexeme ------------------------------------------------------------------

# A query word PostgreSQL's english configuration drops (its stopwords: "he", "the", "we") has no
# lexeme in any tsvector, while FTS5 indexes it as any other word. engram keeps stopwords only in a
# query made of nothing else ("he also", "the a of": ``text.query_terms``), so such a query's
# dropped words are found and counted in each row's words as ``engram_words`` splits them (FTS5's
# words), lower case, whole (``engram_spaced``, schema step 0015): a scan of the table, for those
# queries only. A word made only of characters PostgreSQL's parser drops (circled numbers,
# fractions: "①②") has no lexeme either, and is found the same way.

# The row's words, each between two spaces (key, content, search context), computed once a row
# (OFFSET 0 keeps the planner from copying the calls into each expression reading them).
_SPACED = ("(SELECT engram_spaced(m.key) AS k, engram_spaced(m.content) AS c,"
           " engram_spaced(coalesce(m.search_context, '')) AS x OFFSET 0) w")
# Weights as search_counts weighs a lexeme's (step 0010): key 2.0, content 1.0, search context 0.3.
_SPACED_WEIGHTS = (("w.k", 2.0), ("w.c", 1.0), ("w.x", 0.3))


def _word_freq_sql(word: str) -> str:
    """SQL for the weighted count of a word in ``_SPACED``'s texts (``word`` is SQL giving ' word ')."""
    return " + ".join(f"{weight}::float8 * ((octet_length({text}) - octet_length(replace({text}, {word}, '')))"
                      f" / octet_length({word}))" for text, weight in _SPACED_WEIGHTS)


def spaced_words(words: Sequence[str]) -> list[str]:
    """Each word as ``_SPACED``'s texts hold it: lower case, between spaces."""
    return [f" {word.lower()} " for word in words]


def bm25_sql(lexemes: int, words: int = 0) -> str:
    """The score of row ``m`` for the query's ``lexemes`` lexemes ``q.lexemes`` (text[]) with
    weights ``q.idfs`` (float8[], their summed IDFs), mean row length ``q.avgdl`` and one
    single-lexeme tsquery each ``q.probes`` (``bm25_params``): FTS5's formula, one term per
    lexeme found in the row.

    Whether the row holds a lexeme is read from its ``search_all`` tsvector (``@@``, a binary
    search in C); its weighted frequency (1 unless ``search_counts`` says otherwise) from
    ``search_counts`` (migration 0010), a JSONB lookup by key, and the row's length (``_ROW_LENGTH``).
    Unnesting the tsvector for them, as before, cost ~5 us a row; this ~1 us. The values are those the tsvector gives
    (numeric sums cast to float8 alike) and the terms are added in ``q.lexemes``' order, which
    ``lexeme_weights`` makes bytewise, so scores are the same to the bit.

    ``words``: as many words without a lexeme (``q.words``, as ``spaced_words`` gives them; their
    IDFs after the lexemes' in ``q.idfs``), counted in the row's words (``_SPACED``)."""
    if lexemes + words <= 0:
        return "SELECT 0::float8 AS score"
    norm = f"{bm25.K1} * ({1 - bm25.B} + {bm25.B} * a.dl / q.avgdl)"
    parts = " + ".join(f"COALESCE(q.idfs[{i}] * a.f{i} * {bm25.K1 + 1} / (a.f{i} + {norm}), 0)"
                       for i in range(1, lexemes + words + 1))
    # search_counts_full: the counts of a row whose tsvector reached its limits (schema step 0015).
    counts = [f"CASE WHEN m.search_all @@ q.probes[{i}]"
              f" THEN COALESCE((COALESCE(m.search_counts_full, m.search_counts) -> q.lexemes[{i}])::float8, 1.0)"
              f" END AS f{i}" for i in range(1, lexemes + 1)]
    counts += [f"NULLIF(({_word_freq_sql(f'q.words[{j}]')})::float8, 0) AS f{lexemes + j}"
               for j in range(1, words + 1)]
    if not words:
        return f"SELECT {parts} AS score FROM (SELECT {_ROW_LENGTH} AS dl, {', '.join(counts)}) a"
    # Each count and the score computed once a row (OFFSET 0: not copied into each expression
    # reading them, as the planner would; a count here costs more than a JSONB look-up).
    return (f"SELECT {parts} AS score FROM (SELECT {_ROW_LENGTH} AS dl, {', '.join(counts)}"
            f" FROM {_SPACED} OFFSET 0) a OFFSET 0")


# The query's BM25 parameters as columns of ``q`` (lexemes, idfs, avgdl, probes, words): the
# five values ``bm25_params`` gives.
BM25_PARAMS_SQL = ("%s::text[] AS lexemes, %s::float8[] AS idfs, %s::float8 AS avgdl, %s::tsquery[] AS probes,"
                   " %s::text[] AS words")


def bm25_params(lexemes: Sequence[str], idfs: Sequence[float], avgdl: float,
                words: Sequence[str] = ()) -> list[Any]:
    """The parameters of ``BM25_PARAMS_SQL``: each lexeme also as a tsquery matching it alone;
    ``words`` without a lexeme (their IDFs follow the lexemes' in ``idfs``)."""
    return [list(lexemes), list(idfs), avgdl, [_tsquery_literal(lexeme) for lexeme in lexemes],
            spaced_words(words)]


def _tsquery_literal(lexeme: str) -> str:
    """``lexeme`` as tsquery input: quoted, so it is taken as one lexeme as it is (no parsing,
    no stemming), with quotes and backslashes escaped as tsquery's input reads them."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


@dataclass(frozen=True)
class Corpus:
    """The table's row count and mean row length (``_ROW_LENGTH``), as BM25 reads them."""

    rows: float
    avgdl: float


class CorpusStatistics:
    """Row count and mean length: exact per query on small tables; on large ones estimated and
    kept a minute (ANALYZE's row estimate moves no faster)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: Corpus | None = None
        self._read_at = float("-inf")

    def get(self, conn: Any) -> Corpus:
        with self._lock:
            if self._kept is not None and time.monotonic() - self._read_at < _STATS_TTL_S:
                return self._kept
        rows, total = conn.execute(
            f"SELECT count(*), COALESCE(sum(dl), 0) FROM (SELECT {_ROW_LENGTH} AS dl"
            " FROM memories m LIMIT %s) s", [_EXACT_ROWS + 1],
        ).fetchone()
        if rows <= _EXACT_ROWS:
            return Corpus(float(rows), float(total) / rows if rows else 0.0)
        estimate = float(conn.execute("SELECT reltuples FROM pg_class WHERE oid = 'memories'::regclass").fetchone()[0])
        if estimate <= _EXACT_ROWS:  # never analysed since it grew
            estimate = float(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
        share = min(100.0, 100.0 * _SAMPLE_ROWS / estimate)
        sampled = conn.execute(
            f"SELECT avg({_ROW_LENGTH}) FROM memories m TABLESAMPLE SYSTEM (%s) REPEATABLE (0)",
            [share],
        ).fetchone()[0]
        corpus = Corpus(estimate, float(sampled) if sampled else float(total) / rows)
        with self._lock:
            self._kept, self._read_at = corpus, time.monotonic()
        return corpus


def doc_freqs(conn: Any, terms: Sequence[str], lexemes: Sequence[Sequence[str]], stats: TermStats | None) -> list[float]:
    """Rows holding each term: ANALYZE's estimate for a term whose lexemes are all among the most
    common ones, else counted through the GIN index (capped at ``_COUNT_CAP``); a term without a
    lexeme (``_SPACED``) counted in the rows' words, one pass for all of them (a sample of a
    large table's)."""
    counts: list[float | None] = [
        stats.rows_holding(lex) if stats is not None and lex and all(x in stats.shares for x in lex) else None
        for lex in lexemes
    ]
    words = [term for term, lex in zip(terms, lexemes, strict=True) if not lex]
    if words:
        holds = [" OR ".join(f"strpos({text}, q.words[{j}]) > 0" for text, _ in _SPACED_WEIGHTS)
                 for j in range(1, len(words) + 1)]
        tests = ", ".join(f"count(*) FILTER (WHERE {test})" for test in holds)
        # Every row of a small table; on a large one a fixed sample of pages, scaled to the rows
        # (these words are common: a share is what ANALYZE would give for a common lexeme).
        estimate = float(conn.execute("SELECT reltuples FROM pg_class WHERE oid = 'memories'::regclass").fetchone()[0])
        share = 100.0 if estimate <= _EXACT_ROWS else min(100.0, 100.0 * _SAMPLE_ROWS / estimate)
        sample = "" if share >= 100.0 else f" TABLESAMPLE SYSTEM ({share}) REPEATABLE (0)"
        found = conn.execute(f"SELECT count(*), {tests} FROM memories m{sample}, (SELECT %s::text[] AS words) q,"
                             f" LATERAL {_SPACED}", [spaced_words(words)]).fetchone()
        scale = estimate / found[0] if sample and found[0] else 1.0
        counted_words = {word: count * scale for word, count in zip(words, found[1:], strict=True)}
        counts = [counted_words[term] if not lex else count
                  for term, lex, count in zip(terms, lexemes, counts, strict=True)]
    rare = [term for term, count in zip(terms, counts, strict=True) if count is None]
    if rare:
        counted = dict(conn.execute(
            "SELECT t.term, (SELECT count(*) FROM (SELECT 1 FROM memories m"
            " WHERE m.search_all @@ plainto_tsquery('english', engram_words(t.term)) LIMIT %s) c)"
            " FROM unnest(%s::text[]) t(term)", [_COUNT_CAP, rare],
        ).fetchall())
        counts = [counted[term] if count is None else count for term, count in zip(terms, counts, strict=True)]
    return [float(count or 0) for count in counts]


# How long a query's lexemes and document counts are reused: one recall asks for them three times
# (its ranking, the vector candidates' text scores, the score ceiling) within milliseconds.
_QUERY_TTL_S = 1.0
_QUERY_KEPT = 32


class QueryStatistics:
    """A query's lexemes and each term's document count (``lexemes_of``, ``doc_freqs``), reused for
    ``_QUERY_TTL_S``: the rare terms' counts walk the GIN index, and a recall would count them
    three times. A count a second old is as good as the row estimate it is weighed against."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[tuple[str, ...], tuple[float, list[list[str]], list[float]]] = {}

    def get(self, conn: Any, terms: Sequence[str], stats: TermStats | None) -> tuple[list[list[str]], list[float]]:
        key, now = tuple(terms), time.monotonic()
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None and now - kept[0] < _QUERY_TTL_S:
                return kept[1], kept[2]
        lexemes = lexemes_of(conn, terms)
        freqs = doc_freqs(conn, terms, lexemes, stats)
        with self._lock:
            self._kept.pop(key, None)
            if len(self._kept) >= _QUERY_KEPT:
                self._kept.pop(next(iter(self._kept)))
            self._kept[key] = (now, lexemes, freqs)
        return lexemes, freqs


def lexeme_weights(terms: Sequence[str], lexemes: Sequence[Sequence[str]], freqs: Sequence[float],
                   corpus: Corpus) -> tuple[list[str], list[float]]:
    """Each query lexeme with the summed IDF of the terms giving it (two terms with one stem count
    twice, as FTS5 counts each phrase). A term PostgreSQL reads as several lexemes scores each of
    them with the term's IDF (documents are split at punctuation first, migration 0011, so few do)."""
    weights: dict[str, float] = {}
    for lex, freq in zip(lexemes, freqs, strict=True):
        weight = idf(corpus.rows, freq)
        for lexeme in dict.fromkeys(lex):
            weights[lexeme] = weights.get(lexeme, 0.0) + weight
    # In the tsvector's order (bytewise): ``bm25_sql`` adds the terms in this order.
    ordered = sorted(weights, key=lambda lexeme: lexeme.encode())
    return ordered, [weights[lexeme] for lexeme in ordered]


def idf(rows: float, doc_count: float) -> float:
    """FTS5's IDF (``bm25.idf``) for an estimated row count and document count. The row count can
    be older than the count of a term's rows (kept for a minute, or ANALYZE's estimate, while other
    writers add rows), so it is taken as at least that count: a corpus holds every row holding a term."""
    rows = max(rows, doc_count)
    return max(math.log((rows - doc_count + 0.5) / (doc_count + 0.5)), 1e-6)


def ceiling(lexemes: Sequence[Sequence[str]], freqs: Sequence[float], corpus: Corpus) -> float:
    """The score of a row of mean length holding each term once in its content: the sum of the
    terms' IDFs, as on SQLite (``store/fts.py``), a word without a lexeme included (it is matched
    in the rows' words: ``_SPACED``)."""
    return sum(idf(corpus.rows, freq) for _, freq in zip(lexemes, freqs, strict=True))
