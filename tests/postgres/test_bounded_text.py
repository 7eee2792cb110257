"""Bounded full-text ranking on PostgreSQL (store/pg_candidates.py): once ANALYZE's statistics say a
query's terms match more rows than ``full_text.max_ranked_rows``, only rows holding its selective
(rare) terms are ranked, each with the score the whole query gives it; the filter (agents,
superseded, deleted) applies exactly as on the path that ranks every match."""

from __future__ import annotations

from engram.db.postgres import PgDatabase
from engram.model import Memory, MemoryFilter, Scope
from engram.store.index_settings import FullTextSettings
from engram.store.postgres import PostgresMemoryStore
from tests.postgres.ranked_search import analyze_and_hold

FILT = MemoryFilter(scopes=(Scope(), Scope("a")))


def _load(url: str) -> None:
    """400 rows of agent ``a``: every one says "apples", every 40th "kiwis" too (some twice
    "apples"); agent ``b`` holds kiwis rows of its own; one kiwis row of ``a`` is superseded and
    one deleted. Then ANALYZE, as autovacuum would."""
    store = PostgresMemoryStore(PgDatabase.connect(url))
    memories = []
    for i in range(400):
        words = f"note {i} apples topic{i % 7} shelf{i % 11}"
        if i % 40 == 0:
            words += " kiwis" + (" apples" if i % 80 == 0 else "")
        memories.append(Memory(id=f"a{i:03d}", key=f"k{i}", content=words, scope=Scope("a"),
                               created_at=1.7e9 + i, updated_at=1.7e9 + i,
                               superseded_by="a001" if i == 120 else None))
    memories += [Memory(id=f"b{i:03d}", key=f"k{i}", content=f"kiwis apples kiwis secret {i}", scope=Scope("b"),
                        created_at=1.7e9 + i, updated_at=1.7e9 + i) for i in range(5)]
    store.import_memories(memories)
    store.delete(["a200"])
    analyze_and_hold(store)
    store.close()


def _search(url: str, max_ranked_rows: int, query: str, filt: MemoryFilter = FILT) -> list[tuple[str, float]]:
    store = PostgresMemoryStore(PgDatabase.connect(url), full_text=FullTextSettings(max_ranked_rows=max_ranked_rows))
    try:
        return [(m.id, score) for m, score in store.search_text(query, filt, limit=50)]
    finally:
        store.close()


def test_bounded_ranking_ranks_the_rows_of_the_rare_term_with_their_whole_scores(pg_url: str) -> None:
    _load(pg_url)
    exact = _search(pg_url, 0, "apples kiwis")
    bounded = _search(pg_url, 50, "apples kiwis")
    kiwis_rows = {f"a{i:03d}" for i in range(0, 400, 40)} - {"a120", "a200"}  # superseded, deleted
    # Ranking every match also returns rows holding only the common word.
    assert len(exact) == 50 and {i for i, _ in exact} > kiwis_rows
    # BM25 ranks every row holding the rare word above those holding only the common one, so
    # the bound leaves out only rows that rank low anyway.
    assert {i for i, _ in exact[: len(kiwis_rows)]} == kiwis_rows
    # Bounded: exactly the visible rows holding the rare word, in the exact ranking's order and
    # with its scores.
    assert {i for i, _ in bounded} == kiwis_rows
    assert bounded == [(i, s) for i, s in exact if i in kiwis_rows]


def test_bounded_ranking_keeps_agents_apart(pg_url: str) -> None:
    _load(pg_url)
    only_b = _search(pg_url, 50, "apples kiwis", MemoryFilter(scopes=(Scope("b"),)))
    assert {i for i, _ in only_b} == {f"b{i:03d}" for i in range(5)}
    assert not any(i.startswith("b") for i, _ in _search(pg_url, 50, "apples kiwis secret"))


def test_a_query_of_rare_terms_or_a_small_budget_miss_ranks_every_match(pg_url: str) -> None:
    _load(pg_url)
    # Rare terms only: within the budget, the single exact query answers.
    assert _search(pg_url, 50, "kiwis secret") == _search(pg_url, 0, "kiwis secret")
    # The selective term's rows are all another agent's: every match is ranked instead.
    assert _search(pg_url, 50, "apples secret") == _search(pg_url, 0, "apples secret") != []


def test_the_backend_passes_its_search_settings_to_the_store(pg_url: str) -> None:
    from engram.backends.postgres import PostgresBackend
    from engram.config import Settings

    settings = Settings(database_url=pg_url, postgres={"hnsw_ef_search": 321}, full_text={"max_ranked_rows": 77})
    backend = PostgresBackend.open(settings)
    try:
        assert backend.memory.ef_search == 321
        assert backend.memory.full_text.max_ranked_rows == 77
    finally:
        backend.close()


def test_a_query_of_stopwords_alone_ranks_the_newest_rows_of_a_large_table(pg_url: str) -> None:
    # No index lists PostgreSQL's stopwords, so such a query reads rows one by one: past the budget,
    # the newest rows its filter passes, each with the score ranking every row gives it.
    store = PostgresMemoryStore(PgDatabase.connect(pg_url))
    store.import_memories([
        Memory(id=f"s{i:03d}", key=f"s{i}", content=f"he was on shelf{i}, also" + (" and he was late" if i % 3 == 0 else ""),
               scope=Scope("a"), created_at=1.7e9 + i, updated_at=1.7e9 + i) for i in range(300)
    ] + [Memory(id=f"t{i:03d}", key=f"t{i}", content="he was here", scope=Scope("b"), created_at=1.8e9,
                updated_at=1.8e9) for i in range(20)])  # another agent's, newest of all: never counted
    store.delete(["s299"])
    analyze_and_hold(store)
    store.close()
    exact = dict(_search(pg_url, 0, "he was"))
    bounded = _search(pg_url, 40, "he was")
    newest = {f"s{i:03d}" for i in range(259, 299)}  # the 40 newest rows agent a sees (s299 deleted)
    assert len(exact) == 50 and not set(exact) <= newest  # (limit 50) older rows rank too when all are read
    assert {i for i, _ in bounded} == newest
    assert all(abs(score - exact[i]) < 1e-9 for i, score in bounded if i in exact)  # the same BM25
    twice = {i for i in newest if int(i[1:]) % 3 == 0}  # "he was" twice: the best 13 of the 40
    assert {i for i, _ in bounded[: len(twice)]} == twice
    # "also" is a stopword of engram's, not of PostgreSQL's (it has a lexeme): the query is still
    # one of stopwords alone, bounded the same way.
    assert {i for i, _ in _search(pg_url, 40, "he also")} == {f"s{i:03d}" for i in range(259, 299)}
