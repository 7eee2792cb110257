"""The MemoryStore contract suite: every behaviour a backend must have, run unchanged on each.

Subclass ``MemoryStoreContract`` and provide a ``make_store`` fixture returning a callable that
opens a fresh, empty store (called again it must reopen the same data where the backend persists).
The tests go through ``Engram``, as users do, so they pin what users see. A backend whose storage
can be made to fail for real (a trigger, a full disk) also provides ``failing`` (see the fixture),
which runs the test that ``remember_many`` failing half-way leaves the store as it was.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from engram.engine import Engram, Filters
from engram.errors import DimensionError, EngramError, NotFoundError, SnapshotError, StorageError, ValidationError
from engram.events import MemoryEvent
from engram.ids import key_from_content
from engram.model import Category, Layer, Memory, MemoryFilter, Scope, changed_fields, make_draft
from engram.store.base import BatchWrite, ImportResult, ImportUpdate, KindCount, MemoryStore, SupersedeCycle
from engram.testing.fakes import FakeClock, HashingEmbedder
from engram.testing.temporal_contract import TemporalContract
from engram.where import Compare, Logic

# ``failing(store, content)``: a context in which ``store``'s storage itself fails to write the
# memory holding ``content`` (or the write that holds it), raising ``StorageError`` from the store.
Failing = Callable[[MemoryStore, str], AbstractContextManager[None]]


class MemoryStoreContract(TemporalContract):
    @pytest.fixture
    def make_store(self) -> Callable[[], MemoryStore]:  # pragma: no cover - subclasses provide it
        raise NotImplementedError

    @pytest.fixture
    def failing(self) -> Failing | None:
        """None: this backend cannot be made to fail a write (the tests needing it skip). A backend
        that can provides it (a trigger in the database, a file that cannot be written)."""
        return None

    @pytest.fixture
    def store(self, make_store: Callable[[], MemoryStore]) -> MemoryStore:
        store = make_store()
        yield store
        store.close()

    @pytest.fixture
    def clock(self) -> FakeClock:
        return FakeClock()

    @pytest.fixture
    def mem(self, store: MemoryStore, clock: FakeClock) -> Engram:
        return Engram(store, agent="alice", clock=clock, max_content_chars=500)

    # --- store, upsert, dedup ------------------------------------------------------------
    def test_remember_generates_key_and_get_by_key_or_id(self, mem: Engram) -> None:
        result = mem.remember("User prefers Python for scripting", tags=["preferences"])
        assert result.action == "created"
        memory = result.memory
        assert memory.key == "user-prefers-python-scripting"
        assert memory.category is Category.KNOWLEDGE and memory.layer is Layer.SEMANTIC
        assert mem.get(memory.key).id == memory.id
        assert mem.get(memory.id).content == "User prefers Python for scripting"
        assert mem.get(memory.id).tags == ("preferences",)
        assert mem.find("missing-key") is None
        with pytest.raises(NotFoundError):
            mem.get("missing-key")

    def test_identical_content_in_a_scope_is_stored_once(self, mem: Engram) -> None:
        first = mem.remember("The sky is blue")
        again = mem.remember("The   sky is blue")
        assert again.action == "duplicate" and again.memory.id == first.memory.id
        other_scope = mem.remember("The sky is blue", scope="global")
        assert other_scope.action == "created"
        assert mem.count() == 2

    def test_generated_keys_do_not_collide(self, mem: Engram) -> None:
        a = mem.remember("Python rocks").memory
        b = mem.remember("Python rocks!").memory
        assert a.key == "python-rocks" and b.key == "python-rocks-2"

    def test_templated_content_gets_each_suffix_in_turn_the_same_on_every_backend(self, mem: Engram) -> None:
        # Every text proposes "user-said-rains-today-city-turn" (its first six significant words).
        def said(i: int) -> str:
            return mem.remember(f"User said that it rains today in the city, turn {i}").memory.key

        base = "user-said-rains-today-city-turn"
        assert [said(i) for i in range(1, 41)] == [base, *(f"{base}-{n}" for n in range(2, 41))]
        batch = mem.remember_many([{"content": f"User said that it rains today in the city, turn {i}"} for i in (41, 42)])
        assert [result.memory.key for result in batch] == [f"{base}-41", f"{base}-42"]
        mem.forget(f"{base}-5")
        mem.forget(f"{base}-30")
        # A freed suffix among the first 16 is the next one; one further up is passed over by the
        # search (store/free_key.py), past the highest taken: the same keys on every backend.
        assert said(43) == f"{base}-5"
        assert said(44) == f"{base}-43"
        assert mem.count() == 42

    def test_upsert_by_key_updates_and_keeps_history(self, mem: Engram, clock: FakeClock) -> None:
        created = mem.remember("Project uses Python 3.11", key="python-version").memory
        clock.advance(60)
        updated = mem.remember("Project uses Python 3.12", key="python-version", importance=0.9)
        assert updated.action == "updated"
        assert updated.memory.id == created.id
        assert updated.memory.created_at == created.created_at
        assert updated.memory.updated_at == created.created_at + 60
        assert mem.get("python-version").content == "Project uses Python 3.12"
        assert [v.content for v in mem.versions("python-version")] == ["Project uses Python 3.11"]
        same = mem.remember("Project uses Python 3.12", key="python-version", importance=0.9)
        assert same.action == "unchanged"
        assert mem.count() == 1

    def test_an_update_answers_with_the_memory_as_it_was(self, mem: Engram, clock: FakeClock) -> None:
        # The audit trail names what an update changed from this (``changed_fields``).
        events: list[MemoryEvent] = []
        mem.subscribe(events.append)
        assert mem.remember("Deploys run on Fridays", key="deploy", tags=["ops", "ci"],
                            related_entity="ci").previous is None
        clock.advance(60)
        result = mem.update("deploy", tags=["ops"], related_entity="jenkins")
        assert result.action == "updated" and result.previous is not None
        assert (result.previous.tags, result.previous.related_entity) == (("ops", "ci"), "ci")
        assert changed_fields(result.previous, result.memory) == ("tags", "related_entity")
        assert events[-1].kind == "updated" and events[-1].before(result.memory) == result.previous
        [many] = mem.remember_many([{"content": "Deploys run on Mondays", "key": "deploy", "importance": 0.9}])
        assert many.previous is not None and many.previous.content == "Deploys run on Fridays"
        assert {"content", "importance"} <= set(changed_fields(many.previous, many.memory))
        assert mem.update("deploy", importance=0.9).previous is None  # unchanged

    def test_type_routes_layer_unless_given(self, mem: Engram) -> None:
        assert mem.remember("I fetched the weather", type="experience").memory.layer is Layer.EPISODIC
        assert mem.remember("PHP supports type hints", type="learned").memory.layer is Layer.SEMANTIC
        assert mem.remember("Deploy with make release", type="procedure").memory.layer is Layer.PROCEDURAL
        given = mem.remember("Odd one", type="experience", layer="semantic").memory
        assert given.layer is Layer.SEMANTIC and given.type == "experience"

    # --- scopes --------------------------------------------------------------------------
    def test_agents_never_see_each_other(self, mem: Engram) -> None:
        mem.remember("Alice's secret plan", key="plan")
        bob = mem.for_agent("bob")
        assert bob.find("plan") is None
        assert bob.count() == 0
        assert len(bob.recall("secret plan")) == 0
        assert bob.list() == []
        with pytest.raises(NotFoundError):
            bob.forget("plan")
        assert mem.count() == 1

    def test_links_show_only_memories_the_reader_may_read(self, mem: Engram, store: MemoryStore) -> None:
        # Alice and Bob each link a memory of their own to one global memory: its stored links
        # name both, but neither agent may learn the other's memory, not even its id.
        shared = mem.remember("shared office wifi password rotation", key="wifi", scope="global").memory
        alices = mem.remember("alice keeps the wifi router manual", key="manual", links=["wifi"]).memory
        bob = mem.for_agent("bob")
        bobs = bob.remember("bob suspects the wifi router", key="suspect", links=["wifi"]).memory
        session = mem.for_session("s1")
        private = session.remember("session scratch about wifi", key="scratch", scope="session", links=["wifi"]).memory
        assert set(store.get_many([shared.id])[0].links) == {alices.id, bobs.id, private.id}  # the store holds all
        for view, own, hidden in ((mem, {alices.id}, {bobs.id, private.id}), (bob, {bobs.id}, {alices.id, private.id}),
                                  (session, {alices.id, private.id}, {bobs.id})):
            seen = [view.get("wifi"), view.find(shared.id), *view.list(), *view.list(scope="global"),
                    *view.recall("wifi", depth=1, touch=False).memories, *view.neighbours(next(iter(own))),
                    view.remember("shared office wifi password rotation", key="wifi", scope="global").memory,
                    view.update("wifi", importance=0.6).memory, *view.forget(query="wifi password", dry_run=True),
                    *(r.memory for r in view.remember_many(
                        [{"content": "shared office wifi password rotation", "key": "wifi", "scope": "global"}]))]
            shown = [m for m in seen if m.id == shared.id]
            assert len(shown) >= 9 and all(set(m.links) == own for m in shown), view.scope
            assert not hidden & {i for m in seen for i in m.links}
            exported = json.loads(view.export_snapshot())["memories"]
            assert shared.id in {entry["id"] for entry in exported}
            assert not hidden & {i for entry in exported for i in entry["links"]}
        # Forgetting returns what was forgotten as its reader saw it.
        gone = bob.forget(shared.id)
        assert [m.id for m in gone] == [shared.id] and gone[0].links == (bobs.id,)

    def test_move_changes_the_scope_in_place_keeping_history_vector_and_links_within_one_agent(
            self, store: MemoryStore, clock: FakeClock) -> None:
        bob = Engram(store, agent="bob", clock=clock, embedder=HashingEmbedder())
        alice = bob.for_agent("alice")
        moved = bob.remember("the boiler needs bleeding in october", key="boiler").memory
        clock.advance(5)
        moved = bob.remember("the boiler needs bleeding in november", key="boiler").memory
        bob.recall("boiler bleeding")
        bobs = bob.remember("bob's radiator key is in the drawer", key="radiator", links=["boiler"]).memory
        shared = bob.remember("the flat's heating contract", key="heating", scope="global", links=["boiler"]).memory
        alices = alice.remember("alice's own boiler note", key="boiler").memory  # the key the move meets
        session = alice.for_session("s1").remember("alice's session scratch", key="scratch", scope="session").memory
        before = store.get_many([moved.id])[0]
        vector = store.vectors_for([moved.id])[moved.id]

        after = store.move(moved.id, Scope("alice"))

        assert after is not None and after.id == moved.id and after.scope == Scope("alice")
        assert after.key == "boiler-2" and store.get_many([alices.id])[0].key == "boiler"  # the key held: a free one
        assert (after.content, after.created_at, after.updated_at, after.last_accessed, after.recall_count) == (
            before.content, before.created_at, before.updated_at, before.last_accessed, before.recall_count)
        assert after.recall_count == 1
        assert [v.content for v in store.versions(moved.id)] == ["the boiler needs bleeding in october"]
        assert np.allclose(store.vectors_for([moved.id])[moved.id], vector)
        # bob's memory would join two agents: that link goes, both ways; the global one's stays.
        assert after.links == (shared.id,)
        assert store.get_many([bobs.id])[0].links == ()
        assert store.get_many([shared.id])[0].links == (moved.id,)
        assert alice.get(moved.id).key == "boiler-2" and bob.find(moved.id) is None
        assert [m.id for m in alice.recall("bleeding november", touch=False).memories] == [moved.id]
        assert bob.recall("bleeding november", touch=False).memories == []
        # Into a session of alice's, then global: links to her own memories and global ones are kept.
        alice.link(moved.id, alices.id)
        assert set(store.move(moved.id, Scope("alice", "s1")).links) == {shared.id, alices.id}
        assert store.move(moved.id, Scope()).scope == Scope() and store.get_many([moved.id])[0].key == "boiler-2"
        assert store.move(moved.id, Scope()) == store.get_many([moved.id])[0]  # already there: nothing changes
        assert store.move("no-such-id", Scope("alice")) is None and store.get_many([session.id])[0].links == ()

    def test_move_refuses_to_hide_a_successor_from_the_memory_it_supersedes(
            self, store: MemoryStore, clock: FakeClock) -> None:
        bob = Engram(store, agent="bob", clock=clock, embedder=HashingEmbedder())
        old = bob.remember("the boiler is grey", key="old").memory
        new = bob.remember("the boiler is red", key="new").memory
        shared = bob.remember("the flat's boiler is old", key="flat", scope="global").memory
        bob.supersede(old.id, new.id)
        bob.supersede(shared.id, bob.remember("the flat's boiler is new", key="flat2", scope="global").memory.id)
        for moved, to in ((new.id, Scope("alice")), (old.id, Scope("alice")), (new.id, Scope("bob", "s1")),
                          (store.get_many([shared.id])[0].superseded_by, Scope("bob"))):
            with pytest.raises(ValidationError, match="cannot see") as refused:
                store.move(moved, to)
            assert refused.value.field == "scope"
        assert [m.scope for m in store.get_many([old.id, new.id, shared.id])] == [Scope("bob"), Scope("bob"), Scope()]
        # A successor moved where the memory it supersedes still sees it: moved.
        assert store.move(old.id, Scope("bob", "s1")).scope == Scope("bob", "s1")

    def test_move_many_moves_a_superseded_memory_with_its_successor_as_one(
            self, store: MemoryStore, clock: FakeClock) -> None:
        bob = Engram(store, agent="bob", clock=clock, embedder=HashingEmbedder())
        alice = bob.for_agent("alice")
        old = bob.remember("the boiler is grey", key="old").memory
        new = bob.remember("the boiler is red", key="new", links=["old"]).memory
        bob.supersede(old.id, new.id)
        alices = alice.remember("alice's own note", key="new").memory  # the key the move meets
        # x superseded by y, y by z: y moved without z is refused, and x, whose successor y then stays bob's, too.
        x, y, z = (bob.remember(f"the tap {how}", key=k).memory for how, k in (("drips", "x"), ("leaks", "y"), ("works", "z")))
        bob.supersede(x.id, y.id)
        bob.supersede(y.id, z.id)
        stays = bob.remember("bob's own note", key="stays").memory

        moved = store.move_many({old.id: Scope("alice"), new.id: Scope("alice"), x.id: Scope("alice"),
                                 y.id: Scope("alice"), stays.id: Scope("bob"), "no-such-id": Scope("alice")})

        assert set(moved) == {old.id, new.id, x.id, y.id, stays.id}
        assert moved[old.id].scope == moved[new.id].scope == Scope("alice")
        assert moved[new.id].key == "new-2" and store.get_many([alices.id])[0].key == "new"
        # Linked, they stay linked: the link is judged by the scopes after the whole group moved.
        assert moved[old.id].links == (new.id,) and moved[new.id].links == (old.id,)
        assert (moved[old.id].superseded_by, moved[new.id].superseded_by) == (new.id, None)
        for refused in (x.id, y.id):
            assert isinstance(moved[refused], ValidationError) and moved[refused].field == "scope"
            assert "cannot see" in str(moved[refused])
        assert moved[stays.id] == store.get_many([stays.id])[0]  # already there: unchanged
        assert [m.scope for m in store.get_many([x.id, y.id, z.id, stays.id])] == [Scope("bob")] * 4
        assert alice.get(old.id).superseded_by == new.id and alice.get(new.id).key == "new-2"
        assert bob.find(old.id) is None and bob.find(new.id) is None
        # Either one moved alone (back to bob) is still refused; both together go back.
        for one in (old.id, new.id):
            with pytest.raises(ValidationError, match="cannot see"):
                store.move(one, Scope("bob"))
        back = store.move_many({new.id: Scope("bob"), old.id: Scope("bob")})
        assert [back[i].scope for i in (old.id, new.id)] == [Scope("bob"), Scope("bob")]
        assert store.move_many({}) == {}

    def test_visible_stats_count_only_what_the_view_reads(self, store: MemoryStore, clock: FakeClock) -> None:

        mem = Engram(store, agent="alice", clock=clock, embedder=HashingEmbedder())
        mem.remember("alice tea note", key="tea")
        mem.remember("alice cup note", key="cup", links=["tea"], type="decision", category="core")
        mem.remember("a rule for everyone", key="rule", scope="global", links=["tea"])
        mem.for_session("s1").remember("alice scratch", key="scratch", scope="session")
        bob = mem.for_agent("bob")
        bob.remember("bob note one", key="b1", links=["rule"])
        bob.remember("bob note two", key="b2", links=["b1"])
        seen = mem.visible_stats()
        assert (seen.agent, seen.memories, seen.links, seen.vectors) == ("alice", 3, 2, 3)
        assert seen.by_category == {"core": 1, "knowledge": 2, "conversation": 0}
        assert seen.by_type == {"decision": 1, "learned": 2}
        assert seen.by_scope == {"agent:alice": 2, "global": 1, "session:alice/s1": 1}
        assert seen.embedding_coverage == 1.0 and seen.embedding_identity == "test:hashing:64"
        bobs = bob.visible_stats()
        assert (bobs.memories, bobs.links, bobs.vectors) == (3, 2, 3)  # rule-tea is half alice's: not bob's to count
        assert bobs.by_scope == {"agent:bob": 2, "global": 1}
        assert store.stats().memories == 6 and store.stats().links == 4  # the operator's view holds all
        # The one pass those figures come from: by scope, category and type, with the vectors,
        # for exactly the filter's scopes; and the sessions that pass is asked about.
        counted = store.count_by_kind(MemoryFilter(scopes=(Scope("alice"), Scope("alice", "s1"))))
        assert sorted(counted, key=str) == sorted([
            KindCount(Scope("alice"), "knowledge", "learned", 1, 1), KindCount(Scope("alice"), "core", "decision", 1, 1),
            KindCount(Scope("alice", "s1"), "knowledge", "learned", 1, 1)], key=str)
        assert store.sessions_of("alice") == ["s1"] and store.sessions_of("bob") == [] and store.sessions_of("zed") == []
        assert store.location() == store.stats().location

    def test_visible_stats_leave_out_superseded_and_count_vectors_present(
        self, store: MemoryStore, clock: FakeClock
    ) -> None:
        embedder = HashingEmbedder()
        mem = Engram(store, agent="alice", clock=clock, embedder=embedder)
        old = mem.remember("the office is on floor two", key="office").memory
        new = mem.remember("the office moved to floor five", key="office-now").memory
        store.set_superseded(old.id, new.id, now=clock())
        embedder.fail = True  # stored without a vector (the embedder is down)
        mem.remember("a plan kept without a vector", key="plan", type="recipe")
        embedder.fail = False
        s2 = mem.for_session("s2")
        s2.remember("scratch in s2", key="x2", scope="session", links=["office-now"])
        s2.remember("gone from s2", key="y2", scope="session")
        store.set_superseded(s2.get("y2").id, new.id, now=clock())
        mem.for_session("s3").remember("only superseded in s3", key="z3", scope="session")
        store.set_superseded(mem.for_session("s3").get("z3").id, new.id, now=clock())
        seen = mem.visible_stats()
        assert (seen.memories, seen.vectors, seen.links) == (2, 1, 0)
        assert seen.by_type == {"learned": 1, "other": 1} and seen.by_scope == {"agent:alice": 2, "session:alice/s2": 1}
        in_s2 = s2.visible_stats()
        assert (in_s2.memories, in_s2.vectors, in_s2.links) == (3, 2, 1)
        assert in_s2.by_scope == seen.by_scope and in_s2.session == "s2"
        assert store.sessions_of("alice") == ["s2", "s3"]  # s3 holds a superseded memory only
        counted = store.count_by_kind(MemoryFilter(scopes=(Scope("alice", "s3"),), include_superseded=True))
        assert counted == [KindCount(Scope("alice", "s3"), "knowledge", "learned", 1, 1)]
        assert store.count_by_kind(MemoryFilter(scopes=(Scope("alice", "s3"),))) == []

    def test_store_stats_name_scopes_and_categories_in_order(self, store: MemoryStore, clock: FakeClock) -> None:
        # The operator's view (engram stats --all-agents) lists them the same way on every backend;
        # PostgreSQL's GROUP BY answered in hash order, the in-memory stores in order of storing.
        mem = Engram(store, agent="zed", clock=clock)
        mem.remember("a note", key="n", category="knowledge")
        mem.for_agent("bob").remember("a chat line", key="c", category="conversation")
        mem.for_session("s1").remember("a scratch", key="s", scope="session", category="core")
        mem.remember("a rule", key="r", scope="global")
        mem.for_agent("alice").remember("another note", key="n")
        whole = store.stats()
        assert list(whole.by_scope.items()) == [
            ("agent:alice", 1), ("agent:bob", 1), ("agent:zed", 1), ("global", 1), ("session:zed/s1", 1)]
        assert list(whole.by_category.items()) == [("conversation", 1), ("core", 1), ("knowledge", 3)]

    def test_recall_finds_own_memory_under_many_better_matches_of_others(self, mem: Engram) -> None:
        bob = mem.for_agent("bob")
        bob.remember_many({"content": f"apple apple apple note {i}"} for i in range(300))
        mine = mem.remember("an apple pie recipe with cinnamon, butter, flour, sugar and a long slow bake").memory
        assert [h.memory.id for h in mem.recall("apple", limit=5)] == [mine.id]

    def test_session_sees_session_agent_and_global(self, mem: Engram) -> None:
        mem.remember("global fact about tea", scope="global")
        mem.remember("agent fact about tea")
        session = mem.for_session("s1")
        session.remember("session fact about tea", scope="session")
        assert session.count() == 3
        assert {h.memory.scope.kind for h in session.recall("tea fact")} == {"global", "agent", "session"}
        assert mem.count() == 2  # the agent does not see its sessions' memories
        assert mem.for_session("s2").count() == 2
        assert mem.for_agent("bob").count() == 1  # only global

    def test_most_specific_key_wins(self, mem: Engram) -> None:
        mem.remember("global value", key="k", scope="global")
        mem.remember("agent value", key="k")
        session = mem.for_session("s1")
        session.remember("session value", key="k", scope="session")
        assert session.get("k").content == "session value"
        assert mem.get("k").content == "agent value"
        assert mem.for_agent("bob").get("k").content == "global value"

    # --- listing -------------------------------------------------------------------------
    def test_metadata_conditions(self, mem: Engram) -> None:
        # Filters(where=...): mem0's operators and logic on the metadata (engram.where), the same
        # answers on every backend as the reference (MemoryFilter.matches).
        rows = {
            "a": {"category": "work", "priority": 7, "status": "open", "title": "Weekly Meeting notes",
                  "tags": ["urgent", "Q3"], "due": "2024-03-01"},
            "b": {"category": "personal", "priority": 9.5, "status": "archived", "title": "gym",
                  "tags": ["health"], "due": "2024-01-15", "city": "école", "road": "Straße"},
            "c": {"category": "work", "priority": "high", "status": None, "title": "Ärger im BÜRO"},
            "d": {"category": "travel", "priority": True, "flag": 1, "seen": ["ΣΊΣΥΦΟΣ", "MASSE"]},
            "e": {},
        }
        for key, metadata in rows.items():
            mem.remember(f"memory {key}", key=key, metadata=metadata)

        def keys(where: dict[str, Any]) -> list[str]:
            listed = sorted(m.key for m in mem.list(Filters(where=where)))
            assert mem.count(Filters(where=where)) == len(listed)
            return listed

        assert keys({"category": "work"}) == ["a", "c"]
        assert keys({"category": "*"}) == ["a", "b", "c", "d"]  # present, whatever the value
        assert keys({"status": "*"}) == ["a", "b", "c"]  # null is a value
        assert keys({"status": None}) == ["c"]
        assert keys({"category": {"eq": "work"}, "status": {"ne": "open"}}) == ["c"]
        assert keys({"status": {"ne": "archived"}}) == ["a", "c", "d", "e"]  # a missing key is not equal
        assert keys({"category": {"in": ["work", "travel"]}}) == ["a", "c", "d"]
        assert keys({"category": {"nin": ["work", "travel"]}}) == ["b", "e"]
        assert keys({"priority": {"gte": 7}}) == ["a", "b"]  # numbers only: not "high", not true
        assert keys({"priority": {"gt": 7, "lte": 9.5}}) == ["b"]
        assert keys({"priority": {"lt": 7.5}}) == ["a"]
        assert keys({"priority": {"in": [7, True]}}) == ["a", "d"]
        assert keys({"flag": True}) == [] and keys({"flag": 1}) == ["d"]  # true is not 1
        assert keys({"priority": 7.0}) == []  # equality is the JSON value's: 7 is not 7.0
        assert keys({"due": {"gte": "2024-02-01"}}) == ["a"]  # strings by code point
        assert keys({"priority": {"gt": "a"}}) == ["c"]
        assert keys({"title": {"contains": "Meeting"}}) == ["a"]
        assert keys({"title": {"contains": "meeting"}}) == []
        assert keys({"title": {"icontains": "meeting"}}) == ["a"]
        # icontains folds case as str.casefold does, beyond ASCII and into longer spellings, on
        # every backend (SQLite's lower() folds A-Z only, PostgreSQL's follows the collation).
        assert keys({"title": {"icontains": "büro"}}) == ["c"]
        assert keys({"city": {"icontains": "ÉCOLE"}}) == ["b"]
        assert keys({"road": {"icontains": "STRASSE"}}) == keys({"road": {"icontains": "straße"}}) == ["b"]
        assert keys({"road": {"icontains": "sse"}}) == ["b"] and keys({"road": {"contains": "sse"}}) == []
        assert keys({"seen": {"icontains": "σίσυφος"}}) == ["d"]  # a list element: final sigma folds too
        assert keys({"seen": {"icontains": "maße"}}) == ["d"] and keys({"seen": {"icontains": "mass"}}) == []
        assert keys({"title": {"icontains": "Ärger IM"}}) == ["c"]
        assert keys({"tags": {"contains": "urgent"}}) == ["a"]  # a list holding it
        assert keys({"tags": {"contains": "urg"}}) == []
        assert keys({"tags": {"icontains": "q3"}}) == ["a"]
        assert keys({"tags": ["urgent", "Q3"]}) == ["a"]
        assert keys({"AND": [{"category": "work"}, {"priority": {"gte": 5}}, {"status": {"ne": "done"}}]}) == ["a"]
        assert keys({"OR": [{"category": "travel"}, {"priority": {"gte": 9}}]}) == ["b", "d"]
        assert keys({"NOT": [{"category": "work"}, {"status": "archived"}]}) == ["d", "e"]
        assert keys({"AND": [{"OR": [{"category": "work"}, {"category": "personal"}]},
                             {"NOT": [{"status": "archived"}]}]}) == ["a", "c"]
        assert keys({"category": "work", "OR": [{"title": {"icontains": "notes"}}, {"status": None}]}) == ["a", "c"]
        # Beside the other filters, and in a recall as in a list.
        assert [m.key for m in mem.list(Filters(metadata={"status": "open"}, where={"priority": {"gt": 1}}))] == ["a"]
        assert [h.memory.key for h in mem.recall("memory", filters=Filters(where={"priority": {"gte": 9}}))] == ["b"]
        for where, field in [({"priority": {"like": 1}}, "where.priority"),
                             ({"AND": []}, "where.AND"),
                             ({"OR": [{"a": 1}, "b"]}, "where.OR[1]"),
                             ({"priority": {"gt": True}}, "where.priority.gt"),
                             ({"priority": {"in": "abc"}}, "where.priority.in"),
                             ({"priority": {"in": b"\x01\x09"}}, "where.priority.in"),  # not the list [1, 9]
                             ({"priority": {"nin": bytearray(b"\x01")}}, "where.priority.nin"),
                             ({"title": {"contains": 3}}, "where.title.contains"),
                             ({"x": float("nan")}, "where.x")]:
            with pytest.raises(ValidationError) as err:
                mem.list(Filters(where=where))
            assert err.value.field == field, where
        with pytest.raises(ValidationError) as err:
            mem.list(Filters(where={"priority": {"like": 1}}))
        assert '"like"' in str(err.value) and "icontains" in str(err.value)  # names it and what is allowed

    def test_a_condition_within_an_object_of_the_metadata(self, mem: Engram) -> None:
        # Compare.within: a test of a value inside an object of the metadata (the mem0 facade finds a
        # memory by the mem0 id at metadata["mem0"]["id"]), the same answers on every backend as the
        # reference; a value not reached down the path (no such key, not an object) is missing.
        rows = {
            "a": {"mem0": {"id": "m-1", "n": 5, "tags": ["x"]}, "id": "m-2"},
            "b": {"mem0": {"id": "m-2", "n": 5.5, "deep": {"id": "m-1"}}},
            "c": {"mem0": "m-1", "mem0.id": "m-1"},
            "d": {"mem0": {"id": None}},
            "e": {"mem0": ["m-1"]},
            # Keys a SQL literal must quote: an equality with a string writes its path into the SQL
            # (so an expression index can answer it: store.where_sql), never as a parameter.
            "f": {"it's 100%\\": {'"q"': "m-1", "%s": "m-1"}},
        }
        for key, metadata in rows.items():
            mem.remember(f"memory {key}", key=key, metadata=metadata)

        def keys(cond: Compare | Logic) -> list[str]:
            listed = sorted(m.key for m in mem.store.list(MemoryFilter(scopes=mem.scope.visible(), where=cond)))
            assert listed == sorted(k for k, metadata in rows.items() if cond.matches(metadata))
            return listed

        assert keys(Compare("mem0", "eq", "m-1", within=("id",))) == ["a"]
        assert keys(Compare("mem0", "in", ("m-2", None), within=("id",))) == ["b", "d"]
        assert keys(Compare("mem0", "exists", within=("id",))) == ["a", "b", "d"]
        assert keys(Compare("mem0", "eq", 5, within=("n",))) == ["a"]
        assert keys(Compare("mem0", "gt", 5, within=("n",))) == ["b"]
        assert keys(Compare("mem0", "contains", "x", within=("tags",))) == ["a"]
        assert keys(Compare("mem0", "eq", "m-1", within=("deep", "id"))) == ["b"]
        assert keys(Logic("not", (Compare("mem0", "eq", "m-1", within=("id",)),))) == ["b", "c", "d", "e", "f"]
        assert keys(Compare("mem0.id", "eq", "m-1")) == ["c"]  # a key with a dot is one key
        assert keys(Compare("it's 100%\\", "eq", "m-1", within=('"q"',))) == ["f"]
        assert keys(Compare("it's 100%\\", "in", ("m-1", "m-2"), within=("%s",))) == ["f"]
        assert keys(Compare("mem0", "eq", "m-1", within=("0",))) == []  # a list has no keys, "0" neither

    def test_a_filter_of_many_scopes_reads_those_scopes_alone(self, mem: Engram) -> None:
        # Past filter_sql.MANY_SCOPES a SQL store writes the scopes as one list (an operator's read
        # of every agent's, as the mem0 facade's lookup by mem0 id): the same answer as the reference.
        stored = {}
        for n in range(14):
            view = mem.for_agent(f"a{n}")
            stored[Scope(f"a{n}")] = view.remember(f"agent {n} note", key="note", metadata={"n": n}).memory.id
            stored[Scope(f"a{n}", "s")] = view.for_session("s").remember(f"agent {n} session note", key="note",
                                                                         scope="session").memory.id
        stored[Scope()] = mem.remember("a global note", key="note", scope="global").memory.id
        for scopes in ([Scope(f"a{n}") for n in range(12)] + [Scope("a3", "s"), Scope()],
                       [Scope(f"a{n}", "s") for n in range(0, 14, 2)] + [Scope("a1"), Scope("nobody"), Scope("a5", "t")]):
            filt = MemoryFilter(scopes=tuple(scopes))
            listed = mem.store.list(filt, limit=100)
            assert sorted(m.id for m in listed) == sorted(stored[s] for s in scopes if s in stored)
            assert mem.store.count(filt) == len(listed)
            narrowed = MemoryFilter(scopes=tuple(scopes), where=Compare("n", "eq", 3))
            assert [m.id for m in mem.store.list(narrowed)] == [stored[Scope("a3")]] * (Scope("a3") in scopes)

    def test_metadata_is_where_equality_by_text_form(self, mem: Engram) -> None:
        # Filters(metadata=...) is where's equality on text forms (engram.where): a value typed at
        # a text door (--meta n=5) carries no type, so 5 and "5" match alike there; where keeps types.
        mem.remember("a number", key="num", metadata={"n": 5, "on": True, "star": "*", "AND": "x", "nan": "NaN"})
        mem.remember("a text", key="txt", metadata={"n": "5", "on": "true"})

        def keys(**given: Any) -> list[str]:
            listed = sorted(m.key for m in mem.list(Filters(**given)))
            assert mem.count(Filters(**given)) == len(listed)
            return listed

        assert keys(metadata={"n": 5}) == keys(metadata={"n": "5"}) == keys(where={"n": {"in": [5, "5"]}}) == ["num", "txt"]
        assert keys(where={"n": 5}) == ["num"] and keys(where={"n": "5"}) == ["txt"]
        assert keys(metadata={"on": "true"}) == keys(metadata={"on": True}) == ["num", "txt"]
        assert keys(metadata={"n": 5.0}) == []  # 5.0's text is not 5's, as where's 5.0 is not 5
        # No operators in metadata: "*" is a value and AND a key; "NaN" is text, not a number.
        assert keys(metadata={"star": "*"}) == keys(metadata={"AND": "x"}) == keys(metadata={"nan": "NaN"}) == ["num"]
        assert keys(metadata={"n": 5}, where={"on": True}) == ["num"]
        # where as JSON text (the CLI and HTTP pass it so), read as the mapping is.
        assert keys(where='{"n": {"gte": 5}}') == ["num"]
        for given, field in [({"metadata": {"n": {1, 2}}}, "metadata.n"), ({"metadata": {"n": float("nan")}}, "metadata.n"),
                             ({"metadata": "n=5"}, "metadata"), ({"where": '{"n": '}, "where"),
                             ({"where": '{"n": 1, "n": 2}'}, "where"), ({"where": '{"n": {"gte": true}}'}, "where.n.gte"),
                             ({"where": "[1]"}, "where")]:
            with pytest.raises(ValidationError) as err:
                mem.list(Filters(**given))
            assert err.value.field == field, given

    def test_list_filters_and_pagination(self, mem: Engram, clock: FakeClock) -> None:
        mem.remember("core identity", category="core", importance=0.9)
        clock.advance(10)
        mem.remember("met Hendrik at the conference", type="social", related_entity="Hendrik",
                     tags=["people", "work"], metadata={"source_chat": "c1", "turn": 3})
        clock.advance(10)
        mem.remember("chat line", category="conversation", tags=["work"])
        assert [m.content for m in mem.list(Filters(category="core"))] == ["core identity"]
        assert [m.type for m in mem.list(Filters(type="social"))] == ["social"]
        assert len(mem.list(Filters(tags=["work"]))) == 2
        assert len(mem.list(Filters(tags=["work", "people"]))) == 1
        assert len(mem.list(Filters(related_entity="Hendrik"))) == 1
        assert len(mem.list(Filters(metadata={"source_chat": "c1"}))) == 1
        assert len(mem.list(Filters(metadata={"turn": 3}))) == 1
        assert mem.list(Filters(metadata={"source_chat": "nope"})) == []
        assert len(mem.list(Filters(layer="episodic"))) == 1  # conversation routes to episodic
        start = clock.now - 20
        assert len(mem.list(Filters(since=start + 5))) == 2
        assert len(mem.list(Filters(until=start + 5))) == 1
        assert [m.content for m in mem.list(limit=1)] == ["chat line"]
        assert [m.content for m in mem.list(limit=1, offset=1)] == ["met Hendrik at the conference"]
        assert [m.content for m in mem.list(order="oldest", limit=1)] == ["core identity"]
        assert mem.most_important(1)[0].content == "core identity"
        assert mem.most_recent(1)[0].content == "chat line"
        assert mem.count(Filters(category="conversation")) == 1

    def test_related_entity_filter_ignores_case(self, mem: Engram) -> None:
        # A name matches however it was typed, by full case folding (engram.where.fold_case) on every
        # backend (SQLite's lower() folds A-Z only), as the PHP entity's MySQL collation compared it;
        # the stored name stays as written. A key is an identifier: it stays exact.
        for content, entity in (("tea with the first", "Alice"), ("tea with the second", "ALICE"),
                                ("tea on the street", "Straße"), ("tea with the third", "Bob")):
            mem.remember(content, related_entity=entity)

        def entities(name: str) -> list[str | None]:
            return sorted(m.related_entity for m in mem.list(Filters(related_entity=name)))

        assert entities("alice") == entities("Alice") == entities("aLICE") == ["ALICE", "Alice"]
        assert entities("STRASSE") == entities("straße") == ["Straße"]
        assert entities("bob") == ["Bob"]
        assert entities("ali") == entities("strase") == []  # equal once folded, not a part of it
        assert mem.count(Filters(related_entity="alice")) == 2
        hits = mem.recall("tea", filters=Filters(related_entity="alice"), touch=False).hits
        assert sorted(h.memory.related_entity for h in hits) == ["ALICE", "Alice"]
        doomed = mem.forget(query="tea", filters=Filters(related_entity="BOB"), dry_run=True)
        assert [m.related_entity for m in doomed] == ["Bob"]
        assert sorted(m.related_entity for m in mem.list()) == ["ALICE", "Alice", "Bob", "Straße"]
        key = mem.list(Filters(related_entity="bob"))[0].key
        assert key != key.upper() and mem.store.list(MemoryFilter(scopes=mem.scope.visible(), key=key.upper())) == []

    def test_list_ties_come_newest_stored_first_in_every_order(self, mem: Engram) -> None:
        # Same time, importance and access: each order's last tie-break is the order of storing, the
        # later first (oldest: the earlier), as SQLite's rowid and PostgreSQL's seq give it.
        stored = [mem.remember(f"tied memory {word}", importance=0.5).memory.id for word in ("one", "two", "three")]
        for order in ("recent", "importance", "accessed"):
            assert [m.id for m in mem.list(order=order)] == stored[::-1], order
        assert [m.id for m in mem.list(order="oldest")] == stored

    # --- recall --------------------------------------------------------------------------
    def test_recall_finds_by_words_and_explains(self, mem: Engram) -> None:
        mem.remember("User prefers Python for scripting", tags=["preferences"])
        mem.remember("The office plant needs water on Mondays")
        result = mem.recall("which scripting language does the user prefer")
        assert result.hits and result.hits[0].memory.content == "User prefers Python for scripting"
        top = result.hits[0]
        # Text is scaled by the query's ceiling (a memory holding every query word once), capped at 1.
        assert 0 < top.parts.text <= 1.0 and top.score > 0
        assert all(h.memory.content != "The office plant needs water on Mondays" or h.score < top.score for h in result)

    def test_recall_never_breaks_on_operator_soup(self, mem: Engram) -> None:
        mem.remember("Meeting notes about the NEAR protocol and AND gates")
        for query in ['"unbalanced', "NEAR(a b", "AND OR NOT", "-*", "a:b", "(((", "col:value ^2", "' OR 1=1 --",
                      "日本語のテキスト", "*", "x"]:
            result = mem.recall(query)
            assert result.mode in ("text", "hybrid", "vector")
        assert mem.recall("NEAR AND").hits[0].memory.content.startswith("Meeting notes")
        with pytest.raises(ValidationError) as err:
            mem.recall("   ")
        assert err.value.field == "query"

    def test_single_letter_queries_fall_back_to_substrings(self, mem: Engram) -> None:
        # PtrClaw: "Falls back to `LIKE` when FTS yields no results or all tokens are single-char."
        mem.remember("Plan B is the fallback")
        mem.remember("x y z axes of the plot")
        mem.remember("The cat sat on the mat")
        assert [h.memory.content for h in mem.recall("b")] == ["Plan B is the fallback"]
        assert [h.memory.content for h in mem.recall("x")] == ["x y z axes of the plot"]
        assert len(mem.recall("q")) == 0

    def test_substring_matches_that_tie_come_back_in_one_order_on_every_backend(self, mem: Engram) -> None:
        # Same substring hits and the same time: the newer id first (SQLite and PostgreSQL left
        # such ties to each engine's whim).
        stored = [mem.remember(f"plan {name} for b", created_at=1.7e9).memory.id for name in ("one", "two", "three")]
        assert [h.memory.id for h in mem.recall("b")] == sorted(stored, reverse=True)

    def test_recall_says_when_nothing_is_relevant(self, mem: Engram) -> None:
        mem.remember("Cats sleep a lot")
        result = mem.recall("quantum chromodynamics")
        assert len(result) == 0
        assert any(note.startswith("nothing relevant") for note in result.notes)

    def test_recall_filters_limit_and_min_relevance(self, mem: Engram) -> None:
        for i in range(8):
            mem.remember(f"python tip number {i}", category="conversation" if i % 2 else "knowledge")
        assert len(mem.recall("python tip", limit=3)) == 3
        assert {h.memory.category for h in mem.recall("python tip", filters=Filters(category="knowledge"))} == {
            Category.KNOWLEDGE
        }
        assert all(h.score >= 0.9 for h in mem.recall("python tip", min_relevance=0.9))
        for cut in (1.01, -0.1, float("nan"), "0.5"):  # scores run 0-1: a cut outside is refused, not empty
            with pytest.raises(ValidationError) as refused:
                mem.recall("python tip", min_relevance=cut)  # type: ignore[arg-type]
            assert refused.value.field == "min_relevance"

    def test_recall_cache_never_serves_stale_results(self, mem: Engram, store: MemoryStore) -> None:
        mem.remember("Tea is best with milk", key="tea")
        first = mem.recall("tea milk")
        assert [h.memory.key for h in first] == ["tea"]
        token = store.change_token()
        assert mem.recall("tea milk").hits[0].memory.key == "tea"
        if token is not None:  # recording a recall is not a change of content
            assert store.change_token() == token
        mem.remember("Tea with milk and honey", key="tea2")
        assert {h.memory.key for h in mem.recall("tea milk")} == {"tea", "tea2"}
        mem.forget("tea")
        assert [h.memory.key for h in mem.recall("tea milk")] == ["tea2"]
        mem.remember("Coffee", key="coffee")
        mem.link("tea2", "coffee")
        assert [h.memory.key for h in mem.recall("tea milk", depth=1)] == ["tea2", "coffee"]
        mem.unlink("tea2", "coffee")
        assert [h.memory.key for h in mem.recall("tea milk", depth=1)] == ["tea2"]

    def test_recall_marks_memories_accessed(self, mem: Engram, clock: FakeClock) -> None:
        stored = mem.remember("Remember the milk").memory
        clock.advance(100)
        mem.recall("milk")
        again = mem.get(stored.id)
        assert again.recall_count == 1 and again.last_accessed == clock.now
        mem.recall("milk", touch=False)
        assert mem.get(stored.id).recall_count == 1

    def test_recall_depth_follows_links(self, mem: Engram) -> None:
        mem.remember("User prefers Python", key="user-prefers-python")
        mem.remember("Current project uses version 3.12", key="project-version", links=["user-prefers-python"])
        flat = mem.recall("prefers Python")
        assert [h.memory.key for h in flat] == ["user-prefers-python"]
        deep = mem.recall("prefers Python", depth=1)
        assert [h.memory.key for h in deep] == ["user-prefers-python", "project-version"]
        assert deep.hits[1].via == deep.hits[0].memory.id
        assert 0 < deep.hits[1].score < deep.hits[0].score and deep.hits[1].parts.link > 0

    def test_neighbours_newest_first_and_matching_ids(self, mem: Engram, store: MemoryStore, clock: FakeClock) -> None:
        for name in ("hub", "a", "b", "c", "lone"):
            clock.advance(1)
            mem.remember(f"memory {name}", key=name, tags=["odd"] if name == "b" else [])
        for other in ("a", "b", "c"):
            mem.link("hub", other)
        mem.link("a", "b")
        ids = {name: mem.get(name).id for name in ("hub", "a", "b", "c", "lone")}
        visible = MemoryFilter(scopes=Scope("alice").visible())
        # Newest first, at most ``limit``.
        assert [m.key for m in store.neighbours(ids["hub"], visible, limit=2)] == ["c", "b"]
        assert [m.key for m in store.neighbours(ids["a"], visible)] == ["b", "hub"]
        assert store.neighbours(ids["lone"], visible) == [] and store.neighbours("no-such-id", visible) == []
        narrowed = MemoryFilter(scopes=Scope("alice").visible(), tags=("odd",))
        assert [m.key for m in store.neighbours(ids["hub"], narrowed)] == ["b"]
        # Which ids the filter lets through, with their dates; no row is needed for that.
        assert store.matching_ids([ids["a"], ids["b"], "no-such-id"], narrowed) == {ids["b"]: mem.get("b").created_at}
        assert set(store.matching_ids(list(ids.values()), visible)) == set(ids.values())
        assert store.matching_ids([ids["a"]], MemoryFilter(scopes=(Scope("bob"),))) == {}
        assert store.matching_ids([], visible) == {}
        # Through recall: three hops along a chain.
        mem.remember("zebra start", key="z0")
        for i in range(1, 4):
            mem.remember(f"step {i}", key=f"z{i}", links=[f"z{i - 1}"])
        deep = mem.recall("zebra", depth=3)
        assert [h.memory.key for h in deep] == ["z0", "z1", "z2", "z3"]
        assert [h.via for h in deep][1:] == [deep.hits[0].memory.id, deep.hits[1].memory.id, deep.hits[2].memory.id]

    def test_each_hop_adds_at_most_limit_neighbours_parents_taking_turns(self, mem: Engram, clock: FakeClock) -> None:
        # Two hits; "apple" links five memories, "apricot" two (one shared with "apple"). Each hop
        # adds at most ``limit`` neighbours: the hits take turns best first, each its newest not
        # yet taken, and the hop reads grouped by parent. The same answer on every backend.
        mem.remember("orchard apple", key="apple", importance=1.0)
        mem.remember("orchard apricot from the far south field", key="apricot", importance=0.2)
        for i in range(5):
            clock.advance(1)
            mem.remember(f"note {i}", key=f"n{i}", links=["apple"])
        clock.advance(1)
        mem.remember("pit", key="pit", links=["apricot"])
        mem.link("apricot", "n4")  # apple's newest neighbour too
        for i in range(4):
            clock.advance(1)
            mem.remember(f"leaf {i}", key=f"leaf{i}", links=["n3"])

        def keys(limit: int, depth: int) -> list[str]:
            return [h.memory.key for h in mem.recall("orchard", limit=limit, depth=depth, touch=False)]

        assert keys(2, 0) == ["apple", "apricot"]
        # Turn 1: apple takes n4; apricot's newest is n4, taken, so it takes pit.
        assert keys(2, 1) == ["apple", "apricot", "n4", "pit"]
        # Turn 2 from apple (n3) fills the third place; grouped by parent: apple's, then apricot's.
        assert keys(3, 1) == ["apple", "apricot", "n4", "n3", "pit"]
        unbounded = keys(20, 1)
        assert unbounded[:2] == ["apple", "apricot"] and sorted(unbounded[2:]) == ["n0", "n1", "n2", "n3", "n4", "pit"]
        # Hop 2 is bounded too: n3's four leaves (n4 and pit have no new neighbours) give three.
        assert keys(3, 2) == ["apple", "apricot", "n4", "n3", "pit", "leaf3", "leaf2", "leaf1"]
        deep = mem.recall("orchard", limit=3, depth=2, touch=False)
        assert len(deep) <= 3 * (2 + 1)
        vias = {h.memory.key: h.via for h in deep}
        assert vias["n4"] == vias["n3"] == mem.get("apple").id and vias["pit"] == mem.get("apricot").id
        assert vias["leaf3"] == vias["leaf2"] == vias["leaf1"] == mem.get("n3").id

    def test_search_context_helps_find_without_being_content(self, mem: Engram) -> None:
        turn = mem.remember("Bob: Yes, it was beautiful!",
                           search_context="Alice: Did you see the fireworks over the harbour last night?").memory
        mem.remember("The harbour fireworks start at nine", key="schedule")
        assert mem.get(turn.id).search_context.startswith("Alice: Did you see")
        hits = mem.recall("fireworks harbour")
        assert [h.memory.key for h in hits][:2] == ["schedule", turn.key]  # its own words outrank context
        assert mem.forget(query="fireworks harbour", dry_run=True)[0].key == "schedule"  # only own words count
        changed = mem.remember("Bob: Yes, it was beautiful!", key=turn.key, search_context="Alice: the concert?")
        assert changed.action == "updated" and mem.versions(turn.key) == []  # content unchanged: no version
        assert [h.memory.key for h in mem.recall("concert")] == [turn.key]
        with pytest.raises(ValidationError) as err:
            mem.remember("x", search_context="y" * 1001)
        assert err.value.field == "search_context"

    def test_superseded_memories_drop_out_unless_asked(self, mem: Engram, store: MemoryStore) -> None:
        old = mem.remember("User lives in Berlin").memory
        new = mem.remember("User lives in Paris").memory
        assert store.set_superseded(old.id, new.id)
        assert [h.memory.id for h in mem.recall("where does the user live")] == [new.id]
        assert len(mem.list(Filters(include_superseded=True))) == 2
        assert mem.get(old.id).superseded_by == new.id

    def test_a_memory_names_those_it_supersedes(self, mem: Engram, store: MemoryStore) -> None:
        # The other way along superseded_by (MemoryFilter.superseded_by): what the page shows as
        # "supersedes", each to open.
        berlin, rome, paris = (mem.remember(f"User lives in {city}").memory for city in ("Berlin", "Rome", "Paris"))
        assert mem.supersedes(paris.id) == []
        assert store.set_superseded(berlin.id, paris.id) and store.set_superseded(rome.id, paris.id)
        assert [m.id for m in mem.supersedes(paris.id)] == [berlin.id, rome.id]
        assert [m.id for m in mem.supersedes(key=paris.key, limit=1)] == [berlin.id]
        assert mem.supersedes(berlin.id) == [] and mem.supersedes(rome) == []
        with pytest.raises(NotFoundError):  # another agent's view: not found, nothing listed
            mem.for_agent("bob").supersedes(paris.id)

    def test_the_store_refuses_a_supersede_cycle_in_its_write(self, mem: Engram, store: MemoryStore) -> None:
        # The check is the store's, in the write's transaction: a cycle two racing supersedes would
        # close past a check made before the write (tests/unit/test_supersede_race.py races them).
        a, b, c = (mem.remember(f"The office opens at {hour}").memory for hour in ("eight", "nine", "ten"))
        assert store.set_superseded(a.id, b.id, now=1.0) and store.set_superseded(b.id, c.id, now=1.0)
        for old, new in ((b.id, a.id), (c.id, a.id), (c.id, c.id)):
            with pytest.raises(SupersedeCycle) as cycle:
                store.set_superseded(old, new, now=2.0)
            assert cycle.value.field == "supersede" and (cycle.value.memory_id, cycle.value.successor_id) == (old, new)
        assert [mem.get(m.id).superseded_by for m in (a, b, c)] == [b.id, c.id, None]
        assert mem.get(c.id).valid_until is None  # nothing changed
        assert store.set_superseded(a.id, c.id, now=2.0)  # a successor further down the chain is no cycle

    def test_annotate_sets_metadata_and_changes_nothing_else(self, mem: Engram, store: MemoryStore, clock: FakeClock,
                                                             make_store: Callable[[], MemoryStore]) -> None:
        made = mem.remember("The deploy key rotates monthly", key="rotation", metadata={"a": 1, "b": "x"}).memory
        other = mem.remember("The backup runs nightly", key="backup", metadata={"b": "y"}).memory
        assert [h.memory.key for h in mem.recall("deploy key", filters=Filters(metadata={"b": "y"}))] == []
        seen: list[MemoryEvent] = []
        mem.subscribe(seen.append)
        clock.advance(3600)
        after = mem.annotate(made, {"b": "y", "c": [1, {"d": None}]})
        assert after is not None and after.metadata == {"a": 1, "b": "y", "c": [1, {"d": None}]}
        stored = mem.get(made.id)
        assert stored.metadata == after.metadata
        assert (stored.updated_at, stored.last_accessed, stored.content, stored.recall_count) == (
            made.updated_at, made.last_accessed, made.content, made.recall_count)
        assert mem.versions(made.id) == [] and seen == []  # not a change: no version, no event (no audit row)
        # What reads the metadata sees it at once (a recall cached before it is not answered again).
        assert [h.memory.key for h in mem.recall("deploy key", filters=Filters(metadata={"b": "y"}))] == ["rotation"]
        # ``expect`` is checked in the write: nothing written unless the stored metadata holds it.
        assert mem.annotate(made, {"a": 2}, expect={"a": 5}) is None
        assert mem.annotate(made, {"a": 2}, expect={"missing": None}) is None
        assert mem.get(made.id).metadata["a"] == 1
        assert mem.annotate(made, {"a": 2}, expect={"a": 1, "b": "y"}).metadata["a"] == 2  # type: ignore[union-attr]
        assert mem.get(other.id).metadata == {"b": "y"}  # the other memory is left alone
        assert store.merge_metadata("no-such-id", {"a": 1}) is None
        # Another agent's memory, handed in as a record, is neither changed nor shown.
        assert mem.for_agent("bob").annotate(stored, {"a": 99}) is None
        assert mem.get(made.id).metadata["a"] == 2
        for bad, field in (({"x": float("nan")}, "metadata"), ("not json", "metadata"), ({"x": "\x00"}, "metadata")):
            with pytest.raises(ValidationError) as refused:
                mem.annotate(made, bad)  # type: ignore[arg-type]
            assert refused.value.field == field
        with pytest.raises(ValidationError) as refused:
            mem.annotate(made, {"a": 3}, expect=["a"])  # type: ignore[arg-type]
        assert refused.value.field == "expect"
        # An id is no Memory: refused naming it, where it was "not stored" (None) without a word.
        with pytest.raises(ValidationError) as refused:
            mem.annotate(made.id, {"a": 3})  # type: ignore[arg-type]
        assert refused.value.field == "memory"
        # ``expect`` holds for the same JSON value only: true is not 1 (Python's ``True == 1`` let a
        # stored 1 hold ``{"f": true}``), nor 1 true, nor "1" the number 1, in a list too.
        assert mem.annotate(made, {"f": 1, "g": True}) is not None
        for wrong in ({"f": True}, {"g": 1}, {"f": "1"}, {"c": [True, {"d": None}]}, {"g": 1.0}):
            assert mem.annotate(made, {"a": 3}, expect=wrong) is None, wrong
        assert mem.get(made.id).metadata["a"] == 2
        assert mem.annotate(made, {"f": None, "g": None}, expect={"f": 1, "g": True, "c": [1, {"d": None}]}) is not None
        assert mem.get(made.id).metadata == {"a": 2, "b": "y", "c": [1, {"d": None}], "f": None, "g": None}
        reopened = make_store()  # what is kept (the file, the database) holds it too; a store in memory opens empty
        try:
            kept = reopened.get_many([made.id])
            assert not kept or (kept[0].metadata["a"], kept[0].updated_at) == (2, made.updated_at)
        finally:
            reopened.close()

    # --- forgetting ----------------------------------------------------------------------
    def test_forget_by_key_id_query_tag_and_age(self, mem: Engram, clock: FakeClock) -> None:
        a = mem.remember("old note about gardening").memory
        clock.advance(10 * 86400)
        b = mem.remember("tagged note", tags=["tmp"]).memory
        mem.remember("another tagged note", tags=["tmp", "x"])
        mem.remember("python packaging tips for today")
        mem.remember("python typing tips")
        assert [m.id for m in mem.forget(older_than_s=5 * 86400)] == [a.id]
        assert {m.content for m in mem.forget(tag="tmp", dry_run=True)} == {"tagged note", "another tagged note"}
        assert mem.count() == 4
        assert len(mem.forget(tag="tmp")) == 2
        removed = mem.forget(query="python packaging")
        assert [m.content for m in removed] == ["python packaging tips for today"]
        kept = mem.remember("keep me", key="keep").memory
        assert [m.id for m in mem.forget("keep")] == [kept.id]
        with pytest.raises(NotFoundError):  # b went with its tag
            mem.forget(b.id)
        assert [m.content for m in mem.list()] == ["python typing tips"]
        with pytest.raises(ValidationError):
            mem.forget()
        with pytest.raises(ValidationError):
            mem.forget("x", tag="y")

    def test_a_query_of_stopwords_matches_them_as_whole_words(self, mem: Engram) -> None:
        # "he" is a word of "He said yes" and of none of the others, though "mother" and "theory"
        # hold it: forget selects memories holding every query word, never a substring of one.
        for content in ("My mother called", "Category theory notes", "He said yes", "He got the job at noon"):
            mem.remember(content)
        assert sorted(m.content for m in mem.forget(query="he", dry_run=True)) == [
            "He got the job at noon", "He said yes"]
        assert [m.content for m in mem.forget(query="he at", dry_run=True)] == ["He got the job at noon"]
        assert [m.content for m in mem.forget(query="he got", dry_run=True)] == ["He got the job at noon"]
        assert mem.forget(query="of", dry_run=True) == []
        assert mem.count() == 4
        # Recall of stopwords ranks the memories holding them as words: none that merely contain them.
        assert [h.memory.content for h in mem.recall("the a of")] == ["He got the job at noon"]

    def test_forget_by_query_needs_every_word_however_short_or_common(self, mem: Engram) -> None:
        # Ranked search leaves out one-letter words, stopwords beside other words and words past its
        # cap; forget selecting by what was left removed memories missing them ("plan b" forgot
        # "Plan A is cheap"). A memory is forgotten only when it holds every word of the query.
        mem.remember("Plan A is cheap")
        mem.remember("Plan B is fast")
        mem.remember("python rocks")
        mem.remember("the python book")
        many = ("alpha bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike november "
                "oscar papa quebec romeo sierra tango uniform victor whiskey xray")
        mem.remember(many, key="twenty-four")
        mem.remember(f"{many} yankee", key="twenty-five")
        assert [m.content for m in mem.forget(query="plan b", dry_run=True)] == ["Plan B is fast"]
        assert [m.content for m in mem.forget(query="B", dry_run=True)] == ["Plan B is fast"]
        assert [m.content for m in mem.forget(query="the python", dry_run=True)] == ["the python book"]
        assert [m.key for m in mem.forget(query=f"{many} yankee", dry_run=True)] == ["twenty-five"]
        assert mem.forget(query=f"{many} yankee zulu", dry_run=True) == []
        # A query of no word at all would select nothing whatever is stored: refused, naming it.
        for nothing in ("*", "++ --", '"'):
            with pytest.raises(ValidationError) as refused:
                mem.forget(query=nothing)
            assert refused.value.field == "query" and "no word" in str(refused.value), nothing
        assert [m.content for m in mem.forget(query="plan b")] == ["Plan B is fast"]
        assert mem.count() == 5

    def test_forget_by_query_matches_words_as_written_not_their_stems(self, mem: Engram) -> None:
        # Full text stems on SQLite and PostgreSQL ("organization" and "organ" share the stem
        # "organ"); a forget removed what held a word of the same stem, and the in-memory and JSON
        # stores did not. Every backend now removes only memories holding each word itself.
        for content in ("The organization moved", "the organ plays", "Pythonic code", "python rocks",
                        "meetings were moved"):
            mem.remember(content)
        assert [m.content for m in mem.forget(query="organ", dry_run=True)] == ["the organ plays"]
        assert [m.content for m in mem.forget(query="python", dry_run=True)] == ["python rocks"]
        assert mem.forget(query="meeting", dry_run=True) == []
        assert sorted(m.content for m in mem.forget(query="MOVED", dry_run=True)) == [
            "The organization moved", "meetings were moved"]
        assert [m.content for m in mem.forget(query="organ")] == ["the organ plays"]
        assert mem.count() == 4

    def test_dotted_numbers_are_searched_as_their_words(self, mem: Engram) -> None:
        # "3.12" is the words "3" and "12", in the query as in the memory, on every backend.
        mem.remember("Upgraded the build to python 3.12 today")
        mem.remember("python 3.13 is out")
        result = mem.recall("python 3.12")
        assert result.hits[0].memory.content == "Upgraded the build to python 3.12 today"
        assert result.hits[0].parts.text == pytest.approx(1.0, abs=0.35)
        assert [m.content for m in mem.forget(query="python 3.12", dry_run=True)] == [
            "Upgraded the build to python 3.12 today"]
        assert [m.content for m in mem.forget(query="build.python", dry_run=True)] == [
            "Upgraded the build to python 3.12 today"]

    def test_diacritics_are_folded_as_fts5_folds_them(self, mem: Engram) -> None:
        # SQLite's FTS5 (unicode61) reads a Latin letter with one diacritic as its base letter, in
        # the memory as in the query, and keeps letters that are not one (æ, ø): every backend too.
        mem.remember("Met José at the café on Tuesday", key="cafe-meeting")
        mem.remember("Jose prefers tea to coffee")
        mem.remember("A naïve plan for the ferry to Ærø")
        mem.remember("Cafe\u0301 au lait")  # decomposed: e and a combining acute accent
        assert sorted(h.memory.content for h in mem.recall("cafe")) == [
            "Cafe\u0301 au lait", "Met José at the café on Tuesday"]
        assert sorted(h.memory.content for h in mem.recall("CAFÉ")) == [
            "Cafe\u0301 au lait", "Met José at the café on Tuesday"]
        assert sorted(h.memory.content for h in mem.recall("José")) == [
            "Jose prefers tea to coffee", "Met José at the café on Tuesday"]
        assert [h.memory.content for h in mem.recall("naive")] == ["A naïve plan for the ferry to Ærø"]
        assert [h.memory.content for h in mem.recall("NAÏVE")] == ["A naïve plan for the ferry to Ærø"]
        assert [h.memory.content for h in mem.recall("ærø")] == ["A naïve plan for the ferry to Ærø"]
        assert mem.forget(query="aero", dry_run=True) == []  # Æ and ø are letters of their own, as on FTS5
        assert [m.content for m in mem.forget(query="jose cafe", dry_run=True)] == ["Met José at the café on Tuesday"]
        assert sorted(m.content for m in mem.forget(query="josé", dry_run=True)) == [
            "Jose prefers tea to coffee", "Met José at the café on Tuesday"]
        assert mem.count() == 4

    def test_a_query_of_common_words_finds_every_memory_holding_one(self, mem: Engram, store: MemoryStore) -> None:
        # A query of nothing but common words keeps them all ("he also", "we got"), and each is
        # searched, whether or not a backend's own stopword list would drop it ("he" and "we" are
        # PostgreSQL stopwords, "also" and "got" are not). The rarer word weighs more, as in BM25.
        for content in ("He said yes", "He also came", "we got it done", "the cat sat", "My mother called"):
            mem.remember(content)
        assert sorted(h.memory.content for h in mem.recall("he also")) == ["He also came", "He said yes"]
        assert mem.recall("he also").hits[0].memory.content == "He also came"
        assert sorted(h.memory.content for h in mem.recall("he got")) == [
            "He also came", "He said yes", "we got it done"]
        assert mem.recall("he got").hits[0].memory.content == "we got it done"
        ranked = store.search_text("the he", mem._filter(), limit=10)
        assert [m.content for m, _ in ranked][0] == "the cat sat"  # "the" is in one memory, "he" in two
        assert ranked[0][1] > ranked[1][1]
        assert store.text_score_ceiling("the he") is not None
        assert [m.content for m in mem.forget(query="he also", dry_run=True)] == ["He also came"]

    def test_a_word_repeated_hundreds_of_times_is_counted_in_full(self, store: MemoryStore, clock: FakeClock) -> None:
        # PostgreSQL's tsvector keeps at most 255 positions of a word and none past position 16383;
        # FTS5 counts every occurrence. Two memories of the same length, one saying the word more
        # often, the other stored first: the more frequent one ranks first (a backend counting only
        # up to a cap would tie them, and a tie goes to the first stored).
        mem = Engram(store, agent="alice", clock=clock, max_content_chars=200_000)
        for n in range(8):
            mem.remember(f"unrelated note {n}")
        fewer = " ".join(["zebra"] * 300 + [f"w{n}" for n in range(100)])
        more = " ".join(["zebra"] * 400)
        far = " ".join([f"w{n}" for n in range(17_000)] + ["okapi"])
        farther = " ".join([f"w{n}" for n in range(16_991)] + ["okapi"] * 10)
        for key, content in (("fewer", fewer), ("more", more), ("far", far), ("farther", farther)):
            clock.advance(1)
            mem.remember(content, key=key)  # a generated key would repeat the word a different number of times
        assert [m.content for m, _ in store.search_text("zebra", mem._filter(), limit=10)] == [more, fewer]
        assert [m.content for m, _ in store.search_text("okapi", mem._filter(), limit=10)] == [farther, far]
        assert [m.content for m in mem.forget(query="okapi", dry_run=True)] == [far, farther]
        assert {m.content for m in mem.list(limit=20)} >= {fewer, more, far, farther}

    RARE_CHARACTERS = (
        ("We need more co\u00adoperation between teams", "operation"),  # soft hyphen
        ("The hello\u200dworld build", "world"),  # zero-width joiner
        ("zero\u200bwidth\u200cnon\u2060joiner space", "width"),  # zero-width space, non-joiner, word joiner
        ("Keep the under\u0332line style", "line"),  # a combining mark FTS5 does not fold: a break
        ("s\u0336trike the old plan", "trike"),
        ("\uff21\uff23\uff2d\uff25 quarterly report", "\uff41\uff43\uff4d\uff45"),  # full-width letters
        ("party\U0001f389time with the team \U0001f468\u200d\U0001f469\u200d\U0001f467", "time"),  # emoji, ZWJ family
        ("the rose\u2764\ufe0fgarden opens", "garden"),  # emoji with a variation selector
        ("E equals mc\u00b2 said the note", "equals"),  # superscript digit
    )

    def test_rare_characters_split_words_as_fts5_and_round_trip(self, mem: Engram) -> None:
        # Each memory is found by the same word on every backend, as SQLite's FTS5 (unicode61)
        # splits its words: soft hyphens, zero-width characters, combining marks it does not fold
        # and emoji are breaks between words. Content comes back as stored, character for character.
        # (Keys are given: a generated key spells the content's words apart, and keys are searched.)
        ids = {content: mem.remember(content, key=f"rare-{n}").memory.id
               for n, (content, _) in enumerate(self.RARE_CHARACTERS)}
        for content, word in self.RARE_CHARACTERS:
            assert mem.get(ids[content]).content == content
            assert [m.content for m in mem.forget(query=word, dry_run=True)] == [content], word
            assert mem.recall(word).hits[0].memory.content == content, word
        assert [h.memory.content for h in mem.recall("\uff21\uff23\uff2d\uff25")] == [self.RARE_CHARACTERS[5][0]]
        assert mem.count() == len(self.RARE_CHARACTERS)

    # --- links ---------------------------------------------------------------------------
    def test_a_superseded_neighbour_is_listed_marked_and_can_be_unlinked(self, mem: Engram) -> None:
        # A link to a memory superseded since is still a link: its ``links`` and ``link_keys`` name
        # it, so ``neighbours`` lists it too (its superseded_by set), to see and to unlink; recall
        # still leaves it out, through link expansion too.
        cats = mem.remember("Alice keeps two cats", key="cats").memory
        porto = mem.remember("Alice lives in Porto with her cats", key="porto").memory
        lisbon = mem.remember("Alice lives in Lisbon", key="lisbon").memory
        assert mem.link(cats, porto) is True
        mem.supersede(porto, lisbon)
        assert mem.get("cats").links == (porto.id,) and mem.link_keys([mem.get("cats")]) == [["porto"]]
        listed = mem.neighbours("cats")
        assert [(m.id, m.superseded_by) for m in listed] == [(porto.id, lisbon.id)]
        assert mem.neighbours("cats", include_superseded=False) == []
        assert [m.id for m in mem.neighbours("porto")] == [cats.id]
        assert porto.id not in {m.id for m in mem.recall("cats", depth=1, touch=False).memories}
        assert mem.unlink("cats", listed[0]) is True
        assert mem.neighbours("cats") == [] and mem.get("porto").links == ()

    def test_links_are_bidirectional_and_cleaned_on_forget(self, mem: Engram) -> None:
        mem.remember("A", key="a")
        mem.remember("B", key="b")
        mem.remember("C", key="c")
        a = mem.get("a")  # read before the link: its links are stale once linked
        assert mem.link(a, "b") is True
        assert mem.link("a", "c") is True
        # Linking what is already linked changes nothing, and says so, whichever end comes first
        # and even through a Memory read before the link.
        assert mem.link(a, "b") is False and mem.link("b", "a") is False
        assert {m.key for m in mem.neighbours("a")} == {"b", "c"}
        assert [m.key for m in mem.neighbours("b")] == ["a"]
        assert mem.get("b").links == (mem.get("a").id,)
        assert mem.unlink("a", "c") is True
        assert mem.unlink("a", "c") is False
        assert [m.key for m in mem.neighbours("c")] == []
        mem.forget("a")
        assert mem.neighbours("b") == [] and mem.get("b").links == ()
        with pytest.raises(NotFoundError):
            mem.link("b", "nowhere")
        with pytest.raises(ValidationError):
            mem.link("b", "b")
        with pytest.raises(NotFoundError) as missing:  # named as a link: not the memory being stored
            mem.remember("D", key="d", links=["b", "nowhere"])
        assert str(missing.value) == 'memory named by links[1] not found: "nowhere"'
        assert mem.find("d") is None

    def test_a_key_equal_to_another_memorys_id_is_found_by_one_query_on_the_key(
            self, mem: Engram, monkeypatch: pytest.MonkeyPatch) -> None:
        # The store's get reads an id first; the key's own memory is then asked for by a filter on
        # the key (indexed), not found by reading every visible memory.
        for n in range(30):
            mem.remember(f"filler fact number {n}", key=f"filler-{n}")
        first = mem.remember("the first", key="first").memory
        session = mem.for_session("s1")
        shadow = session.remember("named after an id, in the session", key=first.id, scope="session").memory
        agent_shadow = mem.remember("named after an id, for the agent", key=first.id).memory
        listed: list[MemoryFilter] = []
        real = mem.store.list
        monkeypatch.setattr(mem.store, "list", lambda filt, **kw: listed.append(filt) or real(filt, **kw))
        assert session.get_by_key(first.id).id == shadow.id  # the most specific scope first
        assert mem.get_by_key(first.id).id == agent_shadow.id and mem.get(first.id).id == first.id
        assert listed and all(f.key == first.id for f in listed)
        assert mem.for_agent("bob").find(first.id) is None
        with pytest.raises(NotFoundError):
            mem.for_agent("bob").get_by_key(first.id)
        scopes = (mem.scope, *session.scope.visible())
        assert mem.store.count(MemoryFilter(scopes=scopes, key=first.id)) == 2
        assert mem.store.count(MemoryFilter(scopes=scopes, key="filler-3")) == 1
        assert mem.store.count(MemoryFilter(scopes=scopes, key="nothing")) == 0

    def test_link_unlink_supersede_and_neighbours_take_either_end_by_key(self, mem: Engram) -> None:
        # A key equal to another memory's id: a bare ref reads the id first, an explicit key the key.
        first = mem.remember("the first", key="first").memory
        shadow = mem.remember("named after an id", key=first.id).memory
        other = mem.remember("the other", key="other").memory
        mem.link(a_key=first.id, b_key="other")
        assert [m.id for m in mem.neighbours(key=first.id)] == [other.id]
        assert mem.neighbours(first.id) == [] and [m.id for m in mem.neighbours("other")] == [shadow.id]
        assert mem.unlink(other.id, b_key=first.id) is True and mem.neighbours(key="other") == []
        mem.link(first.id, b_key=first.id)  # the id's memory and the key's: two different ones
        assert [m.id for m in mem.neighbours(first.id)] == [shadow.id]
        closed = mem.supersede(old_key=first.id, new_key="other")
        assert closed.id == shadow.id and closed.superseded_by == other.id
        assert mem.get(first.id).superseded_by is None
        # Bad input names the end and changes nothing; another agent resolves none of alice's keys.
        for call, field, named in (
            (lambda: mem.link("other", b_key="other", b="first"), "link", "b, b_key"),
            (lambda: mem.unlink("other"), "unlink", "b, b_key"),
            (lambda: mem.supersede(new_key="other"), "supersede", "old_ref, old_key"),
            (lambda: mem.neighbours(), "neighbours", "ref, key"),
            (lambda: mem.link(a_key="", b="other"), "a_key", "a memory id or key"),
        ):
            with pytest.raises(ValidationError) as err:
                call()
            assert err.value.field == field and named in str(err.value), str(err.value)
        with pytest.raises(NotFoundError) as missing:
            mem.link(a="other", b_key="no-such-key")
        assert "b_key" in str(missing.value) and "no-such-key" in str(missing.value)
        bob = mem.for_agent("bob")
        bob.remember("bob's own", key="bobs")
        for call in (lambda: bob.link(a_key="other", b="bobs"), lambda: bob.unlink("bobs", b_key=first.id),
                     lambda: bob.supersede(old_key="other", new_ref="bobs"), lambda: bob.neighbours(key="other")):
            with pytest.raises(NotFoundError):
                call()
        assert mem.find("bobs") is None and bob.get("bobs").links == () and bob.get("bobs").superseded_by is None
        assert mem.get("other").links == () and mem.get("other").superseded_by is None

    def test_memories_a_view_gave_are_taken_as_found_and_only_its_own(self, mem: Engram,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
        # A door resolves each end (its errors name its own arguments) and passes the memory on:
        # link, unlink, neighbours, supersede and forget do not look it up again.
        tea, coffee, milk, sugar = (mem.remember(f"{word} in the cupboard", key=word).memory
                                    for word in ("tea", "coffee", "milk", "sugar"))
        reads: list[str] = []
        stored_get = mem.store.get
        monkeypatch.setattr(mem.store, "get", lambda ref, filt: reads.append(ref) or stored_get(ref, filt))
        mem.link(tea, coffee)
        assert [m.id for m in mem.neighbours(tea)] == [coffee.id]
        assert mem.unlink(tea, coffee) is True
        assert [m.id for m in mem.forget(sugar)] == [sugar.id]
        assert reads == []
        with pytest.raises(NotFoundError, match=re.escape(json.dumps(sugar.id))):  # gone since it was read: as its id would be
            mem.forget(sugar)
        with pytest.raises(NotFoundError, match=re.escape(json.dumps(sugar.id))):
            mem.link(sugar, coffee)
        closed = mem.supersede(tea, milk)
        assert closed.superseded_by == milk.id and reads == [tea.id]  # the superseded one, read after the write
        # One another agent's is not found, as its id would be.
        bobs = mem.for_agent("bob").remember("bob's tea", key="tea").memory
        for call in (lambda m: mem.link(coffee, m), lambda m: mem.unlink(m, coffee),
                     lambda m: mem.supersede(m, coffee), lambda m: mem.supersede(coffee, m),
                     lambda m: mem.neighbours(m), lambda m: mem.forget(m)):
            with pytest.raises(NotFoundError) as missing:
                call(bobs)
            assert f'memory not found: "{bobs.id}"' == str(missing.value)
        with pytest.raises(ValidationError):
            mem.link(coffee, coffee)
        assert mem.for_agent("bob").get(bobs.id) == bobs and mem.get(coffee.id).links == ()
        # One of another session of this agent is its own: reached as handed out (as by its id).
        sessions = mem.for_session("s1").remember("this chat's tea", key="tea", scope="session").memory
        assert mem.link(coffee, sessions) is True and [m.id for m in mem.neighbours(sessions)] == [coffee.id]
        assert mem.unlink(sessions, coffee) is True and mem.neighbours(sessions) == []
        with pytest.raises(ValidationError):  # everyone who sees the agent's coffee would lose it to a session's
            mem.supersede(coffee, sessions)
        assert mem.supersede(sessions, coffee).superseded_by == coffee.id
        assert [m.id for m in mem.forget(sessions)] == [sessions.id]
        assert mem.for_session("s1").find(sessions.id) is None and mem.get(coffee.id).superseded_by is None

    def test_an_id_reaches_every_session_of_its_agent_and_never_another_agent(self, mem: Engram) -> None:
        # ClawCode's day one: remember in a session, recall there, then get, update, link or forget
        # by the memory_id recall gave, from a view naming no session (or another one). An id names
        # one memory, its agent is its owner; a key, unique per scope only, is read where the view reads.
        session = mem.for_session("sess_123")
        pref = session.remember("User prefers Python for scripting tasks", key="pref", scope="session",
                                tags=["preferences", "programming"]).memory
        assert [h.memory.id for h in session.recall("Python scripting", scope="session").hits] == [pref.id]
        elsewhere = mem.for_session("sess_9")
        for view in (mem, elsewhere):
            assert view.get(pref.id).scope == pref.scope and view.named(pref.id).id == pref.id
        coffee = mem.remember("coffee in the cupboard", key="coffee").memory
        assert elsewhere.link(pref.id, "coffee") is True
        assert mem.get(pref.id).links == (coffee.id,) and [m.id for m in mem.neighbours(pref.id)] == [coffee.id]
        changed = mem.update(pref.id, content="User prefers Python for scripting and tooling").memory
        assert (changed.id, changed.scope, changed.key) == (pref.id, pref.scope, "pref")
        assert [v.content for v in elsewhere.versions(pref.id)] == [pref.content]
        # The key is not read outside its session; the error says where it is and by which id.
        for call in (lambda: mem.get("pref"), lambda: mem.get_by_key("pref"), lambda: mem.named(key="pref"),
                     lambda: elsewhere.forget("pref")):
            with pytest.raises(NotFoundError) as missing:
                call()
            said = str(missing.value)
            assert said.startswith(('memory not found: "pref"; ', 'memory named by key not found: "pref"; ')), said
            assert 'session "sess_123"' in said and pref.id in said and "--session" in said, said
        with pytest.raises(NotFoundError) as missing:
            mem.get("no-such-key")
        assert str(missing.value) == 'memory not found: "no-such-key"'
        # Another agent reaches none of it, by id or key, from its own views, its session of that
        # name included, and the error tells it nothing of alice's sessions.
        bob = mem.for_agent("bob")
        bob.remember("bob's own note", key="bobs")
        for view in (bob, mem.for_agent("bob", "sess_123")):
            for call, ref in ((lambda v: v.get(pref.id), pref.id), (lambda v: v.forget(pref.id), pref.id),
                              (lambda v: v.update(pref.id, importance=0.9), pref.id),
                              (lambda v: v.versions(pref.id), pref.id), (lambda v: v.link("bobs", pref.id), pref.id),
                              (lambda v: v.neighbours(pref.id), pref.id), (lambda v: v.get("pref"), "pref"),
                              (lambda v: v.forget(changed), pref.id)):
                with pytest.raises(NotFoundError) as missing:
                    call(view)
                assert str(missing.value) == f'memory not found: "{ref}"'
            assert view.find(pref.id) is None and view.forget(tag="programming", dry_run=True) == []
        kept = session.get(pref.id)
        assert (kept.content, kept.importance, kept.links) == (changed.content, changed.importance, (coffee.id,))
        # Forgotten by its id from the agent's view: gone from its session.
        assert [m.id for m in mem.forget(pref.id, reason="Outdated preference")] == [pref.id]
        assert session.find(pref.id) is None and session.find("pref") is None

    def test_forget_by_query_tag_or_age_keeps_to_one_scope_when_named(self, mem: Engram) -> None:
        # ClawCode forgets within a session: the bulk selectors take list's scope; without one they
        # act where the view reads, as before (the agent's view does not reach a session's).
        session = mem.for_session("sess_123")
        in_session = session.remember("User prefers Python for scripting", tags=["programming"], scope="session").memory
        agents = session.remember("Python is installed on the build box", tags=["programming"]).memory
        assert mem.forget(tag="programming", dry_run=True) == [agents]
        assert session.forget(query="Python", dry_run=True, scope="session") == [in_session]
        assert session.forget(older_than_s=0, dry_run=True, scope="session") == [in_session]
        assert {m.id for m in session.forget(tag="programming", dry_run=True)} == {in_session.id, agents.id}
        with pytest.raises(ValidationError) as refused:
            session.forget(tag="programming", scope="everywhere")
        assert refused.value.field == "scope"
        assert [m.id for m in session.forget(tag="programming", scope="session")] == [in_session.id]
        assert mem.get(agents.id) == agents and session.find(in_session.id) is None

    def test_a_memory_built_by_a_caller_is_taken_where_it_is_stored(self, mem: Engram) -> None:
        # A Memory built by hand says global unless told otherwise, and global memories are every
        # agent's to read: naming another agent's id in one must not reach that memory. What is
        # stored under the id decides, not the scope the Memory says.
        bobs = mem.for_agent("bob").remember("bob's tea", key="tea").memory
        coffee = mem.remember("coffee in the cupboard", key="coffee").memory
        planted = Memory(id=bobs.id, key="tea", content="bob's tea")
        for call in (lambda: mem.forget(planted), lambda: mem.link(coffee, planted),
                     lambda: mem.supersede(planted, coffee), lambda: mem.neighbours(planted)):
            with pytest.raises(NotFoundError) as missing:
                call()
            assert f'memory not found: "{bobs.id}"' == str(missing.value)
        assert mem.for_agent("bob").get(bobs.id) == bobs
        # One of this view's own, said to be elsewhere, names the field; no scope at all too.
        for wrong in (replace(coffee, scope=Scope()), replace(coffee, scope=None)):
            with pytest.raises(ValidationError) as refused:
                mem.forget(wrong)  # type: ignore[arg-type]
            assert refused.value.field == "ref.scope"
        assert mem.get(coffee.id) == coffee
        shared = mem.remember("the office wifi is kestrel", scope="global").memory
        assert [m.id for m in mem.forget(Memory(id=shared.id, key=shared.key, content=shared.content))] == [shared.id]

    def test_a_memory_forgotten_since_it_was_read_is_not_found_by_every_link_command(self, mem: Engram) -> None:
        # Held by a caller across a forget (another door, another process): each command names the
        # gone end, as its id would be named, and changes nothing; none reports "not linked" or
        # "no neighbours", and supersede never points a memory at a successor that is gone.
        tea, coffee, gone = (mem.remember(f"{word} in the cupboard", key=word).memory
                             for word in ("tea", "coffee", "gone"))
        mem.link(tea, gone)
        assert [m.id for m in mem.forget(mem.get("gone"))] == [gone.id]
        for call in (lambda: mem.supersede(tea, gone), lambda: mem.supersede(gone, tea),
                     lambda: mem.unlink(gone, coffee), lambda: mem.unlink(coffee, gone),
                     lambda: mem.neighbours(gone)):
            with pytest.raises(NotFoundError) as missing:
                call()
            assert str(missing.value) == f'memory not found: "{gone.id}"'
        assert mem.get(tea.id).superseded_by is None and mem.get(tea.id).valid_until is None
        assert mem.unlink(tea, coffee) is False  # both stored, not linked: as before
        assert mem.unlink(tea, tea) is False
        assert mem.neighbours(coffee) == []
        assert mem.store.set_superseded(tea.id, gone.id, now=1.0) is False  # the store checks it in its write
        assert mem.get(tea.id).superseded_by is None

    def test_update_replace_and_versions_take_a_memory_a_view_gave(self, mem: Engram,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
        # As link and forget: a door resolves the memory under its own argument names and passes it
        # on. The engine does not read it again by id; an update's one read is the writer's, under
        # the memory's key, that it is still the one stored there.
        tea, coffee = (mem.remember(f"{word} in the cupboard", key=word, tags=[word]).memory
                       for word in ("tea", "coffee"))
        shadow = mem.remember("a key that is also an id", key=coffee.id).memory
        reads: list[str] = []
        stored_get = mem.store.get
        monkeypatch.setattr(mem.store, "get", lambda ref, filt: reads.append(ref) or stored_get(ref, filt))
        changed = mem.update(tea, content="green tea in the cupboard")
        assert (changed.action, changed.memory.id, changed.memory.tags) == ("updated", tea.id, ("tea",))
        assert reads == ["tea"]
        assert [v.content for v in mem.versions(tea)] == ["tea in the cupboard"] and reads == ["tea"]
        replaced = mem.replace(changed.memory, "black tea in the cupboard")
        assert (replaced.action, replaced.memory.id, replaced.memory.tags) == ("updated", tea.id, ())
        assert mem.versions(coffee) == [] and reads == ["tea", "tea"]
        # A key equal to another memory's id: the look under the key finds that id's memory first.
        assert mem.update(shadow, importance=0.9).memory.id == shadow.id and mem.get(coffee.id).importance == 0.5
        # Forgotten since it was read: not found, naming it, and not stored again under its key;
        # nor is another memory changed that took its key since.
        mem.forget(tea.id)
        calls = (lambda m: mem.update(m, importance=0.9), lambda m: mem.replace(m, "tea again"),
                 lambda m: mem.versions(m))
        for call in calls:
            with pytest.raises(NotFoundError) as missing:
                call(tea)
            assert str(missing.value) == f'memory not found: "{tea.id}"'
        assert mem.find("tea") is None
        rooibos = mem.remember("rooibos in the cupboard", key="tea").memory
        for call in calls:
            with pytest.raises(NotFoundError, match=re.escape(json.dumps(tea.id))):
                call(tea)
        assert mem.get("tea") == rooibos
        # One another agent's is not found, as its id would be, and is left as it was.
        bobs = mem.for_agent("bob").remember("bob's tea", key="tea").memory
        for call in calls:
            with pytest.raises(NotFoundError) as missing:
                call(bobs)
            assert str(missing.value) == f'memory not found: "{bobs.id}"'
        assert mem.for_agent("bob").get(bobs.id) == bobs
        # One of another session of this agent is its own: changed where it is, in its session.
        sessions = mem.for_session("s1").remember("this chat's tea", key="tea", scope="session").memory
        changed = mem.update(sessions, content="this chat's green tea").memory
        assert (changed.id, changed.scope, changed.key) == (sessions.id, sessions.scope, "tea")
        assert [v.content for v in mem.versions(changed)] == ["this chat's tea"]
        assert mem.replace(changed, "this chat's black tea").memory.scope == sessions.scope
        assert mem.for_session("s1").get("tea").content == "this chat's black tea" and mem.get("tea") == rooibos
        # A field refused names the field, before anything is read or written.
        reads.clear()
        with pytest.raises(ValidationError) as refused:
            mem.update(coffee, importance=2.0)
        assert refused.value.field == "importance" and reads == [] and mem.get(coffee.id) == coffee

    # --- snapshots -----------------------------------------------------------------------
    def test_export_import_round_trip(self, mem: Engram, make_store: Callable[[], MemoryStore], tmp_path) -> None:
        mem.remember("core value", category="core", key="soul:identity", importance=0.9)
        mem.remember("met Hendrik", type="social", related_entity="Hendrik", tags=["people"], metadata={"n": 1})
        mem.remember("global fact", scope="global", key="gf", search_context="said while cooking")
        mem.link("soul:identity", "gf")
        document = mem.export_snapshot()
        assert "embedding" not in document
        fresh_store = _fresh(make_store, tmp_path)
        fresh = Engram(fresh_store, agent="alice", clock=mem.clock)
        result = fresh.import_snapshot(document)
        assert (result.imported, result.skipped) == (3, 0)
        before = {m.id: m for m in mem.list(limit=100)}
        after = {m.id: m for m in fresh.list(limit=100)}
        assert before == after
        again = fresh.import_snapshot(document)
        assert (again.imported, again.skipped) == (0, 3)
        fresh_store.close()

    def test_arrival_is_set_on_create_kept_on_update_and_carried_by_engrams_own_snapshot(
            self, mem: Engram, store: MemoryStore, clock: FakeClock, make_store: Callable[[], MemoryStore],
            tmp_path) -> None:
        arrived = clock.now
        told = mem.remember("learned long ago, elsewhere", key="old", created_at=arrived - 400 * 86400).memory
        batch = mem.remember_many([{"content": "one of a batch", "key": "batch"}])[0].memory
        assert (told.created_at, told.received_at, batch.received_at) == (arrived - 400 * 86400, arrived, arrived)
        clock.advance(60)
        changed = mem.update("old", content="learned long ago, elsewhere, and changed").memory
        again = mem.remember("learned long ago, elsewhere, changed by key", key="old").memory
        assert (changed.updated_at, changed.received_at) == (arrived + 60, arrived)  # a change is no new arrival
        assert again.received_at == arrived and store.get_many([told.id])[0].received_at == arrived
        # A memory given whole (a migration, a move) keeps the arrival it has, an unknown one too.
        store.import_memories([Memory(id="moved", key="moved", content="moved here", scope=Scope("alice"),
                                      created_at=1.0, updated_at=1.0, received_at=5.0),
                               Memory(id="before", key="before", content="stored before arrivals were kept",
                                      scope=Scope("alice"), created_at=1.0, updated_at=1.0)])
        assert {m.id: m.received_at for m in store.get_many(["moved", "before"])} == {"moved": 5.0, "before": None}
        # engram's own snapshot carries each arrival (a restore is a move); an entry without one
        # (an older snapshot, PtrClaw's file) arrives when it is imported.
        document = json.loads(mem.export_snapshot())
        assert {m["key"]: m["received_at"] for m in document["memories"]} == {
            "old": arrived, "batch": arrived, "moved": 5.0, "before": None}
        clock.advance(60)
        fresh_store = _fresh(make_store, tmp_path)
        fresh = Engram(fresh_store, agent="alice", clock=clock)
        assert fresh.import_snapshot(json.dumps(document)).imported == 4
        assert {m.key: m.received_at for m in fresh.list(limit=10)} == {
            "old": arrived, "batch": arrived, "moved": 5.0, "before": arrived + 120}
        fresh_store.close()

    def test_an_arrival_is_only_ever_raised_and_nothing_else_changes(self, store: MemoryStore, clock: FakeClock) -> None:
        mem = Engram(store, agent="alice", clock=clock, embedder=HashingEmbedder())
        arrived = clock.now
        made = mem.remember("The office plants need water on Fridays", key="plants").memory
        mem.update("plants", content="The office plants need water on Fridays and Tuesdays")
        mem.link("plants", mem.remember("The plants are ferns").memory.id)

        def recalled() -> Memory:
            return next(h.memory for h in mem.recall("office plants water") if h.memory.id == made.id)

        clock.advance(3600)
        assert recalled().received_at == arrived  # (a recall the engine may cache)
        before = store.get_many([made.id])[0]
        versions, vector = store.versions(made.id), store.vectors_for([made.id])[made.id]
        raised = store.raise_received_at(made.id, arrived + 60)
        assert raised == replace(before, received_at=arrived + 60) == store.get_many([made.id])[0]
        assert recalled().received_at == arrived + 60  # what reads it sees it at once (no cached recall answers)
        # No change to the memory: its times, recall count, links, versions and vector stay.
        assert store.versions(made.id) == versions and np.array_equal(store.vectors_for([made.id])[made.id], vector)
        # Never lowered: an earlier time, or the same, leaves it as it is (as the recall above left it).
        stored = store.get_many([made.id])[0]
        assert store.raise_received_at(made.id, arrived) == stored and store.raise_received_at(made.id, arrived + 60) == stored
        assert store.get_many([made.id])[0] == stored
        # An arrival not known (stored before engram kept arrivals) becomes known.
        store.import_memories([Memory(id="before", key="before", content="stored before arrivals were kept",
                                      scope=Scope("alice"), created_at=1.0, updated_at=1.0)])
        assert store.raise_received_at("before", 5.0) == replace(store.get_many(["before"])[0], received_at=5.0)
        assert store.get_many(["before"])[0].received_at == 5.0
        assert store.raise_received_at("no-such-id", arrived) is None and store.get_many(["no-such-id"]) == []

    def test_an_import_never_links_to_another_agents_memory(self, store: MemoryStore, clock: FakeClock) -> None:
        alice, bob = Engram(store, agent="alice", clock=clock), Engram(store, agent="bob", clock=clock)
        private = alice.remember("alice's own note", key="a").memory
        shared = alice.remember("a note for everyone", key="g", scope="global").memory
        earlier = bob.remember("bob's earlier note", key="b0").memory
        new = Memory(id="bob-new", key="bob-new", content="bob's new note", scope=Scope("bob"),
                     links=(private.id, shared.id, earlier.id), created_at=clock.now, updated_at=clock.now)
        also_global = Memory(id="g-new", key="g-new", content="another note for everyone", scope=Scope(),
                             links=(private.id,), created_at=clock.now, updated_at=clock.now)
        store.import_memories([new, also_global])
        links = {m.id: set(m.links) for m in store.get_many([private.id, shared.id, earlier.id, "bob-new", "g-new"])}
        assert links["bob-new"] == {shared.id, earlier.id}
        assert links[private.id] == set()  # nothing written into alice's memory
        assert links["g-new"] == set()
        assert "bob-new" in links[shared.id] and "bob-new" in links[earlier.id]

    def test_an_imports_updates_are_in_its_transaction(self, store: MemoryStore, clock: FakeClock,
                                                       make_store: Callable[[], MemoryStore]) -> None:
        # A re-import's changes to memories an earlier import made are written with its new
        # memories, all or nothing: one that fails part-way (its memory forgotten meanwhile, so the
        # upsert by key would have made a new one) undoes the rest.
        mem = Engram(store, agent="alice", clock=clock)
        kept, gone = (mem.remember(f"Alice lives in {city}", key=f"lives-{city}").memory for city in ("Lisbon", "Porto"))
        fresh = Memory(id="zep-new", key="works-globex", content="Alice works at Globex", scope=Scope("alice"),
                       created_at=clock.now, updated_at=clock.now)
        updates = [ImportUpdate(m.id, make_draft(f"{m.content}, in Alfama", max_content_chars=500, key=m.key,
                                                 scope=m.scope), clock.now + 1) for m in (kept, gone)]
        mem.forget(gone)
        everyone = MemoryFilter(scopes=(Scope("alice"),), include_superseded=True)
        before = store.list(everyone, limit=50)
        with pytest.raises(NotFoundError) as missing:
            store.import_memories([fresh], updates)
        assert missing.value.ref == gone.id
        _assert_as_before(store, make_store, everyone, before, kept.id)
        assert store.import_memories([fresh], updates[:1]) == ImportResult(1, 0)
        assert store.get_many([kept.id])[0].content == "Alice lives in Lisbon, in Alfama"
        assert [v.content for v in store.versions(kept.id)] == ["Alice lives in Lisbon"]
        assert store.get_many(["zep-new"])[0].content == "Alice works at Globex"
        # A re-import that only changes what it made before: no new memory to add.
        again = ImportUpdate(kept.id, make_draft("Alice lives in Porto", max_content_chars=500, key=kept.key,
                                                 scope=kept.scope), clock.now + 2)
        assert store.import_memories([], [again]) == ImportResult(0, 0)
        assert store.get_many([kept.id])[0].content == "Alice lives in Porto"

    def test_atomic_keeps_all_of_its_work_or_none(self, store: MemoryStore, clock: FakeClock,
                                                  make_store: Callable[[], MemoryStore]) -> None:
        # ``atomic``: the store calls of ``work`` kept together, or none when it raises, as the
        # consolidation job merges a group (the survivor rewritten, a copy's link moved to it, the
        # copy deleted). Its reads see its own writes.
        mem = Engram(store, agent="alice", clock=clock)
        kept = mem.remember("the plan", key="plan", tags=["work"]).memory
        copy = mem.remember("a copy of the plan").memory
        other = mem.remember("another memory").memory
        mem.link(copy, other)
        everyone = MemoryFilter(scopes=(Scope("alice"),), include_superseded=True)
        before = store.list(everyone, limit=50)

        def work() -> Memory:
            # The group read in it, held until it ends (``get_many_held``): as ``get_many`` reads it.
            assert store.get_many_held([copy.id, kept.id, "no-such-id"]) == store.get_many([copy.id, kept.id])
            later = clock.now + 60
            store.upsert(make_draft("the plan, merged", max_content_chars=500, key="plan", scope=kept.scope,
                                    tags=["work", "copy"]), proposed_key="plan", now=later)
            store.touch([kept.id], later, recall=False)
            store.raise_received_at(kept.id, later)
            assert store.link(kept.id, other.id)
            assert [m.id for m in store.delete([copy.id])] == [copy.id]
            return store.get_many([kept.id])[0]

        class Refused(Exception):
            pass

        def refused() -> None:
            work()
            raise Refused

        with pytest.raises(Refused):
            store.atomic(refused)
        _assert_as_before(store, make_store, everyone, before, kept.id)
        merged = store.atomic(work)
        assert (merged.content, merged.tags, merged.received_at) == ("the plan, merged", ("work", "copy"), clock.now + 60)
        assert merged.links == (other.id,) and store.get_many([copy.id]) == []
        assert store.get_many([kept.id]) == [merged] and [v.content for v in store.versions(kept.id)] == ["the plan"]

    def test_import_is_all_or_nothing(self, mem: Engram) -> None:
        mem.remember("existing", key="existing")
        bad_documents = [
            "{not json",
            json.dumps({"memories": [{"content": "fine"}, {"content": ""}]}),
            json.dumps({"memories": [{"content": "fine", "category": "weird"}]}),
            json.dumps({"memories": [{"content": "x", "importance": 7}]}),
            json.dumps({"something": "else"}),
            json.dumps({"memories": ["not an object"]}),
        ]
        for document in bad_documents:
            with pytest.raises(SnapshotError):
                mem.import_snapshot(document)
        assert [m.key for m in mem.list()] == ["existing"]

    def test_imports_ptrclaw_formats(self, mem: Engram) -> None:
        legacy = [
            {"id": "p1", "key": "user-prefers-python", "content": "Prefers Python", "category": "knowledge",
             "timestamp": 1700000000, "session_id": "", "links": ["project-uses-python"]},
            {"id": "p2", "key": "project-uses-python", "content": "Uses Python 3.12", "category": "core",
             "timestamp": 1700000100, "last_accessed": 1700000200, "session_id": "tg-1",
             "links": ["user-prefers-python"]},
        ]
        assert mem.import_snapshot(json.dumps(legacy)).imported == 2
        assert mem.get("project-uses-python").category is Category.CORE
        assert [m.key for m in mem.neighbours("user-prefers-python")] == ["project-uses-python"]
        obj = {"entries": [{"key": "k3", "content": "third", "category": "knowledge", "timestamp": 1}],
               "embeddings": {"k3": [0.1, 0.2]}}
        assert mem.import_snapshot(json.dumps(obj)).imported == 1

    def test_an_import_links_to_entries_already_stored(self, store: MemoryStore, clock: FakeClock) -> None:
        # PtrClaw's import keeps an entry's links, by key, to entries that already exist; engram's
        # resolved them only inside the snapshot, so two were lost: a link to an entry skipped because
        # its key is stored under another id, and a link to a key stored but not in the snapshot.
        mem, bob = Engram(store, agent="alice", clock=clock), Engram(store, agent="bob", clock=clock)
        editor = mem.remember("Uses vim", key="editor").memory
        shell = mem.remember("Uses zsh", key="shell").memory
        shared = mem.remember("The team uses Python", key="team-lang", scope="global").memory
        bob.remember("Bob's own tools note", key="tools")  # another agent's key: never linked
        entries = [
            {"id": "p1", "key": "editor", "content": "Uses vim, with plugins", "links": ["dotfiles"]},
            {"id": "p2", "key": "dotfiles", "content": "Keeps dotfiles in git",
             "links": ["editor", "shell", "team-lang", "tools", "nowhere", shell.id]},
        ]
        result = mem.import_snapshot(json.dumps(entries))
        assert (result.imported, result.skipped) == (1, 1)
        assert mem.get("editor").id == editor.id and mem.get("editor").content == "Uses vim"  # kept as stored
        dotfiles = mem.get("dotfiles")
        assert set(dotfiles.links) == {editor.id, shell.id, shared.id}
        assert dotfiles.id in mem.get("editor").links and dotfiles.id in mem.get("shell").links
        assert bob.get("tools").links == ()
        # A session's entry reads its session's key first, then the agent's, then global.
        mine = mem.for_session("s1").remember("Session shell", key="shell", scope="session").memory
        session_entry = [{"key": "prompt", "content": "A two-line prompt", "scope": "session:alice/s1",
                          "links": ["shell"]}]
        assert mem.import_snapshot(json.dumps(session_entry)).imported == 1
        assert mem.for_session("s1").get("prompt").links == (mine.id,)

    # --- bad input -----------------------------------------------------------------------
    @pytest.mark.parametrize(
        ("kwargs", "field"),
        [
            ({"content": ""}, "content"),
            ({"content": "   \n"}, "content"),
            ({"content": "x" * 501}, "content"),
            ({"content": "ok", "category": "nonsense"}, "category"),
            ({"content": "ok", "importance": 1.5}, "importance"),
            ({"content": "ok", "importance": -0.1}, "importance"),
            ({"content": "ok", "importance": float("nan")}, "importance"),
            ({"content": "ok", "metadata": "{bad json"}, "metadata"),
            ({"content": "ok", "metadata": "[1, 2]"}, "metadata"),
            ({"content": "ok", "type": "Not A Word!"}, "type"),
            ({"content": "ok", "layer": "deep"}, "layer"),
            ({"content": "ok", "key": "   "}, "key"),
            ({"content": "ok", "tags": ["a" * 65]}, "tags"),
            ({"content": "ok", "scope": "galaxy"}, "scope"),
        ],
    )
    def test_bad_input_names_the_field_and_stores_nothing(self, mem: Engram, kwargs: dict, field: str) -> None:
        mem.remember("already here")
        with pytest.raises(ValidationError) as err:
            mem.remember(**kwargs)
        assert err.value.field == field
        assert str(err.value).startswith(field)
        assert [m.content for m in mem.list()] == ["already here"]

    # --- vectors -------------------------------------------------------------------------
    def test_vectors_hybrid_recall_and_fallbacks(self, store: MemoryStore, clock: FakeClock) -> None:
        embedder = HashingEmbedder()
        mem = Engram(store, agent="alice", clock=clock, embedder=embedder)
        target = mem.remember("zebra giraffe savanna").memory
        mem.remember("completely unrelated words")
        assert store.vector_identity() == "test:hashing:64"
        vector_only = mem.recall("giraffe", mode="vector")
        assert vector_only.mode == "vector" and vector_only.hits[0].memory.id == target.id
        assert len(vector_only) == 1  # the unrelated memory is below min_similarity: not padding
        hybrid = mem.recall("giraffe savanna")
        assert hybrid.mode == "hybrid" and hybrid.hits[0].memory.id == target.id
        assert hybrid.hits[0].parts.vector > 0.5 and hybrid.hits[0].parts.text == pytest.approx(1.0)
        embedder.fail = True
        fallback = mem.recall("giraffe")
        assert fallback.mode == "text" and fallback.hits[0].memory.id == target.id
        assert any("answered from full text" in note for note in fallback.notes)
        stored_anyway = mem.remember("zebra stripes while embedder is down")
        assert stored_anyway.action == "created" and stored_anyway.warnings
        embedder.fail = False
        assert mem.embed_missing() == 1

    def test_every_candidate_is_scored_on_both_signals(self, store: MemoryStore, clock: FakeClock) -> None:
        embedder = HashingEmbedder()
        mem = Engram(store, agent="alice", clock=clock, embedder=embedder)
        target = mem.remember("walrus colony census on the northern beach").memory
        query = "walrus census"
        decoys = [mem.remember(f"unrelated decoy note number {n}").memory for n in range(60)]
        # The decoys' vectors are the query's own: they fill the vector side's candidates (50 for
        # limit 10), so the target is found by full text only.
        query_vector = embedder.embed_query(query)
        store.set_vectors(str(embedder.identity), [(m.id, query_vector) for m in decoys])
        result = mem.recall(query, limit=10)
        assert result.mode == "hybrid"
        hit = next(h for h in result if h.memory.id == target.id)
        expected = float(query_vector @ embedder.embed(["walrus colony census on the northern beach"])[0])
        assert expected > 0.3 and hit.parts.vector == pytest.approx(expected, abs=1e-4)
        assert hit.parts.text > 0
        # Vector candidates holding no query word score 0 on text, and are not padding above it.
        assert all(h.parts.text == 0 for h in result if h.memory.id != target.id)
        # The index scores any memory on the query's words, however far down it ranks.
        ranked = {m.id: score for m, score in store.search_text(query, mem._filter(), limit=100)}
        scores = store.text_scores(query, [target.id, decoys[0].id])
        assert scores == pytest.approx({target.id: ranked[target.id]})
        assert store.text_scores("zzzunknown", [target.id]) == {}

    def test_a_memorys_time_is_searched_as_words(self, mem: Engram) -> None:
        import datetime as dt

        def at(day: str) -> float:
            return dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC).timestamp()

        mem.remember("the deploy pipeline failed twice", created_at=at("2024-03-13T15:00:00"))
        mem.remember("the deploy pipeline was green all day", created_at=at("2024-07-02T09:00:00"))
        # Neither content names a date; the time each was said does.
        march = mem.recall("what happened to the deploy pipeline in March", mode="text")
        assert march.hits[0].memory.content == "the deploy pipeline failed twice"
        july = mem.recall("deploy pipeline on July 2", mode="text")
        assert july.hits[0].memory.content == "the deploy pipeline was green all day"
        # Dates help find; they never make a memory match a forget-by-query.
        assert mem.forget(query="march deploy", dry_run=True) == []

    def test_text_scores_mean_the_same_from_query_to_query(self, mem: Engram, store: MemoryStore) -> None:
        for n in range(20):
            mem.remember(f"weekly status meeting notes {n}")
        mem.remember("the giraffe escaped from the zoo")
        # Scaled by the query's ceiling, not by the best hit: a memory holding only the common half
        # of a query is a weak match even when it is the best there is, and a memory holding all
        # of a query scores high.
        weak = mem.recall("meeting zebra", mode="text")
        strong = mem.recall("giraffe zoo", mode="text")
        assert weak.hits and weak.hits[0].parts.text < 0.6
        assert strong.hits[0].parts.text >= 0.6
        assert store.text_score_ceiling("giraffe zoo") > 0
        assert store.text_score_ceiling("!!! ...") is None

    def test_wrong_dimension_vectors_are_refused_before_writing(self, mem: Engram, store: MemoryStore) -> None:
        memory = mem.remember("something").memory
        store.set_vectors("test:m:4", [(memory.id, np.ones(4, dtype=np.float32))])
        with pytest.raises(DimensionError):
            store.set_vectors("test:m:4", [(memory.id, np.ones(4)), (memory.id, np.ones(5))])
        with pytest.raises(DimensionError):
            store.set_vectors("test:other:4", [(memory.id, np.ones(4))])
        assert store.vectors_for([memory.id])[memory.id].shape == (4,)

    def test_write_batch_all_or_nothing_keeps_nothing_when_a_write_is_refused(
            self, mem: Engram, store: MemoryStore) -> None:
        # A write the store refuses after the ones before it were applied (its row written, then
        # its vector refused): the whole batch is undone, the update before it included.
        kept = mem.remember("kept before the batch", key="kept", tags=["old"]).memory
        store.set_vectors("test:batch:4", [(kept.id, np.ones(4, dtype=np.float32))])
        everyone = MemoryFilter(scopes=(Scope("alice"), Scope("bob")), include_superseded=True)
        before = store.list(everyone, limit=100)
        good, bad = np.ones(4, dtype=np.float32), np.ones(5, dtype=np.float32)
        drafts = [make_draft("batch first", max_content_chars=500, scope=Scope("alice")),
                  make_draft("kept, changed", max_content_chars=500, scope=Scope("alice"), key="kept", tags=["new"]),
                  make_draft("batch in bob's scope", max_content_chars=500, scope=Scope("bob")),
                  make_draft("refused by its vector", max_content_chars=500, scope=Scope("alice")),
                  make_draft("batch last", max_content_chars=500, scope=Scope("alice"))]
        writes = [BatchWrite(d, key_from_content(d.content), bad if i == 3 else good) for i, d in enumerate(drafts)]
        with pytest.raises(DimensionError):
            store.write_batch(writes, now=1000.0, identity="test:batch:4", all_or_nothing=True)
        assert store.list(everyone, limit=100) == before
        assert store.versions(kept.id) == [] and list(store.vectors_for([kept.id])) == [kept.id]
        writes[3] = BatchWrite(drafts[3], "refused-by-its-vector", good)
        results = store.write_batch(writes, now=1001.0, identity="test:batch:4", all_or_nothing=True)
        assert [r.action for r in results] == ["created", "updated", "created", "created", "created"]  # type: ignore[union-attr]
        assert mem.get("kept").content == "kept, changed" and store.count(everyone) == 5

    def test_write_batch_keeps_nothing_of_a_write_refused_for_its_vector(
            self, mem: Engram, store: MemoryStore, make_store: Callable[[], MemoryStore]) -> None:
        # Each write of a batch that is not all or nothing stands alone: one whose row is put and
        # whose vector is then refused answers with the error and leaves nothing of itself (no new
        # row, no change to the memory it would update), while the writes around it are kept.
        kept = mem.remember("kept before the batch", key="kept", tags=["old"]).memory
        store.set_vectors("test:batch:4", [(kept.id, np.ones(4, dtype=np.float32))])
        everyone = MemoryFilter(scopes=(Scope("alice"),), include_superseded=True)
        good, bad = np.ones(4, dtype=np.float32), np.ones(5, dtype=np.float32)
        drafts = [make_draft("batch first", max_content_chars=500, scope=Scope("alice")),
                  make_draft("kept, changed", max_content_chars=500, scope=Scope("alice"), key="kept", tags=["new"]),
                  make_draft("refused by its vector", max_content_chars=500, scope=Scope("alice")),
                  make_draft("batch last", max_content_chars=500, scope=Scope("alice"))]
        writes = [BatchWrite(d, key_from_content(d.content), bad if i in (1, 2) else good) for i, d in enumerate(drafts)]
        results = store.write_batch(writes, now=1000.0, identity="test:batch:4")
        assert [type(r).__name__ if isinstance(r, EngramError) else r.action for r in results] == [
            "created", "DimensionError", "DimensionError", "created"]
        reopened = make_store()  # what is kept (the file, the database) too; a store in memory opens empty
        try:
            for seen in (store, reopened) if reopened.count(everyone) else (store,):
                assert {m.content for m in seen.list(everyone, limit=100)} == {
                    "kept before the batch", "batch first", "batch last"}
                assert seen.get_many([kept.id])[0].tags == ("old",) and seen.versions(kept.id) == []
                assert list(seen.vectors_for([kept.id])) == [kept.id]
        finally:
            reopened.close()
        # The refused text is not there as a duplicate: written again with a good vector, it is new.
        again = store.write_batch([BatchWrite(drafts[2], key_from_content(drafts[2].content), good)], now=1001.0,
                                  identity="test:batch:4")
        assert again[0].action == "created"  # type: ignore[union-attr]

    def test_remember_many_failing_half_way_stores_nothing(self, store: MemoryStore, clock: FakeClock,
                                                           make_store: Callable[[], MemoryStore],
                                                           failing: Failing | None) -> None:
        if failing is None:
            pytest.skip("this backend cannot be made to fail a write")
        mem = Engram(store, agent="alice", clock=clock, embedder=HashingEmbedder(), max_content_chars=500)
        plan = mem.remember("the plan before the batch", key="plan", tags=["work"], metadata={"owner": "ana"}).memory
        mem.remember("another memory before the batch")
        everyone = MemoryFilter(scopes=(Scope("alice"), Scope(None)), include_superseded=True)
        before = store.list(everyone, limit=100)
        vectors = store.vectors_for([m.id for m in before])
        events: list[MemoryEvent] = []
        mem.subscribe(events.append)
        batch = [{"content": "first of the batch"}, {"content": "the plan, changed", "key": "plan"},
                 {"content": "a global one", "scope": "global"}, {"content": "boom: the storage fails here"},
                 {"content": "after the failure"}]
        clock.advance(60)
        with failing(store, "boom: the storage fails here"), pytest.raises(StorageError):
            mem.remember_many(batch)
        after = store.list(everyone, limit=100)
        assert after == before and store.versions(plan.id) == []
        assert {i: v.tolist() for i, v in store.vectors_for([m.id for m in before]).items()} == \
            {i: v.tolist() for i, v in vectors.items()}
        assert events == [] and mem.count() == 2
        reopened = make_store()  # what is kept (the file, the database) is as it was too
        try:
            assert reopened.list(everyone, limit=100) == before
        finally:
            reopened.close()
        results = mem.remember_many(batch)  # the storage works again: the same batch goes in whole
        assert [r.action for r in results] == ["created", "updated", "created", "created", "created"]
        assert mem.get("plan").tags == ("work",) and mem.get("plan").metadata == {"owner": "ana"}
        assert not store.missing_vectors() and store.count(everyone) == 6

    def test_write_batch_answers_each_write_in_its_place(self, mem: Engram, store: MemoryStore) -> None:
        target = mem.remember("the link target").memory
        bob = mem.for_agent("bob")
        drafts = [
            make_draft("batch one", max_content_chars=500, scope=Scope("alice")),
            make_draft("batch two", max_content_chars=500, scope=Scope("bob"), key="two"),
            make_draft("batch one", max_content_chars=500, scope=Scope("alice")),  # the same text again in the batch
            make_draft("batch three", max_content_chars=500, scope=Scope("alice"), key="three"),
        ]
        vector = np.ones(4, dtype=np.float32)
        writes = [BatchWrite(d, key_from_content(d.content), vector) for d in drafts]
        writes[3] = BatchWrite(drafts[3], "three", vector, links=(target.id,))
        results = store.write_batch(writes, now=1000.0, identity="test:batch:4")
        assert [r.action for r in results] == ["created", "created", "duplicate", "created"]  # type: ignore[union-attr]
        one, two, again, three = (r.memory for r in results)  # type: ignore[union-attr]
        assert again.id == one.id
        assert two.scope == Scope("bob") and bob.get("two").content == "batch two" and mem.find("two") is None
        assert three.links == (target.id,) and mem.get(target.id).links == (three.id,)
        assert set(store.vectors_for([one.id, two.id, three.id])) == {one.id, two.id, three.id}
        edit = make_draft("batch three, changed", max_content_chars=500, scope=Scope("alice"), key="three")
        changed = store.write_batch([BatchWrite(edit, "three")], now=1001.0, identity="test:batch:4")
        assert changed[0].action == "updated"  # type: ignore[union-attr]
        assert mem.get("three").content == "batch three, changed"

    def test_model_change_is_reported_and_recall_keeps_working(self, store: MemoryStore, clock: FakeClock) -> None:
        Engram(store, agent="alice", clock=clock, embedder=HashingEmbedder(model="one")).remember("kiwi fruit salad")
        switched = Engram(store, agent="alice", clock=clock, embedder=HashingEmbedder(model="two"))
        result = switched.recall("kiwi")
        assert result.mode == "text" and result.hits
        assert any("reindex" in note for note in result.notes)
        assert switched.remember("banana bread").warnings
        seen: list[tuple[int, int]] = []
        assert switched.reindex(lambda done, total: seen.append((done, total))) == 2
        assert seen[-1] == (2, 2)
        assert store.vector_identity() == "test:two:64"
        after = switched.recall("kiwi")
        assert after.mode == "hybrid" and after.hits[0].memory.content == "kiwi fruit salad" and not after.notes

    def test_scope_of_vector_search_is_respected(self, store: MemoryStore, clock: FakeClock) -> None:
        embedder = HashingEmbedder()
        alice = Engram(store, agent="alice", clock=clock, embedder=embedder)
        alice.remember("private walrus notes")
        bob = alice.for_agent("bob")
        assert len(bob.recall("walrus", mode="vector")) == 0


def _assert_as_before(store: MemoryStore, make_store: Callable[[], MemoryStore], everyone: MemoryFilter,
                      before: list[Memory], kept_id: str) -> None:
    """After an all-or-nothing write that failed: the store lists what it listed ``before`` and
    ``kept_id`` has no version; where it persists, a store opened again on it (the file, the
    database) lists the same."""
    assert store.list(everyone, limit=50) == before and store.versions(kept_id) == []
    if getattr(store, "persists", True):
        reopened = make_store()
        try:
            assert reopened.list(everyone, limit=50) == before
        finally:
            reopened.close()


def _fresh(make_store: Callable[[], MemoryStore], tmp_path) -> MemoryStore:
    """A second, empty store of the same backend (file backends get a new path via the factory's
    optional ``path`` argument)."""
    try:
        return make_store(tmp_path / "fresh")  # type: ignore[call-arg]
    except TypeError:
        return make_store()


class DisabledStoreContract:
    """Memory turned off: every operation answers without error and keeps nothing."""

    def test_everything_answers_empty(self, mem_disabled: Engram) -> None:
        result = mem_disabled.remember("anything at all", tags=["x"])
        assert result.warnings
        assert mem_disabled.count() == 0
        assert mem_disabled.list() == []
        assert len(mem_disabled.recall("anything")) == 0
        assert mem_disabled.find("anything-all") is None
        assert mem_disabled.forget(tag="x") == []
        assert mem_disabled.forget(query="anything") == []
        assert mem_disabled.import_snapshot('[{"content": "x"}]').imported == 0
        assert json.loads(mem_disabled.export_snapshot())["memories"] == []
        assert mem_disabled.stats().memories == 0
        seen = mem_disabled.visible_stats()
        assert (seen.memories, seen.links, seen.vectors, seen.by_scope) == (0, 0, 0, {})
        store = mem_disabled.store
        assert store.count_by_kind(MemoryFilter(scopes=(Scope("alice"),))) == [] and store.sessions_of("alice") == []
        assert store.move(result.memory.id, Scope("bob")) is None and store.move_many({result.memory.id: Scope("bob")}) == {}
        assert store.merge_metadata(result.memory.id, {"a": 1}) is None and mem_disabled.annotate(result.memory, {"a": 1}) is None
        assert store.raise_received_at(result.memory.id, 1.0) is None
        assert store.atomic(lambda: mem_disabled.remember("inside").action) == "unchanged" and mem_disabled.count() == 0
        assert mem_disabled.embed_missing() == 0
        assert Scope().kind == "global"
