"""Ranking the rarest terms' rows first (store/pg_candidates.py, MaxScore): when the rows holding a
query's rarest terms score at least what any other row could, only they are ranked, and the
answer is the ranking of every match, rows, order and scores; when they do not (or too few pass
the filter), every match is ranked as before."""

from __future__ import annotations

from typing import Any

import pytest

from engram.db.postgres import PgDatabase
from engram.model import Memory, MemoryFilter, Scope
from engram.store.index_settings import FullTextSettings
from engram.store.postgres import PostgresMemoryStore
from tests.postgres.ranked_search import analyze_and_hold

FILT = MemoryFilter(scopes=(Scope(), Scope("a")))
FILLER = "note shelf box"


def _memory(i: int, content: str, scope: Scope = Scope("a")) -> Memory:
    return Memory(id=f"m{i:04d}", key=f"k{i}", content=content, scope=scope, created_at=1.7e9 + i,
                  updated_at=1.7e9 + i)


def _load(url: str, memories: list[Memory]) -> None:
    store = PostgresMemoryStore(PgDatabase.connect(url))
    store.import_memories(memories)
    # Two searches compared must read the same term counts: an autovacuum between them swapped
    # a counted "apples" (100 rows) for ANALYZE's float4 share of rows, and the scores moved in
    # the eighth digit.
    analyze_and_hold(store)
    store.close()


def _search(url: str, query: str, *, limit: int, max_ranked_rows: int = 10_000,
            ranked: list[list[str]] | None = None) -> list[tuple[str, float]]:
    """``search_text``'s ids and scores; ``ranked`` receives the terms of each ranking statement."""
    store = PostgresMemoryStore(PgDatabase.connect(url), full_text=FullTextSettings(max_ranked_rows=max_ranked_rows))
    if ranked is not None:
        rank = store._ranked

        def spy(conn: Any, weights: Any, terms: list[str], *rest: Any) -> list[Any]:
            ranked.append(list(terms))
            return rank(conn, weights, terms, *rest)

        store._ranked = spy  # type: ignore[method-assign]
    try:
        return [(m.id, score) for m, score in store.search_text(query, FILT, limit=limit)]
    finally:
        store.close()


def test_the_rare_terms_rows_decide_alone_and_the_answer_is_the_full_ranking(pg_url: str) -> None:
    # 600 filler rows, 300 holding "apples", 40 of those "kiwis" too: no row without "kiwis"
    # can reach the tenth "kiwis" row's score.
    memories = [_memory(i, f"{FILLER} {i}") for i in range(600)]
    memories += [_memory(i, f"apples {FILLER} {i}" + (" kiwis" if i % 10 == 0 else "")) for i in range(600, 1000)]
    _load(pg_url, memories)
    ranked: list[list[str]] = []
    found = _search(pg_url, "apples kiwis", limit=10, ranked=ranked)
    exact = _search(pg_url, "apples kiwis", limit=10, max_ranked_rows=0)
    assert ranked == [["kiwis"]]  # one statement, over the 40 rows of the rare term
    assert found == exact and len(found) == 10


def test_rare_rows_that_cannot_decide_leave_every_match_ranked(pg_url: str) -> None:
    # "kiwis" (12 rows) is far rarer than "plums" (600 rows), so its rows are ranked first; but
    # they are long and say it once, while short rows repeat "plums": a "plums" row outranks the
    # tenth "kiwis" row, so ranking the "kiwis" rows alone would be wrong. The answer is still
    # the full ranking.
    long_tail = " ".join(f"word{j}" for j in range(60))
    memories = [_memory(i, f"{FILLER} {i}") for i in range(1388)]
    memories += [_memory(i, f"kiwis {long_tail} {i}") for i in range(1388, 1400)]
    memories += [_memory(i, f"plums plums plums {i}") for i in range(1400, 2000)]
    _load(pg_url, memories)
    ranked: list[list[str]] = []
    found = _search(pg_url, "kiwis plums", limit=10, ranked=ranked)
    exact = _search(pg_url, "kiwis plums", limit=10, max_ranked_rows=0)
    assert ranked == [["kiwis"], ["kiwis", "plums"]]  # tried, then every match ranked
    assert found == exact
    assert any(memory_id >= "m1400" for memory_id, _ in found)  # a "plums" row among the best 10


def test_rare_rows_the_filter_hides_leave_every_match_ranked(pg_url: str) -> None:
    # Most "kiwis" rows belong to agent b, which the search cannot see: too few remain to set the
    # bar for the other rows.
    memories = [_memory(i, f"{FILLER} {i}") for i in range(600)]
    memories += [_memory(i, f"apples {FILLER} {i}") for i in range(600, 900)]
    memories += [_memory(i, f"kiwis apples {i}", scope=Scope("b" if i % 8 else "a")) for i in range(900, 960)]
    _load(pg_url, memories)
    ranked: list[list[str]] = []
    found = _search(pg_url, "apples kiwis", limit=20, ranked=ranked)
    exact = _search(pg_url, "apples kiwis", limit=20, max_ranked_rows=0)
    assert ranked[0] == ["kiwis"] and len(ranked) == 2
    assert found == exact and len(found) == 20
    assert not any(memory_id >= "m0900" and int(memory_id[1:]) % 8 for memory_id, _ in found)


@pytest.mark.parametrize("query", ["apples", "kiwis", "apples kiwis shelf", "zzz apples"])
def test_queries_without_a_rarer_part_rank_every_match(pg_url: str, query: str) -> None:
    memories = [_memory(i, f"{FILLER} {i}" + (" apples" if i % 3 == 0 else "") + (" kiwis" if i % 50 == 0 else ""))
                for i in range(300)]
    _load(pg_url, memories)
    assert _search(pg_url, query, limit=10) == _search(pg_url, query, limit=10, max_ranked_rows=0)
