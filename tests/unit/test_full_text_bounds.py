"""Bounded full-text ranking on the SQLite store (store/fts.py): on a real file, a small
``max_ranked_rows`` makes a few hundred rows take the path large stores take."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.model import MemoryFilter, Scope, make_draft
from engram.store.fts import split_terms
from engram.store.index_settings import FullTextSettings
from engram.store.sqlite import SqliteMemoryStore

ALL = MemoryFilter(scopes=(Scope(),))


def test_split_terms_keeps_the_rarest_terms_within_the_budget() -> None:
    df = {"greyhound": 3, "rescue": 20, "weekend": 400, "talk": 300}
    split = split_terms(["weekend", "greyhound", "talk", "rescue"], df, 50)
    assert split is not None
    assert split.selective == ["greyhound", "rescue"]
    assert split.common == ["weekend", "talk"]
    # Everything within the budget: rank every match.
    assert split_terms(["greyhound", "rescue"], df, 50) is None
    # Even the rarest term over the budget stays selective (it bounds the work anyway).
    over = split_terms(["weekend", "talk"], df, 50)
    assert over is not None and over.selective == ["talk"] and over.common == ["weekend"]
    # Unknown terms (in no row) cost nothing and are selective.
    assert split_terms(["zyzzyva", "weekend"], df, 50) == split_terms(["weekend", "zyzzyva"], df, 50)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    """240 rows: half say 'talking'; twelve mention a rescued greyhound, and all but six of the
    rows say 'weekend'."""
    file = tmp_path / "memory.db"
    store = SqliteMemoryStore(file)
    for i in range(240):
        words = [f"note{i}"] if i % 40 == 0 else ["weekend", f"note{i}"]
        if i % 2:
            words.append("talking about plans")
        if i % 20 == 0:
            words.append("adopted a rescued greyhound")
        store.upsert(make_draft(" ".join(words), key=f"k{i}", scope=Scope(), max_content_chars=1000), proposed_key=f"k{i}",
                     now=1_700_000_000.0 + i)
    store.close()
    return file


def _search(path: Path, budget: int, query: str, limit: int = 100) -> dict[str, float]:
    store = SqliteMemoryStore(path, full_text=FullTextSettings(max_ranked_rows=budget))
    try:
        return {m.key: score for m, score in store.search_text(query, ALL, limit=limit)}
    finally:
        store.close()


def test_doc_freq_counts_rows_by_the_index_stem(path: Path) -> None:
    store = SqliteMemoryStore(path)
    try:
        with store.db.read() as conn:
            df = store._fts.doc_freq(conn, ["talks", "adopting", "weekends", "zyzzyva"])
    finally:
        store.close()
    assert df == {"talks": 120, "adopting": 12, "weekends": 234, "zyzzyva": 0}


def test_rows_with_a_selective_term_keep_their_exact_scores(path: Path) -> None:
    query = "did they talk about adopting a greyhound this weekend?"
    exact = _search(path, 0, query, limit=300)
    bounded = _search(path, 50, query, limit=300)
    greyhound_rows = {f"k{i}" for i in range(0, 240, 20)}
    assert len(exact) == 240  # every row says 'weekend' or 'greyhound'
    assert set(bounded) == greyhound_rows
    for key in greyhound_rows:
        assert bounded[key] == pytest.approx(exact[key], rel=1e-9)
    # The best rows are the same, in the same order.
    best = sorted(exact, key=lambda k: -exact[k])[:5]
    assert sorted(bounded, key=lambda k: -bounded[k])[:5] == best


def test_a_budget_the_store_fits_in_ranks_every_match(path: Path) -> None:
    query = "weekend talk greyhound"
    assert _search(path, 10_000, query) == _search(path, 0, query)


def test_like_fallback_scans_only_stores_within_the_budget(path: Path) -> None:
    greyhound_rows = {f"k{i}" for i in range(0, 240, 20)}
    # 'eyhou' is no word FTS knows; only a substring scan finds it.
    assert set(_search(path, 0, "eyhou")) == greyhound_rows
    assert _search(path, 50, "eyhou") == {}
    # A store over the budget finds word prefixes through the index instead.
    assert set(_search(path, 50, "greyh")) == greyhound_rows
    assert set(_search(path, 0, "greyh")) == greyhound_rows
    assert _search(path, 50, "gr") == {}  # too short to search as a prefix


def test_one_letter_queries_scan_small_stores_and_match_whole_letters_on_large_ones(tmp_path: Path) -> None:
    # PtrClaw: "Falls back to `LIKE` when ... all tokens are single-char"; a store too large to
    # scan still finds the letter as a word through the index.
    file = tmp_path / "letters.db"
    store = SqliteMemoryStore(file)
    for i, content in enumerate(["Plan B is the fallback", "a bobcat", "the cat sat"] + [f"filler {i}" for i in range(60)]):
        store.upsert(make_draft(content, key=f"k{i}", scope=Scope(), max_content_chars=100), proposed_key=f"k{i}",
                     now=1_700_000_000.0 + i)
    store.close()
    assert set(_search(file, 0, "b")) == {"k0", "k1"}  # substrings: "Plan B", "bobcat"
    assert set(_search(file, 20, "B")) == {"k0"}  # whole-word letter only


def test_text_scores_reuse_the_ranking_and_never_go_stale(path: Path, tmp_path: Path) -> None:
    store = SqliteMemoryStore(path)
    other = SqliteMemoryStore(path)  # another connection: its commits move data_version
    try:
        ranked = {m.id: score for m, score in store.search_text("rescued greyhound", ALL, limit=100)}
        assert len(ranked) == 12
        # Scores of rows the vector side found come from the same ranking, exactly.
        assert store.text_scores("rescued greyhound", list(ranked)) == pytest.approx(ranked)
        # A write through this store, then one through another connection: each is seen at once.
        mine = store.upsert(make_draft("a greyhound rescued today", key="new1", scope=Scope(), max_content_chars=100),
                            proposed_key="new1", now=1_800_000_000.0).memory
        assert mine.id in store.text_scores("rescued greyhound", [mine.id])
        theirs = other.upsert(make_draft("greyhound rescued again", key="new2", scope=Scope(), max_content_chars=100),
                              proposed_key="new2", now=1_800_000_001.0).memory
        assert theirs.id in store.text_scores("rescued greyhound", [theirs.id])
        assert {m.key for m, _ in store.search_text("rescued greyhound", ALL, limit=100)} >= {"new1", "new2"}
    finally:
        other.close()
        store.close()
