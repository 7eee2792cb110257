"""PostgreSQL ranks full text by BM25 as SQLite's FTS5 does (store/pg_text.py): a rare word
outranks a common one however often the common one is repeated, and on the same memories both
backends give the same order (and, where their tokenizers agree, the same scores)."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest

from engram.db.postgres import PgDatabase
from engram.engine import Engram
from engram.model import Memory, MemoryFilter, Scope
from engram.store.postgres import PostgresMemoryStore
from engram.store.sqlite import SqliteMemoryStore

FILT = MemoryFilter(scopes=(Scope(), Scope("a")))
# Words PostgreSQL's english stemmer and SQLite's porter stem alike, none a stopword of either.
WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec"
         " romeo sierra tango uniform victor whiskey xray yankee zulu amber cobalt crimson indigo ivory jade lemon"
         " maroon olive orchid pearl ruby salmon silver teal violet").split()


def _memory(i: int, content: str, key: str | None = None, context: str | None = None,
            scope: Scope = Scope("a")) -> Memory:
    return Memory(id=f"m{i:03d}", key=key or f"k{i}", content=content, scope=scope, search_context=context,
                  created_at=1.7e9 + i * 86400, updated_at=1.7e9 + i * 86400)


def _pg(url: str, memories: list[Memory]) -> PostgresMemoryStore:
    store = PostgresMemoryStore(PgDatabase.connect(url))
    store.import_memories(memories)
    return store


def test_a_rare_word_outranks_a_common_one_repeated(pg_url: str) -> None:
    # "apples" is in 30 of 40 rows; "kiwis" in one. The row repeating "apples" in its key and
    # content matches more of the query's words' occurrences, but says less.
    memories = [_memory(i, f"apples note {i}") for i in range(29)]
    memories += [_memory(i, f"plain note {i}") for i in range(29, 38)]
    memories += [_memory(38, "apples apples apples in the basket", key="apples apples"),
                 _memory(39, "a bowl of kiwis on the table")]
    store = _pg(pg_url, memories)
    try:
        ranked = [(m.id, score) for m, score in store.search_text("apples kiwis", FILT, limit=5)]
        assert ranked[0][0] == "m039"
        # The common word's IDF is floored (it is in most rows): the repeated row scores next to nothing.
        scores = dict(ranked)
        assert scores["m038"] < scores["m039"] * 1e-3
        # A vector candidate's text score is the one search_text gives it; the ceiling is the sum of IDFs.
        assert store.text_scores("apples kiwis", ["m038", "m039", "m030"]) == pytest.approx(
            {"m038": scores["m038"], "m039": scores["m039"]})
        ceiling = store.text_score_ceiling("apples kiwis")
        assert ceiling is not None and scores["m039"] <= ceiling * 1.5
    finally:
        store.close()


def test_scores_agree_with_sqlite_on_the_same_memories(pg_url: str, tmp_path: Path) -> None:
    rng = random.Random(3)
    memories = []
    for i in range(120):
        # Zipf-like draws: some words common, some rare; lengths, repeats, keys and contexts vary.
        content = " ".join(rng.choices(WORDS, weights=[1 / (r + 1) for r in range(len(WORDS))], k=rng.randint(3, 14)))
        key = " ".join(rng.sample(WORDS, 2)) if i % 4 == 0 else None
        context = " ".join(rng.sample(WORDS, 3)) if i % 5 == 0 else None
        memories.append(_memory(i, content, key=key, context=context))
    memories.append(_memory(200, "alpha bravo secret", scope=Scope("b")))  # another agent's: never returned
    pg = _pg(pg_url, memories)
    lite = SqliteMemoryStore(tmp_path / "m.db")
    lite.import_memories(memories)
    try:
        for query in ("alpha violet", "bravo teal orchid", "charlie", "lemon pearl alpha delta", "silver zulu"):
            on_pg = [(m.id, s) for m, s in pg.search_text(query, FILT, limit=20)]
            on_lite = [(m.id, s) for m, s in lite.search_text(query, FILT, limit=20)]
            assert on_pg, query
            assert not any(i == "m200" for i, _ in on_pg)
            # Same rows in the same order (ties aside), with scores within a hair of FTS5's.
            assert [round(s, 6) for _, s in on_pg] == pytest.approx([round(s, 6) for _, s in on_lite], rel=1e-3), query
            assert {i: round(s, 4) for i, s in on_pg} == {i: round(s, 4) for i, s in on_lite}, query
            assert pg.text_score_ceiling(query) == pytest.approx(lite.text_score_ceiling(query), rel=1e-6)
    finally:
        pg.close()
        lite.close()


def test_a_score_does_not_depend_on_the_order_of_the_query_words(pg_url: str) -> None:
    # Each query lexeme is counted in a column of its own and the terms are added in the
    # tsvector's (bytewise) order whatever the query's, so a score is the same to the bit.
    memories = [_memory(i, " ".join(WORDS[(i * k) % len(WORDS)] for k in range(1, 9)), key=f"{WORDS[i % 7]} note")
                for i in range(60)]
    pg = _pg(pg_url, memories)
    try:
        words = ["zulu", "alpha", "mike", "echo", "bravo"]
        first = pg.search_text(" ".join(words), FILT, limit=30)
        again = pg.search_text(" ".join(reversed(words)), FILT, limit=30)
        assert len(first) > 3 and [(m.id, s) for m, s in first] == [(m.id, s) for m, s in again]
        ids = [m.id for m, _ in first]
        assert pg.text_scores(" ".join(words), ids) == pg.text_scores(" ".join(reversed(words)), ids)
    finally:
        pg.close()


def test_a_row_count_older_than_a_terms_count_still_gives_an_idf() -> None:
    # Writers add rows between the corpus count and a term's count (a multi-process test met it:
    # log of a negative number). The corpus holds at least the rows that hold the term.
    from engram.store import pg_text

    assert pg_text.idf(10, 12) == pg_text.idf(12, 12) == pytest.approx(1e-6)
    assert pg_text.idf(1000, 3) > pg_text.idf(1000, 300) > 0


def test_a_hybrid_recall_counts_its_terms_rows_once(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Its ranking, the vector candidates' text scores and the score ceiling all weigh the same
    # terms: the rare terms' rows are counted through the GIN index once, not three times.
    from engram.engine import Engram
    from engram.store import pg_text
    from engram.testing.fakes import HashingEmbedder

    store = PostgresMemoryStore(PgDatabase.connect(pg_url))
    try:
        mem = Engram(store, agent="a", embedder=HashingEmbedder())
        mem.remember_many([{"content": f"{WORDS[i]} {WORDS[i + 1]} note"} for i in range(20)])
        counted: list[list[str]] = []
        real = pg_text.doc_freqs
        monkeypatch.setattr(pg_text, "doc_freqs", lambda conn, terms, *rest: counted.append(list(terms))
                            or real(conn, terms, *rest))
        result = mem.recall("bravo charlie zulu", mode="hybrid", touch=False)
        assert result.mode == "hybrid" and result.hits
        assert counted == [["bravo", "charlie", "zulu"]]
    finally:
        store.close()


# Stopwords of PostgreSQL's english list in keys, contents and contexts (FTS5 counts them in a
# row's length, a tsvector leaves them out), numbers read as words, accents, repeated words.
_PARITY_ROWS = [
    ("We upgraded the service to Python 3.11 last week, and it is faster", None, None),
    ("The café on the corner serves José a coffee every morning", "cafe", None),
    ("Python python PYTHON: the python release notes for 3.12 and 3.11", None, "what we said about it"),
    ("Deploy notes: run the migrations, then restart the workers", "deploy notes", None),
    ("Bob's e-mail is bob@example.com and he answers within a day", None, "he is the one to ask"),
    ("She said that it was what they would have done if they could", None, None),
    ("coffee tea water juice", "drinks", None),
    ("It is what it is, and that is all there is to it", None, None),
    ("Café crème at the Hôtel de Ville with José and Zoë", None, "it was in the spring"),
    ("release release release of the new python, then another release", "release", None),
]


def test_a_text_score_is_the_same_on_both_backends(pg_url: str, tmp_path: Path) -> None:
    # BM25 weighs a row's length against the mean: PostgreSQL counts them as FTS5 does, stopwords
    # included (schema step 0014), so each score is FTS5's to the float's rounding, not "close".
    memories = [_memory(i, content, key=key, context=context) for i, (content, key, context) in enumerate(_PARITY_ROWS)]
    pg = _pg(pg_url, memories)
    lite = SqliteMemoryStore(tmp_path / "m.db")
    lite.import_memories(memories)
    try:
        for query in ("3.11", "python", "the python", "café", "cafe jose", "José Zoë", "python python release",
                      "release notes", "coffee", "he answers"):
            on_pg = {m.id: s for m, s in pg.search_text(query, FILT, limit=20)}
            on_lite = {m.id: s for m, s in lite.search_text(query, FILT, limit=20)}
            assert on_pg and on_pg.keys() == on_lite.keys(), query
            assert on_pg == pytest.approx(on_lite, rel=1e-6), query
            ids = list(on_lite)
            assert pg.text_scores(query, ids) == pytest.approx(lite.text_scores(query, ids), rel=1e-6), query
            assert pg.text_score_ceiling(query) == pytest.approx(lite.text_score_ceiling(query), rel=1e-6)
    finally:
        pg.close()
        lite.close()


@pytest.mark.parametrize("rows", [2, 3, 4, 6, 10])
def test_a_recalled_text_part_is_the_same_on_both_backends_in_a_small_store(
        rows: int, new_database: Callable[[], str], tmp_path: Path) -> None:
    # The text part is a score over the query's ceiling (a row holding each query word once): both
    # must count the rows the IDFs are computed from alike, forgotten rows left out. SQLite took the
    # ceiling's from max(rowid): with a memory forgotten, a word in half the rows (its IDF floored at
    # 1e-6) had a part of 5e-06 there and 1.0 on PostgreSQL.
    contents = [f"{WORDS[i]} {WORDS[20 + i]} notes" for i in range(rows)]
    for i in range(rows // 2):
        contents[i] += " water"
    contents[-1] += " zebra"  # in one row
    parts: dict[str, dict[str, dict[str, float]]] = {}
    ceilings: dict[str, dict[str, float | None]] = {}
    stores = {"postgres": PostgresMemoryStore(PgDatabase.connect(new_database())),
              "sqlite": SqliteMemoryStore(tmp_path / f"m{rows}.db")}
    for name, store in stores.items():
        engram = Engram(store, agent="a")
        try:
            # Forgotten before, between and after the memories kept: rowids no longer count rows.
            gone = [engram.remember("an old note to forget").memory.id]
            for i, content in enumerate(contents):
                engram.remember(content)
                if i == rows // 2:
                    gone.append(engram.remember("another passing note").memory.id)
            for memory_id in gone:
                engram.forget(memory_id)
            parts[name], ceilings[name] = {}, {}
            for query in ("water", "notes", "zebra", "water zebra", "notes zebra"):
                hits = engram.recall(query, limit=20).hits
                assert hits, (name, query)
                parts[name][query] = {h.memory.content: round(h.parts.text, 6) for h in hits}
                ceilings[name][query] = store.text_score_ceiling(query)
        finally:
            store.close()
    assert parts["sqlite"] == parts["postgres"]
    for query, ceiling in ceilings["sqlite"].items():
        assert ceiling == pytest.approx(ceilings["postgres"][query], rel=1e-6), query
    if rows % 2 == 0:  # a word in half the rows, or in all: no information, but every word the query has
        assert set(parts["sqlite"]["water"].values()) == {1.0}
    assert set(parts["sqlite"]["notes"].values()) == {1.0}
