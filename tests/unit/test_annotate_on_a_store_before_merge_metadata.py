"""``Engram.annotate`` on a plug-in memory store written before ``MemoryStore.merge_metadata``: the
values are written all the same, through an ordinary update (which stamps ``updated_at``, as that
store can do no other), and ``expect`` is still honoured; nothing raises ``AttributeError``."""

from __future__ import annotations

from typing import Any

from engram.engine import Engram
from engram.store.inmemory import InMemoryMemoryStore
from engram.testing.fakes import FakeClock


class _BeforeMergeMetadata(InMemoryMemoryStore):
    """A real in-memory store that, like a plug-in written before it, has no ``merge_metadata``."""

    def __getattribute__(self, name: str) -> Any:
        if name == "merge_metadata":
            raise AttributeError(name)
        return super().__getattribute__(name)


def test_annotate_falls_back_to_an_update_and_keeps_to_expect() -> None:
    clock = FakeClock()
    store = _BeforeMergeMetadata()
    assert not hasattr(store, "merge_metadata")
    mem = Engram(store, agent="alice", clock=clock)
    made = mem.remember("The deploy key rotates monthly", metadata={"a": 1}).memory
    clock.advance(60)
    assert mem.annotate(made, {"a": 2}, expect={"a": 5}) is None
    assert mem.get(made.id).metadata == {"a": 1}
    after = mem.annotate(made, {"b": "y"}, expect={"a": 1})
    assert after is not None and after.metadata == {"a": 1, "b": "y"} == mem.get(made.id).metadata
    assert mem.get(made.id).content == made.content
    assert mem.for_agent("bob").annotate(made, {"a": 99}) is None and mem.get(made.id).metadata["a"] == 1
    mem.close()
