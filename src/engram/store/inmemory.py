"""The in-memory store: everything in dicts, for tests and ephemeral agents.

It is also the engine of the JSON file backend, which persists this state after each write.
Full-text scoring follows PtrClaw's JsonMemory: word-boundary tokens (their diacritics folded as
SQLite's FTS5 folds them: ``text.fold``), a key hit weighs twice a content hit (and a search_context
hit 0.3 of one); with no word hit, a substring match answers (as SQLite's LIKE fallback does).
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import numpy as np

from engram import text
from engram.errors import DimensionError, EngramError
from engram.ids import new_id
from engram.model import Memory, MemoryDraft, MemoryFilter, MemoryVersion, Order, Scope, WriteResult, draft_changes
from engram.store.base import (
    BOOST_DIGITS,
    BatchWrite,
    ImportResult,
    ImportUpdate,
    KindCount,
    StoreStats,
    SupersedeCycle,
    apply_updates,
    apply_write,
    crosses_agents,
    import_links,
    linked_memories,
    merged_metadata,
    move_one,
    refused_moves,
    write_each,
)
from engram.store.free_key import free_key
from engram.store.vectors import VectorMatrix, checked_vectors

_ScopeKey = tuple[str | None, str | None]
T = TypeVar("T")


def _scope_key(scope: Scope) -> _ScopeKey:
    return scope.agent, scope.session


@dataclass(frozen=True, slots=True)
class _State:
    """What an all-or-nothing ``write_batch`` puts back when one of its writes fails."""

    rows: dict[str, Memory]
    by_key: dict[tuple[_ScopeKey, str], str]
    by_hash: dict[tuple[_ScopeKey, str], str]
    links: dict[str, set[str]]
    versions: dict[str, list[MemoryVersion]]
    vectors: dict[str, np.ndarray]
    identity: str | None


@dataclass(frozen=True, slots=True)
class _Held:
    """What one write may change of the memory it updates (``_write_one``), to put back."""

    memory: Memory | None  # None: the write makes a new memory
    vector: np.ndarray | None
    versions: list[MemoryVersion] | None
    links: set[str]
    identity: str | None


# Each order's key before its last tie-break, the order of storing (the later first; for "oldest"
# the earlier), as SQLite's rowid and PostgreSQL's seq break ties.
_SORT = {
    "recent": (lambda m: (m.created_at,), True),
    "oldest": (lambda m: (m.created_at,), False),
    "importance": (lambda m: (m.importance, m.created_at), True),
    "accessed": (lambda m: (m.last_accessed or m.created_at,), True),
}


class InMemoryMemoryStore:
    name = "inmemory"

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._rows: dict[str, Memory] = {}  # id -> memory (links filled on the way out)
        self._by_key: dict[tuple[_ScopeKey, str], str] = {}
        self._by_hash: dict[tuple[_ScopeKey, str], str] = {}  # (scope, content hash) -> id, for dedup
        self._links: dict[str, set[str]] = {}
        self._versions: dict[str, list[MemoryVersion]] = {}
        self._vectors: dict[str, np.ndarray] = {}
        self._identity: str | None = None
        self._matrix = VectorMatrix()
        self._matrix_stale = True
        self._generation = 0
        self._in_batch = False  # applying a ``write_batch``: persisted once, at its end

    # A subclass that writes its state somewhere (the JSON file store) says so: the write queue's
    # batches are then persisted once each, which costs a copy of the state to put back on failure
    # (``_write_each_once``); a store in memory alone skips that copy, O(its size) per batch.
    persists = False

    # Subclasses persist after every change; ``content=False`` is a recorded recall only.
    def _changed(self, content: bool = True) -> None:
        self._matrix_stale = True
        if content:
            self._generation += 1

    def change_token(self) -> object | None:
        return self._generation

    def _out(self, memory: Memory) -> Memory:
        return replace(memory, links=tuple(sorted(self._links.get(memory.id, ()))))

    def _visible(self, filt: MemoryFilter) -> Iterator[Memory]:
        for memory in self._rows.values():
            if filt.matches(memory):
                yield memory

    # --- writes ----------------------------------------------------------------------------
    def upsert(self, draft: MemoryDraft, *, proposed_key: str, now: float) -> WriteResult:
        scope = _scope_key(draft.scope)
        with self._lock:
            if draft.key is not None:
                existing_id = self._by_key.get((scope, draft.key))
                if existing_id is not None:
                    return self._update(self._rows[existing_id], draft, now)
                key = draft.key
            else:
                same_id = self._by_hash.get((scope, text.content_hash(draft.content)))
                if same_id is not None:
                    return WriteResult(self._out(self._rows[same_id]), "duplicate")
                key = free_key(proposed_key, lambda keys: {k for k in keys if (scope, k) in self._by_key})
            created = draft.created_at if draft.created_at is not None else now
            memory = Memory(
                id=new_id(), key=key, content=draft.content, category=draft.category, type=draft.type,
                layer=draft.layer, tags=draft.tags, metadata=dict(draft.metadata), importance=draft.importance,
                related_entity=draft.related_entity, source=draft.source, scope=draft.scope,
                search_context=draft.search_context, valid_from=draft.valid_from, valid_until=draft.valid_until,
                created_at=created, updated_at=created, last_accessed=now, received_at=now,
            )
            self._add(memory)
            self._changed()
            return WriteResult(self._out(memory), "created")

    def write_batch(
        self, writes: Sequence[BatchWrite], *, now: float, identity: str | None, all_or_nothing: bool = False
    ) -> list[WriteResult | EngramError]:
        if not all_or_nothing:
            if not self.persists:  # nothing to write once: no copy of the state either
                return write_each(self, writes, now=now, identity=identity, apply=type(self)._write_one)
            return self._write_each_once(writes, now=now, identity=identity)
        # All or nothing without a transaction: ``atomic``, the writes its work.
        def work() -> list[WriteResult | EngramError]:
            return [apply_write(self, w, now=now, identity=identity) for w in writes]

        return self.atomic(work)

    def atomic(self, work: Callable[[], T]) -> T:
        # No transaction here: the state is copied first and put back when ``work`` raises, all
        # under the lock (no reader sees half of it); a subclass that persists does so once, at
        # the end (``_batch_written``), and when that fails the state goes back too. Inside a batch
        # already (a nested call), ``work`` joins it: the outer one puts back or persists the whole.
        with self._lock:
            if self._in_batch:
                return work()
            saved = self._copy_state()
            self._in_batch = True
            try:
                result = work()
                self._in_batch = False
                self._batch_written()
            except BaseException:
                self._in_batch = False
                self._restore_state(saved)
                raise
        return result

    def _write_each_once(self, writes: Sequence[BatchWrite], *, now: float,
                         identity: str | None) -> list[WriteResult | EngramError]:
        """``write_each`` (a write's own error stands in its place, the others are kept) with the
        state persisted once, at the end (``_batch_written``), not after every change: the write
        queue's batches coalesce concurrent ``remember`` calls, and the JSON file store rewrote its
        whole file for each of them. If that one persist fails, no write of the batch is kept: the
        state goes back to before it and each write that had succeeded answers with the error, so
        what is acknowledged is what is persisted."""
        with self._lock:
            saved, generation = self._copy_state(), self._generation
            self._in_batch = True
            try:
                out = write_each(self, writes, now=now, identity=identity, apply=type(self)._write_one)
            except BaseException:
                self._restore_state(saved)
                raise
            finally:
                self._in_batch = False
            if self._generation == generation:
                return out  # nothing changed (every write failed before changing anything)
            try:
                self._batch_written()
            except EngramError as exc:
                self._restore_state(saved)
                return [exc if isinstance(result, WriteResult) else result for result in out]
        return out

    def _write_one(self, write: BatchWrite, *, now: float, identity: str | None) -> WriteResult:
        """``apply_write`` all or nothing, as SQL backends make it with a savepoint: when a step
        after the row is put fails (its vector refused: another dimension, another model), the one
        memory the write made or changed is put back as it was and the error raised, so a batch's
        write that answers with an error leaves nothing of itself. Only that memory is saved
        first (O(1), not a copy of the state): a write changes no other (an update is by key)."""
        with self._lock:
            draft = write.draft
            target = self._by_key.get((_scope_key(draft.scope), draft.key)) if draft.key is not None else None
            held = _Held(
                self._rows.get(target) if target else None, self._vectors.get(target) if target else None,
                list(self._versions[target]) if target in self._versions else None,
                set(self._links.get(target, ())) if target else set(), self._identity)
            newest = next(reversed(self._rows), None)
            try:
                return apply_write(self, write, now=now, identity=identity)
            except BaseException:
                # A new memory is the last row added (dicts keep their order); an update's is ``target``.
                made = next(reversed(self._rows), None)
                changed = target if target is not None else (made if made != newest else None)
                if changed is not None:
                    self._put_back(changed, held)
                raise

    def _put_back(self, memory_id: str, held: _Held) -> None:
        """Undo what one write did to ``memory_id`` (``_write_one``): the row, its indexes, its
        vector, versions and links as ``held`` says they were, or gone if it was new."""
        current = self._rows.get(memory_id)
        if current is not None:
            slot = (_scope_key(current.scope), current.key)
            if self._by_key.get(slot) == memory_id:
                del self._by_key[slot]
            self._drop_hash(current)
        for other in self._links.pop(memory_id, set()) - held.links:
            self._links.get(other, set()).discard(memory_id)
        if held.memory is None:
            self._rows.pop(memory_id, None)
            self._vectors.pop(memory_id, None)
            self._versions.pop(memory_id, None)
        else:
            self._add(held.memory)
            if held.links:
                self._links[memory_id] = set(held.links)
            if held.vector is None:
                self._vectors.pop(memory_id, None)
            else:
                self._vectors[memory_id] = held.vector
            if held.versions is None:
                self._versions.pop(memory_id, None)
            else:
                self._versions[memory_id] = held.versions
        self._identity = held.identity
        self._changed()

    def _batch_written(self) -> None:
        """A batch has changed the state (a subclass persists it here, raising ``StorageError``
        when it cannot)."""
        self._changed()

    def _copy_state(self) -> _State:
        # Memories and vectors are replaced, never changed in place: copying the containers is enough.
        return _State(dict(self._rows), dict(self._by_key), dict(self._by_hash),
                      {i: set(linked) for i, linked in self._links.items()},
                      {i: list(versions) for i, versions in self._versions.items()}, dict(self._vectors), self._identity)

    def _restore_state(self, saved: _State) -> None:
        self._rows, self._by_key, self._by_hash = saved.rows, saved.by_key, saved.by_hash
        self._links, self._versions, self._vectors, self._identity = saved.links, saved.versions, saved.vectors, saved.identity
        # A new generation, not the old one: a cache filled while the batch was applied is stale.
        self._matrix_stale = True
        self._generation += 1

    def _add(self, memory: Memory) -> None:
        scope = _scope_key(memory.scope)
        self._rows[memory.id] = memory
        self._by_key[(scope, memory.key)] = memory.id
        self._by_hash.setdefault((scope, text.content_hash(memory.content)), memory.id)

    def _drop_hash(self, memory: Memory) -> None:
        slot = (_scope_key(memory.scope), text.content_hash(memory.content))
        if self._by_hash.get(slot) == memory.id:
            del self._by_hash[slot]

    def _update(self, old: Memory, draft: MemoryDraft, now: float) -> WriteResult:
        fields = dict(
            content=draft.content, category=draft.category, type=draft.type, layer=draft.layer,
            tags=draft.tags, metadata=dict(draft.metadata), importance=draft.importance,
            related_entity=draft.related_entity, source=draft.source, search_context=draft.search_context,
            valid_from=draft.valid_from, valid_until=draft.valid_until,
        )
        if not draft_changes(old, draft):
            self._rows[old.id] = replace(old, last_accessed=now)
            self._changed()
            return WriteResult(self._out(self._rows[old.id]), "unchanged")
        if old.content != draft.content:
            self._versions.setdefault(old.id, []).append(MemoryVersion(old.id, old.content, now))
        if old.content != draft.content or old.search_context != draft.search_context:
            self._vectors.pop(old.id, None)
        self._drop_hash(old)
        self._add(replace(old, **fields, updated_at=now, last_accessed=now))
        self._changed()
        return WriteResult(self._out(self._rows[old.id]), "updated", previous=self._out(old))

    def delete(self, ids: Sequence[str]) -> list[Memory]:
        removed = []
        with self._lock:
            for memory_id in ids:
                memory = self._rows.get(memory_id)
                if memory is None:
                    continue
                removed.append(self._out(memory))
                del self._rows[memory_id]
                del self._by_key[(_scope_key(memory.scope), memory.key)]
                self._drop_hash(memory)
                for other in self._links.pop(memory_id, set()):
                    self._links.get(other, set()).discard(memory_id)
                self._versions.pop(memory_id, None)
                self._vectors.pop(memory_id, None)
            if removed:
                self._changed()
        return removed

    def link(self, a_id: str, b_id: str) -> bool:
        with self._lock:
            if a_id == b_id or a_id not in self._rows or b_id not in self._rows:
                return False
            self._links.setdefault(a_id, set()).add(b_id)
            self._links.setdefault(b_id, set()).add(a_id)
            self._changed()
            return True

    def unlink(self, a_id: str, b_id: str) -> bool:
        with self._lock:
            had = b_id in self._links.get(a_id, set())
            self._links.get(a_id, set()).discard(b_id)
            self._links.get(b_id, set()).discard(a_id)
            if had:
                self._changed()
            return had

    def move(self, memory_id: str, scope: Scope) -> Memory | None:
        return move_one(self.move_many({memory_id: scope}), memory_id)

    def move_many(self, moves: Mapping[str, Scope]) -> dict[str, Memory | EngramError]:
        with self._lock:
            known = {i: self._rows[i] for i in moves if i in self._rows}
            for memory in list(known.values()):
                related = [row for row in self._rows.values() if row.superseded_by == memory.id]
                if memory.superseded_by in self._rows:
                    related.append(self._rows[memory.superseded_by])
                known |= {row.id: row for row in related if row.id not in known}
            out: dict[str, Memory | EngramError] = {i: self._out(known[i]) for i in moves if i in known}
            refused = refused_moves(moves, known)
            out |= refused
            planned = {i: scope for i, scope in moves.items() if i in known and i not in refused and known[i].scope != scope}
            for memory_id, scope in planned.items():
                old = self._rows[memory_id]
                new = _scope_key(scope)
                key = free_key(old.key, lambda keys, new=new: {k for k in keys if (new, k) in self._by_key})
                # An end moved with it is judged by the agent it moves to.
                for end in [e for e in self._links.get(memory_id, ()) if crosses_agents(
                        scope.agent, planned[e].agent if e in planned else self._rows[e].scope.agent)]:
                    self._links[memory_id].discard(end)
                    self._links.get(end, set()).discard(memory_id)
                del self._by_key[(_scope_key(old.scope), old.key)]
                self._drop_hash(old)
                self._add(replace(old, scope=scope, key=key))
            if planned:
                self._changed()
            return out | {i: self._out(self._rows[i]) for i in planned}

    def touch(
        self, ids: Sequence[str], now: float, *, recall: bool = True, importance_boost: float = 0.0,
        importance_cap: float = 1.0,
    ) -> None:
        with self._lock:
            for memory_id in ids:
                memory = self._rows.get(memory_id)
                if memory is not None:
                    importance = (max(memory.importance, min(importance_cap, round(memory.importance + importance_boost,
                                                                                     BOOST_DIGITS)))
                                  if importance_boost > 0 else memory.importance)
                    self._rows[memory_id] = replace(
                        memory, last_accessed=now, recall_count=memory.recall_count + (1 if recall else 0),
                        importance=importance,
                    )
            self._changed(content=False)

    def merge_metadata(self, memory_id: str, values: Mapping[str, Any], *,
                       expect: Mapping[str, Any] | None = None) -> Memory | None:
        with self._lock:
            memory = self._rows.get(memory_id)
            merged = None if memory is None else merged_metadata(memory, values, expect)
            if memory is None or merged is None:
                return None
            self._rows[memory_id] = replace(memory, metadata=merged)
            self._changed()  # a metadata filter may read it (and the JSON file keeps it)
            return self._out(self._rows[memory_id])

    def raise_received_at(self, memory_id: str, at: float) -> Memory | None:
        with self._lock:
            memory = self._rows.get(memory_id)
            if memory is None:
                return None
            if memory.received_at is None or memory.received_at < at:
                self._rows[memory_id] = replace(memory, received_at=at)
                self._changed()  # a cached recall holds the memory with its old arrival (and the JSON file keeps it)
            return self._out(self._rows[memory_id])

    def set_superseded(
        self, memory_id: str, successor_id: str | None, *, now: float | None = None, valid_until: float | None = None
    ) -> bool:
        with self._lock:
            memory = self._rows.get(memory_id)
            superseding = successor_id is not None
            if memory is None or (superseding and successor_id not in self._rows):
                return False
            if successor_id is not None and self._superseded_through(successor_id, memory_id):
                raise SupersedeCycle(memory_id, successor_id)
            self._rows[memory_id] = replace(
                memory, superseded_by=successor_id, superseded_at=now if superseding else None,
                # An explicit valid_until already stored wins over the one superseding closes with.
                valid_until=memory.valid_until if memory.valid_until is not None or not superseding else valid_until,
            )
            self._changed()
            return True

    def _superseded_through(self, start: str, target: str) -> bool:
        """Whether ``target`` is ``start`` or on its chain of successors (called under the lock)."""
        seen: set[str] = set()
        current: str | None = start
        while current is not None and current not in seen:
            if current == target:
                return True
            seen.add(current)
            found = self._rows.get(current)
            current = None if found is None else found.superseded_by
        return False

    def import_memories(self, memories: Sequence[Memory], updates: Sequence[ImportUpdate] = ()) -> ImportResult:
        imported = skipped = 0
        with self._lock:
            # All or nothing without a transaction, as ``write_batch``'s: an update failing after
            # the rows were added puts the state copied first back (persisted once, at the end).
            saved = self._copy_state() if updates else None
            self._in_batch = True
            try:
                for memory in memories:
                    slot = (_scope_key(memory.scope), memory.key)
                    if memory.id in self._rows or slot in self._by_key:
                        skipped += 1
                        continue
                    self._add(replace(memory, links=()))
                    imported += 1
                ends = {m.id for m in memories} | {o for m in memories for o in m.links}
                agent_of = {i: self._rows[i].scope.agent or "" for i in ends if i in self._rows}
                for a_id, b_id in import_links(memories, agent_of):
                    self._links.setdefault(a_id, set()).add(b_id)
                apply_updates(self, updates)
                self._in_batch = False
                self._batch_written()
            except BaseException:
                self._in_batch = False
                if saved is not None:
                    self._restore_state(saved)
                raise
        return ImportResult(imported, skipped)

    # --- reads -----------------------------------------------------------------------------
    def get(self, ref: str, filt: MemoryFilter) -> Memory | None:
        with self._lock:
            memory = self._rows.get(ref)
            if memory is not None and memory.scope in filt.scopes:
                return self._out(memory)
            for scope in filt.scopes:  # most specific first
                memory_id = self._by_key.get((_scope_key(scope), ref))
                if memory_id is not None:
                    return self._out(self._rows[memory_id])
            return None

    def get_many(self, ids: Sequence[str]) -> list[Memory]:
        with self._lock:
            return [self._out(self._rows[i]) for i in ids if i in self._rows]

    def get_many_held(self, ids: Sequence[str]) -> list[Memory]:
        return self.get_many(ids)  # inside ``atomic``, its lock holds every row until it ends

    def list(self, filt: MemoryFilter, *, order: Order = "recent", limit: int = 50, offset: int = 0) -> list[Memory]:
        key, reverse = _SORT[order]
        with self._lock:
            # _visible yields in the order of storing (dicts keep it; an update keeps its place).
            ranked = sorted(enumerate(self._visible(filt)), key=lambda pair: (*key(pair[1]), pair[0]), reverse=reverse)
            return [self._out(m) for _, m in ranked[offset : offset + limit]]

    def count(self, filt: MemoryFilter) -> int:
        with self._lock:
            return sum(1 for _ in self._visible(filt))

    def count_by_kind(self, filt: MemoryFilter) -> list[KindCount]:
        with self._lock:
            memories: Counter[tuple[Scope, str, str]] = Counter()
            vectors: Counter[tuple[Scope, str, str]] = Counter()
            for m in self._visible(filt):
                kind = (m.scope, m.category.value, m.type)
                memories[kind] += 1
                vectors[kind] += m.id in self._vectors
        return [KindCount(*kind, n, vectors[kind]) for kind, n in memories.items()]

    def sessions_of(self, agent: str) -> list[str]:
        with self._lock:
            return sorted({m.scope.session for m in self._rows.values() if m.scope.agent == agent and m.scope.session})

    def count_links(self, filt: MemoryFilter) -> int:
        with self._lock:
            ids = {m.id for m in self._visible(filt)}
            return sum(1 for a in ids for b in self._links.get(a, ()) if a < b and b in ids)

    def search_text(self, query: str, filt: MemoryFilter, *, limit: int) -> list[tuple[Memory, float]]:
        terms = text.query_terms(text.fold(query))
        # One-letter tokens only (``recall b``) go straight to the substring fallback (PtrClaw).
        chars = [] if terms else text.single_char_terms(text.fold(query))
        if not terms and not chars:
            return []
        scored: list[tuple[float, float, Memory]] = []
        with self._lock:
            weights = self._idf(terms)
            for memory in self._visible(filt) if terms else ():
                score = _word_score(memory, terms, weights)
                if score:
                    scored.append((score, memory.created_at, memory))
            if scored:
                scored.sort(key=lambda item: (item[0], item[1]), reverse=True)
            else:  # substring fallback, its ties ordered as SQLite's LIKE query orders them (newest id first)
                for memory in self._visible(filt):
                    haystack = text.fold(memory.key + " " + memory.content).lower()
                    score = float(sum(t in haystack for t in terms or chars))
                    if score:
                        scored.append((score, memory.created_at, memory))
                scored.sort(key=lambda item: (item[0], item[1], item[2].id), reverse=True)
            return [(self._out(m), s) for s, _, m in scored[:limit]]

    def text_scores(self, query: str, ids: Sequence[str]) -> dict[str, float]:
        terms = text.query_terms(text.fold(query))
        with self._lock:
            weights = self._idf(terms)
            found = {memory_id: self._rows[memory_id] for memory_id in ids if memory_id in self._rows}
            scores = {memory_id: _word_score(memory, terms, weights) for memory_id, memory in found.items()}
        return {memory_id: score for memory_id, score in scores.items() if score}

    def text_score_ceiling(self, query: str) -> float | None:
        # Each word found once in the content scores its IDF (a key hit twice that, a context hit 0.3).
        terms = text.query_terms(text.fold(query))
        if not terms:
            return None
        with self._lock:
            return sum(self._idf(terms).values())

    def _idf(self, terms: list[str]) -> dict[str, float]:
        """Each term's IDF over every stored memory, as FTS5's bm25 computes it: rare words weigh more."""
        rows = len(self._rows)
        freq = dict.fromkeys(terms, 0)
        for memory in self._rows.values():
            present = _words_of(memory)
            for term in terms:
                freq[term] += term in present
        return {t: max(math.log((rows - n + 0.5) / (n + 0.5)), 1e-6) for t, n in freq.items()}

    def find_matching_all(self, query: str, filt: MemoryFilter) -> list[Memory]:
        terms = text.every_word(text.fold(query))
        if not terms:
            return []
        with self._lock:
            return [self._out(m) for m in self._visible(filt) if text.holds_every_word(query, m.key, m.content)]

    def neighbours(self, memory_id: str, filt: MemoryFilter, *, limit: int = 20) -> list[Memory]:
        return linked_memories(self, memory_id, filt, limit)

    def matching_ids(self, ids: Sequence[str], filt: MemoryFilter) -> dict[str, float]:
        with self._lock:
            return {i: self._rows[i].created_at for i in ids if i in self._rows and filt.matches(self._rows[i])}

    def versions(self, memory_id: str) -> list[MemoryVersion]:
        with self._lock:
            return list(self._versions.get(memory_id, ()))

    def iter_all(self) -> Iterator[Memory]:
        with self._lock:
            snapshot = [self._out(m) for m in self._rows.values()]
        yield from snapshot

    def stats(self) -> StoreStats:
        with self._lock:
            by_category: dict[str, int] = {}
            by_scope: dict[str, int] = {}
            for memory in self._rows.values():
                by_category[memory.category.value] = by_category.get(memory.category.value, 0) + 1
                by_scope[str(memory.scope)] = by_scope.get(str(memory.scope), 0) + 1
            return StoreStats(
                backend=self.name, location=self.location(), memories=len(self._rows), by_category=by_category,
                by_scope=by_scope, links=sum(len(v) for v in self._links.values()) // 2,
                vectors=len(self._vectors), size_bytes=self._size(), embedding_identity=self._identity,
            )

    def location(self) -> str:
        return "memory"

    def _size(self) -> int:
        return 0

    # --- vectors ---------------------------------------------------------------------------
    def vector_identity(self) -> str | None:
        return self._identity

    def set_vectors(self, identity: str, items: Sequence[tuple[str, np.ndarray]]) -> None:
        arrays = checked_vectors(identity, items)
        with self._lock:
            if self._identity is not None and self._identity != identity:
                raise DimensionError(
                    "embedding", f"store holds vectors of {self._identity}, not {identity}", "reindex to switch models"
                )
            self._identity = identity
            for memory_id, array in arrays:
                if memory_id in self._rows:
                    self._vectors[memory_id] = array
            self._changed()

    def clear_vectors(self) -> None:
        with self._lock:
            self._vectors.clear()
            self._identity = None
            self._changed()

    def vectors_for(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        with self._lock:
            return {i: self._vectors[i] for i in ids if i in self._vectors}

    def missing_vectors(self, limit: int = 1000) -> list[Memory]:
        with self._lock:
            return [self._out(m) for i, m in self._rows.items() if i not in self._vectors][:limit]

    def search_vector(self, vector: np.ndarray, filt: MemoryFilter, *, limit: int) -> list[tuple[Memory, float]]:
        with self._lock:
            if self._matrix_stale:
                self._matrix.load(list(self._vectors.items()))
                self._matrix_stale = False
            query = np.asarray(vector, dtype=np.float32).reshape(-1)
            if not len(self._matrix) or query.shape[0] != self._matrix.dims:
                return []
            hits = []
            for memory_id, score in self._matrix.top(query, len(self._matrix)):
                memory = self._rows.get(memory_id)
                if memory is not None and filt.matches(memory):
                    hits.append((self._out(memory), score))
                    if len(hits) >= limit:
                        break
            return hits

    def close(self) -> None:
        pass


def _words_of(memory: Memory) -> set[str]:
    return (set(text.search_words(memory.key)) | set(text.search_words(memory.content))
            | set(text.search_words(memory.search_context or "")) | set(text.search_words(text.time_words(memory.created_at))))


def _word_score(memory: Memory, terms: list[str], weights: dict[str, float]) -> float:
    """Query words found in the key (2.0 each), the content (1.0), the search context (0.3) and the
    memory's time as words (1.0), each times the word's IDF."""
    key_words, content_words = set(text.search_words(memory.key)), set(text.search_words(memory.content))
    context_words = set(text.search_words(memory.search_context or ""))
    time_words = set(text.search_words(text.time_words(memory.created_at)))
    return sum(weights[t] * (2.0 * (t in key_words) + 1.0 * (t in content_words) + 0.3 * (t in context_words)
                             + 1.0 * (t in time_words)) for t in terms)
