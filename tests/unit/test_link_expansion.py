"""Link expansion on a dense graph in a SQLite file gives exactly what its definition says, at
depth 1-3: per hop at most ``limit`` neighbours, the parents taking turns in rank order, each
taking its newest visible neighbour not yet returned or taken; the hop reads grouped by parent,
each neighbour scored ``parent score x link_factor``. The expected hits are computed here from
the links as written, independently of the store's queries and of ``search.take_in_turns``."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from engram.config import RecallSettings
from engram.engine import Engram
from engram.store.sqlite import SqliteMemoryStore
from engram.testing.fakes import FakeClock


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_dense_graph_expansion_matches_its_definition(tmp_path: Path, depth: int) -> None:
    clock = FakeClock()
    settings = RecallSettings(cache_ttl_s=0)
    mem = Engram(SqliteMemoryStore(tmp_path / "graph.db"), agent="alice", clock=clock, recall_settings=settings)
    created: dict[str, float] = {}
    ids = []
    for i in range(80):
        clock.advance(1)
        memory = mem.remember(f"graph node {i} about topic {i % 7}").memory
        ids.append(memory.id)
        created[memory.id] = memory.created_at
    other = mem.for_agent("bob").remember("graph node of another agent").memory  # never visible to alice
    rng = random.Random(7)
    neighbours: dict[str, set[str]] = {i: set() for i in ids}
    while sum(len(n) for n in neighbours.values()) < 2 * 1200:
        a, b = rng.sample(ids, 2)
        mem.store.link(a, b)
        neighbours[a].add(b)
        neighbours[b].add(a)
    mem.store.link(ids[0], other.id)
    mem.store.link(ids[1], other.id)

    base = mem.recall("graph node topic", limit=10, mode="text", touch=False)
    result = mem.recall("graph node topic", depth=depth, limit=10, mode="text", touch=False)

    limit = 10
    newest_first = {i: sorted(n, key=lambda j: (created[j], j), reverse=True) for i, n in neighbours.items()}
    expected = [(h.memory.id, h.score, None) for h in base.hits]
    seen = {h.memory.id for h in base.hits}
    frontier = [(h.memory.id, h.score) for h in base.hits]
    for _ in range(depth):
        taken: dict[str, list[str]] = {parent: [] for parent, _ in frontier}
        count, progress = 0, True
        while count < limit and progress:
            progress = False
            for parent, _ in frontier:
                if count == limit:
                    break
                fresh = [n for n in newest_first[parent] if n not in seen]
                if fresh:
                    seen.add(fresh[0])
                    taken[parent].append(fresh[0])
                    count += 1
                    progress = True
        following = []
        for parent, score in frontier:
            for n in taken[parent]:
                expected.append((n, score * settings.link_factor, parent))
                following.append((n, score * settings.link_factor))
        frontier = following
    assert len(result.hits) <= limit * (depth + 1)
    assert [(h.memory.id, h.via) for h in result.hits] == [(i, via) for i, _, via in expected]
    assert [h.score for h in result.hits] == pytest.approx([s for _, s, _ in expected])
    # Each returned memory carries its own links, but never the id of bob's memory.
    for hit in result.hits:
        assert set(hit.memory.links) == neighbours[hit.memory.id]
    assert other.id not in {h.memory.id for h in result.hits}
    mem.close()
