"""A mixed query on a large PostgreSQL table (store/pg_candidates.py, ``pair_tiers``): when the rows
holding two of its words are far fewer than the rows it would rank otherwise, those are ranked
first, each with the whole query's score. On a store where they are the best rows the answer is
the full ranking's; the filter, deletes and updates hold, and too few rows widen the ranking."""

from __future__ import annotations

from engram.db.postgres import PgDatabase
from engram.model import Memory, MemoryDraft, MemoryFilter, Scope
from engram.store.pg_candidates import pair_tiers
from engram.store.postgres import PostgresMemoryStore
from tests.postgres.ranked_search import analyze_and_hold, search_text

FILT = MemoryFilter(scopes=(Scope(), Scope("a")))
QUERY = "apples pears plums"
BUDGET = 500  # over the query's 300 matches, under the table's 1,020 rows


def _words(i: int) -> list[str]:
    """Each fruit in 100 of 1,000 rows, independently: 10 rows hold each pair, row 0 all three."""
    return (["apples"] * (i % 10 == 0) + ["pears"] * ((i // 10) % 10 == 0)
            + ["plums"] * ((i // 100) % 10 == 0))


def _load(url: str) -> None:
    store = PostgresMemoryStore(PgDatabase.connect(url))
    memories = [Memory(id=f"a{i:04d}", key=f"k{i}", content=" ".join(["note", f"n{i}", *_words(i)]), scope=Scope("a"),
                       created_at=1.7e9 + i, updated_at=1.7e9 + i) for i in range(1000)]
    memories += [Memory(id=f"b{i:03d}", key=f"k{i}", content="apples pears plums secret", scope=Scope("b"),
                        created_at=1.7e9 + i, updated_at=1.7e9 + i) for i in range(20)]
    store.import_memories(memories)
    analyze_and_hold(store)
    store.close()


def _search(url: str, max_ranked_rows: int, filt: MemoryFilter = FILT, limit: int = 10,
            ranked: list[list[list[str]]] | None = None) -> list[tuple[str, float]]:
    return search_text(url, max_ranked_rows, QUERY, filt, limit=limit, ranked=ranked)


def test_pair_tiers_take_terms_and_pairs_by_their_idf() -> None:
    # 1M rows; 1%, 0.5% and 0.1% of them: any two (~65 rows), then the rarest alone too (its IDF,
    # 6.9, is below any pair's), then the two rarest alone.
    rows = [10_000.0, 5_000.0, 1_000.0]
    tiers = pair_tiers(["a", "b", "c"], rows, 1e6, 50, 16_000)
    assert [sets for sets, _ in tiers] == [[["c", "b"], ["c", "a"], ["b", "a"]], [["b", "a"], ["c"]], [["c"], ["b"]]]
    assert [round(estimate) for _, estimate in tiers] == [65, 1050, 6000]
    # Under half the planned rows only, and at least the rows asked for.
    assert [sets for sets, _ in pair_tiers(["a", "b", "c"], rows, 1e6, 50, 2_000)] == [[["c", "b"], ["c", "a"], ["b", "a"]]]
    assert [sets for sets, _ in pair_tiers(["a", "b", "c"], rows, 1e6, 100, 2_000)] == []
    assert pair_tiers(["a"], [10_000.0], 1e6, 10, 10_000) == []
    # A word in 53 rows alone (IDF 9.8) outranks two commoner ones together (5.5 + 2.2): its rows first.
    assert [sets for sets, _ in pair_tiers(["x", "y", "z"], [108_839.0, 53.0, 3_899.0], 1e6, 50, 3_952)] == [
        [["y"]], [["y"], ["z", "x"]]]


def test_rows_holding_two_words_give_the_full_ranking(pg_url: str) -> None:
    _load(pg_url)
    ranked: list[list[list[str]]] = []
    bounded = _search(pg_url, BUDGET, ranked=ranked)
    exact = _search(pg_url, 0)
    assert bounded == exact
    assert exact[0][0] == "a0000"  # the row holding all three
    assert len(ranked) == 1 and all(len(one) == 2 for one in ranked[0])  # the 28 rows holding two


def test_the_filter_holds_and_too_few_rows_widen_the_ranking(pg_url: str) -> None:
    _load(pg_url)
    assert not any(i.startswith("b") for i, _ in _search(pg_url, BUDGET, limit=50))
    ranked: list[list[list[str]]] = []
    only_b = _search(pg_url, BUDGET, filt=MemoryFilter(scopes=(Scope("b"),)), limit=30, ranked=ranked)
    assert {i for i, _ in only_b} == {f"b{i:03d}" for i in range(20)}
    # The rows holding two words (~42 estimated) are 20 here: fewer than asked for, so every match is ranked.
    assert len(ranked) == 2 and ranked[-1] == [["apples"], ["pears"], ["plums"]]


def test_deletes_and_updates_keep_the_answer_right(pg_url: str) -> None:
    _load(pg_url)
    store = PostgresMemoryStore(PgDatabase.connect(pg_url))
    try:
        store.delete(["a0000"])
        # Row 10 holds apples and pears; it loses pears.
        store.upsert(MemoryDraft(content="note n10 apples", key="k10", scope=Scope("a")), proposed_key="unused",
                     now=1.8e9)
    finally:
        store.close()
    bounded, exact = _search(pg_url, BUDGET), _search(pg_url, 0)
    assert bounded == exact
    assert not {"a0000", "a0010"} & {i for i, _ in bounded}
