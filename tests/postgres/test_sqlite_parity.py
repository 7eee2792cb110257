"""What a store moved from SQLite to PostgreSQL answers for the same calls: metadata filters on
values other than strings, the order of ties in `list`, and the order a delete reports what it
removed. Each answer is checked on a real SQLite file and a real PostgreSQL database, and against
the in-memory reference where one decides it (``MemoryFilter.matches``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from engram.db.postgres import PgDatabase
from engram.engine import Engram, Filters
from engram.store.base import MemoryStore
from engram.store.inmemory import InMemoryMemoryStore
from engram.store.postgres import PostgresMemoryStore
from engram.store.sqlite import SqliteMemoryStore
from engram.testing.fakes import HashingEmbedder

VALUES = {"none": None, "yes": True, "no": False, "pair": [1, 2], "doc": {"y": 1, "x": 2}, "n": 1, "f": 1.0,
          "s": "str", "big": 12345678901234567890, "e": 1e20, "word": "true"}
FILTERS = ["none=null", "yes=true", "yes=1", "no=false", "pair=[1, 2]", "pair=[1,2]", 'doc={"x": 2, "y": 1}',
           'doc={"y":1,"x":2}', "n=1", "n=1.0", "f=1.0", "f=1", "s=str", 's="str"', "big=12345678901234567890",
           "e=1e+20", "e=1e20", "word=true", "missing=null"]


@pytest.fixture
def stores(pg_url: str, tmp_path: Path) -> Iterator[dict[str, MemoryStore]]:
    opened: dict[str, MemoryStore] = {
        "reference": InMemoryMemoryStore(),
        "sqlite": SqliteMemoryStore(tmp_path / "memory.db"),
        "postgres": PostgresMemoryStore(PgDatabase.connect(pg_url)),
    }
    try:
        yield opened
    finally:
        for store in opened.values():
            store.close()


def _each(stores: dict[str, MemoryStore], call: Callable[[Engram], object]) -> dict[str, object]:
    return {name: call(Engram(store, agent="alice")) for name, store in stores.items()}


def _keys(stores: dict[str, MemoryStore], text: str) -> dict[str, object]:
    """The keys each store lists for the metadata filter ``name=value``."""
    name, value = text.split("=", 1)
    return _each(stores, lambda mem: [m.key for m in mem.list(Filters(metadata={name: value}))])


def test_metadata_filters_on_other_values_than_strings_match_alike(stores: dict[str, MemoryStore]) -> None:
    # SQLite matched `yes=1` and not `yes=true`, never `null`, `[1, 2]` nor an object: its json()
    # wrote `[1,2]` and json_extract read true as 1 and null as NULL. PostgreSQL followed the reference.
    _each(stores, lambda mem: mem.remember("metadata of every JSON kind", key="m", metadata=VALUES))
    _each(stores, lambda mem: mem.remember("a memory with other metadata", key="o", metadata={"n": 2}))
    for text in FILTERS:
        found = _keys(stores, text)
        assert found["sqlite"] == found["postgres"] == found["reference"], text
    matched = [text for text in FILTERS if _keys(stores, text)["sqlite"]]
    assert matched == ["none=null", "yes=true", "no=false", "pair=[1, 2]", 'doc={"x": 2, "y": 1}', "n=1", "f=1.0",
                       "s=str", "big=12345678901234567890", "e=1e+20", "word=true"]
    # The filter holds in a recall as in a list.
    null = Filters(metadata={"none": "null"})
    recalled = _each(stores, lambda mem: [h.memory.key for h in mem.recall("metadata", filters=null)])
    assert recalled["sqlite"] == recalled["postgres"] == ["m"]


def test_ties_in_a_list_come_in_the_same_order(stores: dict[str, MemoryStore]) -> None:
    # SQLite ordered `importance` and `accessed` ties by nothing, and its plan gave the oldest first.
    def fill(mem: Engram) -> None:
        for i in range(4):
            mem.remember("same words here", key=f"tie{i}")
        ids = [m.id for m in mem.list(order="oldest")]
        mem.store.touch(ids, 2e9, recall=False)  # one access time for all: a recall touches its hits so

    _each({k: v for k, v in stores.items() if k != "reference"}, fill)
    sql = {k: v for k, v in stores.items() if k != "reference"}
    for order in ("importance", "accessed", "recent", "oldest"):
        keys = _each(sql, lambda mem, order=order: [m.key for m in mem.list(order=order)])
        assert keys["sqlite"] == keys["postgres"], order
    assert _each(sql, lambda mem: [m.key for m in mem.list(order="accessed")])["sqlite"] == ["tie3", "tie2", "tie1", "tie0"]


def test_a_delete_reports_what_it_removed_in_the_order_asked(stores: dict[str, MemoryStore]) -> None:
    sql = {k: v for k, v in stores.items() if k != "reference"}
    ids = _each(sql, lambda mem: [mem.remember(f"note {i}", key=f"k{i}").memory.id for i in range(3)])
    for name, store in sql.items():
        first, second, third = ids[name]
        assert [m.id for m in store.delete([third, first, second])] == [third, first, second], name


ROWS = {"m": VALUES, "o": {"n": 2, "s": "Straße", "list": ["a", 1, None, ["b"]], "e": -0.5},
        "p": {"s": "", "f": 1e-7, "n": -3, "pair": [2, 1], "list": "a, b"}, "q": {}}
CONDITIONS = [
    {"n": {"gte": 1}}, {"n": {"gt": 1.5}}, {"f": {"lte": 1}}, {"e": {"gt": 1e19}}, {"big": {"gt": 1e19}},
    {"e": {"lt": 0}}, {"yes": {"gte": 0}}, {"s": {"gt": "S"}}, {"s": {"lt": "str"}}, {"word": {"lte": "true"}},
    {"s": {"contains": ""}}, {"s": {"contains": "ß"}}, {"s": {"icontains": "STR"}}, {"list": {"contains": "a"}},
    {"list": {"contains": "b"}}, {"list": {"icontains": "A"}}, {"none": None}, {"none": "*"}, {"s": "*"},
    {"pair": [1, 2]}, {"pair": {"in": [[2, 1], [1, 2]]}}, {"doc": {"eq": {"x": 2, "y": 1}}},
    {"n": {"in": [1, 2, "1"]}}, {"n": {"nin": [1]}}, {"s": {"ne": ""}}, {"word": True}, {"word": "true"},
    {"OR": [{"n": {"lt": 0}}, {"s": {"icontains": "straSSE"}}]}, {"NOT": [{"n": "*"}]}, {"s": {"icontains": "STRASSE"}},
    {"AND": [{"n": {"gte": -5}}, {"NOT": [{"n": {"in": [2]}}]}]},
]


def test_metadata_conditions_match_alike(stores: dict[str, MemoryStore]) -> None:
    # Filters(where=...) (engram.where): each condition answers the same on SQLite, on PostgreSQL
    # and in the reference, for values of every JSON kind, a missing key, and the edges of each test.
    for key, metadata in ROWS.items():
        _each(stores, lambda mem, key=key, metadata=metadata: mem.remember(f"row {key}", key=key, metadata=metadata))
    matched = []
    for where in CONDITIONS:
        found = _each(stores, lambda mem, where=where: sorted(m.key for m in mem.list(Filters(where=where))))
        assert found["sqlite"] == found["postgres"] == found["reference"], where
        matched.append(found["reference"])
    assert all(matched[:3]) and [] in matched  # the conditions both match and miss


def test_a_boosted_importance_is_rounded_alike(stores: dict[str, MemoryStore]) -> None:
    # Each store sums in its own arithmetic: all round a boost to BOOST_DIGITS decimals (no
    # 0.7999999999999999), and a touch without a boost leaves a precise importance as given.
    def boosted(mem: Engram) -> tuple[float, float]:
        drift = mem.remember("a fact about glaciers", key="glacier", importance=0.7).memory
        precise = mem.remember("a fact about fjords", key="fjord", importance=0.1234567891234).memory
        mem.store.touch([drift.id], 2e9, importance_boost=0.1)
        mem.store.touch([precise.id], 2e9, importance_boost=0.0)
        return mem.get("glacier").importance, mem.get("fjord").importance

    assert set(_each(stores, boosted).values()) == {(0.8, 0.1234567891234)}


def test_a_recall_after_the_embedder_changed_is_answered_by_the_new_one(stores: dict[str, MemoryStore]) -> None:
    # SQLite's recall cache (PostgreSQL's store keeps none) was keyed by the request alone: a recall
    # after `engram.embedder = ...` was the old embedder's answer, vectors of another model included,
    # where PostgreSQL said to reindex and answered from full text.
    def recalled(mem: Engram) -> tuple[list[str], tuple[str, ...]]:
        result = mem.recall("rocket", mode="vector", touch=False)
        return [hit.memory.key for hit in result.hits], result.notes

    answers = {}
    for name in ("sqlite", "postgres"):
        mem = Engram(stores[name], agent="alice", embedder=HashingEmbedder(64))
        mem.remember("rocket launch today", key="r")
        mem.remember("cooking pasta tonight", key="c")
        assert recalled(mem) == (["r"], ())
        mem.embedder = HashingEmbedder(32)
        answers[name] = recalled(mem)
    assert answers["sqlite"] == answers["postgres"]
    assert "run `engram reindex`" in answers["sqlite"][1][0]
