"""An undo (``History.pop_newest``) of a turn already indexed as a memory: the scenario each
history backend runs (tests/unit/test_history_undo.py; PostgreSQL in tests/postgres/)."""

from __future__ import annotations

from collections.abc import Callable

from engram.engine import Engram

KEY = "cli:trip"
QUESTION = "Which airline should carry me to Lisbon next spring?"
ANSWER = "Fly with Zephyrair, the cheapest carrier to Lisbon in April."
BETTER = "Take the overnight train through Madrid, then a short flight to Lisbon."


def _turns(mem: Engram) -> dict[str, str]:
    return {m.key: m.content for m in mem.list(limit=50, scope="agent") if m.key and m.key.startswith("transcript:")}


def undone_answer_is_not_recalled(open_engine: Callable[[str], Engram]) -> None:
    """alice undoes an answer already indexed as her turn memory: recall no longer finds it, her
    next answer is indexed in its place, and bob's memory of the same conversation stays."""
    alice, bob = open_engine("alice"), open_engine("bob")
    try:
        for mem in (alice, bob):  # the same conversation, at the same times, for both agents
            mem.history.append(KEY, "user", QUESTION, created_at=1_790_000_000.0)
            mem.history.append(KEY, "assistant", ANSWER, created_at=1_790_000_005.0)
        # The undo does not wait for a queue of turns: the answer's turn may still be queued.
        assert alice.history.pop_newest(KEY).content == ANSWER
        assert [m.content for m in alice.history.all(KEY)] == [QUESTION]
        assert not [h for h in alice.recall("Zephyrair cheapest carrier") if "Zephyrair" in h.memory.content]
        assert _turns(alice) == {}
        # Answered again: the turn is indexed again, with the new answer.
        alice.history.append(KEY, "assistant", BETTER, created_at=1_790_000_009.0)
        alice.close()
        alice = open_engine("alice")
        assert list(_turns(alice).values()) == [f"User: {QUESTION}\nAgent: {BETTER}"]
        bob.close()
        bob = open_engine("bob")
        assert list(_turns(bob).values()) == [f"User: {QUESTION}\nAgent: {ANSWER}"]  # another agent's: untouched
    finally:
        alice.close()
        bob.close()


BATCH_KEY = "cli:batch"
TALK = [
    ("Which airline should carry me to Lisbon next spring?", "Fly with Zephyrair, the cheapest carrier in April."),
    ("What hotel near the Alfama district has a rooftop terrace?", "Try the Memmo Alfama, its pool overlooks the river."),
    ("Which museum shows the famous blue azulejo tiles?", "The National Tile Museum, east of the old centre."),
]


def _said(question: str, answer: str) -> str:
    return f"User: {question}\nAgent: {answer}"


def batch_turns_each_keep_a_memory(open_engine: Callable[[str], Engram]) -> None:
    """Two turns appended in one batch (the OpenAI Agents ``add_items`` path, an HTTP or MCP batch)
    are two memories, and undoing the second forgets it alone; turns that a caller gave one time
    (an import whose exchanges share a second) too."""
    mem = open_engine("alice")
    try:
        mem.history.append_many(BATCH_KEY, [{"role": role, "content": text} for q, a in TALK[:2]
                                            for role, text in (("user", q), ("assistant", a))])
        same = 1_790_000_000.0
        mem.history.append_many("cli:same", [{"role": role, "content": text, "created_at": same} for q, a in TALK
                                             for role, text in (("user", q), ("assistant", a))])
        mem.close()
        mem = open_engine("alice")  # the automatic indexer has finished its queue
        assert _turns(mem) == {f"transcript:{BATCH_KEY}:1": _said(*TALK[0]), f"transcript:{BATCH_KEY}:2": _said(*TALK[1]),
                               **{f"transcript:cli:same:{n}": _said(*TALK[n - 1]) for n in (1, 2, 3)}}
        mem.history.pop_newest(BATCH_KEY)
        mem.history.pop_newest("cli:same")
        assert _turns(mem) == {f"transcript:{BATCH_KEY}:1": _said(*TALK[0]),
                               **{f"transcript:cli:same:{n}": _said(*TALK[n - 1]) for n in (1, 2)}}
    finally:
        mem.close()
