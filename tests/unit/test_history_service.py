"""The History pipeline on a real SQLite file (batches also on JSONL): validation, max_history_len, restore,
semantic exchanges, all-or-nothing batches."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from engram.errors import EmbeddingError, StorageError, ValidationError
from engram.history.jsonl import JsonlHistoryStore
from engram.history.keys import conversation_key, normal_key, parse_conversation_key, usable_part
from engram.history.semantic import ExchangeIndex
from engram.history.service import History
from engram.history.settings import MAX_RECAP_TOP_K
from engram.history.sqlite import SqliteHistoryStore
from engram.model import Role, make_message, message_from_dict

from .fakes import HashedBagOfWords

KEY = conversation_key("telegram", "42")


@pytest.fixture
def store(tmp_path: Path):
    s = SqliteHistoryStore.open(tmp_path / "memory.db")
    yield s
    s.close()


def test_persistence_key_survives_session_rotation(store: SqliteHistoryStore) -> None:
    assert KEY == "telegram:42:" and conversation_key("slack", "C1", "t7") == "slack:C1:t7"
    History(store).append(KEY, "user", "remember the blue door")
    recreated = History(store)  # a new session object for the same channel/chat/thread
    assert [m.content for m in recreated.restore("telegram:42")] == ["remember the blue door"]
    assert parse_conversation_key("slack:C1:t7").thread == "t7"


@pytest.mark.parametrize(("key", "field"), [("web:\ud800", "key"), ("web:a\udcffb:t", "key"), ("web:1:\udc00", "key")])
def test_a_key_with_a_lone_surrogate_is_refused_naming_it_and_nothing_is_stored(store: SqliteHistoryStore, key: str,
                                                                               field: str) -> None:
    # It matched a part's pattern, and the store then failed to encode it: a UnicodeEncodeError, no
    # field named (the CLI's "internal error" for undecodable bytes in a key typed at the shell).
    history = History(store)
    history.append(KEY, "user", "kept")
    for call in (lambda: history.append(key, "user", "hello"), lambda: history.set_summary(key, "hello")):
        with pytest.raises(ValidationError) as refused:
            call()
        assert refused.value.field == field and "lone surrogate" in refused.value.reason, refused.value
    with pytest.raises(ValidationError, match="key.thread: contains a lone surrogate"):
        conversation_key("web", "1", "\udc00")
    assert [m.content for m in history.all(KEY)] == ["kept"] and history.conversations() == ["telegram:42"]
    # A part made from another system's id holds none (an import's thread ids), and stays one of its own.
    made = usable_part("a\ud800b")
    assert made.startswith("a-b-") and made != usable_part("a\ud801b")
    assert history.append(conversation_key("web", made), "user", "imported").content == "imported"


def test_unknown_role_is_refused_and_nothing_is_stored(store: SqliteHistoryStore) -> None:
    history = History(store)
    with pytest.raises(ValidationError) as info:
        history.append(KEY, "narrator", "once upon a time")
    assert info.value.field == "role" and "assistant" in (info.value.allowed or "")
    with pytest.raises(ValidationError):
        message_from_dict({"role": "wizard", "content": "x"})
    assert store.count(KEY) == 0


def test_tool_result_with_no_matching_call_is_refused(store: SqliteHistoryStore) -> None:
    history = History(store)
    history.append(KEY, "user", "weather?")
    history.append(KEY, "assistant", "", tool_calls=[{"id": "call_1", "function": {"name": "weather", "arguments": "{}"}}])
    with pytest.raises(ValidationError) as info:
        history.append(KEY, "tool", "sunny", tool_call_id="call_9")
    assert info.value.field == "tool_call_id"
    with pytest.raises(ValidationError) as missing:
        history.append(KEY, "tool", "sunny")
    assert missing.value.field == "tool_call_id"
    history.append(KEY, "tool", "sunny", tool_call_id="call_1")
    assert [m.role for m in store.get_all(KEY)] == [Role.USER, Role.ASSISTANT, Role.TOOL]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"role": "user", "content": ""}, "content"),
        ({"role": "user", "content": "x", "tool_calls": [{"id": "a", "name": "f"}]}, "tool_calls"),
        ({"role": "assistant", "content": "", "tool_calls": "[not json"}, "tool_calls"),
        ({"role": "assistant", "content": "x", "tool_calls": [{"id": "a"}]}, "tool_calls.name"),
        ({"role": "assistant", "content": "x", "tool_call_id": "a"}, "tool_call_id"),
        ({"role": "user", "content": "x", "metadata": "{oops"}, "metadata"),
        ({"role": "user", "content": "x" * 1_000_001}, "content"),
    ],
)
def test_bad_message_fields_name_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(ValidationError) as info:
        make_message(**kwargs)
    assert info.value.field == field


def test_max_history_len_trims_after_each_append_without_orphans(store: SqliteHistoryStore) -> None:
    history = History(store, max_history_len=5)
    for n in range(4):
        history.append(KEY, "user", f"q{n}")
        history.append(KEY, "assistant", f"a{n}")
    assert [m.content for m in store.get_all(KEY)] == ["a1", "q2", "a2", "q3", "a3"]
    history.append(KEY, "assistant", "", tool_calls=[{"id": "c1", "name": "f"}, {"id": "c2", "name": "g"}])
    history.append(KEY, "tool", "r1", tool_call_id="c1")
    history.append(KEY, "tool", "r2", tool_call_id="c2")
    history.append(KEY, "assistant", "done")
    history.append(KEY, "user", "next")
    assert [m.content for m in store.get_all(KEY)] == ["", "r1", "r2", "done", "next"]
    history.append(KEY, "assistant", "after")
    # The last 5 would start at tool result r1 whose call is gone: r1 and r2 go too.
    assert [m.content for m in store.get_all(KEY)] == ["done", "next", "after"]


def test_conversations_are_listed_as_written_and_taken_back(store: SqliteHistoryStore) -> None:
    history = History(store)
    for key in ("telegram:42", "web:chat-1:", "slack:C1:T7"):
        history.append(key, "user", f"said in {key}")
    assert store.conversations() == ["slack:C1:T7", "telegram:42:", "web:chat-1:"]  # stored in canonical form
    assert history.conversations() == ["slack:C1:T7", "telegram:42", "web:chat-1"]
    for key in history.conversations():
        assert history.count(key) == 1 and history.recent(key)[0].content.startswith(f"said in {key}")
    history.purge("web:chat-1")
    assert history.conversations() == ["slack:C1:T7", "telegram:42"]


def test_restore_drops_leading_orphan_tool_results(store: SqliteHistoryStore) -> None:
    store.append(KEY, make_message("assistant", "", tool_calls=[{"id": "c", "name": "f"}]))
    store.append(KEY, make_message("tool", "r", tool_call_id="c"))
    store.append(KEY, make_message("assistant", "final"))
    history = History(store, max_history_len=2)
    assert [m.content for m in history.restore(KEY)] == ["final"]


def test_exchanges_are_indexed_and_recalled_by_chat_in_order(store: SqliteHistoryStore) -> None:
    embedder = HashedBagOfWords()
    index = ExchangeIndex(store.db, embedder, max_entries=1000)
    history = History(store, semantic=index)
    talk = [("my cat is called Miso", "Miso is a lovely name for a cat"),
            ("how do I bake sourdough bread", "feed the starter, then bake hot"),
            ("what food should my cat eat", "cats need protein rich food")]
    for t, (question, answer) in enumerate(talk):
        history.append(KEY, "user", question, created_at=100.0 + t)
        history.append(KEY, "assistant", answer, created_at=100.5 + t)
    history.append("slack:C1:", "user", "my cat cat cat", created_at=50.0)
    history.append("slack:C1:", "assistant", "cat cat cat", created_at=50.5)
    assert index.count() == 4
    found = history.semantic_recall("tell me about my cat", key=KEY, top_k=2)
    assert [e.user for e in found.exchanges] == ["my cat is called Miso", "what food should my cat eat"]
    assert found.recap.startswith("[Conversation recap]") and "Miso" in found.recap
    everywhere = history.semantic_recall("cat", top_k=1)
    assert everywhere.exchanges[0].conversation == "slack:C1"


def test_a_recap_over_its_budget_keeps_the_closest_exchanges_not_the_newest(store: SqliteHistoryStore) -> None:
    # Clawless's CONVERSATION_HISTORY_MAX_TOTAL_CHARS bounds the recap. Semantic recall filled it from
    # the newest exchange back, so the one the question was about, being older, was left out of the
    # recap (still in the entries) while the newest, least related ones were shown.
    index = ExchangeIndex(store.db, HashedBagOfWords(), max_entries=1000, max_recap_chars=220)
    history = History(store, semantic=index)
    talk = [("my dog is called Rex", "Rex is a great name for a dog"),
            ("how do I bake sourdough bread", "feed the starter, then bake it hot"),
            ("which train goes to Lyon", "the TGV from Paris goes to Lyon"),
            ("what should I plant in spring", "peas and lettuce in early spring")]
    for t, (question, answer) in enumerate(talk):
        history.append(KEY, "user", question, created_at=100.0 + t)
        history.append(KEY, "assistant", answer, created_at=100.5 + t)
    found = history.semantic_recall("what is my dog called", key=KEY, top_k=4)
    assert len(found.exchanges) == 4  # every hit is listed; the recap holds what fits
    assert found.exchanges[0].user == "my dog is called Rex"
    assert "my dog is called Rex" in found.recap, found.recap
    assert len(found.recap) <= 220 and "spring" not in found.recap  # the budget still holds
    shown = [e.user for e in found.exchanges if e.user in found.recap]
    assert [e.user for e in found.exchanges if e.user in shown] == shown  # oldest first, as Clawless gives them


def test_recalled_exchanges_show_keys_as_written_and_name_their_rows_when_handed_back(store: SqliteHistoryStore) -> None:
    """A recalled exchange names its conversation as ``conversations()`` lists it (``telegram:42``,
    not the stored ``telegram:42:``); handed back to the index or the history it is the same one."""
    index = ExchangeIndex(store.db, HashedBagOfWords())
    history = History(store, semantic=index)
    for key, question in (("telegram:42", "my cat is called Miso"), ("slack:C1:t7", "my cat sleeps a lot")):
        history.append(key, "user", question)
        history.append(key, "assistant", "noted about the cat")
    found = history.semantic_recall("cat", top_k=5).exchanges
    assert sorted(e.conversation for e in found) == history.conversations() == ["slack:C1:t7", "telegram:42"]
    assert sorted(normal_key(e.conversation) for e in found) == sorted(store.conversations()) == ["slack:C1:t7", "telegram:42:"]
    assert index.add(found) == 0 and index.count() == 2  # the same rows, not new ones
    telegram = next(e for e in found if e.conversation == "telegram:42")
    assert history.semantic_recall("cat", key=telegram.conversation, top_k=5).exchanges == [telegram]
    assert history.count(telegram.conversation) == 2
    assert index.forget_exchanges([telegram]) == 1 and index.count() == 1
    assert history.semantic_recall("cat", key=telegram.conversation, top_k=5).exchanges == []


@pytest.mark.parametrize("semantic", [True, False])
def test_semantic_recall_refuses_a_query_no_store_can_hold(store: SqliteHistoryStore, semantic: bool) -> None:
    history = History(store, semantic=ExchangeIndex(store.db, HashedBagOfWords(), max_entries=10) if semantic else None)
    for query, problem in (("my c\x00at", "NUL"), ("  ", "empty"), ("\ud800", "surrogate")):
        with pytest.raises(ValidationError) as err:
            history.semantic_recall(query)
        assert err.value.field == "query" and problem in str(err.value)


def test_semantic_store_is_capped_fifo_and_truncates_what_it_embeds(store: SqliteHistoryStore) -> None:
    seen: list[str] = []

    class Recording(HashedBagOfWords):
        def embed(self, texts):  # type: ignore[no-untyped-def]
            seen.extend(texts)
            return super().embed(texts)

    index = ExchangeIndex(store.db, Recording(), max_entries=3, max_chars_per_entry=40)
    history = History(store, semantic=index)
    for n in range(5):
        history.append(KEY, "user", f"question number {n} " + "padding " * 20, created_at=float(n))
        history.append(KEY, "assistant", f"answer {n}", created_at=n + 0.5)
    assert index.count() == 3
    assert all(len(text) <= 40 for text in seen)
    kept = index.recall("question", conversation=KEY, top_k=10).exchanges
    assert [e.at for e in kept] == [2.0, 3.0, 4.0]


def test_a_popped_answer_leaves_the_semantic_index_and_trimmed_or_compacted_ones_stay(
        store: SqliteHistoryStore) -> None:
    """An undone (popped) answer is not recalled; exchanges a trim or compaction discards stay
    searchable (that is what the index is for), and so does an identical exchange said before."""
    from engram.history.settings import CompactionSettings

    index = ExchangeIndex(store.db, HashedBagOfWords())
    history = History(store, max_history_len=6, semantic=index,
                      compaction=CompactionSettings(max_history_messages=4, min_messages=3, keep_recent=2))
    for t in range(4):  # t=0 is trimmed away (6 messages kept), t=1 compacted away below
        history.append(KEY, "user", f"question about topic{t}", created_at=10.0 * t)
        history.append(KEY, "assistant", f"answer about topic{t}", created_at=10.0 * t + 1)
    assert history.compact(KEY).compacted and index.count() == 4
    history.append(KEY, "user", "where is my umbrella", created_at=50.0)
    history.append(KEY, "assistant", "tools", tool_calls=[{"id": "c1", "name": "look"}], created_at=51.0)
    history.append(KEY, "tool", "in the hall", tool_call_id="c1", created_at=52.0)
    history.append(KEY, "assistant", "the umbrella is in the hall", created_at=53.0)
    assert "umbrella" in history.semantic_recall("umbrella hall", key=KEY, top_k=1).recap

    assert history.pop_newest(KEY).content == "the umbrella is in the hall"
    answers = [e.assistant for e in history.semantic_recall("umbrella hall", key=KEY, top_k=10).exchanges]
    assert "the umbrella is in the hall" not in answers
    assert sorted(answers) == [f"answer about topic{t}" for t in range(4)]  # trimmed and compacted ones stay
    history.append(KEY, "assistant", "the umbrella is in the car", created_at=54.0)  # the redo is indexed
    assert history.semantic_recall("umbrella car", key=KEY, top_k=1).exchanges[0].assistant.endswith("car")

    # The same words said again (a new exchange, another time): popping it leaves the first one.
    history.append(KEY, "user", "question about topic3", created_at=60.0)
    history.append(KEY, "assistant", "answer about topic3", created_at=61.0)
    history.pop_newest(KEY)
    assert [e.at for e in index.recall("topic3", conversation=KEY, top_k=10).exchanges
            if e.assistant == "answer about topic3"] == [30.0]
    assert history.pop_newest(KEY).content == "question about topic3"  # no answer, nothing indexed went


def test_warm_indexes_recent_history_once(store: SqliteHistoryStore) -> None:
    history = History(store)
    for n in range(4):
        history.append(KEY, "user", f"q{n}", created_at=float(n))
        history.append(KEY, "assistant", f"a{n}", created_at=n + 0.5)
    embedder = HashedBagOfWords()
    index = ExchangeIndex(store.db, embedder, max_entries=3)
    assert index.warm(store) == 3
    assert index.warm(store) == 0  # already indexed: nothing re-embedded
    other = ExchangeIndex(store.db, HashedBagOfWords(dims=32), max_entries=3)
    assert other.warm(store) == 3  # a new embedding identity re-embeds


def test_the_index_embeds_only_what_its_bound_keeps(store: SqliteHistoryStore) -> None:
    # A batch larger than the bound embeds its newest max_entries; once full, exchanges older than
    # every kept one are not embedded (the prune would delete them at once): an import of a long
    # history, newest conversations first, embeds what stays.
    class Counting(HashedBagOfWords):
        texts = 0

        def embed(self, texts):  # type: ignore[no-untyped-def]
            self.texts += len(texts)
            return super().embed(texts)

    embedder = Counting()
    index = ExchangeIndex(store.db, embedder, max_entries=3)
    history = History(store, semantic=index)
    newest = [m for n in range(5) for m in ({"role": "user", "content": f"q{n}", "created_at": 10.0 + n},
                                           {"role": "assistant", "content": f"a{n}", "created_at": 10.5 + n})]
    history.append_many(KEY, newest)
    assert embedder.texts == 3 and index.count() == 3
    older = [m for n in range(4) for m in ({"role": "user", "content": f"old q{n}", "created_at": float(n)},
                                          {"role": "assistant", "content": f"old a{n}", "created_at": n + 0.5})]
    history.append_many("cli:older", older)
    assert embedder.texts == 3 and index.count() == 3  # all older than the three kept: none embedded
    assert [e.assistant for e in history.semantic_recall("a", top_k=10).exchanges] == ["a2", "a3", "a4"]
    history.append_many("cli:newer", [{"role": "user", "content": "q9", "created_at": 20.0},
                                      {"role": "assistant", "content": "a9", "created_at": 20.5}])
    assert embedder.texts == 4 and [e.assistant for e in history.semantic_recall("a", top_k=10).exchanges] == [
        "a3", "a4", "a9"]


def test_failing_embedder_never_loses_the_append(store: SqliteHistoryStore) -> None:
    class Broken(HashedBagOfWords):
        def embed(self, texts):  # type: ignore[no-untyped-def]
            raise EmbeddingError("model missing")

    history = History(store, semantic=ExchangeIndex(store.db, Broken()))
    history.append(KEY, "user", "hello")
    history.append(KEY, "assistant", "hi")
    assert store.count(KEY) == 2


def test_semantic_recall_ranks_in_sqlite_with_sqlite_vec_like_numpy(store: SqliteHistoryStore) -> None:
    if not store.db.has_vec:
        pytest.skip("this Python's SQLite cannot load sqlite-vec (recall ranks in numpy instead)")
    index = ExchangeIndex(store.db, HashedBagOfWords(), max_entries=1000)
    history = History(store, semantic=index)
    words = ["cat", "bread", "garden", "rain", "train", "piano", "coffee", "river"]
    for t in range(40):
        key = conversation_key("telegram", str(t % 3))
        history.append(key, "user", f"{words[t % 8]} {words[(t * 3) % 8]} note {t}", created_at=100.0 + t)
        history.append(key, "assistant", f"about {words[(t * 5) % 8]}", created_at=100.5 + t)
    statements: list[str] = []
    store.db.conn.set_trace_callback(statements.append)
    try:
        in_sql = [index.recall("cat garden coffee", conversation=c, top_k=5) for c in (None, conversation_key("telegram", "1"))]
    finally:
        store.db.conn.set_trace_callback(None)
    assert any("vec_distance_cosine" in s and "LIMIT" in s for s in statements), statements
    store.db.has_vec = False  # the same rows ranked by the numpy path give the same answer
    in_numpy = [index.recall("cat garden coffee", conversation=c, top_k=5) for c in (None, conversation_key("telegram", "1"))]
    for sql, exact in zip(in_sql, in_numpy, strict=True):
        # the same top scores (ties may be broken differently by float32 rounding), oldest first
        assert len(sql.hits) == 5 and [e.at for e, _ in sql.hits] == sorted(e.at for e, _ in sql.hits)
        assert sorted(round(s, 4) for _, s in sql.hits) == sorted(round(s, 4) for _, s in exact.hits)
    assert {e.conversation for e, _ in in_sql[1].hits} == {"telegram:1"}  # as users write it


# --- batches: append_many -------------------------------------------------------------------
@pytest.fixture(params=["sqlite", "jsonl"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path):
    s = SqliteHistoryStore.open(tmp_path / "memory.db") if request.param == "sqlite" else JsonlHistoryStore(
        tmp_path / "history.jsonl")
    yield s
    s.close()


CALL = {"id": "call_1", "name": "weather", "arguments": "{}"}


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"role": "user", "content": ""}, "messages[2].content"),
        ({"role": "user", "content": "nul \x00 inside"}, "messages[2].content"),
        ({"role": "wizard", "content": "x"}, "messages[2].role"),
        ({"role": "user", "content": "x", "colour": "red"}, "messages[2].colour"),
        ({"role": "user", "content": "x", "metadata": "{oops"}, "messages[2].metadata"),
        ("just text", "messages[2]"),
        ({"role": "tool", "content": "sunny", "tool_call_id": "call_9"}, "messages[2].tool_call_id"),
    ],
)
def test_append_many_refuses_a_bad_message_anywhere_and_stores_none(any_store, bad, field: str) -> None:
    history = History(any_store)
    history.append(KEY, "user", "kept", created_at=1.0)
    batch = [{"role": "user", "content": "weather?"}, {"role": "assistant", "content": "", "tool_calls": [CALL]},
             bad, {"role": "assistant", "content": "after"}]
    with pytest.raises(ValidationError) as info:
        history.append_many(KEY, batch)
    assert info.value.field == field
    assert [m.content for m in any_store.get_all(KEY)] == ["kept"]


def test_append_many_stores_the_batch_in_order_and_pairs_tool_results_within_it(any_store) -> None:
    history = History(any_store, clock=lambda: 42.0)
    batch = [
        {"role": "user", "content": "weather in Oslo?  \n"},
        make_message("assistant", "", tool_calls=[CALL], created_at=7.0),
        {"role": "tool", "content": '{"temp": 4}', "tool_call_id": "call_1", "metadata": {"ms": 12}},
        {"role": "assistant", "content": "It is 4 °C. ☃"},
    ]
    stored = history.append_many(KEY, batch)
    assert any_store.get_all(KEY) == stored
    assert [(m.role, m.content, m.created_at) for m in stored] == [
        (Role.USER, "weather in Oslo?  \n", 42.0), (Role.ASSISTANT, "", 7.0), (Role.TOOL, '{"temp": 4}', 42.0),
        # The clock did not move: the least time past the message before (turns are known by time).
        (Role.ASSISTANT, "It is 4 °C. ☃", math.nextafter(42.0, math.inf))]
    assert stored[2].metadata == {"ms": 12} and stored[1].tool_calls[0].id == "call_1"
    assert any_store.count(KEY) == 4
    with pytest.raises(ValidationError) as info:
        history.append_many(KEY, {"role": "user", "content": "one dict, not a list"})  # type: ignore[arg-type]
    assert info.value.field == "messages"


def test_append_many_trims_indexes_and_reports_turns_as_appending_one_by_one(tmp_path: Path) -> None:
    talk = [("user", "my cat is called Miso"), ("assistant", "a lovely name"), ("user", "and my dog?"),
            ("assistant", "", [CALL]), ("tool", "Rex", "call_1"), ("assistant", "your dog is Rex"),
            ("user", "thanks")]

    def fields(t: int, turn: tuple) -> dict:
        role, content, *rest = turn
        out = {"role": role, "content": content, "created_at": 100.0 + t}
        if role == "assistant" and rest:
            out["tool_calls"] = rest[0]
        if role == "tool":
            out["tool_call_id"] = rest[0]
        return out

    outcomes = []
    for batched in (False, True):
        store = SqliteHistoryStore.open(tmp_path / f"{batched}.db")
        index = ExchangeIndex(store.db, HashedBagOfWords())
        history = History(store, max_history_len=6, semantic=index)
        turns: list[tuple[str, int]] = []
        history.turn_hook = lambda key, count: turns.append((key, count))  # noqa: B023
        history.append(KEY, "user", "before", created_at=1.0)
        if batched:
            history.append_many(KEY, [fields(t, turn) for t, turn in enumerate(talk)])
        else:
            for t, turn in enumerate(talk):
                history.append(KEY, **fields(t, turn))
        stored = [m.content for m in store.get_all(KEY)]
        exchanges = [(e.user, e.assistant) for e in history.semantic_recall("cat dog", top_k=10).exchanges]
        outcomes.append((stored, exchanges, turns))
        store.close()
    one_by_one, batch = outcomes
    kept = ["a lovely name", "and my dog?", "", "Rex", "your dog is Rex", "thanks"]  # the last 6
    assert batch[0] == one_by_one[0] == kept
    assert batch[1] == one_by_one[1] == [("my cat is called Miso", "a lovely name"), ("and my dog?", "your dog is Rex")]
    # Each ended turn is reported once, by its last message's position in the conversation as
    # stored after the append (the batch's is trimmed once, at its end; one by one, at each step).
    assert [kept[count - 1] for _, count in batch[2]] == ["a lovely name", "your dog is Rex"]
    assert [key for key, _ in batch[2]] == [KEY, KEY] and len(one_by_one[2]) == 2


def test_append_many_with_history_off_validates_and_stores_nothing(store: SqliteHistoryStore) -> None:
    history = History(store, enabled=False)
    with pytest.raises(ValidationError) as info:
        history.append_many(KEY, [{"role": "user", "content": "fine"}, {"role": "user", "content": ""}])
    assert info.value.field == "messages[1].content"
    assert [m.content for m in history.append_many(KEY, [{"role": "user", "content": "fine"}])] == ["fine"]
    assert store.count(KEY) == 0


def test_a_batch_the_database_refuses_half_way_leaves_nothing_indexed_or_reported(store: SqliteHistoryStore) -> None:
    index = ExchangeIndex(store.db, HashedBagOfWords())
    history = History(store, semantic=index)
    turns: list[tuple[str, int]] = []
    history.turn_hook = lambda key, count: turns.append((key, count))
    with store.db.write() as conn:  # the third row fails inside the transaction, after two went in
        conn.execute("CREATE TRIGGER refuse BEFORE INSERT ON history_messages WHEN NEW.content = 'boom' "
                     "BEGIN SELECT RAISE(ABORT, 'refused'); END")
    with pytest.raises(StorageError, match="refused"):
        history.append_many(KEY, [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"},
                                  {"role": "user", "content": "boom"}])
    assert store.count(KEY) == 0 and index.count() == 0 and turns == []


class _OlderPlugin:
    """A plug-in history store written before pop_newest and discard_if_unchanged: the rest of the
    protocol, on a real SQLite file."""

    def __init__(self, inner: SqliteHistoryStore) -> None:
        self._inner = inner
        for name in ("name", "agent", "for_agent", "append", "append_many", "get_recent", "get_all", "count",
                     "set_summary", "get_summary", "discard", "purge", "conversations", "close"):
            setattr(self, name, getattr(inner, name))


def test_a_plugin_store_without_the_atomic_removals_still_pops_trims_and_compacts(
        store: SqliteHistoryStore, caplog: pytest.LogCaptureFixture) -> None:
    from engram.history.settings import CompactionSettings

    plugin = _OlderPlugin(store)
    history = History(plugin, max_history_len=20,  # type: ignore[arg-type]
                      compaction=CompactionSettings(max_history_messages=14, min_messages=12, keep_recent=10))
    for i in range(21):
        history.append("telegram:9", "user", f"m{i}", created_at=float(i))
    assert [m.content for m in history.all("telegram:9")] == [f"m{i}" for i in range(1, 21)]  # trimmed m0
    assert history.pop_newest("telegram:9").content == "m20"
    result = history.compact("telegram:9")
    assert result.compacted and [m.content for m in history.all("telegram:9")] == [f"m{i}" for i in range(10, 20)]
    assert history.summary("telegram:9") == result.summary
    # Said once per class: removals are atomic only within this process.
    warnings = [r.getMessage() for r in caplog.records if "pop_newest/discard_if_unchanged" in r.getMessage()]
    assert len(warnings) == 1 and "_OlderPlugin" in warnings[0]


def test_a_message_dated_later_than_now_is_refused_naming_the_field_as_a_memory_is(store: SqliteHistoryStore) -> None:
    # A memory's created_at more than CREATED_AT_LEEWAY_S ahead of the clock is refused; a message's
    # was stored, and sorted after every message appended later (and outlived them in trimming).
    from engram.model import CREATED_AT_LEEWAY_S, Message

    now = 1_800_000_000.0
    history = History(store, clock=lambda: now)
    ahead = now + CREATED_AT_LEEWAY_S + 60
    for append in (lambda: history.append(KEY, "user", "from the future", created_at=ahead),
                   lambda: history.append(KEY, "user", "from the future", created_at="2099-01-01T00:00:00Z")):
        with pytest.raises(ValidationError) as info:
            append()
        assert info.value.field == "created_at" and "later than now" in info.value.problem
        assert "when the message was sent" in (info.value.allowed or "")
    with pytest.raises(ValidationError) as info:
        history.append_many(KEY, [{"role": "user", "content": "now"}, {"role": "assistant", "content": "later",
                                                                        "created_at": ahead}])
    assert info.value.field == "messages[1].created_at"
    with pytest.raises(ValidationError) as info:
        history.append_many(KEY, [Message(Role.USER, "built", created_at=ahead)])
    assert info.value.field == "messages[0].created_at"
    with pytest.raises(ValidationError) as info:
        history.add(KEY, Message(Role.USER, "built", created_at=ahead))
    assert info.value.field == "created_at"
    assert store.count(KEY) == 0  # nothing of any refused append stored
    # A clock running a little fast (within the leeway) is now, as for a memory; a past time is kept.
    assert history.append(KEY, "user", "a little fast", created_at=now + 60).created_at == now
    assert history.add(KEY, Message(Role.USER, "built", created_at=now + 1)).created_at == now
    assert history.append(KEY, "assistant", "earlier", created_at=now - 3600).created_at == now - 3600


# --- counts past any conversation: read as "all", never handed to the driver ------------------
def test_a_count_past_a_64_bit_integer_reads_every_message_and_discards_nothing_it_should_not(any_store) -> None:
    """``recent(key, n)`` with ``n`` past what SQLite takes (``engram history show KEY --limit
    99999999999999999999``) returns every message, as a count past the conversation's end does
    on every backend, instead of an OverflowError from the driver; ``discard`` likewise."""
    history = History(any_store)
    for n in range(3):
        history.append(KEY, "user", f"m{n}", created_at=float(n + 1))
    huge = 10**20
    assert [m.content for m in history.recent(KEY, huge)] == ["m0", "m1", "m2"]
    assert [m.content for m in any_store.get_recent(KEY, huge)] == ["m0", "m1", "m2"]
    assert any_store.discard(KEY, huge, huge + 1) == 0 and any_store.count(KEY) == 3
    assert any_store.discard(KEY, 2, huge) == 1 and [m.content for m in any_store.get_all(KEY)] == ["m0", "m1"]


@pytest.mark.parametrize("semantic", [True, False])
def test_semantic_recall_reads_top_k_as_every_count_is(store: SqliteHistoryStore, semantic: bool) -> None:
    """``top_k``: a whole number from 1 to ``MAX_RECAP_TOP_K`` (2.0 passes), the range every door
    allows (the library took any count: 10**20 passed here and was refused over HTTP); 0 is
    refused as -1 is (it was read as "the default"), text and booleans are named as what they
    are, not "too small"; checked with or without an exchange index."""
    index = ExchangeIndex(store.db, HashedBagOfWords(), max_entries=10) if semantic else None
    history = History(store, semantic=index, recap_top_k=1)
    for n in range(3):
        history.append(KEY, "user", f"my cat {n}", created_at=10.0 + n)
        history.append(KEY, "assistant", f"noted cat {n}", created_at=10.5 + n)
    expected = 3 if semantic else 0
    assert len(history.semantic_recall("cat", top_k=MAX_RECAP_TOP_K).exchanges) == expected
    assert len(history.semantic_recall("cat", top_k=2.0).exchanges) == min(2, expected)
    assert len(history.semantic_recall("cat").exchanges) == min(1, expected)  # recap_top_k
    for bad, problem in ((0, "0 is out of range"), (-1, "-1 is out of range"), ("x", 'got "x" (text)'),
                         (True, "got true (a boolean)"), (2.5, "2.5"), (MAX_RECAP_TOP_K + 1, "101 is out of range"),
                         (10**20, "is out of range")):
        with pytest.raises(ValidationError) as err:
            history.semantic_recall("cat", top_k=bad)
        assert err.value.field == "top_k" and problem in str(err.value) and "1 to 100" in str(err.value)
    if index is not None:  # the index read alone says the same
        assert len(index.recall("cat", top_k=10**20).exchanges) == 3
        with pytest.raises(ValidationError, match='top_k: got "x"'):
            index.recall("cat", top_k="x")


def test_assemble_and_compact_refuse_arguments_of_the_wrong_kind_naming_them(store: SqliteHistoryStore) -> None:
    """``assemble(key, 5)`` returned a system message holding the number 5 (a provider refused it
    later, far from the call), and ``compact(key, reported_tokens="x")`` raised a bare TypeError from
    a comparison inside: both are refused naming the argument; nothing stored changes."""
    history = History(store)
    history.append(KEY, "system", "stored prompt", created_at=1.0)
    history.append(KEY, "user", "hello", created_at=2.0)
    with pytest.raises(ValidationError) as err:
        history.assemble(KEY, 5)  # type: ignore[arg-type]
    assert err.value.field == "system_prompt" and "got int" in str(err.value)
    assert [m.content for m in history.assemble(KEY, "new prompt")] == ["new prompt", "hello"]
    assert [m.content for m in history.assemble(KEY)] == ["stored prompt", "hello"]
    for bad, problem in (("x", 'got "x" (text)'), (-1, "-1 is out of range"), (True, "got true (a boolean)")):
        with pytest.raises(ValidationError) as err:
            history.compact(KEY, reported_tokens=bad, force=True)  # type: ignore[arg-type]
        assert err.value.field == "reported_tokens" and problem in str(err.value)
    assert history.count(KEY) == 2
    assert not history.compact(KEY, reported_tokens=2.0).compacted  # a whole number passes


def test_append_many_refuses_an_empty_batch_naming_messages(any_store) -> None:
    """An empty list answered ``[]`` ("appended 0 messages" at the CLI) while HTTP refused it: the
    history owns the bound, so every door refuses it alike, naming ``messages``."""
    history = History(any_store)
    for empty in ([], ()):
        with pytest.raises(ValidationError) as info:
            history.append_many_reported(KEY, empty)
        assert info.value.field == "messages" and "empty" in str(info.value)
        with pytest.raises(ValidationError):
            history.append_many(KEY, empty)
    assert any_store.count(KEY) == 0


@pytest.fixture
def far_from_utc(monkeypatch: pytest.MonkeyPatch):
    """The process's local zone set to UTC+05:45, so a time shown in local time cannot pass for UTC."""
    import time
    monkeypatch.setenv("TZ", "Asia/Kathmandu")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_a_recap_dates_its_exchanges_in_utc_as_the_entries_beside_it_are(store: SqliteHistoryStore, tmp_path: Path,
                                                                         far_from_utc: None) -> None:
    # The recap block was dated in the server's local zone while the entries answered beside it
    # (HTTP, MCP, CLI --json) carry ISO 8601 UTC timestamps: one exchange, two different times.
    from engram.interfaces.present import iso
    at = 1770711300.0  # 2026-02-10T08:15:00Z, 14:00 in Kathmandu
    history = History(store, semantic=ExchangeIndex(store.db, HashedBagOfWords(), max_entries=1000))
    history.append(KEY, "user", "my cat is called Miso", created_at=at)
    history.append(KEY, "assistant", "a lovely name", created_at=at + 1)
    found = history.semantic_recall("cat", key=KEY, top_k=1)
    assert iso(found.exchanges[0].at, timespec="milliseconds") == "2026-02-10T08:15:00.000Z"
    assert "- [2026-02-10 08:15 UTC] User: my cat is called Miso" in found.recap, found.recap
    jsonl = JsonlHistoryStore(tmp_path / "h.jsonl")  # the JSONL store's own recap: the same dating
    jsonl.append(KEY, make_message("user", "my cat is called Miso", created_at=at))
    jsonl.append(KEY, make_message("assistant", "a lovely name", created_at=at + 1))
    assert "- [2026-02-10 08:15 UTC] User: my cat is called Miso" in jsonl.recap(KEY)
