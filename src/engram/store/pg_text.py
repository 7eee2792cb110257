"""How the PostgreSQL store ranks full text: BM25 as SQLite's FTS5 computes it, and which rows it
ranks (all matches, or on large tables only those holding the query's selective terms).

The score is FTS5's ``bm25()`` (``store/bm25.py``: same k1, b, IDF floor and column weights: key
2.0, content 1.0, search_context 0.3, time words 1.0), so a text score means the same on both
backends and recall fuses them with the same constants. ``ts_rank_cd``, used before, has no
inverse document frequency: it ranked first the rows repeating a query's commonest words. Parts:

- term frequency: from the row's ``search_all`` tsvector, each position counted with its
  column's weight (key A, content and time words B, search_context C), precomputed per row in
  the ``search_counts`` column (migration 0010; ``bm25_sql``);
- row length: the row's positions in that tsvector (PostgreSQL drops its stopwords, FTS5 counts
  them: both the row's length and the mean leave them out, so their ratio is close), kept there
  too;
- row count and mean length: exact on small tables, from ANALYZE's row estimate and a fixed page
  sample on large ones (an exact pass reads every row's tsvector);
- document frequency: counted through the GIN index for terms outside ANALYZE's most common
  lexemes (they are rare: few rows to count), estimated as share x rows for the common ones
  (counting those reads a posting list as long as what the bound below avoids ranking).

Ranking reads the ``tsvector`` of every row a query matches, and a question
OR-ed over a large table can match half of it (hundreds of milliseconds at 1M rows). As on
SQLite (``store/fts.py``, Lucene's common-terms idea), when the query's terms appear in more than
``full_text.max_ranked_rows`` rows together, the rarest terms whose rows fit that budget are
*selective* and decide which rows are ranked; every ranked row is still scored with the whole
query, so its score means what it always did (the common terms add to it). Rows holding only
common terms are left out; with IDF in the score they would rank low anyway.

A query of common words only (its rarest term alone holds more rows than the budget) would still
rank every row of that term: tens of thousands at 1M. Its ranked rows are instead those holding
all of its ``j`` rarest terms, or at least ``j`` of its ``j + 1`` rarest, the largest such set
whose rows fit the budget (``conjunctions``; a GIN index intersects the terms' lists without
reading every row of the common ones), then larger ones when those rows are fewer than asked
for. The rows left out hold fewer of the query's weightiest words: they rank below those holding
them unless they repeat words.

On a large table (more rows than the budget), before ranking every match or the selective terms'
rows, the rows whose terms' IDFs add up highest are ranked when they are estimated under half as
many (``pair_tiers``): the rows holding two of the query's words or a rare one alone, at one
occurrence each the rows scoring highest; the rows holding one commoner word alone, the bulk of
a mixed query's matches, are left out. A set that gives fewer rows than asked for passes to a
larger one, then to the ranking below.

Before either, a cheaper ranking is tried that is provably the same (MaxScore, from Turtle and
Flood's term-at-a-time pruning): rank only the rows holding the query's rarest terms, as few
terms as hold ``limit`` rows together, then one more term at a time while they hold at most half
the rows the ranking would read (``rarest_prefixes``); a set whose rows would typically score
below that bound (``typical_score``) is not tried. A row holding none of them can score no more than
``(k1 + 1)`` times the summed IDFs of the other lexemes (BM25's term frequency part stays below
``k1 + 1``), so when the ``limit``-th score found is at least that bound, no other row could
enter the result and it is the full ranking's, at the cost of ranking a few hundred rows instead
of thousands. When it is not (the rare terms' rows score low, or too few pass the filter), the
ranking goes on as above. A proof that would read more than twice the rows of the first
``pair_tiers`` set is not tried. ``max_ranked_rows = 0`` ranks every match without these shortcuts.

How many rows hold a term comes from the statistics ``ANALYZE`` (and autovacuum) keeps on the
``search_all`` column: its most common lexemes with the share of rows holding each. A lexeme
missing from that list is rarer than the rarest listed one. A table without statistics (new, or
never analysed) is ranked in full, as are queries whose terms are all rare.
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


def conjunctions(terms: Sequence[str], rows: Sequence[float], total: float,
                 max_ranked_rows: int) -> list[list[list[str]]]:
    """When the rarest term alone holds more than ``max_ranked_rows`` rows (a query of common words
    only): the row sets ranked instead, to try in turn, each as the term sets a row must hold all
    of one of. The candidates are the rows holding all of the ``j`` rarest terms and those holding
    at least ``j`` of the ``j + 1`` rarest (``j >= 2``), their rows estimated as if terms were
    independent (``total`` times the product of their shares, summed over the sets). The first is
    the largest that fits the budget (the smallest when none does), the next ones are the larger
    candidates that still hold fewer rows than the rarest term alone, smallest first: asked for
    more rows than the first holds (a narrow filter, correlated words), the ranking widens
    before it falls back to every row of the rarest term. Empty when the rarest term fits the
    budget (``selective_terms`` bounds the ranking then), when fewer than two terms match
    anything, or with a budget of 0.

    With a term's IDF in every score, a row holding more of the rarest terms outranks one holding
    fewer unless it repeats its words (BM25's term frequency part is 1 at one occurrence in a row
    of mean length, below ``k1 + 1`` however many). "At least ``j`` of ``j + 1``" also keeps the
    rows holding a slightly commoner word instead of a rarer one, which repeating a word can lift
    above rows holding the ``j`` rarest (the ``j`` rarest alone lost 3 of one query's top 10 at
    1M). The rows left out hold fewer of the query's weightiest words; the cost follows the rows
    holding the chosen words together, not the rows a common word matches."""
    found = sorted((count, term) for term, count in zip(terms, rows, strict=True) if count > 0)
    if max_ranked_rows <= 0 or len(found) < 2 or found[0][0] <= max_ranked_rows or total <= 0:
        return []
    share = {term: min(1.0, count / total) for count, term in found}
    ordered = [term for _, term in found]
    candidates: list[tuple[float, list[list[str]]]] = []
    for j in range(2, len(ordered) + 1):
        held = [ordered[:j]]
        if j < len(ordered):  # at least j of the j + 1 rarest: each of them may be the one missing
            rarest = ordered[: j + 1]
            held_most = [rarest[:i] + rarest[i + 1:] for i in range(j, -1, -1)]
            candidates.append((sum(total * math.prod(share[t] for t in one) for one in held_most), held_most))
        candidates.append((total * math.prod(share[t] for t in held[0]), held))
    candidates.sort(key=lambda candidate: candidate[0])
    fitting = [i for i, (estimate, _) in enumerate(candidates) if estimate <= max_ranked_rows]
    first = fitting[-1] if fitting else 0
    return [candidates[first][1]] + [held for estimate, held in candidates[first + 1:] if estimate < found[0][0]]


# The rarest terms whose pairs a row may hold to be ranked (``pair_tiers``): each pair is one
# more conjunction for the GIN index to intersect; the commoner terms beyond add little.
_PAIRED_TERMS = 7


def pair_tiers(terms: Sequence[str], rows: Sequence[float], total: float, limit: int,
               planned: float) -> list[tuple[list[list[str]], float]]:
    """Row sets to rank before the ``planned`` rows (every match, or the selective terms'), each
    as the term sets a row holds all of one of, with its estimated rows (as if terms were
    independent), smallest first. A row holding one of the query's terms once scores about that
    term's IDF, a row holding two about the sum of theirs; the terms and the pairs of terms are
    taken in that order, highest first, so each set holds every row whose terms' IDFs reach the
    last one taken. A set is returned once it holds at least ``limit`` rows, the next ones each
    at least twice as many as the one before (trying them all costs at most twice the last),
    while under half the ``planned`` rows; none for a single term.

    The rows holding a single commoner word are the bulk of a mixed query's matches (a word in
    1% of 1M rows is 10,000 rows), while the rows holding two words together, or its rarest
    word, are few: ranking those first reads a fraction of the rows. The rows left out reach
    the top only by repeating their word (BM25's term frequency part: 1.375 times at two
    occurrences in a row of mean length)."""
    found = sorted((count, term) for term, count in zip(terms, rows, strict=True) if count > 0)
    if len(found) < 2 or total <= 0:
        return []
    count = {term: n for n, term in found}
    weight = {term: idf(total, n) for n, term in found}
    paired = [term for _, term in found[:_PAIRED_TERMS]]
    options = [(weight[t], [t]) for t in count] + [
        (weight[a] + weight[b], [a, b]) for i, a in enumerate(paired) for b in paired[i + 1:]]
    options.sort(key=lambda option: -option[0])
    taken: list[list[str]] = []
    tiers: list[tuple[list[list[str]], float]] = []
    for n, (held_weight, held) in enumerate(options):
        taken.append(held)
        if n + 1 < len(options) and options[n + 1][0] == held_weight:
            continue  # sets of equal weight are taken together: which one first would be arbitrary
        singles = {one[0] for one in taken if len(one) == 1}
        # A pair holding a term taken alone adds no row: that term's rows hold it.
        sets = [one for one in taken if len(one) == 1 or not singles & set(one)]
        estimate = sum(count[one[0]] if len(one) == 1 else total * count[one[0]] / total * count[one[1]] / total
                       for one in sets)
        if estimate >= planned / 2:
            break
        if estimate >= limit and (not tiers or estimate >= 2 * tiers[-1][1]):
            tiers.append((sets, estimate))
    return tiers


def rarest_prefixes(terms: Sequence[str], lexemes: Sequence[Sequence[str]], freqs: Sequence[float], limit: int,
                    max_ranked_rows: int) -> list[list[str]]:
    """The sets of rarest terms worth ranking first (by ``freqs``), smallest first: the first holds
    at least ``limit`` rows, each adds the next rarest term, and each holds at most half the rows
    the ranking would otherwise read (every match, or ``max_ranked_rows`` when that is fewer),
    so a set that fails to decide costs less than the one that decides saves. Empty when
    ``max_ranked_rows`` is 0 (rank every match)."""
    found = sorted((freq, term) for term, lex, freq in zip(terms, lexemes, freqs, strict=True) if lex and freq > 0)
    if max_ranked_rows <= 0 or limit <= 0:
        return []
    cap = min(float(max_ranked_rows), sum(freq for freq, _ in found)) / 2
    prefixes: list[list[str]] = []
    total = 0.0
    for k, (freq, _) in enumerate(found[:-1], start=1):  # all of them would be every match
        total += freq
        if total > cap:
            break
        if total >= limit:
            prefixes.append([term for _, term in found[:k]])
    return prefixes


def bound_without(chosen: Sequence[str], terms: Sequence[str], lexemes: Sequence[Sequence[str]],
                  weights: tuple[Sequence[str], Sequence[float]]) -> float:
    """The most a row matching none of ``chosen`` can score: ``k1 + 1`` times the weights
    (``lexeme_weights``) of the lexemes such a row may hold. A chosen term of one lexeme is a
    lexeme it lacks; a term of several is matched as a phrase, so a row can hold some of them."""
    absent = {lex[0] for term, lex in zip(terms, lexemes, strict=True) if term in chosen and len(lex) == 1}
    return (bm25.K1 + 1) * sum(weight for lexeme, weight in zip(*weights, strict=True) if lexeme not in absent)


def typical_score(chosen: Sequence[str], terms: Sequence[str], lexemes: Sequence[Sequence[str]],
                  weights: tuple[Sequence[str], Sequence[float]]) -> float:
    """About the score of a row holding the least weighty of ``chosen`` once, at the mean length
    (its IDF). The ``limit``-th row of ``chosen`` seldom scores more, so when this is below
    ``bound_without`` ranking them first would not decide: it is not tried."""
    weight = dict(zip(*weights, strict=True))
    held = [sum(weight.get(lexeme, 0.0) for lexeme in set(lex))
            for term, lex in zip(terms, lexemes, strict=True) if term in chosen and lex]
    return min(held, default=0.0)


# --- BM25 ---------------------------------------------------------------------------------

# Tables up to this many rows have their row count and mean length computed exactly per query.
_EXACT_ROWS = 5_000
# Rows read (about: whole pages) to estimate a large table's mean row length.
_SAMPLE_ROWS = 10_000
# A rare term's rows are counted up to this many; more means the statistics' floor was wrong.
_COUNT_CAP = 20_000
# A row's length (its tsvector's positions), as migration 0010 keeps it.
_ROW_LENGTH = "(m.search_counts -> '')::float8"


def bm25_sql(lexemes: int) -> str:
    """The score of row ``m`` for the query's ``lexemes`` lexemes ``q.lexemes`` (text[]) with
    weights ``q.idfs`` (float8[], their summed IDFs), mean row length ``q.avgdl`` and one
    single-lexeme tsquery each ``q.probes`` (``bm25_params``): FTS5's formula, one term per
    lexeme found in the row.

    Whether the row holds a lexeme is read from its ``search_all`` tsvector (``@@``, a binary
    search in C); its weighted frequency (1 unless ``search_counts`` says otherwise) and the row's
    length from ``search_counts`` (migration 0010), a JSONB lookup by key. Unnesting the tsvector
    for them, as before, cost ~5 us a row; this ~1 us. The values are those the tsvector gives
    (numeric sums cast to float8 alike) and the terms are added in ``q.lexemes``' order, which
    ``lexeme_weights`` makes bytewise, so scores are the same to the bit."""
    if lexemes <= 0:
        return "SELECT 0::float8 AS score"
    norm = f"{bm25.K1} * ({1 - bm25.B} + {bm25.B} * a.dl / q.avgdl)"
    parts = " + ".join(f"COALESCE(q.idfs[{i}] * a.f{i} * {bm25.K1 + 1} / (a.f{i} + {norm}), 0)"
                       for i in range(1, lexemes + 1))
    counts = ", ".join(f"CASE WHEN m.search_all @@ q.probes[{i}]"
                       f" THEN COALESCE((m.search_counts -> q.lexemes[{i}])::float8, 1.0) END AS f{i}"
                       for i in range(1, lexemes + 1))
    return f"SELECT {parts} AS score FROM (SELECT (m.search_counts -> '')::float8 AS dl, {counts}) a"


# The query's BM25 parameters as columns of ``q`` (lexemes, idfs, avgdl, probes): the four values
# ``bm25_params`` gives.
BM25_PARAMS_SQL = "%s::text[] AS lexemes, %s::float8[] AS idfs, %s::float8 AS avgdl, %s::tsquery[] AS probes"


def bm25_params(lexemes: Sequence[str], idfs: Sequence[float], avgdl: float) -> list[Any]:
    """The parameters of ``BM25_PARAMS_SQL``: each lexeme also as a tsquery matching it alone."""
    return [list(lexemes), list(idfs), avgdl, [_tsquery_literal(lexeme) for lexeme in lexemes]]


def _tsquery_literal(lexeme: str) -> str:
    """``lexeme`` as tsquery input: quoted, so it is taken as one lexeme as it is (no parsing,
    no stemming), with quotes and backslashes escaped as tsquery's input reads them."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


@dataclass(frozen=True)
class Corpus:
    """The table's row count and mean row length (tsvector positions), as BM25 reads them."""

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
    common ones, else counted through the GIN index (capped at ``_COUNT_CAP``)."""
    counts: list[float | None] = [
        stats.rows_holding(lex) if stats is not None and lex and all(x in stats.shares for x in lex) else None
        for lex in lexemes
    ]
    rare = [term for term, count in zip(terms, counts, strict=True) if count is None]
    if rare:
        counted = dict(conn.execute(
            "SELECT t.term, (SELECT count(*) FROM (SELECT 1 FROM memories m"
            " WHERE m.search_all @@ plainto_tsquery('english', t.term) LIMIT %s) c)"
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
    twice, as FTS5 counts each phrase). A term PostgreSQL reads as several lexemes (``e-mail``)
    scores each of them with the term's IDF."""
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
    terms' IDFs, as on SQLite (``store/fts.py``). A PostgreSQL stopword is never matched: not counted."""
    return sum(idf(corpus.rows, freq) for lex, freq in zip(lexemes, freqs, strict=True) if lex)
