"""Automatic turn indexing over a conversation that is trimmed or compacted, and turns whose user
message carries the agent's ``[Memory context]`` block: every indexed turn keeps its own memory,
and what is indexed (turn memories, exchange recaps, the transcript) is what the user said."""

from __future__ import annotations

from pathlib import Path

from engram.engine import Engram, Filters
from engram.files import transcripts
from engram.history.semantic import ExchangeIndex
from engram.history.service import History
from engram.history.sqlite import SqliteHistoryStore
from engram.model import make_message
from engram.store.sqlite import SqliteMemoryStore

from .fakes import HashedBagOfWords

QUESTIONS = [
    "Which database should the billing service use for invoices?",
    "Which queue should carry the payment events between services?",
    "Which region should host the reporting warehouse for finance?",
    "Which library should render the invoice documents as portable files?",
]


def test_a_trimmed_conversation_never_overwrites_an_earlier_turns_memory(tmp_path: Path) -> None:
    mem = Engram.from_settings(home=tmp_path, path=tmp_path / "memory.db", embeddings={"provider": "none"},
                               history={"transcript_auto_index": True, "max_history_len": 4})
    key = "cli:billing"
    for n, question in enumerate(QUESTIONS):
        mem.history.append(key, "user", question)
        mem.history.append(key, "assistant", f"Answer {n}: the first option, documented in the runbook.")
    mem.close()  # finishes the background queue

    reopened = Engram.from_settings(home=tmp_path, path=tmp_path / "memory.db", embeddings={"provider": "none"})
    try:
        indexed = sorted((m for m in reopened.list(limit=50) if m.key.startswith("transcript:")),
                         key=lambda m: m.created_at)
        # Only the last two turns are left in the history (4 messages), yet each of the four
        # turns is its own memory: none was overwritten by a later turn at the same position.
        assert [m.content.splitlines()[0] for m in indexed] == [f"User: {q}" for q in QUESTIONS]
        assert len({m.key for m in indexed}) == 4
        assert [m.metadata["turn"] for m in indexed] == [1, 2, 3, 4]
    finally:
        reopened.close()


def test_indexing_a_compacted_conversation_again_changes_nothing(tmp_path: Path) -> None:
    engram = Engram(SqliteMemoryStore(tmp_path / "memory.db"))
    messages = []
    for n, question in enumerate(QUESTIONS):
        messages += [make_message("user", question, created_at=1_770_000_000.0 + 10 * n),
                     make_message("assistant", f"Answer {n}: the first option.", created_at=1_770_000_001.0 + 10 * n)]
    transcripts.index(engram, "cli:b", messages)
    assert engram.count() == 4
    # After compaction only the last two turns remain, numbered 1 and 2 in what is left.
    transcripts.index(engram, "cli:b", messages[4:])
    transcripts.index(engram, "cli:b", messages[4:])
    stored = {m.key: m.content for m in engram.list(limit=10)}
    assert len(stored) == 4
    assert stored["transcript:cli:b:1"].startswith(f"User: {QUESTIONS[0]}")
    assert stored["transcript:cli:b:3"].startswith(f"User: {QUESTIONS[2]}")
    engram.close()


def test_the_memory_context_block_is_not_indexed_nor_shown(tmp_path: Path) -> None:
    mem = Engram.from_settings(home=tmp_path, path=tmp_path / "memory.db", embeddings={"provider": "none"},
                               history={"transcript_auto_index": True})
    enriched = ("[Memory context]\n- user-passport: The user's passport number is ZX991122.\n[/Memory context]\n\n"
                + QUESTIONS[0])
    mem.history.append("cli:b", "user", enriched)
    mem.history.append("cli:b", "assistant", "PostgreSQL, with invoices kept immutable.")
    mem.close()

    reopened = Engram.from_settings(home=tmp_path, path=tmp_path / "memory.db", embeddings={"provider": "none"})
    try:
        [turn] = [m for m in reopened.list() if m.key.startswith("transcript:")]
        assert turn.content == f"User: {QUESTIONS[0]}\nAgent: PostgreSQL, with invoices kept immutable."
        written = transcripts.write(tmp_path / "t", "cli:b", reopened.history.all("cli:b"), agent="default")
        assert "Memory context" not in written.read_text("utf-8") and "ZX991122" not in written.read_text("utf-8")
    finally:
        reopened.close()


def test_the_exchange_recap_holds_the_users_words_without_the_context_block(tmp_path: Path) -> None:
    store = SqliteHistoryStore.open(tmp_path / "history.db")
    history = History(store, semantic=ExchangeIndex(store.db, HashedBagOfWords()))
    enriched = "[Memory context]\n- user-passport: The user's passport is ZX991122.\n[/Memory context]\n\n" + QUESTIONS[0]
    history.append("cli:b", "user", enriched)
    history.append("cli:b", "assistant", "PostgreSQL, with invoices kept immutable.")
    found = history.semantic_recall("passport billing database invoices")
    assert [e.user for e in found.exchanges] == [QUESTIONS[0]]
    assert "Memory context" not in found.recap and "ZX991122" not in found.recap
    history.close()


def _as_an_earlier_version_indexed(mem: Engram, session: str, number: int, at: float, content: str) -> None:
    """A turn memory as automatic indexing stored it before sessions were spelt as shown."""
    mem.remember(content, key=f"transcript:{session}:{number}", category="conversation", type="conversation",
                 tags=["transcript", f"session:{session}"], metadata={"session": session, "turn": number},
                 created_at=at)


def test_a_turn_stored_under_the_old_spelling_is_updated_not_duplicated_and_undone(tmp_path: Path) -> None:
    mem = Engram.from_settings(home=tmp_path, path=tmp_path / "memory.db", embeddings={"provider": "none"})
    try:
        for n, question in enumerate(QUESTIONS[:3]):
            mem.history.append("cli:trip", "user", question)
            mem.history.append("cli:trip", "assistant", f"Answer {n}: the first option.")
        messages = mem.history.all("cli:trip")
        first, second = transcripts.turns(messages)[:2]
        # Turn 1 under the stored key only; turn 2 under both spellings (the duplicate this made).
        _as_an_earlier_version_indexed(mem, "cli:trip:", 1, first.at, "User: (as first indexed)")
        kept = mem.get("transcript:cli:trip::1").id
        _as_an_earlier_version_indexed(mem, "cli:trip:", 2, second.at, "User: (as first indexed)")
        _as_an_earlier_version_indexed(mem, "cli:trip", 2, second.at, "User: (as first indexed)")
        transcripts.index(mem, "cli:trip", messages)
        transcripts.index(mem, "cli:trip:", messages)  # automatic indexing's spelling: the same memories
        held = {m.key: m for m in mem.list(Filters(tags="transcript"), limit=10)}
        assert set(held) == {"transcript:cli:trip::1", "transcript:cli:trip:2", "transcript:cli:trip:3"}
        assert held["transcript:cli:trip::1"].id == kept  # updated where it was
        by_turn = sorted(held.values(), key=lambda m: m.metadata["turn"])
        assert [m.content.splitlines()[0] for m in by_turn] == [f"User: {q}" for q in QUESTIONS[:3]]
        assert {m.metadata["session"] for m in held.values()} == {"cli:trip"}
        # The undo of turn 3 forgets its memory; turn 1's, under the old key, goes when it is undone.
        mem.history.pop_newest("cli:trip")
        assert {m.key for m in mem.list(Filters(tags="transcript"))} == {"transcript:cli:trip::1",
                                                                        "transcript:cli:trip:2"}
        for _ in range(4):
            mem.history.pop_newest("cli:trip")
        assert mem.list(Filters(tags="transcript")) == []
    finally:
        mem.close()


def test_an_undo_that_meets_the_indexer_closed_forgets_the_turn_and_returns(tmp_path: Path) -> None:
    """A pop racing the history's close reaches the turn indexer after its worker took the close's
    sentinel and ended: the undo's job is never run by it, so the undo runs it itself instead of
    waiting forever (a server's request thread hung at shutdown)."""
    import threading

    mem = Engram.from_settings(home=tmp_path, path=tmp_path / "memory.db", embeddings={"provider": "none"},
                               history={"transcript_auto_index": True})
    try:
        mem.history.append("cli:trip", "user", QUESTIONS[0])
        mem.history.append("cli:trip", "assistant", "Answer: the first option, documented in the runbook.")
        before = mem.history.all("cli:trip")
        undone = mem.history.undo_hook
        indexer = undone.__self__  # type: ignore[union-attr]
        indexer.close()  # as History.close does first; the turn above is indexed by then
        assert [m.key for m in mem.list(Filters(tags="transcript"))] == ["transcript:cli:trip:1"]
        mem.history.store.pop_newest("cli:trip")  # the store's pop came before the close, its hook after
        undo = threading.Thread(target=undone, args=("cli:trip:", before, before[:1]), daemon=True)
        undo.start()
        undo.join(10)
        assert not undo.is_alive(), "the undo waits for a worker that has ended"
        assert mem.list(Filters(tags="transcript")) == []
    finally:
        mem.close()


def test_a_batch_indexed_the_old_way_gets_its_lost_turn_back_without_a_duplicate(tmp_path: Path) -> None:
    """A batch an earlier version appended gave its turns one time, and indexing left one memory,
    ``:1``, holding the last turn. Indexing again updates that memory with turn 1, stores the
    others, and changes nothing the next time."""
    mem = Engram.from_settings(home=tmp_path, path=tmp_path / "memory.db", embeddings={"provider": "none"})
    try:
        at = 1_790_000_000.0
        mem.history.append_many("cli:batch", [{"role": role, "content": text, "created_at": at}
                                              for n, question in enumerate(QUESTIONS[:3])
                                              for role, text in (("user", question), ("assistant", f"Answer {n}."))])
        _as_an_earlier_version_indexed(mem, "cli:batch", 1, at, f"User: {QUESTIONS[2]}\nAgent: Answer 2.")
        kept = mem.get("transcript:cli:batch:1").id
        messages = mem.history.all("cli:batch")
        for _ in range(2):
            transcripts.index(mem, "cli:batch", messages)
            held = {m.key: m for m in mem.list(Filters(tags="transcript"), limit=10)}
            assert {key: m.content.splitlines()[0] for key, m in held.items()} == {
                f"transcript:cli:batch:{n + 1}": f"User: {question}" for n, question in enumerate(QUESTIONS[:3])}
            assert held["transcript:cli:batch:1"].id == kept
            # One time, three questions: the words tell the turns apart (the order counts repeats).
            assert len({held[f"transcript:cli:batch:{n}"].metadata["asked"] for n in (1, 2, 3)}) == 3
            assert [held[f"transcript:cli:batch:{n}"].metadata["order"] for n in (1, 2, 3)] == [0, 0, 0]
    finally:
        mem.close()


def test_an_undo_of_a_turn_without_a_time_forgets_that_turn_once_the_window_moved(tmp_path: Path) -> None:
    """Turns without a time are known by their number in the whole conversation, as indexing
    numbers them, not by their place in the last ``max_history_len`` messages."""
    mem = Engram.from_settings(home=tmp_path, path=tmp_path / "memory.db", embeddings={"provider": "none"})
    try:
        for n, question in enumerate(QUESTIONS[:3]):
            mem.history.append("cli:old", "user", question, created_at=0)
            mem.history.append("cli:old", "assistant", f"Answer {n}: the first option.", created_at=0)
        transcripts.index(mem, "cli:old", mem.history.all("cli:old"))
    finally:
        mem.close()
    # Opened with a smaller window than the history was written with: it holds turns 2 and 3.
    mem = Engram.from_settings(home=tmp_path, path=tmp_path / "memory.db", embeddings={"provider": "none"},
                               history={"max_history_len": 4})
    try:
        mem.history.pop_newest("cli:old")
        held = {m.key: m.content.splitlines()[0] for m in mem.list(Filters(tags="transcript"), limit=10)}
        assert held == {"transcript:cli:old:1": f"User: {QUESTIONS[0]}", "transcript:cli:old:2": f"User: {QUESTIONS[1]}"}
    finally:
        mem.close()


def test_an_undo_after_the_first_turn_of_a_shared_time_was_trimmed_forgets_its_own_turn(tmp_path: Path) -> None:
    """Turns a caller gave one time were told apart by how many turns before them had it; once
    trimming discarded the first, the second took its identity: its undo forgot the trimmed
    turn's memory (which stays, as trimmed turns' memories do) and left the undone one recalled."""
    settings = {"home": tmp_path, "path": tmp_path / "memory.db", "embeddings": {"provider": "none"},
                "history": {"transcript_auto_index": True, "max_history_len": 4}}
    at = 1_790_000_000.0
    mem = Engram.from_settings(**settings)
    try:
        mem.history.append_many("cli:imp", [{"role": role, "content": said, "created_at": at}
                                            for n, question in enumerate(QUESTIONS[:2])
                                            for role, said in (("user", question), ("assistant", f"Answer {n}: the"
                                                                                    " first option, in the runbook."))])
        mem.history.append_many("cli:imp", [  # trims the first turn away
            {"role": "user", "content": QUESTIONS[2], "created_at": at + 10},
            {"role": "assistant", "content": "Answer 2: the first option, in the runbook.", "created_at": at + 11}])
    finally:
        mem.close()  # finishes the indexer's queue
    mem = Engram.from_settings(**settings)
    try:
        for _ in range(3):  # turn 3's answer and question, then turn 2's answer
            mem.history.pop_newest("cli:imp")
        assert [m.content for m in mem.history.all("cli:imp")] == [QUESTIONS[1]]
        held = {m.key: m.content.splitlines()[0] for m in mem.list(Filters(tags="transcript"))}
        assert held == {"transcript:cli:imp:1": f"User: {QUESTIONS[0]}"}
        # Indexing what is left again overwrites no other turn's memory.
        transcripts.index(mem, "cli:imp", mem.history.all("cli:imp"))
        held = {m.key: m.content.splitlines()[0] for m in mem.list(Filters(tags="transcript"))}
        assert held == {"transcript:cli:imp:1": f"User: {QUESTIONS[0]}", "transcript:cli:imp:2": f"User: {QUESTIONS[1]}"}
    finally:
        mem.close()


def test_a_turn_dated_ahead_of_the_clock_is_still_indexed_at_now(tmp_path: Path) -> None:
    # A history message's time is its client's; a memory may not be created later than now, so the
    # turn's memory is dated now rather than refused (and lost from the index).
    engram = Engram(SqliteMemoryStore(tmp_path / "memory.db"), clock=lambda: 1_770_000_000.0)
    ahead = 1_770_000_000.0 + 86_400
    messages = [make_message("user", QUESTIONS[0], created_at=ahead),
                make_message("assistant", "Answer: the first option.", created_at=ahead + 1)]
    transcripts.index(engram, "cli:b", messages)
    (turn,) = engram.list(limit=10)
    assert turn.key.startswith("transcript:")
    assert turn.created_at == 1_770_000_000.0
