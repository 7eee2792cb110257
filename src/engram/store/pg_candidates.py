"""Which rows the PostgreSQL store ranks by full text: all matches, or on large tables only some
of them (the query's selective terms' rows, its rarest words together, pairs of its words, and
the MaxScore proof that the rarest terms' rows alone give the full ranking). These functions
decide from term counts only; the score is ``store/pg_text.py``'s BM25 of the whole query, and
``PostgresMemoryStore.search_text`` tries the sets as told below.

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

The term counts come from ``store/pg_text.py`` (ANALYZE's statistics, ``TermStats``, and the
counts the IDFs come from). A table without statistics (new, or never analysed) is ranked in
full, as are queries whose terms are all rare.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from engram.store import bm25
from engram.store.pg_text import idf


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
