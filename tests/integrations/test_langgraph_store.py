"""EngramStore in a real LangGraph graph, and LangGraph's store operations against a real SQLite store."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import operator
import random
import sqlite3
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, TypedDict

import pytest

pytest.importorskip("langgraph", reason="the langgraph extra is not installed: pip install 'engram-recall[langgraph]'")

from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.store.base import BaseStore, GetOp, ListNamespacesOp, MatchCondition, PutOp, SearchOp  # noqa: E402
from langgraph.store.memory import InMemoryStore  # noqa: E402

from engram.backends.sqlite import SqliteBackend  # noqa: E402
from engram.engine import Engram  # noqa: E402
from engram.errors import ValidationError  # noqa: E402
from engram.events import EventBus  # noqa: E402
from engram.integrations.langgraph import EngramStore, label_agent  # noqa: E402
from engram.lifecycle import hygiene  # noqa: E402
from engram.lifecycle.scheduler import Maintenance  # noqa: E402
from engram.lifecycle.settings import HygieneSettings, LifecycleSettings  # noqa: E402
from engram.store.base import MemoryStore  # noqa: E402
from engram.store.inmemory import InMemoryMemoryStore  # noqa: E402
from engram.store.sqlite import SqliteMemoryStore  # noqa: E402
from engram.testing.fakes import FakeClock, HashingEmbedder  # noqa: E402


@pytest.fixture
def engram(tmp_path: Path) -> Engram:
    mem = Engram(SqliteMemoryStore(tmp_path / "memory.db"), agent="app", embedder=HashingEmbedder())
    yield mem
    mem.close()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def timed(tmp_path: Path, clock: FakeClock) -> Engram:
    """A SQLite engram on a clock the test moves, with its audit trail in the same file (as
    ``Engram.from_settings`` opens it)."""
    store = SqliteMemoryStore(tmp_path / "memory.db")
    backend = SqliteBackend(store)
    events = EventBus()
    events.subscribe(backend.audit_log())
    mem = Engram(store, agent="app", embedder=HashingEmbedder(), clock=clock, events=events, backend=backend)
    yield mem
    mem.close()


class State(TypedDict):
    user: str
    message: str
    recalled: Annotated[list[str], operator.add]


def _graph(store: BaseStore):  # noqa: ANN202
    def remember(state: State, *, store: BaseStore) -> dict:
        if state["message"].startswith("remember:"):
            fact = state["message"].removeprefix("remember:").strip()
            store.put(("memories", state["user"]), f"fact-{len(fact)}", {"text": fact, "kind": "preference"})
        return {}

    def recall(state: State, *, store: BaseStore) -> dict:
        items = store.search(("memories", state["user"]), query=state["message"], limit=3)
        return {"recalled": [item.value["text"] for item in items]}

    builder = StateGraph(State)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    return builder.compile(store=store)


def test_a_real_graph_remembers_per_user(engram: Engram) -> None:
    graph = _graph(EngramStore(engram, agent_from_namespace=1, index_fields=["text"]))
    graph.invoke({"user": "alice", "message": "remember: I prefer green tea in the morning", "recalled": []})
    graph.invoke({"user": "bob", "message": "remember: I prefer black coffee", "recalled": []})
    out = graph.invoke({"user": "alice", "message": "what do I prefer to drink? tea or coffee", "recalled": []})
    assert out["recalled"] == ["I prefer green tea in the morning"]
    out = asyncio.run(graph.ainvoke({"user": "bob", "message": "coffee or tea?", "recalled": []}))
    assert out["recalled"] == ["I prefer black coffee"]
    # namespaces map to engram agent scopes: each user's items are that agent's memories
    assert [m.content for m in engram.for_agent("lg:alice").list()] == ["I prefer green tea in the morning"]
    assert engram.list() == []


def test_store_operations(engram: Engram) -> None:
    store = EngramStore(engram)
    store.put(("docs", "a"), "k1", {"text": "apples are red", "n": 1})
    store.put(("docs", "a"), "k2", {"text": "bananas are yellow", "n": 2})
    store.put(("docs", "b"), "k1", {"text": "cherries are red", "n": 3}, index=["text"])
    store.put(("other",), "k.with/odd%chars", {"text": "odd key"})
    item = store.get(("docs", "a"), "k1")
    assert (item.namespace, item.key, item.value) == (("docs", "a"), "k1", {"text": "apples are red", "n": 1})
    assert item.created_at.tzinfo is not None
    assert store.get(("docs", "b"), "k1").value["text"] == "cherries are red"  # same key, other namespace
    assert store.get(("docs", "a"), "missing") is None
    assert store.get(("other",), "k.with/odd%chars").value == {"text": "odd key"}

    store.put(("docs", "a"), "k1", {"text": "apples are green", "n": 10})  # an update, kept in versions
    assert store.get(("docs", "a"), "k1").value["n"] == 10
    assert [v.content for v in engram.versions(EngramStore._ref(("docs", "a"), "k1"))][0].startswith('{"text": "apples are red"')

    assert sorted((i.namespace, i.key) for i in store.search(("docs",))) == [
        (("docs", "a"), "k1"), (("docs", "a"), "k2"), (("docs", "b"), "k1")]
    assert sorted(i.value["n"] for i in store.search(("docs",), filter={"n": {"$gte": 3}})) == [3, 10]
    assert [i.value["text"] for i in store.search(("docs", "a"), filter={"n": 2})] == ["bananas are yellow"]
    red = store.search(("docs",), query="red cherries")
    assert red[0].value["text"] == "cherries are red" and red[0].score > 0
    assert [i.value["text"] for i in store.search(("docs",), query="red", filter={"n": 3})] == ["cherries are red"]
    assert len(store.search(("docs",), limit=1, offset=1)) == 1

    assert store.list_namespaces() == [("docs", "a"), ("docs", "b"), ("other",)]
    assert store.list_namespaces(prefix=("docs",)) == [("docs", "a"), ("docs", "b")]
    assert store.list_namespaces(suffix=("b",)) == [("docs", "b")]
    assert store.list_namespaces(max_depth=1) == [("docs",), ("other",)]

    store.delete(("docs", "a"), "k2")
    assert store.get(("docs", "a"), "k2") is None
    store.delete(("docs", "a"), "k2")  # deleting twice is not an error, as in LangGraph's stores
    with pytest.raises(ValidationError) as err:
        store.search(("docs",), filter={"n": {"$near": 3}})
    assert err.value.field == "filter.n"


def _shown(result: object) -> object:
    """A batch result as plain data, so two stores' results compare (no times, no scores)."""
    if isinstance(result, list):
        return [_shown(r) for r in result]
    if hasattr(result, "value"):
        return (result.namespace, result.key, result.value)
    return result


def test_a_batch_reads_before_it_writes_as_langgraphs_stores_do(engram: Engram) -> None:
    # InMemoryStore (and SqliteStore, PostgresStore) answer every read of a batch from the store as
    # it was before it, then write its puts, the last put of a key only.
    ours, theirs = EngramStore(engram, agent_from_namespace=1), InMemoryStore()
    ops = [PutOp(("memories", "ana"), "tea", {"text": "green"}), GetOp(("memories", "ana"), "tea"),
           PutOp(("memories", "ana"), "old", None), GetOp(("memories", "ana"), "old"),
           SearchOp(("memories", "ana"), filter={"text": "green"}), ListNamespacesOp(),
           PutOp(("memories", "ana"), "tea", {"text": "black"}), PutOp(("memories", "bo"), "tea", {"text": "mint"}),
           GetOp(("memories", "bo"), "tea")]
    for store in (ours, theirs):
        store.put(("memories", "ana"), "old", {"text": "kept until the batch"})
    results = [_shown(store.batch(ops)) for store in (ours, theirs)]
    assert results[0] == results[1] == [
        None, None, None, (("memories", "ana"), "old", {"text": "kept until the batch"}), [],
        [("memories", "ana")], None, None, None]
    for store in (ours, theirs):
        assert store.get(("memories", "ana"), "tea").value == {"text": "black"}  # the last put of the key
        assert store.get(("memories", "ana"), "old") is None
        assert [i.value for i in store.search(("memories", "bo"))] == [{"text": "mint"}]  # each user their own
    # one write of "tea": the first put of the batch was never made
    assert engram.for_agent("lg:ana").versions(EngramStore._ref(("memories", "ana"), "tea")) == []


def test_a_bad_op_in_a_batch_writes_nothing(engram: Engram) -> None:
    store = EngramStore(engram)
    store.put(("docs",), "k", {"text": "before"})
    for bad, field in [(PutOp(("docs",), "k2", ["not a dict"]), "value"),  # type: ignore[arg-type]
                       (PutOp(("docs",), "k2", {"text": "x"}, ttl=-1), "ttl"), ("get k", "op")]:
        with pytest.raises(ValidationError) as err:
            store.batch([PutOp(("docs",), "k", {"text": "after"}), PutOp(("docs",), "gone", {"text": "x"}), bad])
        assert err.value.field == field
    assert store.get(("docs",), "k").value == {"text": "before"} and engram.count() == 1


def test_agent_from_namespace_needs_the_label(engram: Engram) -> None:
    store = EngramStore(engram, agent_from_namespace=1)
    with pytest.raises(ValidationError) as err:
        store.put(("memories",), "k", {"text": "x"})
    assert err.value.field == "namespace"
    store.put(("memories", "not a name!"), "k", {"text": "x"})  # no agent name as it is: written as one
    store.put(("memories", "carol"), "k", {"text": "carol's"})
    store.put(("memories", "dave"), "k", {"text": "dave's"})
    assert store.list_namespaces() == [("memories", "carol"), ("memories", "dave"), ("memories", "not a name!")]
    assert [i.value["text"] for i in store.search(("memories", "dave"))] == ["dave's"]


def test_search_pages_beyond_one_recall(engram: Engram) -> None:
    store = EngramStore(engram)
    for i in range(40):
        store.put(("notes",), f"n{i}", {"text": f"kayak trip number {i}"})
    page = store.search(("notes",), query="kayak trip", limit=10, offset=25)
    assert len(page) == 10 and len({i.key for i in page}) == 10


def test_a_value_longer_than_a_memory_is_stored_whole(engram: Engram) -> None:
    # LangGraph puts no bound on a value: its indexed text past max_content_chars is cut for recall,
    # the value kept whole. It was refused naming "content", and a batch wrote the puts before it.
    store = EngramStore(engram, index_fields=["text"])
    long_text = "kayak " * 3000 + "end"
    store.batch([PutOp(("docs",), "small", {"text": "short"}), PutOp(("docs",), "long", {"text": long_text}),
                 PutOp(("docs",), "key-only", {"text": long_text}, index=False)])
    assert store.get(("docs",), "long").value == {"text": long_text}
    assert store.get(("docs",), "key-only").value == {"text": long_text}
    assert "long" in [i.key for i in store.search(("docs",), query="kayak")]
    long_key = "k" * (engram.max_content_chars + 10)
    store.put(("docs",), long_key, {"text": "x"}, index=False)
    assert store.get(("docs",), long_key).value == {"text": "x"}


def test_search_with_a_query_pages_past_one_recall_call(engram: Engram) -> None:
    # One recall call gives at most MAX_RECALL_LIMIT (100) hits: a limit or offset past it returned
    # 100 items, or none, of the 150 that match; the store reads recall's pages (to its window, 1000).
    store = EngramStore(engram)
    for i in range(150):
        store.put(("notes",), f"n{i:03d}", {"text": f"kayak trip number {i}", "i": i})
    everything = store.search(("notes",), query="kayak trip", limit=200)
    assert len(everything) == 150 and len({i.key for i in everything}) == 150
    assert [i.key for i in store.search(("notes",), query="kayak trip", limit=10, offset=120)] == \
        [i.key for i in everything[120:130]]
    assert len(store.search(("notes",), query="kayak trip", limit=50, offset=140)) == 10
    late = store.search(("notes",), query="kayak trip", filter={"i": {"$gte": 40}}, limit=200)
    assert sorted(i.value["i"] for i in late) == list(range(40, 150))
    # What a search returns counts as used, not the hits read to find it (the first recall over-fetched).
    before = {m.key: m.recall_count for m in engram.list(limit=1000)}
    [one] = store.search(("notes",), query="kayak trip", limit=1)
    changed = [m.key for m in engram.list(limit=1000) if m.recall_count != before[m.key]]
    assert changed == [EngramStore._ref(("notes",), one.key)]


def test_a_blank_query_searches_as_no_query(engram: Engram) -> None:
    # query="" listed the items, but "  " raised engram's "query: must not be empty" in the node; LangGraph's
    # stores answer both with items (a store without an index reads no query at all).
    store = EngramStore(engram)
    store.put(("docs",), "a", {"text": "apples"})
    store.put(("docs",), "b", {"text": "bananas"}, ttl=None)
    for query in ("", "  ", "\n\t"):
        assert [i.key for i in store.search(("docs",), query=query)] == ["b", "a"]
        assert [i.score for i in store.search(("docs",), query=query, limit=1)] == [None]


def test_filters_match_nested_fields_as_langgraph_stores_do(engram: Engram) -> None:
    # LangGraph's own stores (InMemoryStore, PostgresStore's jsonb @>) match a nested object by the
    # fields the filter names, not by the whole object
    store = EngramStore(engram)
    store.put(("docs",), "a", {"text": "apples", "meta": {"lang": "en", "rev": 2, "by": {"name": "ana", "id": 7}}})
    store.put(("docs",), "b", {"text": "bananas", "meta": {"lang": "fr", "rev": 2}})
    assert [i.key for i in store.search(("docs",), filter={"meta": {"lang": "en"}})] == ["a"]
    assert [i.key for i in store.search(("docs",), filter={"meta": {"by": {"name": "ana"}}})] == ["a"]
    assert [i.key for i in store.search(("docs",), filter={"meta": {"rev": {"$gte": 2}, "lang": "fr"}})] == ["b"]
    assert store.search(("docs",), filter={"text": {"lang": "en"}}) == []  # not an object there: no match
    with pytest.raises(ValidationError) as err:
        store.search(("docs",), filter={"meta": {"rev": {"$near": 2}}})
    assert err.value.field == "filter.meta.rev"


def test_filters_select_what_langgraphs_in_memory_store_selects(engram: Engram) -> None:
    # The store a user swaps for EngramStore: the same filter must keep the same items
    ours, theirs = EngramStore(engram, agent_from_namespace=1), InMemoryStore()
    values = {"a": {"tag": "x", "meta": {"lang": "en", "rev": 2}, "steps": [{"id": 1, "ok": True}, {"id": 2}], "n": 1},
              "b": {"tag": None, "meta": {}, "steps": [{"id": 1}], "n": 2},
              "c": {"meta": "not an object", "steps": [], "n": 3}}
    for store in (ours, theirs):
        for key, value in values.items():
            store.put(("memories", "ana"), key, value)
        store.put(("memories", "bo"), "a", {"tag": "bo's", "n": 1})  # another user: never in ana's results
    filters = [{"tag": {"$ne": "x"}}, {"tag": {"$ne": None}}, {"tag": None}, {"tag": {"$eq": None}},
               {"absent": {"$ne": 1}}, {"meta": {}}, {"meta": {"lang": {"$ne": "fr"}}}, {"meta": {"gone": {"$ne": 1}}},
               {"steps": [{"id": 1}]}, {"steps": [{"id": 1}, {}]}, {"steps": []}, {"steps": [{"id": 2}]},
               {"meta": {"rev": 2}, "n": {"$lt": 2}}, {"n": {"$ne": 1}}]
    for wanted in filters:
        kept = [sorted(i.key for i in store.search(("memories", "ana"), filter=wanted)) for store in (ours, theirs)]
        assert kept[0] == kept[1], wanted
    assert [i.key for i in ours.search(("memories", "ana"), filter={"meta": {}})] == ["b", "a"]  # any object
    assert [i.key for i in ours.search(("memories", "ana"), filter={"absent": {"$ne": 1}})] == ["c", "b", "a"]
    assert [i.value for i in ours.search(("memories", "bo"), filter={"tag": {"$ne": "x"}})] == [{"tag": "bo's", "n": 1}]
    with pytest.raises(ValidationError) as err:  # InMemoryStore raises too: "$gt" makes every key an operator
        ours.search(("memories", "ana"), filter={"meta": {"rev": {"$gt": 1, "lang": "en"}}})
    assert err.value.field == "filter.meta.rev"


def test_a_filter_key_with_a_dot_is_a_field_name_as_in_langgraphs_in_memory_store(engram: Engram) -> None:
    # The installed InMemoryStore reads a filter key as one field name (value.get(key)); a nested
    # field is reached with a nested filter. (LangGraph's SqliteStore reads a dot as a JSON path.)
    ours, theirs = EngramStore(engram), InMemoryStore()
    values = {"nested": {"user": {"access": "admin"}}, "dotted": {"user.access": "admin"},
              "both": {"user": {"access": "guest"}, "user.access": "admin"}, "neither": {"user": "admin"}}
    for store in (ours, theirs):
        for key, value in values.items():
            store.put(("docs",), key, value)
    filters = [{"user.access": "admin"}, {"user": {"access": "admin"}}, {"user.access": {"$ne": "admin"}},
               {"user.access": {"$eq": "admin"}}, {"user": {"access": {"$ne": "admin"}}}]
    for wanted in filters:
        kept = [sorted(i.key for i in store.search(("docs",), filter=wanted)) for store in (ours, theirs)]
        assert kept[0] == kept[1], wanted
    assert sorted(i.key for i in ours.search(("docs",), filter={"user.access": "admin"})) == ["both", "dotted"]
    assert [i.key for i in ours.search(("docs",), filter={"user": {"access": "admin"}})] == ["nested"]


def test_any_key_length_and_a_value_that_is_not_a_dict(engram: Engram) -> None:
    store = EngramStore(engram, agent_from_namespace=1)
    long_key = "conversation-summary/" + "x" * 300  # LangGraph bounds neither keys nor namespaces
    namespace = ("memories", "alice", "y" * 150)
    store.put(namespace, long_key, {"text": "a long-keyed item"})
    store.put(namespace, long_key, {"text": "a long-keyed item, updated"})
    assert store.get(namespace, long_key).value == {"text": "a long-keyed item, updated"}
    assert [(i.namespace, i.key) for i in store.search(("memories", "alice"))] == [(namespace, long_key)]
    assert store.get(("memories", "bob", "y" * 150), long_key) is None  # another user: nothing
    store.delete(namespace, long_key)
    assert store.get(namespace, long_key) is None
    with pytest.raises(ValidationError) as err:
        store.put(("memories", "alice"), "k", ["not", "a", "dict"])  # type: ignore[arg-type]
    assert err.value.field == "value"
    assert engram.for_agent("lg:alice").count() == 0


def test_order_filters_compare_numbers_as_langgraphs_in_memory_store_does(engram: Engram) -> None:
    # InMemoryStore compares $gt/$gte/$lt/$lte as float(value): a number stored as a string counts
    from langgraph.store.memory import InMemoryStore

    ours, theirs = EngramStore(engram), InMemoryStore()
    values = {"a": {"n": "10", "m": 2.5}, "b": {"n": 9, "m": "2.5"}, "c": {"n": "100", "m": True},
              "d": {"n": "12345678901234567890", "m": "-1"}}
    for store in (ours, theirs):
        for key, value in values.items():
            store.put(("docs",), key, value)
    filters = [{"n": {"$gt": 9}}, {"n": {"$gte": "10"}}, {"n": {"$lt": 50}}, {"n": {"$lte": "9"}},
               {"m": {"$gt": 1}}, {"m": {"$lte": 0}}, {"m": {"$gte": 2.5, "$lt": "3"}},
               {"n": {"$gt": "99", "$lt": 1000}}, {"n": {"$eq": "10"}}, {"n": {"$ne": 9}}]
    for wanted in filters:
        assert sorted(i.key for i in ours.search(("docs",), filter=wanted)) == sorted(
            i.key for i in theirs.search(("docs",), filter=wanted)), wanted
    assert [i.key for i in ours.search(("docs",), filter={"n": {"$gt": "12345678901234567889"}})] == ["d"]
    # where InMemoryStore raises (float("x")), two strings compare as text and anything else is no match
    ours.put(("docs",), "e", {"n": "2024-05-01"})
    assert [i.key for i in ours.search(("docs",), filter={"n": {"$gte": "2024-01-01"}})] == ["e"]
    assert [i.key for i in ours.search(("docs",), filter={"missing": {"$gt": 1}})] == []


def test_a_nul_in_an_item_is_refused_naming_where_it_is(engram: Engram) -> None:
    store = EngramStore(engram)
    for namespace, key, value, field in [(("docs",), "k", {"text": "a\x00b"}, "value"),
                                         (("docs",), "k", {"deep": [{"x\x00": 1}]}, "value"),
                                         (("docs",), "k\x00", {"text": "ok"}, "key")]:
        with pytest.raises(ValidationError) as err:
            store.put(namespace, key, value)
        assert err.value.field == field
    with pytest.raises(ValueError) as err:  # langgraph 1.1+ refuses it itself (InvalidNamespaceError)
        store.put(("do\x00cs",), "k", {"text": "ok"})
    assert not isinstance(err.value, ValidationError) or err.value.field == "namespace"
    assert engram.count() == 0


def test_a_user_named_as_the_app_agent_stays_out_of_the_apps_memories(engram: Engram) -> None:
    # The app stores its own memories as agent "app"; a LangGraph user called "app" is another agent
    langchain = pytest.importorskip("engram.integrations.langchain")
    engram.remember("The deploy window is Tuesday morning")
    store = EngramStore(engram, agent_from_namespace=1, index_fields=["text"])
    for user in ("app", "default"):
        store.put(("memories", user), "secret", {"text": f"{user}'s deploy password is hunter2"})
    assert [m.content for m in engram.list()] == ["The deploy window is Tuesday morning"]
    assert [h.memory.content for h in engram.recall("deploy password")] == ["The deploy window is Tuesday morning"]
    assert engram.for_agent("default").count() == 0
    retriever = langchain.EngramRetriever(engram=engram, k=5)
    assert [d.page_content for d in retriever.invoke("deploy password hunter2")] == [
        "The deploy window is Tuesday morning"]
    assert [i.value["text"] for i in store.search(("memories", "app"), query="deploy password")] == [
        "app's deploy password is hunter2"]
    assert store.list_namespaces() == [("memories", "app"), ("memories", "default")]


def test_the_mem0_facade_cannot_reach_a_langgraph_users_items(engram: Engram) -> None:
    # The mem0 facade keeps a user's memories in the agent its user_id names; the store keeps user
    # u-7's items in agent "lg:u-7". A facade user_id "lg:u-7" would list, change and delete them.
    from engram.compat.mem0 import Memory

    store = EngramStore(engram, agent_from_namespace=1, index_fields=["text"])
    store.put(("memories", "u-7"), "card", {"text": "u-7's card ends in 4242"})
    facade = Memory(engram)
    for call in (lambda: facade.get_all(user_id="lg:u-7"), lambda: facade.delete_all(user_id="lg:u-7"),
                 lambda: facade.add("u-7's card ends in 0000", user_id="lg:u-7", infer=False)):
        with pytest.raises(ValidationError) as refused:
            call()
        assert refused.value.field == "user_id" and "LangGraph" in str(refused.value)
    assert [i.value["text"] for i in store.search(("memories", "u-7"))] == ["u-7's card ends in 4242"]


def test_bare_labels_of_earlier_stores_stay_reachable_and_move(engram: Engram) -> None:
    bare = EngramStore(engram, agent_from_namespace=1, agent_prefix="")  # the layout before agent_prefix
    bare.put(("memories", "carol"), "tea", {"text": "carol likes tea"})
    bare.put(("memories", "carol", "work"), "desk", {"text": "carol sits by the window"})
    assert engram.for_agent("carol").count() == 2
    with pytest.raises(ValidationError) as err:  # the app's own agent is no user's, whatever the prefix
        bare.put(("memories", "app"), "k", {"text": "x"})
    assert err.value.field == "namespace"
    with pytest.raises(ValidationError) as err:
        bare.search(("memories", "app"))
    assert err.value.field == "namespace_prefix"
    assert engram.list() == []

    store = EngramStore(engram, agent_from_namespace=1, index_fields=["text"])
    assert store.get(("memories", "carol"), "tea") is None  # a bare label is not read by a prefixed store
    for namespace in bare.list_namespaces(limit=10_000):  # the move docs/integrations.md shows
        for item in bare.search(namespace, limit=1_000_000):
            if item.namespace == namespace:
                store.put(namespace, item.key, item.value)
                bare.delete(namespace, item.key)
    assert store.get(("memories", "carol"), "tea").value == {"text": "carol likes tea"}
    assert store.get(("memories", "carol", "work"), "desk").value == {"text": "carol sits by the window"}
    assert engram.for_agent("carol").count() == 0
    assert store.list_namespaces() == [("memories", "carol"), ("memories", "carol", "work")]


@pytest.mark.parametrize("prefix", ["-x", "lg/", 3, None])
def test_an_agent_prefix_that_cannot_start_a_name_is_refused(engram: Engram, prefix: object) -> None:
    with pytest.raises(ValidationError) as err:
        EngramStore(engram, agent_from_namespace=1, agent_prefix=prefix)  # type: ignore[arg-type]
    assert err.value.field == "agent_prefix"


def test_an_unknown_keyword_is_refused_naming_it_and_what_the_store_takes(engram: Engram) -> None:
    # Python's own TypeError named it and listed nothing (LangGraph's stores take ``index=``).
    with pytest.raises(ValidationError) as err:
        EngramStore(engram, index={"fields": ["text"]})  # type: ignore[call-arg]
    assert err.value.field == "index" and "is not a keyword of EngramStore" in str(err.value)
    assert err.value.allowed == "agent_from_namespace, agent_prefix, engram, index_fields, ttl"


# Users' ids as LangGraph apps put them in namespaces (``("memories", user_id)``), whatever they hold.
_LONG = "u" * 299
_ODD_USERS = ["José", "user 42", _LONG + "1", _LONG + "2", "Jos@c3@a9", "ana"]


def test_any_user_id_in_a_namespace_gets_its_own_agent(engram: Engram) -> None:
    # "José", "user 42" and a 300-character id cannot be an agent name as they are: they were refused
    store = EngramStore(engram, agent_from_namespace=1, index_fields=["text"])
    for user in _ODD_USERS:
        store.put(("memories", user), "drink", {"text": f"{user} drinks kayak tea"})
        store.put(("memories", user, "work"), "desk", {"text": f"{user} sits by the kayak window"})
    for user in _ODD_USERS:
        assert store.get(("memories", user), "drink").value == {"text": f"{user} drinks kayak tea"}
        for query in ("kayak tea", None):  # recall, and the last puts
            found = store.search(("memories", user), query=query, limit=10)
            assert sorted(i.value["text"] for i in found) == [f"{user} drinks kayak tea",
                                                              f"{user} sits by the kayak window"]
            assert {i.namespace[1] for i in found} == {user}  # no other user's items, the label as put
        assert store.list_namespaces(prefix=("memories", user)) == [("memories", user), ("memories", user, "work")]
    assert store.list_namespaces(max_depth=2) == sorted(("memories", u) for u in _ODD_USERS)
    agents = {s for s in engram.stats().by_scope if s.startswith("agent:")}
    assert len(agents) == len(_ODD_USERS) and all(s.startswith("agent:lg:") for s in agents)
    assert engram.for_agent("lg:ana").count() == 2 and engram.for_agent("lg:Jos@c3@a9").count() == 2
    assert engram.for_agent("lg:id.Jos@c3@a9").count() == 2 and engram.for_agent("lg:id.user@2042").count() == 2
    assert {f"agent:{label_agent('lg:', u)}" for u in _ODD_USERS} == agents  # where docs/integrations.md says
    assert all(len(label_agent("lg:", u)) <= 128 for u in _ODD_USERS)
    for user in _ODD_USERS:
        store.delete(("memories", user), "drink")
        assert store.get(("memories", user), "drink") is None
        assert [i.key for i in store.search(("memories", user))] == ["desk"]
    assert engram.list() == []  # nothing in the app's own agent


def test_a_label_shaped_as_another_users_agent_reads_none_of_their_items(engram: Engram) -> None:
    store = EngramStore(engram, agent_from_namespace=1, index_fields=["text"])
    store.put(("memories", "José"), "card", {"text": "José's card ends in 4242"})
    [agent] = [s.removeprefix("agent:") for s in engram.stats().by_scope if s.startswith("agent:")]
    labels = [agent.removeprefix("lg:"), agent, "Jos@c3@a9", "Jos%C3%A9"]
    # Each its own agent, not José's: the item's namespace alone would hide it, not the agent's recall.
    assert len({label_agent("lg:", label) for label in [*labels, "José"]}) == 5
    for label in labels:
        ns = ("memories", label)
        # Through ``batch``, engram's own path for every read: a newer LangGraph's get, search and delete
        # refuse a label with "." before they reach the store, an older one passes it on.
        got, listed, found, ranked = store.batch([
            GetOp(ns, "card"), ListNamespacesOp(match_conditions=(MatchCondition("prefix", ns),)),
            SearchOp(ns), SearchOp(ns, query="card")])
        assert got is None and listed == [] and found == [] and ranked == []
        store.batch([PutOp(ns, "card", None)])  # a delete of another label is no delete of José's
    assert store.get(("memories", "José"), "card").value == {"text": "José's card ends in 4242"}
    assert [s for s in engram.stats().by_scope if s.startswith("agent:")] == [f"agent:{agent}"]


def test_valid_labels_keep_the_agents_earlier_stores_wrote(engram: Engram) -> None:
    # Items put before any label could be escaped stay where they are: a label that is an agent name
    # names it as before, with the prefix or without.
    engram.for_agent("lg:u-7").remember("u-7 likes tea", key=EngramStore._ref(("memories", "u-7"), "tea"),
                                        metadata={"lg_item": "1", "lg_namespace": ["memories", "u-7"], "lg_key": "tea",
                                                  "lg_value": {"text": "u-7 likes tea"}, "lg_ns0": "memories",
                                                  "lg_ns1": "u-7"}, type="item")
    store = EngramStore(engram, agent_from_namespace=1)
    assert store.get(("memories", "u-7"), "tea").value == {"text": "u-7 likes tea"}
    assert store.list_namespaces() == [("memories", "u-7")]
    store.put(("memories", "ana@example-com"), "k", {"text": "x"})
    assert engram.for_agent("lg:ana@example-com").count() == 1
    bare = EngramStore(engram, agent_from_namespace=1, agent_prefix="")
    for user in ("carol", "José", "user 42", _LONG + "1"):
        bare.put(("memories", user), "k", {"text": f"{user}'s item"})
        assert bare.get(("memories", user), "k").value == {"text": f"{user}'s item"}
    assert engram.for_agent("carol").count() == 1 and engram.for_agent("id.Jos@c3@a9").count() == 1
    with pytest.raises(ValidationError) as err:
        bare.put(("memories", "app"), "k", {"text": "x"})
    assert err.value.field == "namespace"
    assert {("memories", u) for u in ("carol", "José", "user 42", _LONG + "1")} <= set(bare.list_namespaces())


def test_a_label_langgraph_refuses_is_refused_on_the_batch_path_too(engram: Engram) -> None:
    # LangGraph's put refuses a label with "." or an empty one (InvalidNamespaceError); a batch of
    # PutOps skips that check, and "." is what keeps an escaped label's agent apart from every label's.
    store = EngramStore(engram, agent_from_namespace=1)
    for namespace in [("memories", "a.b"), ("memories.x", "ana"), ("memories", "ana", "v1.2"), ("memories", "")]:
        with pytest.raises(ValueError):
            store.put(namespace, "k", {"text": "x"})  # LangGraph's own check
        with pytest.raises(ValidationError) as err:
            store.batch([PutOp(namespace, "k", {"text": "x"})])
        assert err.value.field == "namespace"
        store.batch([PutOp(namespace, "k", None)])  # a delete, which LangGraph does not check either
    assert [s for s in engram.stats().by_scope if s.startswith("agent:")] == []  # nothing stored, anywhere


def test_expired_items_of_escaped_labels_are_swept(timed: Engram, clock: FakeClock) -> None:
    store = EngramStore(timed, agent_from_namespace=1)
    for user in ("José", "user 42", "ana"):
        store.put(("memories", user), "mood", {"text": "tired"}, ttl=1)
        store.put(("memories", user), "drink", {"text": "tea"})
    clock.advance(2 * MINUTE)
    assert store.sweep_ttl() == 3
    assert store.list_namespaces() == [("memories", "José"), ("memories", "ana"), ("memories", "user 42")]
    assert [i.key for i in store.search(("memories", "José"))] == ["drink"]


def test_a_prefix_too_long_to_survive_a_long_labels_cut_is_refused(engram: Engram) -> None:
    # A label past an agent name's length is cut to 94 characters and a digest: the prefix must
    # stay whole in it, or the name would leave the prefix's agents (listings, sweeps).
    assert EngramStore(engram, agent_from_namespace=1, agent_prefix="p" * 63 + ":").agent_prefix == "p" * 63 + ":"
    with pytest.raises(ValidationError) as err:
        EngramStore(engram, agent_from_namespace=1, agent_prefix="p" * 64 + ":")
    assert err.value.field == "agent_prefix"


# --- TTLs ---------------------------------------------------------------------------------------
MINUTE = 60.0


def test_an_item_put_with_a_ttl_is_gone_after_it(timed: Engram, clock: FakeClock) -> None:
    store = EngramStore(timed, ttl={"refresh_on_read": False})
    store.put(("docs",), "short", {"text": "gone soon"}, ttl=10)
    store.put(("docs",), "forever", {"text": "no ttl"})
    store.put(("docs",), "again", {"text": "put again"}, ttl=10)
    put_at = clock.now
    clock.advance(9 * MINUTE)
    assert store.get(("docs",), "short").value == {"text": "gone soon"}
    store.put(("docs",), "again", {"text": "put again, later"}, ttl=10)  # a put again resets the expiry
    clock.advance(2 * MINUTE)
    assert store.get(("docs",), "short") is None  # past its expiry, before any sweep
    assert store.get(("docs",), "forever").value == {"text": "no ttl"}
    assert store.get(("docs",), "again").value == {"text": "put again, later"}
    assert timed.count() == 3  # nothing was forgotten yet: expired items are hidden, the sweep removes them
    clock.advance(10 * MINUTE)
    assert store.get(("docs",), "again") is None
    store.put(("docs",), "again", {"text": "now for good"}, ttl=None)  # a put without a ttl: no expiry
    clock.advance(10_000 * MINUTE)
    assert store.get(("docs",), "again").value == {"text": "now for good"}
    assert store.get(("docs",), "again").updated_at.timestamp() > put_at


def test_search_and_list_namespaces_hide_expired_items(timed: Engram, clock: FakeClock) -> None:
    store = EngramStore(timed, index_fields=["text"])
    store.put(("docs", "a"), "tea", {"text": "green tea in the morning"}, ttl=5)
    store.put(("docs", "b"), "coffee", {"text": "black coffee at noon"}, ttl=60)
    store.put(("docs", "c"), "water", {"text": "water all day"})
    assert store.list_namespaces() == [("docs", "a"), ("docs", "b"), ("docs", "c")]
    clock.advance(6 * MINUTE)
    assert sorted(i.key for i in store.search(("docs",))) == ["coffee", "water"]
    assert "tea" not in [i.key for i in store.search(("docs",), query="green tea morning")]
    assert [i.key for i in store.search(("docs",), query="black coffee")][:1] == ["coffee"]
    assert store.list_namespaces() == [("docs", "b"), ("docs", "c")]
    assert store.list_namespaces(prefix=("docs", "a")) == []


def test_a_read_refreshes_the_ttl_unless_told_not_to(timed: Engram, clock: FakeClock) -> None:
    store = EngramStore(timed)  # no TTLConfig: reads refresh, as LangGraph's default
    store.put(("docs",), "read", {"text": "read often"}, ttl=10)
    store.put(("docs",), "unread", {"text": "never read"}, ttl=10)
    store.put(("docs",), "plain", {"text": "no ttl"})
    ref = EngramStore._ref(("docs",), "read")
    before = timed.get(ref).updated_at
    for _ in range(3):  # 24 minutes in all, each read within the ttl of the one before
        clock.advance(8 * MINUTE)
        assert store.get(("docs",), "read").updated_at.timestamp() == before  # a refresh is no update
    assert store.get(("docs",), "unread") is None
    clock.advance(8 * MINUTE)
    assert [i.key for i in store.search(("docs",), filter={"text": "read often"})] == ["read"]  # search refreshes
    clock.advance(8 * MINUTE)
    assert store.get(("docs",), "read", refresh_ttl=False) is not None
    clock.advance(3 * MINUTE)  # 11 minutes after the last refresh; the read without one moved nothing
    assert store.get(("docs",), "read") is None
    # an item without a ttl is not written by a read
    plain = timed.get(EngramStore._ref(("docs",), "plain"))
    store.get(("docs",), "plain")
    store.search(("docs",))
    assert timed.get(plain.id).updated_at == plain.updated_at

    quiet = EngramStore(timed, ttl={"refresh_on_read": False})
    quiet.put(("docs",), "quiet", {"text": "read without refresh"}, ttl=10)
    clock.advance(8 * MINUTE)
    assert quiet.get(("docs",), "quiet") is not None and quiet.search(("docs",), filter={"text": "read without refresh"})
    clock.advance(3 * MINUTE)
    assert quiet.get(("docs",), "quiet") is None
    quiet.put(("docs",), "quiet", {"text": "read with refresh"}, ttl=10)
    clock.advance(8 * MINUTE)
    assert quiet.get(("docs",), "quiet", refresh_ttl=True) is not None  # asked for: refreshed
    clock.advance(8 * MINUTE)
    assert quiet.get(("docs",), "quiet") is not None


def test_a_refresh_keeps_a_value_put_since_the_read(timed: Engram, clock: FakeClock) -> None:
    # The interleaving a concurrent put makes, in order: a read lists the item, another writer puts
    # a new value, then the read's refresh writes the expiry.
    store = EngramStore(timed)
    store.put(("docs",), "k", {"text": "first"}, ttl=10)
    listed = timed.get(EngramStore._ref(("docs",), "k"))
    store.put(("docs",), "k", {"text": "second"}, ttl=20)
    clock.advance(5 * MINUTE)
    store._refresh(timed, [listed])
    assert store.get(("docs",), "k", refresh_ttl=False).value == {"text": "second"}
    clock.advance(19 * MINUTE)  # 24 minutes after the second put, 19 after the refresh: its own ttl (20) counted
    assert store.get(("docs",), "k", refresh_ttl=False).value == {"text": "second"}


def test_the_default_ttl_applies_to_puts_that_give_none(timed: Engram, clock: FakeClock) -> None:
    store = EngramStore(timed, ttl={"default_ttl": 30, "refresh_on_read": False})
    assert store.supports_ttl and store.ttl_config == {"default_ttl": 30, "refresh_on_read": False}
    store.put(("docs",), "default", {"text": "default ttl"})
    store.put(("docs",), "own", {"text": "own ttl"}, ttl=60)
    store.put(("docs",), "none", {"text": "no ttl"}, ttl=None)
    clock.advance(31 * MINUTE)
    assert store.get(("docs",), "default") is None
    assert store.get(("docs",), "own") is not None and store.get(("docs",), "none") is not None
    clock.advance(30 * MINUTE)
    assert store.get(("docs",), "own") is None and store.get(("docs",), "none") is not None


def test_every_put_moves_updated_at_and_a_refresh_does_not_as_in_langgraphs_stores(
        timed: Engram, clock: FakeClock) -> None:
    # LangGraph's SqliteStore and PostgresStore stamp updated_at on every put, an unchanged value's
    # too, and a refreshing read moves only the expiry.
    store = EngramStore(timed)
    first = clock.now
    store.put(("docs",), "k", {"text": "same"})
    store.put(("docs",), "t", {"text": "with a ttl"}, ttl=10)
    clock.advance(MINUTE)
    store.put(("docs",), "k", {"text": "same"})
    item = store.get(("docs",), "k")
    assert (item.created_at, item.updated_at) == (datetime.fromtimestamp(first, UTC), datetime.fromtimestamp(clock.now, UTC))
    assert item.updated_at.tzinfo is not None and item.value == {"text": "same"}
    clock.advance(5 * MINUTE)
    refreshed = store.get(("docs",), "t", refresh_ttl=True)
    assert refreshed.updated_at == datetime.fromtimestamp(first, UTC)
    clock.advance(8 * MINUTE)  # 13 minutes after the put, 8 after the refresh
    assert store.get(("docs",), "t", refresh_ttl=False).updated_at == datetime.fromtimestamp(first, UTC)


def test_a_refresh_moves_only_the_expiry_as_in_langgraphs_stores(tmp_path: Path, clock: FakeClock) -> None:
    store = SqliteMemoryStore(tmp_path / "memory.db")
    a_refresh_moves_only_the_expiry(store, SqliteBackend(store), clock)


def test_a_refresh_moves_only_the_expiry_in_memory_too(clock: FakeClock) -> None:
    from engram.backends.simple import InMemoryBackend

    backend = InMemoryBackend()
    a_refresh_moves_only_the_expiry(backend.memory, backend, clock)


def a_refresh_moves_only_the_expiry(memory: MemoryStore, backend: object, clock: FakeClock) -> None:
    """LangGraph's SqliteStore and PostgresStore refresh with ``UPDATE store SET expires_at = ...``:
    a refreshing read moves the expiry and nothing else. So here: the memory's own ``updated_at``
    (which engram's ranking, decay and lifecycle read) stays, no version is kept and no ``updated``
    row joins the audit trail, on every backend (tests/postgres runs it too)."""
    events = EventBus()
    events.subscribe(backend.audit_log())
    mem = Engram(memory, agent="app", embedder=HashingEmbedder(), clock=clock, events=events, backend=backend)
    store = EngramStore(mem)
    store.put(("docs",), "t", {"text": "kept alive by reads"}, ttl=10)
    ref = EngramStore._ref(("docs",), "t")
    put = mem.get(ref)
    trail = [(e.action, e.memory_key) for e in mem.audit_trail()]
    for _ in range(3):  # 24 minutes in all, each read within the ttl of the one before
        clock.advance(8 * MINUTE)
        assert store.get(("docs",), "t") is not None
    clock.advance(8 * MINUTE)
    assert [i.key for i in store.search(("docs",))] == ["t"]  # a search without a query refreshes too
    clock.advance(8 * MINUTE)
    assert [i.key for i in store.search(("docs",), query="kept alive")] == ["t"]  # and one with a query
    now = mem.get(ref)
    assert now.metadata["lg_expires_at"] == clock.now + 10 * MINUTE  # the expiry moved with each read
    assert (now.updated_at, now.created_at, now.content) == (put.updated_at, put.created_at, put.content)
    assert {k: v for k, v in now.metadata.items() if k != "lg_expires_at"} == {
        k: v for k, v in put.metadata.items() if k != "lg_expires_at"}
    assert mem.versions(ref) == []
    assert [(e.action, e.memory_key) for e in mem.audit_trail()] == trail
    assert ("updated", ref) not in trail
    mem.close()


def test_a_search_without_a_query_lists_the_last_put_first(timed: Engram, clock: FakeClock) -> None:
    # As LangGraph's SqliteStore and PostgresStore order it: updated_at, newest first.
    store = EngramStore(timed)
    for key in ("t", "a", "b"):
        store.put(("docs",), key, {"text": key}, ttl=60 if key == "t" else None)
        clock.advance(MINUTE)
    assert [i.key for i in store.search(("docs",))] == ["b", "a", "t"]
    assert store.get(("docs",), "t", refresh_ttl=True) is not None  # a refresh is no put: t stays last
    clock.advance(MINUTE)
    store.put(("docs",), "a", {"text": "a"})  # the same value again: a put all the same
    assert [i.key for i in store.search(("docs",))] == ["a", "b", "t"]
    clock.advance(MINUTE)
    store.put(("docs",), "t", {"text": "t, changed"}, ttl=60)
    assert [i.key for i in store.search(("docs",))] == ["t", "a", "b"]
    assert [i.key for i in store.search(("docs",), limit=1, offset=1)] == ["a"]
    assert [i.key for i in store.search(("docs",), filter={"text": {"$ne": "a"}})] == ["t", "b"]


class _Counting:
    """A real store that counts the memories its listings hand out: what a search reads."""

    listed = 0

    def list(self, filt, **kwargs):  # noqa: ANN001, ANN003, ANN201
        page = super().list(filt, **kwargs)
        self.listed += len(page)
        return page


class _CountingSqlite(_Counting, SqliteMemoryStore):
    pass


class _CountingInMemory(_Counting, InMemoryMemoryStore):
    pass


@pytest.mark.parametrize("backend", ["sqlite", "inmemory"])
def test_a_search_without_a_query_reads_the_last_puts_not_every_item(tmp_path: Path, clock: FakeClock, backend: str) -> None:
    searches_read_the_last_puts(_CountingSqlite(tmp_path / "memory.db") if backend == "sqlite" else _CountingInMemory(), clock)


def searches_read_the_last_puts(counting: _Counting, clock: FakeClock) -> None:
    """1,200 items put over 40 days: the 10 last put are read from the last hour's puts, not from
    all, and every page and filter keeps the order of put times (tests/postgres runs it too)."""
    mem = Engram(counting, agent="app", embedder=HashingEmbedder(), clock=clock)
    store = EngramStore(mem, agent_from_namespace=1)
    ana, put_at = ("memories", "ana"), {}
    for i in range(1200):
        store.put(ana, f"k{i}", {"n": i}, index=False)
        put_at[f"k{i}"] = clock.now
        if i == 7:  # an item stored before every put kept its time: its put time is the memory's own
            ref = EngramStore._ref(ana, "k7")
            old = mem.for_agent("lg:ana").get(ref)
            mem.for_agent("lg:ana").update(ref, metadata={k: v for k, v in old.metadata.items() if k != "lg_updated_at"})
        if i % 100 == 0:
            store.put(("memories", "bo"), f"b{i}", {"n": i}, index=False)  # another user's, never read for ana
        clock.advance(120)
    clock.advance(-3 * 3600 + 30)  # a put from a clock behind (no tie with another put), then one ahead
    store.put(ana, "behind", {"n": -1}, index=False)
    put_at["behind"] = clock.now
    clock.advance(6 * 3600)
    store.put(ana, "ahead", {"n": -2}, index=False)
    put_at["ahead"] = clock.now
    clock.advance(-3 * 3600)
    store.put(ana, "k5", {"n": 5}, index=False)  # put again: last put, first created
    put_at["k5"] = clock.now
    expected = sorted(put_at, key=put_at.__getitem__, reverse=True)
    assert expected[:3] == ["ahead", "k5", "k1199"]

    counting.listed = 0
    assert [i.key for i in store.search(ana, limit=10)] == expected[:10]
    assert counting.listed == 32  # the last hour's 31 puts and the one without a put time: not 1,203
    assert [i.key for i in store.search(ana, limit=10, offset=700)] == expected[700:710]
    assert [i.key for i in store.search(ana, limit=5000)] == expected
    small = [k for k in expected if store.get(ana, k, refresh_ttl=False).value["n"] < 9]
    assert [i.key for i in store.search(ana, limit=10, filter={"n": {"$lt": 9}})] == small[:10]
    assert [i.key for i in store.search(ana, limit=3, offset=2, filter={"n": {"$lt": 9}})] == small[2:5]
    assert {i.namespace for i in store.search(ana, limit=5000)} == {ana}
    mem.close()


@pytest.mark.parametrize("backend", ["sqlite", "inmemory"])
def test_list_namespaces_and_sweep_ttl_read_only_what_they_may_return(tmp_path: Path, clock: FakeClock, backend: str) -> None:
    namespaces_and_sweeps_read_little(
        _CountingSqlite(tmp_path / "memory.db") if backend == "sqlite" else _CountingInMemory(), clock)


def namespaces_and_sweeps_read_little(counting: _Counting, clock: FakeClock) -> None:
    """Two users' items over many namespaces, some expired: a listing of one user's namespaces
    reads that user's live items of the matching depth and labels only, a sweep the expired items
    only, and every listing answers as LangGraph's InMemoryStore holding the live items does
    (tests/postgres runs it too)."""
    mem = Engram(counting, agent="app", embedder=HashingEmbedder(), clock=clock)
    store, oracle = EngramStore(mem, agent_from_namespace=1), InMemoryStore()
    live: dict[tuple[str, ...], int] = {}
    for user in ("ana", "bo"):
        for j in range(60):
            namespace = ("memories", user, f"t{j % 6}", *(("deep", f"d{j % 2}") if j % 5 == 0 else ()))
            store.put(namespace, f"k{j}", {"n": j}, index=False)
            oracle.put(namespace, f"k{j}", {"n": j}, index=False)
            live[namespace] = live.get(namespace, 0) + 1
        store.put(("memories", user), "top", {"n": -1}, index=False, ttl=60)  # a ttl not yet reached
        oracle.put(("memories", user), "top", {"n": -1}, index=False)
        live[("memories", user)] = 1
        for j in range(7):  # expired: never listed, and all a sweep reads
            store.put(("memories", user, "gone"), f"g{j}", {"n": j}, index=False, ttl=1)
            store.put(("memories", user, "t0"), f"g{j}", {"n": j}, index=False, ttl=1)
    clock.advance(2 * MINUTE)

    def items_in(fits: Callable[[tuple[str, ...]], bool]) -> int:
        return sum(n for ns, n in live.items() if fits(ns))

    ana, bo = ("memories", "ana"), ("memories", "bo")
    listings = [  # (arguments, the live items in the namespaces it may return: all a listing may read)
        ({}, sum(live.values())),
        ({"prefix": ana}, items_in(lambda ns: ns[:2] == ana)),
        ({"prefix": (*ana, "t3")}, items_in(lambda ns: ns[:3] == (*ana, "t3"))),
        ({"prefix": (*bo, "*", "deep")}, items_in(lambda ns: ns[:2] == bo and ns[3:4] == ("deep",))),
        ({"prefix": ana, "max_depth": 3}, items_in(lambda ns: ns[:2] == ana)),
        ({"prefix": ana, "suffix": ("d1",)}, items_in(lambda ns: ns[:2] == ana and ns[-1] == "d1")),
        ({"prefix": ("memories", "*", "t2")}, items_in(lambda ns: ns[2:3] == ("t2",))),
        ({"suffix": ("t4",)}, items_in(lambda ns: ns[-1] == "t4")),
        ({"suffix": ("deep", "*")}, items_in(lambda ns: ns[-2:-1] == ("deep",))),
        ({"prefix": ("memories", "nobody")}, 0),
        ({"prefix": ana, "limit": 3, "offset": 2}, items_in(lambda ns: ns[:2] == ana)),
    ]
    for arguments, most in listings:
        counting.listed = 0
        found = store.list_namespaces(**arguments)
        assert found == oracle.list_namespaces(**arguments), arguments
        assert counting.listed == most, (arguments, counting.listed, most)
    assert ("memories", "ana", "gone") not in store.list_namespaces(limit=1000)
    assert {ns[1] for ns in store.list_namespaces(prefix=("memories", "bo"), limit=1000)} == {"bo"}

    counting.listed = 0
    assert store.sweep_ttl() == 28  # 14 a user
    assert counting.listed == 28
    counting.listed = 0
    assert store.sweep_ttl() == 0 and counting.listed == 0
    for arguments, _ in listings:
        assert store.list_namespaces(**arguments) == oracle.list_namespaces(**arguments), arguments
    for user in ("ana", "bo"):
        assert {m.metadata["lg_namespace"][1] for m in mem.for_agent(f"lg:{user}").list(limit=1000)} == {user}
    mem.close()


def test_a_listing_of_many_conditions_answers_as_langgraphs_in_memory_store(engram: Engram) -> None:
    """More labels and conditions than the store is asked about at once: the rest are checked on
    what is read, never refused as a too long ``where``."""
    store, oracle = EngramStore(engram), InMemoryStore()
    deep = tuple(f"l{i}" for i in range(300))
    for namespace in (deep, deep[:20], ("a", "b"), ("a", "c", "b")):
        store.put(namespace, "k", {"n": 1})
        oracle.put(namespace, "k", {"n": 1})
    for op in [ListNamespacesOp(match_conditions=(MatchCondition("prefix", deep[:250]),)),
               ListNamespacesOp(match_conditions=(MatchCondition("suffix", deep[-20:]),)),
               ListNamespacesOp(match_conditions=(MatchCondition("suffix", ("b",)),) * 600),
               ListNamespacesOp(match_conditions=(MatchCondition("suffix", ("l298", "*")),
                                                  *(MatchCondition("prefix", deep[:250]),) * 40))]:
        assert store.batch([op]) == oracle.batch([op]), op
    assert store.list_namespaces(prefix=deep[:250]) == [deep]
    assert store.list_namespaces(suffix=("b",)) == [("a", "b"), ("a", "c", "b")]


def test_sweep_ttl_forgets_expired_items_into_the_audit_trail(timed: Engram, clock: FakeClock) -> None:
    store = EngramStore(timed, agent_from_namespace=1)
    store.put(("memories", "alice"), "a", {"text": "alice's short"}, ttl=5)
    store.put(("memories", "alice"), "b", {"text": "alice's long"}, ttl=50)
    store.put(("memories", "bob"), "a", {"text": "bob's short"}, ttl=5)
    store.put(("memories", "bob"), "c", {"text": "bob's forever"})
    assert store.sweep_ttl() == 0
    clock.advance(6 * MINUTE)
    assert store.sweep_ttl() == 2
    assert store.sweep_ttl() == 0
    assert [m.metadata["lg_key"] for m in timed.for_agent("lg:alice").list()] == ["b"]
    assert [m.metadata["lg_key"] for m in timed.for_agent("lg:bob").list()] == ["c"]
    [gone] = timed.for_agent("lg:bob").audit_trail(action="forgotten")
    assert (gone.reason, gone.origin, gone.memory_key) == ("langgraph ttl", "langgraph",
                                                           EngramStore._ref(("memories", "bob"), "a"))


def test_a_sweep_touches_only_its_own_stores_agents(timed: Engram, clock: FakeClock) -> None:
    users = EngramStore(timed, agent_from_namespace=1)  # agents lg:<user>
    tenants = EngramStore(timed, agent_from_namespace=1, agent_prefix="t:")  # agents t:<tenant>
    app = EngramStore(timed)  # the app's own agent
    for store in (users, tenants, app):
        store.put(("memories", "x"), "k", {"text": "expiring"}, ttl=1)
    clock.advance(2 * MINUTE)
    assert users.sweep_ttl() == 1
    assert timed.for_agent("lg:x").count() == 0
    assert timed.for_agent("t:x").count() == 1 and timed.count() == 1
    assert app.sweep_ttl() == 1
    assert timed.for_agent("t:x").count() == 1 and timed.count() == 0
    assert tenants.sweep_ttl() == 1 and timed.for_agent("t:x").count() == 0


@pytest.mark.parametrize(("mine", "theirs"), [("lg:", "lg:x"), ("", "lg:"), ("a", "a.b"), ("lg:x", "lg:")])
def test_stores_whose_prefixes_overlap_never_list_sweep_or_read_each_others_items(
        timed: Engram, clock: FakeClock, mine: str, theirs: str) -> None:
    # Every agent named with "lg:x" starts with "lg:" (and every one with ""): one store listed the
    # other's namespaces (its users' ids) and swept its expired items, as if they were its own.
    a = EngramStore(timed, agent_from_namespace=1, agent_prefix=mine)
    b = EngramStore(timed, agent_from_namespace=1, agent_prefix=theirs)
    a.put(("memories", "ana"), "k", {"text": "ana's"})
    a.put(("memories", "ana"), "old", {"text": "ana's, expiring"}, ttl=1)
    b.put(("memories", "u1"), "k", {"text": "u1's secret"})
    b.put(("memories", "u1"), "old", {"text": "u1's, expiring"}, ttl=1)
    # The label of ``a`` that names the agent holding ``b``'s items, where there is one.
    shadow = theirs[len(mine):] + "u1" if theirs.startswith(mine) else None
    for store, own in ((a, ("memories", "ana")), (b, ("memories", "u1"))):
        assert store.list_namespaces() == [own]
        [listed] = store.batch([ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("memories",)),))])
        assert listed == [own]
    if shadow is not None:
        ns = ("memories", shadow)
        assert label_agent(mine, shadow) == label_agent(theirs, "u1")  # the same engram agent
        got, found, ranked = a.batch([GetOp(ns, "k"), SearchOp(ns), SearchOp(ns, query="secret")])
        assert got is None and found == [] and ranked == []
        # Through batch, engram's own path: a newer LangGraph's delete refuses a "." label ("a.b"'s shadow) itself.
        a.batch([PutOp(ns, "k", None)])
    clock.advance(2 * MINUTE)
    assert a.sweep_ttl() == 1  # its own expired item, not b's
    assert [i.key for i in b.search(("memories", "u1"))] == ["k"]
    assert timed.for_agent(label_agent(theirs, "u1")).count() == 2  # b's expired one is b's to sweep
    assert b.sweep_ttl() == 1
    assert b.get(("memories", "u1"), "k").value == {"text": "u1's secret"}


def test_a_key_or_label_no_item_can_hold_is_refused_by_every_op_naming_it(engram: Engram) -> None:
    # A get, delete or search by a key or label with a NUL or a lone surrogate: a lone surrogate
    # was Python's own UnicodeEncodeError (the memory key is the UTF-8, percent-escaped), a NUL None.
    store = EngramStore(engram, agent_from_namespace=1)
    store.put(("memories", "ana"), "k", {"text": "kept"})
    for bad in ("a\x00b", "a\ud800b"):
        for op, field in [(GetOp(("memories", "ana"), bad), "key"), (GetOp(("memories", bad), "k"), "namespace"),
                          (PutOp(("memories", "ana"), bad, None), "key"), (PutOp(("memories", bad), "k", None), "namespace"),
                          (SearchOp(("memories", bad)), "namespace_prefix"),
                          (PutOp(("memories", "ana"), bad, {"text": "x"}), "key")]:
            with pytest.raises(ValidationError) as err:
                store.batch([PutOp(("memories", "ana"), "other", {"text": "not written"}), op])
            assert err.value.field == field, op
    assert [i.key for i in store.search(("memories", "ana"))] == ["k"]
    assert [s for s in engram.stats().by_scope if s.startswith("agent:")] == ["agent:lg:ana"]


def _sweeper_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "engram-langgraph-ttl-sweeper" and t.is_alive()]


def test_the_sweeper_thread_sweeps_until_stopped(timed: Engram, clock: FakeClock) -> None:
    store = EngramStore(timed, ttl={"sweep_interval_minutes": 1})
    store.put(("docs",), "k", {"text": "expiring"}, ttl=1)
    clock.advance(2 * MINUTE)
    assert store.stop_ttl_sweeper() is True  # not running: nothing to stop
    done = store.start_ttl_sweeper(sweep_interval_minutes=0.001)  # 60 ms of real time
    assert store.start_ttl_sweeper() is done and len(_sweeper_threads()) == 1  # one sweeper, its future
    deadline = time.monotonic() + 10
    while timed.count() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert timed.count() == 0
    assert store.stop_ttl_sweeper(timeout=5) is True
    done.result(timeout=5)
    store.put(("docs",), "k2", {"text": "expiring"}, ttl=1)
    clock.advance(2 * MINUTE)
    time.sleep(0.2)  # stopped: nothing sweeps any more
    assert timed.count() == 1
    cancelled = store.start_ttl_sweeper(sweep_interval_minutes=60)
    assert cancelled.cancel()  # cancelling the future stops the thread, as with LangGraph's stores
    deadline = time.monotonic() + 10
    while _sweeper_threads() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _sweeper_threads() and store.stop_ttl_sweeper() is True and timed.count() == 1
    with pytest.raises(ValidationError) as err:
        store.start_ttl_sweeper(sweep_interval_minutes=-1)
    assert err.value.field == "sweep_interval_minutes"


def _wait_until(done: Callable[[], bool], seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        time.sleep(0.02)


def test_the_sweeper_stops_by_itself_once_its_engram_is_closed(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    mem = Engram(SqliteMemoryStore(tmp_path / "memory.db"), agent="app", embedder=HashingEmbedder())
    store = EngramStore(mem)
    store.put(("docs",), "k", {"text": "kept"})
    caplog.set_level(logging.DEBUG, logger="engram")
    done = store.start_ttl_sweeper(sweep_interval_minutes=0.001)  # 60 ms of real time
    time.sleep(0.2)  # a few sweeps while open: nothing to forget, nothing logged as failed
    assert not done.done()
    mem.close()
    assert mem.closed
    done.result(timeout=10)  # stopped by itself, without stop_ttl_sweeper
    _wait_until(lambda: not _sweeper_threads())
    assert not _sweeper_threads()
    time.sleep(0.2)  # were it still running, a failed sweep would be logged every 60 ms
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    stopped = [r for r in caplog.records if "engram was closed" in r.getMessage()]
    assert len(stopped) == 1 and stopped[0].levelno == logging.INFO
    assert store.stop_ttl_sweeper() is True


def test_a_sweep_failing_for_another_reason_is_logged_and_the_sweeper_keeps_running(
        timed: Engram, clock: FakeClock, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = EngramStore(timed)
    store.put(("docs",), "k", {"text": "expiring"}, ttl=1)
    clock.advance(2 * MINUTE)
    caplog.set_level(logging.INFO, logger="engram")
    with contextlib.closing(sqlite3.connect(tmp_path / "memory.db")) as conn:  # the database refuses deletes
        conn.execute("CREATE TRIGGER no_forget BEFORE DELETE ON memories BEGIN SELECT RAISE(ABORT, 'refused'); END")
        conn.commit()
        done = store.start_ttl_sweeper(sweep_interval_minutes=0.001)
        _wait_until(lambda: len([r for r in caplog.records if r.getMessage() == "LangGraph TTL sweep failed"]) >= 2)
        assert len([r for r in caplog.records if r.getMessage() == "LangGraph TTL sweep failed"]) >= 2
        assert not done.done() and timed.count() == 1 and not timed.closed
        conn.execute("DROP TRIGGER no_forget")
        conn.commit()
    _wait_until(lambda: timed.count() == 0)
    assert timed.count() == 0  # the sweeper kept running, and sweeps once the database allows it
    assert store.stop_ttl_sweeper(timeout=5) is True
    done.result(timeout=5)


@pytest.mark.parametrize("ttl", [-1, 0, math.nan, math.inf, "10", True, [5]])
def test_a_bad_ttl_is_refused_and_stores_nothing(timed: Engram, ttl: object) -> None:
    store = EngramStore(timed)
    with pytest.raises(ValidationError) as err:
        store.put(("docs",), "k", {"text": "x"}, ttl=ttl)  # type: ignore[arg-type]
    assert err.value.field == "ttl" and "minutes" in str(err.value)
    with pytest.raises(ValidationError) as err:
        store.batch([PutOp(("docs",), "k", {"text": "x"}, ttl=ttl)])  # type: ignore[arg-type]
    assert err.value.field == "ttl"
    assert timed.count() == 0
    with pytest.raises(ValidationError) as err:
        EngramStore(timed, ttl={"default_ttl": ttl})  # type: ignore[typeddict-item]
    assert err.value.field == "ttl.default_ttl"


@pytest.mark.parametrize(("config", "field"), [({"sweep_interval_minutes": -5}, "ttl.sweep_interval_minutes"),
                                               ({"refresh_on_read": "yes"}, "ttl.refresh_on_read"),
                                               ({"default_tl": 5}, "ttl.default_tl"), (60, "ttl")])
def test_a_bad_ttl_config_is_refused(timed: Engram, config: object, field: str) -> None:
    with pytest.raises(ValidationError) as err:
        EngramStore(timed, ttl=config)  # type: ignore[arg-type]
    assert err.value.field == field


def test_a_real_graph_with_a_ttl_store(timed: Engram, clock: FakeClock) -> None:
    store = EngramStore(timed, agent_from_namespace=1, index_fields=["text"],
                        ttl={"default_ttl": 60, "refresh_on_read": True})
    graph = _graph(store)
    graph.invoke({"user": "alice", "message": "remember: I prefer green tea in the morning", "recalled": []})
    clock.advance(45 * MINUTE)
    out = graph.invoke({"user": "alice", "message": "what do I prefer? tea", "recalled": []})
    assert out["recalled"] == ["I prefer green tea in the morning"]  # and the read refreshed it
    clock.advance(45 * MINUTE)
    out = asyncio.run(graph.ainvoke({"user": "alice", "message": "tea?", "recalled": []}))
    assert out["recalled"] == ["I prefer green tea in the morning"]
    clock.advance(61 * MINUTE)
    assert graph.invoke({"user": "alice", "message": "tea?", "recalled": []})["recalled"] == []
    assert store.sweep_ttl() == 1 and timed.for_agent("lg:alice").count() == 0


def test_a_get_and_a_search_without_a_query_count_as_uses_so_hygiene_keeps_what_a_graph_reads(
        timed: Engram, clock: FakeClock) -> None:
    # A graph reads a user's profile by key, or lists a namespace, far more often than it searches
    # with a query: those reads are uses too, or hygiene purges knowledge the graph reads every day.
    store = EngramStore(timed, agent_from_namespace=1)
    ns = ("memories", "ana")
    store.put(ns, "profile", {"name": "Ana"})
    store.put(ns, "listed", {"text": "read by a search without a query"})
    store.put(ns, "unread", {"text": "never read"})
    put = store.get(ns, "profile").updated_at
    clock.advance(20 * 86400)
    assert store.get(ns, "profile").value == {"name": "Ana"}
    assert [i.key for i in store.search(ns, filter={"text": "read by a search without a query"})] == ["listed"]
    clock.advance(15 * 86400)  # 35 days after the puts, 15 after the reads: hygiene's limit is 30 idle days
    # (items are protected by default; here the operator lets them age like other memories)
    hygiene.run(timed, HygieneSettings(knowledge_survival_chance=0.0, protected_types=["summary"]), now=clock(),
                rng=random.Random(1))
    assert sorted(i.key for i in store.search(ns)) == ["listed", "profile"]
    profile = timed.for_agent("lg:ana").get(EngramStore._ref(ns, "profile"))
    assert profile.recall_count == 3  # the two gets and the listing just now
    assert store.get(ns, "profile").updated_at == put  # a use is not a write: Item.updated_at stays the put's


def test_an_item_without_a_ttl_outlives_the_lifecycle_jobs_as_in_langgraphs_own_stores(
        timed: Engram, clock: FakeClock) -> None:
    # LangGraph keeps an item until it is deleted or its ttl ends; as engram memories, items nobody
    # read for 30 days were purged by hygiene, and all of them 90 days after their put by retention.
    store = EngramStore(timed, agent_from_namespace=1)
    ns = ("memories", "ana")
    store.put(ns, "profile", {"name": "Ana"})
    timed.for_agent("lg:ana").remember("a note the agent learned, never recalled", importance=0.2)
    clock.advance(200 * 86400)
    report = Maintenance(timed, LifecycleSettings(), rng=random.Random(1)).run()
    removed = [m.content for r in report.ran for m in r.removed]
    assert removed == ["a note the agent learned, never recalled"]  # the job ran: it took the note
    assert store.get(ns, "profile").value == {"name": "Ana"}
    assert timed.for_agent("lg:ana").get(EngramStore._ref(ns, "profile")).type == "item"


@pytest.mark.parametrize("index", ["a string", -1, True, 2.5])
def test_agent_from_namespace_that_is_not_a_label_index_is_refused(engram: Engram, index: object) -> None:
    with pytest.raises(ValidationError) as err:
        EngramStore(engram, agent_from_namespace=index)  # type: ignore[arg-type]
    assert err.value.field == "agent_from_namespace" and "label index" in err.value.allowed


def test_index_fields_given_as_a_string_is_refused_naming_it(engram: Engram) -> None:
    # A string would be read as one-letter paths ("t", "e", ...): the value indexed as nothing but its key.
    with pytest.raises(ValidationError) as err:
        EngramStore(engram, index_fields="text")  # type: ignore[arg-type]
    assert err.value.field == "index_fields" and '"text"' in err.value.problem
    store = EngramStore(engram)
    with pytest.raises(ValidationError) as err:
        store.put(("docs",), "k", {"text": "kayak trip"}, index="text")  # type: ignore[arg-type]
    assert err.value.field == "index" and store.get(("docs",), "k") is None  # nothing stored
    store.put(("docs",), "k", {"text": "kayak trip", "n": 1}, index=("text",))
    assert [i.key for i in store.search(("docs",), query="kayak")] == ["k"]


def test_an_async_engram_is_taken_for_its_engine(engram: Engram) -> None:
    # An AsyncEngram's methods are coroutines: a put was an AttributeError ('clock').
    from engram.aio import AsyncEngram

    store = EngramStore(AsyncEngram(engram), index_fields=["text"])
    store.put(("docs",), "k", {"text": "kayak trip"})
    assert store.get(("docs",), "k").value == {"text": "kayak trip"}
    assert [m.key for m in engram.list()] == ["lg:docs/k"]
    with pytest.raises(ValidationError) as err:
        EngramStore("not an engine")  # type: ignore[arg-type]
    assert err.value.field == "engram"


@pytest.mark.parametrize(("page", "field"), [({"limit": -1}, "limit"), ({"offset": -2}, "offset"), ({"limit": "5"}, "limit")])
def test_a_page_that_is_not_a_count_is_refused_naming_it(engram: Engram, page: dict, field: str) -> None:
    # LangGraph hands limit and offset on unchecked: limit=-1 sliced the last item off, unsaid.
    store = EngramStore(engram)
    for key in ("a", "b", "c"):
        store.put(("docs",), key, {"text": f"kayak trip {key}"})
    for call in (lambda: store.search(("docs",), **page), lambda: store.search(("docs",), query="kayak", **page),
                 lambda: store.list_namespaces(**page)):
        with pytest.raises(ValidationError) as err:
            call()
        assert err.value.field == field
    assert len(store.search(("docs",), limit=0)) == 0 and len(store.search(("docs",), offset=1)) == 2
    # In a batch, checked with every op before anything is written.
    with pytest.raises(ValidationError) as err:
        store.batch([PutOp(("docs",), "d", {"text": "kayak trip d"}), SearchOp(("docs",), limit=-1)])
    assert err.value.field == "limit" and store.get(("docs",), "d") is None
