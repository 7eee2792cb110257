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
