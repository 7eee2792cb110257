"""A query of common words only on PostgreSQL (store/pg_candidates.py, ``conjunctions``): once its
rarest word alone holds more rows than ``full_text.max_ranked_rows``, the rows ranked are those
holding all of its rarest words, each with the whole query's score. On a store where those rows
are the best ones, the answer is the full ranking's; the filter, deletes and updates hold."""

from __future__ import annotations

from engram.db.postgres import PgDatabase
from engram.model import Memory, MemoryDraft, MemoryFilter, Scope
from engram.store.pg_candidates import conjunctions
from engram.store.postgres import PostgresMemoryStore
from tests.postgres.ranked_search import analyze_and_hold, search_text

FILT = MemoryFilter(scopes=(Scope(), Scope("a")))
QUERY = "apples pears plums"


def _load(url: str) -> None:
    """600 rows of agent ``a``: all say "apples", every 3rd "pears", every 4th "plums" (so every
    12th all three); agent ``b`` holds rows with all three words of its own. Then ANALYZE."""
    store = PostgresMemoryStore(PgDatabase.connect(url))
    memories = []
    for i in range(600):
        words = ["note", f"n{i}", "apples"] + ["pears"] * (i % 3 == 0) + ["plums"] * (i % 4 == 0)
        memories.append(Memory(id=f"a{i:03d}", key=f"k{i}", content=" ".join(words), scope=Scope("a"),
                               created_at=1.7e9 + i, updated_at=1.7e9 + i))
    memories += [Memory(id=f"b{i:03d}", key=f"k{i}", content="apples pears plums plums pears secret",
                        scope=Scope("b"), created_at=1.7e9 + i, updated_at=1.7e9 + i) for i in range(20)]
    store.import_memories(memories)
    analyze_and_hold(store)
    store.close()


def _search(url: str, max_ranked_rows: int, query: str = QUERY, filt: MemoryFilter = FILT,
            limit: int = 10, ranked: list[list[list[str]]] | None = None) -> list[tuple[str, float]]:
    return search_text(url, max_ranked_rows, query, filt, limit=limit, ranked=ranked)


def test_conjunctions_take_the_largest_set_of_rarest_terms_that_fits() -> None:
    # 1M rows; shares 5%, 10%, 30%: the rarest alone (50k) is over 10k; with the next, 5k fits;
    # any two of the three would be 50k.
    rows = [300_000.0, 100_000.0, 50_000.0]
    assert conjunctions(["a", "b", "c"], rows, 1e6, 10_000) == [[["c", "b"]]]
    # A tighter budget needs all three (1,500), then widens to the two rarest.
    assert conjunctions(["a", "b", "c"], rows, 1e6, 2_000) == [[["c", "b", "a"]], [["c", "b"]]]
    # Three words of about the same rarity: any two of them (~930 rows) fit.
    assert conjunctions(["a", "b", "c"], [26_000.0, 15_400.0, 12_800.0], 1e6, 10_000) == [
        [["c", "b"], ["c", "a"], ["b", "a"]]]
    # The rarest fits the budget, one word, no budget, or a stopword beside one word: nothing.
    assert conjunctions(["a", "b"], [300_000.0, 5_000.0], 1e6, 10_000) == []
    assert conjunctions(["a"], [300_000.0], 1e6, 10_000) == []
    assert conjunctions(["a", "b"], rows[:2], 1e6, 0) == []
    assert conjunctions(["a", "the"], [300_000.0, 0.0], 1e6, 10_000) == []


def test_rows_holding_every_rare_word_give_the_full_ranking(pg_url: str) -> None:
    _load(pg_url)
    exact = _search(pg_url, 0)
    ranked: list[list[list[str]]] = []
    bounded = _search(pg_url, 40, ranked=ranked)  # "plums" alone holds 170 rows: over the budget
    # One ranking, of rows holding "plums" and "pears" (and "apples", in every row) together.
    assert len(ranked) == 1 and all({"plums", "pears"} <= set(one) for one in ranked[0])
    all_three = {f"a{i:03d}" for i in range(0, 600, 12)}
    assert {i for i, _ in exact} <= all_three
    assert bounded == exact


def test_the_filter_holds_and_other_agents_rows_never_show(pg_url: str) -> None:
    _load(pg_url)
    assert not any(i.startswith("b") for i, _ in _search(pg_url, 40, limit=50))
    only_b = _search(pg_url, 40, filt=MemoryFilter(scopes=(Scope("b"),)), limit=50)
    assert {i for i, _ in only_b} == {f"b{i:03d}" for i in range(20)}


def test_too_few_rows_holding_them_all_fall_back_to_ranking_more(pg_url: str) -> None:
    _load(pg_url)
    # 50 rows of ``a`` hold all three; asked for 120, the path ranks more rows and returns the full
    # ranking's (the rows holding "plums", the weightier word, come next).
    ranked: list[list[list[str]]] = []
    assert _search(pg_url, 40, limit=120, ranked=ranked) == _search(pg_url, 0, limit=120)
    assert all(len(one) >= 2 for one in ranked[0]) and ranked[-1] == [["plums"]]


def test_deletes_and_updates_keep_the_answer_right(pg_url: str) -> None:
    _load(pg_url)
    store = PostgresMemoryStore(PgDatabase.connect(pg_url))
    try:
        best = [i for i, _ in _search(pg_url, 40)]
        store.delete([best[0]])
        # The second best row loses "plums": it no longer holds every word.
        store.upsert(MemoryDraft(content="note apples pears", key=f"k{int(best[1][1:])}", scope=Scope("a")),
                     proposed_key="unused", now=1.8e9)
    finally:
        store.close()
    bounded, exact = _search(pg_url, 40), _search(pg_url, 0)
    assert bounded == exact
    assert best[0] not in {i for i, _ in bounded} and best[1] not in {i for i, _ in bounded}
