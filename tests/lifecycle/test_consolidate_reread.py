"""A merge reads its group again inside its own write and merges what is stored then: another
process (here a second engine on the same database) changing or deleting a member after the group
was compared is neither overwritten nor merged as if nothing happened. It used to merge the
memories as ``run`` read them before the write: a tag added meanwhile was lost, and a member
deleted meanwhile was listed in the survivor's ``merged_from`` and its deletion told twice.
(``tests/postgres/test_consolidate_reread.py`` runs the same check on PostgreSQL.)"""

from __future__ import annotations

from pathlib import Path

from engram.engine import Engram
from engram.lifecycle import consolidate
from engram.store.sqlite import SqliteMemoryStore
from tests.lifecycle.conftest import Clock, FakeEmbedder


def a_merge_takes_its_group_as_stored_at_its_write(engram: Engram, other: Engram, clock: Clock) -> None:
    """The check, on ``engram`` and ``other``, two engines on one database (PostgreSQL's runs it too)."""
    store = engram.store

    def found(*memories: object) -> list:  # the group as ``run`` compared it, before the merge's write
        return store.get_many([m.id for m in memories])

    # A tag added to a member meanwhile is merged, not overwritten by the group read before it.
    survivor = engram.remember("the user prefers DARK MODE in the editor!", key="dark-mode", tags="prefs", importance=0.8).memory
    copy = engram.remember("The user prefers dark mode in the editor", tags="ui").memory
    group = found(survivor, copy)
    other.update(survivor.id, tags=["prefs", "work"])
    other.update(copy.id, importance=0.9)
    clock.advance(60)
    done = consolidate.merge(engram, group, now=clock.t)
    assert done is not None
    merged, removed = done
    assert [m.id for m in removed] == [copy.id]
    assert merged.id == survivor.id and set(merged.tags) == {"prefs", "work", "ui"}
    assert merged.importance == 0.9

    # A member deleted meanwhile: the group is left for the next run, nothing written.
    kept = engram.remember("The deploy window is on Friday mornings", key="deploy").memory
    gone = engram.remember("Deploy window: Friday mornings").memory
    group = found(kept, gone)
    other.forget(gone.id)
    assert consolidate.merge(engram, group, now=clock.t) is None
    assert store.get_many([kept.id]) == [kept] and store.get_many([gone.id]) == []

    # A member whose text changed meanwhile is another fact now: nothing merged either.
    first = engram.remember("The office cat is called Miso", key="cat").memory
    second = engram.remember("The office cat's name is Miso").memory
    group = found(first, second)
    changed = other.update(second.id, content="The office dog's name is Rex").memory
    assert consolidate.merge(engram, group, now=clock.t) is None
    assert store.get_many([first.id, second.id]) == [first, changed]


def test_a_merge_takes_its_group_as_stored_when_it_writes(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "memory.db"
    with (
        Engram(SqliteMemoryStore(path), clock=clock, embedder=FakeEmbedder()) as engram,
        Engram(SqliteMemoryStore(path), clock=clock, embedder=FakeEmbedder()) as other,
    ):
        a_merge_takes_its_group_as_stored_at_its_write(engram, other, clock)
