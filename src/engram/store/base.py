"""The MemoryStore contract: what every memory backend does, pinned by ``engram.testing``.

Stores are deliberately narrow: they persist records and answer queries. Validation, key
generation policy and ranking live once in ``model``, ``engine`` and ``search``.

Rules every backend keeps:
- ``upsert`` is atomic. With a key, it updates the memory with that key in the draft's scope
  (keeping the old content in ``versions`` when it changes); without one, identical content
  already stored in the scope is a ``duplicate`` and nothing is written; otherwise a fresh key is
  derived from ``proposed_key`` (suffixed ``-2``, ``-3``… when taken: ``store.free_key``, one search for all).
- ``get`` resolves an id, or a key in the visible scopes, the most specific scope winning.
- ``delete`` removes the memories and every link that pointed at them, returning what it removed.
- ``link`` is bidirectional and fails (returns False) when either end is missing.
- ``move`` changes a memory's scope in place: its id, times, recall count, versions and vector stay;
  its key too unless the new scope holds it (then a free key from it, as ``upsert`` derives one);
  the links it would keep to another agent's memories go (``crosses_agents``), in the same write;
  a move that would hide a superseded memory's successor from it is refused (``refuse_hidden_supersession``).
  ``move_many`` moves several in one write, that rule and the links' checked against the scopes
  the memories have once the whole group moved (``refused_moves``): a memory and its successor
  moved together stay visible to each other.
- ``set_superseded`` checks, in the same transaction as its write, that both ends are stored and
  that the successor is not already superseded by the memory (directly or through others): two
  racing supersedes, in two threads, processes or hosts, never leave a cycle.
- a ``Memory``'s ``links`` from a store hold every linked id, whatever its scope: the store is the
  operator's view (file sync, exports, migration). ``Engram`` narrows them to what its reader
  may see before any door shows them (``matching_ids``).
- ``merge_metadata`` sets some metadata values of one memory and changes nothing else: not its
  ``updated_at`` or ``last_accessed``, no version, no vector. It is bookkeeping kept beside a memory
  (a LangGraph item's expiry moved by a read), not a change to it; ``expect`` is checked in the same
  write, so a change made since the caller read the memory is never overwritten (``merged_metadata``).
- ``raise_received_at`` only ever moves a memory's arrival later (an unknown one becomes known) and
  changes nothing else: the consolidation job gives a merged survivor the latest arrival of its group.
- ``atomic(work)`` runs ``work``, calls of the store's own methods, as one write: every change it
  makes is kept, or none when it raises (SQLite, PostgreSQL: one transaction its calls join; in
  memory, JSON file: the state put back, the file written once, at the end). The consolidation job
  merges a group so; a plug-in store without it has the group written call by call, as before.
  ``get_many_held`` reads, inside it, rows no other writer changes before it ends (the group merged).
- ``search_text`` never raises on odd query text: operators and quotes are searched as words.
- ``write_batch`` stores several upserts, their vectors and links in one transaction where the
  backend has them; each write that fails is undone alone and its error returned in its place.
  With ``all_or_nothing`` a write that fails undoes the whole batch instead, and its error is
  raised: a caller storing a batch as one (``Engram.remember_many``) gets all of it or none.
- vectors: ``set_vectors`` refuses a vector whose size differs from the store's identity before
  writing anything; memories without a vector simply do not appear in ``search_vector``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np

from engram.errors import EngramError, NotFoundError, StorageError, ValidationError
from engram.model import Memory, MemoryDraft, MemoryFilter, MemoryVersion, Order, Scope, WriteResult
from engram.where import equal

T = TypeVar("T")

# A boosted importance is rounded to this many decimals: binary fractions summed recall after
# recall drift (0.7 + 0.1 = 0.7999999999999999), which every door then prints.
BOOST_DIGITS = 9


class SupersedeCycle(ValidationError):
    """``set_superseded``'s refusal, raised from inside its write (nothing changed): ``successor_id``
    is already superseded by ``memory_id``, directly or through others, so each would retire the
    other and both would leave recall. ``Engram.supersede`` names the two by key."""

    def __init__(self, memory_id: str, successor_id: str) -> None:
        self.memory_id = memory_id
        self.successor_id = successor_id
        super().__init__("supersede", f"{successor_id} is itself superseded by {memory_id} (directly or through"
                         " others): both would leave recall", f"a successor that {memory_id} does not supersede")


class HiddenSupersession(ValidationError):
    """``refuse_hidden_supersession``'s refusal of a move (field ``scope``). ``partners``: the ids
    of the memories it would leave a superseded memory unable to see its successor with (its
    successor, or those it supersedes). Moved in the same ``move_many`` into scopes that keep each
    superseded memory's successor in sight, the move is allowed: the memory folder's sync moves a
    memory's partner pasted into another folder of the pass with it (``files.moves.take_over``)."""

    def __init__(self, problem: str, allowed: str, partners: tuple[str, ...]) -> None:
        super().__init__("scope", problem, allowed)
        self.partners = partners


# Whether the second parameter (the memory to supersede) is on the chain of successors of the first
# (its would-be successor: that one's ``superseded_by``, that one's, and so on): SQL both SQLite and
# PostgreSQL read, with the driver's placeholder filled in. UNION (not UNION ALL) drops an id
# already walked, so a chain that already loops ends the walk.
SUCCESSOR_CHAIN_SQL = (
    "WITH RECURSIVE chain(id) AS (SELECT superseded_by FROM memories WHERE id = {mark}"
    " UNION SELECT m.superseded_by FROM memories m JOIN chain c ON m.id = c.id WHERE m.superseded_by IS NOT NULL)"
    " SELECT 1 FROM chain WHERE id = {mark} LIMIT 1"
)


@dataclass(frozen=True, slots=True)
class ImportResult:
    imported: int
    skipped: int
    # PII found on the way in (``Engram.import_snapshot``): the kinds, never the values.
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ImportUpdate:
    """A change an import brings to a memory an earlier import made (a re-import of a source that
    rewrites its records in place, as Zep does): ``draft`` (the memory's key and scope) written
    over memory ``memory_id`` at time ``at`` as ``upsert`` writes it, its old text kept in versions."""

    memory_id: str
    draft: MemoryDraft
    at: float


@dataclass(frozen=True, slots=True)
class BatchWrite:
    """One upsert of a ``write_batch``: the draft, the key to derive from when it has none, the
    vector to keep when the upsert creates or changes the memory (None: none), and the ids of
    memories to link it with (both ways; a missing one is skipped, as ``link`` does)."""

    draft: MemoryDraft
    proposed_key: str
    vector: np.ndarray | None = None
    links: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class KindCount:
    """How many memories of one scope, category and type a filter lets through (``count_by_kind``),
    and how many of those have a vector."""

    scope: Scope
    category: str
    type: str
    memories: int
    vectors: int


@dataclass(frozen=True, slots=True)
class StoreStats:
    """The whole store in figures (the operator's view). ``by_category`` and ``by_scope`` are in
    name order whatever order a backend counted them in (PostgreSQL's GROUP BY answers in hash
    order), so every backend shows them alike."""

    backend: str
    location: str
    memories: int
    by_category: dict[str, int]
    by_scope: dict[str, int]
    links: int
    vectors: int
    size_bytes: int
    embedding_identity: str | None

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_category", dict(sorted(self.by_category.items())))
        object.__setattr__(self, "by_scope", dict(sorted(self.by_scope.items())))


@runtime_checkable

class MemoryStore(Protocol):
    name: str

    def upsert(self, draft: MemoryDraft, *, proposed_key: str, now: float) -> WriteResult: ...

    def write_batch(
        self, writes: Sequence[BatchWrite], *, now: float, identity: str | None, all_or_nothing: bool = False
    ) -> list[WriteResult | EngramError]:
        """Each write's ``upsert``, with its vector (of ``identity``) when it was created or its
        content changed, and its links, all committed together before this returns (SQLite and
        PostgreSQL: one transaction). A write that fails is undone alone and its error stands in
        its place; the others are kept. ``write_each`` is the one-at-a-time version.

        ``all_or_nothing``: a write that fails (or a failing commit) undoes every write of the
        batch, and its error is raised; the list returned then holds no error. Nothing of the
        batch is kept, whatever the backend (in-memory and JSON file ones restore their state)."""
        ...

    def get(self, ref: str, filt: MemoryFilter) -> Memory | None: ...

    def get_many(self, ids: Sequence[str]) -> list[Memory]: ...

    def get_many_held(self, ids: Sequence[str]) -> list[Memory]:
        """``get_many``, the rows held for the caller's ``atomic`` until it ends: inside it, no other
        writer (another process included) changes or deletes them before its commit, so what it
        writes from them is what is stored then (PostgreSQL: ``FOR UPDATE``; SQLite: its write
        transaction, begun here if none is running; in memory, JSON file: ``atomic``'s lock). The
        consolidation job reads the group it merges so."""
        ...

    def list(self, filt: MemoryFilter, *, order: Order = "recent", limit: int = 50, offset: int = 0) -> list[Memory]: ...

    def count(self, filt: MemoryFilter) -> int: ...

    def count_by_kind(self, filt: MemoryFilter) -> list[KindCount]:
        """How many memories ``filt`` lets through, and how many of them have a vector, by scope,
        category and type (one ``KindCount`` each, in no particular order; none with zero
        memories), in one pass: an agent's stats, which once took a scan per figure."""
        ...

    def sessions_of(self, agent: str) -> list[str]:
        """The sessions of ``agent`` that hold a memory (superseded or not), in name order."""
        ...

    def count_links(self, filt: MemoryFilter) -> int:
        """Links (each once) whose two memories ``filt`` both lets through."""
        ...

    def search_text(self, query: str, filt: MemoryFilter, *, limit: int) -> list[tuple[Memory, float]]:
        """Full-text matches, best first, with a raw relevance (> 0, higher is better)."""
        ...

    def text_scores(self, query: str, ids: Sequence[str]) -> dict[str, float]:
        """The ``search_text`` score of each of ``ids`` that holds a query word (others are absent):
        recall scores every candidate the vector side found on full text too. A backend may leave
        out rows below a deep cut of the query's ranking (SQLite: its best 1,000 rows), whose
        scores are negligible beside the best."""
        ...

    def text_score_ceiling(self, query: str) -> float | None:
        """The ``search_text`` score of a memory of typical length holding each query word once,
        on the same scale: dividing by it makes text scores mean the same from query to query.
        None when the query has no searchable word."""
        ...

    def find_matching_all(self, query: str, filt: MemoryFilter) -> list[Memory]:
        """Every memory containing all of the query's words (used by forget-by-query)."""
        ...

    def delete(self, ids: Sequence[str]) -> list[Memory]: ...

    def link(self, a_id: str, b_id: str) -> bool: ...

    def unlink(self, a_id: str, b_id: str) -> bool: ...

    def move(self, memory_id: str, scope: Scope) -> Memory | None:
        """Make the memory ``memory_id`` one of ``scope``, in one write: the same id, content, times,
        recall count, versions and vector; its key unless a memory of ``scope`` holds it, then the
        free key ``free_key`` finds from it; every link that would join it to another agent's memory
        removed both ways (``crosses_agents``), the others kept. Raises ``ValidationError`` (nothing
        changed) when a memory it supersedes, or its successor, would no longer see the successor
        (``refuse_hidden_supersession``). Returns the memory as stored after
        (links included), None when no memory has that id (nothing changed). The file sync moves
        an entry a person moved by hand from one scope's folder to another's with it."""
        ...

    def move_many(self, moves: Mapping[str, Scope]) -> dict[str, Memory | EngramError]:
        """``move`` for each memory of ``moves`` (id -> scope), all in one write, the supersession
        rule and the links crossing agents decided against the scopes the memories have once the
        whole group moved: a superseded memory and its successor moved together into one scope are
        both moved, where either moved alone is refused. One that would still hide a supersession
        (``refused_moves``) stays where it is, its ``ValidationError`` in its place, and so does
        any whose move relied on it; the others move. Returns each stored memory as after (one
        already in its scope unchanged); an id no memory has is absent. The file sync moves all the
        entries a pass finds moved into one folder with it."""
        ...

    def neighbours(self, memory_id: str, filt: MemoryFilter, *, limit: int = 20) -> list[Memory]:
        """The memory's linked memories that ``filt`` lets through, its newest ``limit``
        (``newest_first``), loaded: ``linked_memories`` does it for every built-in backend."""
        ...

    def matching_ids(self, ids: Sequence[str], filt: MemoryFilter) -> dict[str, float]:
        """Those of ``ids`` that are stored memories ``filt`` lets through, each with its
        ``created_at``, in a bounded number of queries, loading no memory row. Link expansion
        asks it which of a frontier's links it may follow (and in which order: ``newest_first``);
        the engine which links a reader may be shown."""
        ...

    def touch(
        self, ids: Sequence[str], now: float, *, recall: bool = True, importance_boost: float = 0.0,
        importance_cap: float = 1.0,
    ) -> None:
        """Record a recall: ``last_accessed = now`` and ``recall_count += 1``; with ``importance_boost``
        also ``importance = min(importance_cap, importance + boost)`` (never lowered by the cap),
        rounded to ``BOOST_DIGITS`` decimals.
        ``recall=False`` only refreshes ``last_accessed`` (hygiene survivors: not a recall)."""
        ...

    def set_superseded(
        self, memory_id: str, successor_id: str | None, *, now: float | None = None, valid_until: float | None = None
    ) -> bool:
        """Mark a memory superseded by ``successor_id`` at record time ``now``, closing its valid
        time at ``valid_until`` unless it already has one; ``successor_id`` None clears both marks.
        False (nothing changed) when the memory is not stored, or the successor is not: checked in
        the same write, so a successor forgotten meanwhile never leaves a memory pointing at nothing.
        Raises ``SupersedeCycle`` (nothing changed) when the successor is already superseded by the
        memory, directly or through others: checked in the same write too, so two supersedes racing
        the opposite ways cannot both pass."""
        ...

    def merge_metadata(self, memory_id: str, values: Mapping[str, Any], *,
                       expect: Mapping[str, Any] | None = None) -> Memory | None:
        """Set ``values`` (JSON values, already checked) in the stored metadata of memory
        ``memory_id``, keeping its other keys and every other field (``updated_at`` and
        ``last_accessed`` included: the memory did not change), in one write. With ``expect``, only
        when the stored metadata holds each of its keys with that value, checked in that write.
        Returns the memory as stored after; None (nothing written) when no memory has that id or
        an expectation does not hold."""
        ...

    def raise_received_at(self, memory_id: str, at: float) -> Memory | None:
        """Make memory ``memory_id``'s arrival (``received_at``) ``at`` when it is unknown (None) or
        earlier, in one write that changes nothing else (no ``updated_at``, ``last_accessed``,
        version or vector): checked in that write, so it is never lowered, whoever wrote meanwhile.
        Returns the memory as stored after (unchanged when its arrival was already ``at`` or
        later); None when no memory has that id. The consolidation job's survivor takes the latest
        arrival of the memories merged into it, so a fact imported a moment ago is not purged as
        old with an older copy."""
        ...

    def atomic(self, work: Callable[[], T]) -> T:
        """``work()``'s answer, every change its calls of this store make kept together, or none
        of them when it raises (its error raised); its reads see its own writes, and no other caller
        sees them before it ends. ``work`` changes nothing outside the store: PostgreSQL may run it
        again (its transaction aborted as a deadlock victim, it is retried whole)."""
        ...

    def versions(self, memory_id: str) -> list[MemoryVersion]: ...

    def change_token(self) -> object | None:
        """A value that changes whenever memories, links or vectors change (recording a recall
        need not change it); None when the store cannot tell cheaply. Recall caching keys on it."""
        ...

    def import_memories(self, memories: Sequence[Memory], updates: Sequence[ImportUpdate] = ()) -> ImportResult:
        """All-or-nothing import keeping ids and times; skips ids or (scope, key) already present.
        ``links`` of each memory are restored where both ends exist afterwards. ``updates`` are
        written in the same transaction, after the memories (``apply_updates``): a failure in any
        of them, or a memory to update that is no longer stored under its key (``NotFoundError``),
        leaves the store as it was, the new memories included."""
        ...

    def iter_all(self) -> Iterator[Memory]: ...

    def stats(self) -> StoreStats: ...

    def location(self) -> str:
        """Where the data is kept (``stats().location``), without counting anything."""
        ...

    # --- vectors -------------------------------------------------------------------------
    def vector_identity(self) -> str | None:
        """``provider:model:dims`` of the stored vectors, or None when none were stored."""
        ...

    def set_vectors(self, identity: str, items: Sequence[tuple[str, np.ndarray]]) -> None: ...

    def search_vector(self, vector: np.ndarray, filt: MemoryFilter, *, limit: int) -> list[tuple[Memory, float]]:
        """Nearest memories by cosine similarity (-1..1), best first."""
        ...

    def vectors_for(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors of these memories (those that have one)."""
        ...

    def missing_vectors(self, limit: int = 1000) -> list[Memory]:
        """Memories with no vector for the current identity (for reindexing)."""
        ...

    def clear_vectors(self) -> None: ...

    def close(self) -> None: ...


def newest_first(ids: Iterable[str], created: Mapping[str, float]) -> list[str]:
    """Those of ``ids`` in ``created`` (id -> created_at), newest first: created_at, then id, both
    descending. The order of ``neighbours`` and of link expansion, decided here for every backend
    so they all return the same neighbours."""
    return sorted((i for i in dict.fromkeys(ids) if i in created), key=lambda i: (created[i], i), reverse=True)


def linked_memories(store: MemoryStore, memory_id: str, filt: MemoryFilter, limit: int) -> list[Memory]:
    """``neighbours`` from the contract's other methods: the memory's links (all of them are on
    the record), the ones ``filt`` lets through (``matching_ids``), the newest ``limit`` loaded."""
    found = store.get_many([memory_id])
    if not found or not found[0].links:
        return []
    links = found[0].links
    return store.get_many(newest_first(links, store.matching_ids(links, filt))[:limit])


def crosses_agents(agent: str | None, other: str | None) -> bool:
    """Whether a link between a memory of ``agent`` and one of ``other`` (None or "": global) would
    join two agents' memories, which no link does: an agent's memory links to its own agent's
    memories and to global ones (``import_links`` keeps the same rule; a global memory may be
    linked from every agent's)."""
    return bool(agent) and bool(other) and agent != other


def refuse_hidden_supersession(memory: Memory, scope: Scope, successor: Memory | None,
                               predecessors: Iterable[Memory]) -> None:
    """``HiddenSupersession`` when moving ``memory`` into ``scope`` would leave a superseded memory
    unable to see its successor (``Engram.supersede``'s rule): ``successor``, the memory that
    supersedes it, outside what ``scope`` sees, or ``scope`` outside what one of ``predecessors`` (the
    memories it supersedes) sees. Moved anyway, bob's superseded fact stayed out of his recall, retired
    by a memory of alice's he cannot read, and its ``superseded_by`` named that memory's id to him.
    A supersession may span scopes (a session's memory superseded by its agent's), so the way out
    is to move the others too, to scopes where the superseded one still sees its successor."""
    hidden = [(memory.key, successor.key, successor.scope, scope, successor.id)] if (
        successor is not None and successor.scope not in scope.visible()) else []
    hidden += [(old.key, memory.key, scope, old.scope, old.id) for old in predecessors if scope not in old.scope.visible()]
    if hidden:
        old_key, new_key, new_scope, old_scope, _ = hidden[0]
        raise HiddenSupersession(f"moving {memory.key} to {scope} would leave {old_key} ({old_scope}) superseded"
                                 f" by {new_key} ({new_scope}), which {old_scope} cannot see",
                                 f"a scope that keeps a superseded memory's successor visible to it: move {memory.key}"
                                 " back, or move the memories it supersedes or is superseded by with it (in one"
                                 " sync, into folders where each superseded memory still sees its successor)",
                                 tuple(partner for *_, partner in hidden))


def refused_moves(moves: Mapping[str, Scope], known: Mapping[str, Memory]) -> dict[str, EngramError]:
    """The moves of ``moves`` (id -> scope) that ``move_many`` refuses, each with its
    ``ValidationError`` (``refuse_hidden_supersession``), checked against the scopes the memories
    have once the others move. ``known``: each memory to move as stored, its successor and the
    memories it supersedes (an id not there is not stored: left out). A refused move stays where it
    is, so the others are checked again without it until none is refused: a successor moved with
    the memory it supersedes, that memory's own move refused, is refused too."""
    planned = {i: scope for i, scope in moves.items() if i in known and known[i].scope != scope}
    refused: dict[str, EngramError] = {}
    while True:
        now: dict[str, EngramError] = {}
        moved = {i: replace(m, scope=planned.get(i, m.scope)) for i, m in known.items()}  # as after the group moves
        for memory_id, scope in planned.items():
            try:
                refuse_hidden_supersession(known[memory_id], scope, moved.get(known[memory_id].superseded_by or ""),
                                           [m for m in moved.values() if m.superseded_by == memory_id])
            except ValidationError as exc:
                now[memory_id] = exc
        if not now:
            return refused
        refused |= now
        planned = {i: scope for i, scope in planned.items() if i not in now}


def move_one(moved: Mapping[str, Memory | EngramError], memory_id: str) -> Memory | None:
    """``move``'s answer from ``move_many``'s for the one memory: raises its refusal."""
    result = moved.get(memory_id)
    if isinstance(result, EngramError):
        raise result
    return result


def links_among_sql(where_from: str, where_to: str) -> str:
    """The SQL counting links (each once) between two memories that a filter lets through:
    ``where_from`` and ``where_to`` are its WHERE clause over the aliases ``a`` and ``b`` (parameters
    in that order). Links are stored both ways, so the half with ``from_id < to_id``. Each link
    looks its two ends up by id: ``from_id IN (SELECT id ...)`` built a list of every visible id
    twice, ~10x slower at 50,000 visible memories."""
    return ("SELECT COUNT(*) FROM memory_links l JOIN memories a ON a.id = l.from_id"
            f" JOIN memories b ON b.id = l.to_id WHERE l.from_id < l.to_id AND {where_from} AND {where_to}")


def kind_counts_sql(where: str, vector_key: str, memory_key: str) -> str:
    """``count_by_kind``'s query over the memories ``where`` lets through (alias ``m``), grouped by
    scope, category and type, with how many have a vector: a row of ``memory_vectors v`` belongs
    to the memory whose ``memory_key`` equals its ``vector_key`` (each backend keys vectors its own
    way: ``v.memory_rowid`` / ``m.rowid`` on SQLite, ``v.memory_id`` / ``m.id`` on PostgreSQL)."""
    return (f"SELECT m.agent, m.session, m.category, m.type, COUNT(*), COUNT({vector_key}) FROM memories m"
            f" LEFT JOIN memory_vectors v ON {vector_key} = {memory_key} WHERE {where} GROUP BY 1, 2, 3, 4")


def kind_counts(rows: Iterable[Sequence[Any]]) -> list[KindCount]:
    """The rows of ``kind_counts_sql`` as ``KindCount`` (an empty agent or session is none)."""
    return [KindCount(Scope(agent or None, session or None), category, type_, int(n), int(vectors))
            for agent, session, category, type_, n, vectors in rows]


def import_links(memories: Sequence[Memory], agent_of: Mapping[str, str]) -> list[tuple[str, str]]:
    """The links an import may store, each way: ``memories``' links whose ends are both stored
    (``agent_of``: id -> stored agent, "" for global) and stay within one agent. An end stored under
    another agent than the one its import entry names is not this import's memory (its id was
    taken); a linked memory outside the import must be the same agent's or global, so an import
    never adds a link to another agent's memory."""
    own = {m.id: m.scope.agent or "" for m in memories}
    pairs: list[tuple[str, str]] = []
    for memory in memories:
        agent = own[memory.id]
        if agent_of.get(memory.id) != agent:
            continue
        for other in memory.links:
            stored = agent_of.get(other)
            if other == memory.id or stored is None:
                continue
            if (other in own and stored == own[other]) or stored in ("", agent):
                pairs += [(memory.id, other), (other, memory.id)]
    return pairs


def merged_metadata(memory: Memory, values: Mapping[str, Any], expect: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``merge_metadata``'s new metadata for ``memory`` as read in the write: its metadata with
    ``values`` set, or None when ``expect`` does not hold (a key absent, or holding another value).
    Values are compared as JSON values (``where.equal``, as a metadata filter compares them), not
    by Python's ``==``, for which ``True == 1``: a stored ``1`` held ``expect={"done": True}``."""
    if expect and any(k not in memory.metadata or not equal(memory.metadata[k], v) for k, v in expect.items()):
        return None
    return {**memory.metadata, **values}


def apply_write(store: MemoryStore, write: BatchWrite, *, now: float, identity: str | None) -> WriteResult:
    """One ``BatchWrite`` through a store's single-write methods (in the caller's transaction,
    when the store joins nested ones)."""
    result = store.upsert(write.draft, proposed_key=write.proposed_key, now=now)
    if write.vector is not None and identity is not None and result.action in ("created", "updated"):
        store.set_vectors(identity, [(result.memory.id, write.vector)])
    linked = [store.link(result.memory.id, other) for other in write.links if other != result.memory.id]
    if any(linked):
        fresh = store.get_many([result.memory.id])
        if fresh:
            result = replace(result, memory=fresh[0])
    return result


def apply_updates(store: MemoryStore, updates: Sequence[ImportUpdate]) -> None:
    """An import's ``updates`` through the store's ``upsert``, in the caller's transaction (the
    store's ``import_memories``). Raises ``NotFoundError`` naming a memory no longer stored under
    its key (forgotten since the import read it: the upsert would have made a new one), so the
    caller's transaction undoes the whole import rather than bring it back."""
    for update in updates:
        result = store.upsert(update.draft, proposed_key=update.draft.key or "", now=update.at)
        if result.memory.id != update.memory_id:
            raise NotFoundError("memory", update.memory_id)


def check_all_or_nothing(store: MemoryStore) -> None:
    """Raise ``StorageError`` unless ``store.write_batch`` takes ``all_or_nothing``: a plug-in store
    written before it (or before ``write_batch``) cannot store a batch as one, and a caller
    promising all or none (``Engram.remember_many``) refuses, storing nothing, rather than answer
    with Python's ``TypeError`` or store part of the batch."""
    method = getattr(store, "write_batch", None)
    try:
        parameters = inspect.signature(method).parameters if method is not None else {}
    except (TypeError, ValueError):  # (a callable without a signature to read: trusted)
        return
    if "all_or_nothing" in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        return
    raise StorageError(f"the {getattr(store, 'name', type(store).__name__)} store cannot write a batch all or nothing "
                       "(its write_batch takes no all_or_nothing, as engram.testing's MemoryStoreContract asks): "
                       "nothing stored; store the memories one by one with remember, or update the store")


def group_mover(store: MemoryStore) -> Callable[[Mapping[str, Scope]], dict[str, Memory | EngramError]]:
    """``store.move_many``; for a plug-in store written before it, its ``move`` one memory at a
    time (each move checked alone, as that store always did: a superseded memory and its
    successor moved together are refused). Raises ``StorageError`` for a store written before
    ``move`` too: a caller (the file sync) reports its entries as not moved and keeps the memories
    where they were, rather than fail on Python's ``AttributeError``."""
    many = getattr(store, "move_many", None)
    if many is not None:
        return many
    one = getattr(store, "move", None)
    if one is None:
        raise StorageError(f"the {getattr(store, 'name', type(store).__name__)} store cannot move a memory "
                           "to another scope (it has no move, as engram.testing's MemoryStoreContract asks): "
                           "move the entry back, or update the store")

    def each(moves: Mapping[str, Scope]) -> dict[str, Memory | EngramError]:
        out: dict[str, Memory | EngramError] = {}
        for memory_id, scope in moves.items():
            try:
                after = one(memory_id, scope)
            except EngramError as exc:
                out[memory_id] = exc
                continue
            if after is not None:
                out[memory_id] = after
        return out

    return each


def keeps_nothing(store: MemoryStore) -> bool:
    """True for a store that keeps nothing it is given (``disabled``: memory turned off), which
    says so with a ``keeps_nothing = True`` attribute; a store without it keeps what it is given.
    Writers ask this before embedding: a vector for a store that drops it is wasted work."""
    return getattr(store, "keeps_nothing", False) is True


def write_each(
    store: MemoryStore, writes: Sequence[BatchWrite], *, now: float, identity: str | None,
    apply: Callable[..., WriteResult] = apply_write,
) -> list[WriteResult | EngramError]:
    """``write_batch`` one write at a time, each in its own transactions: for backends with no
    shared transaction to offer (in memory, JSON file, disabled). ``apply`` writes one
    (``apply(store, write, now=..., identity=...)``): a store that can undo a write failing half
    way (its row put, its vector refused) passes its own."""
    out: list[WriteResult | EngramError] = []
    for write in writes:
        try:
            out.append(apply(store, write, now=now, identity=identity))
        except EngramError as exc:
            out.append(exc)
    return out
