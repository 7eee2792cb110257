"""What the SQLite and PostgreSQL memory stores do in the same SQL, written once.

``SqliteMemoryStore`` and ``PostgresMemoryStore`` keep the same tables and answer most reads
with the same statements; they differ in the driver's placeholder (``?`` / ``%s``), the column
that orders rows as stored (SQLite's ``rowid``, PostgreSQL's ``seq``), how a vector row names its
memory, how a filter becomes SQL (``_filter_sql``), how a memory's links are read (``_select``),
and how tags and metadata are stored (``_stored``: JSON text / ``text[]`` and JSON). Each backend
sets those and inherits the reads below, the statements that insert a draft, update a memory by
key and import a memory, and the one mapping between a ``memories`` row and a ``Memory``
(``MEMORY_COLUMNS``, ``_decode``, ``_memory_params``), so a change to what ``get``, ``list``, an
update or an import reads or writes is made once and cannot drift between them. How a write is
made safe (transactions, locks), full text and vector search stay in each backend.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from engram import text
from engram.errors import EngramError
from engram.model import (
    Category,
    Layer,
    Memory,
    MemoryDraft,
    MemoryFilter,
    MemoryVersion,
    Order,
    Scope,
    WriteResult,
    draft_changes,
)
from engram.store.base import (
    KindCount,
    crosses_agents,
    kind_counts,
    kind_counts_sql,
    linked_memories,
    links_among_sql,
    merged_metadata,
    refused_moves,
)

# A memory's stored columns, in the one order both backends read (``SqlMemoryStore._decode``) and
# import (``_memory_params``) them and ``db/transfer_rows`` copies them. Its links are rows of
# ``memory_links``; ``content_hash`` is derived from the content.
MEMORY_COLUMNS = (
    "id, agent, session, key, content, category, type, layer, tags, metadata, importance, related_entity, source,"
    " created_at, updated_at, last_accessed, recall_count, superseded_by, search_context,"
    " valid_from, valid_until, superseded_at, received_at"
)
_WIDTH = MEMORY_COLUMNS.count(",") + 1
# Where a memory row (``memory_select``) holds anything its caller selects after ``MEMORY_COLUMNS``
# (PostgreSQL's links, a score).
AFTER_MEMORY = 1 + _WIDTH


def memory_select(seq: str) -> str:
    """The select list of a memory row over alias ``m``: the backend's stored-order column
    (``seq``: ``iter_all`` pages by it), then ``MEMORY_COLUMNS``."""
    return ", ".join(f"m.{column.strip()}" for column in f"{seq}, {MEMORY_COLUMNS}".split(","))


@dataclass(frozen=True)
class StoredAs:
    """How a backend stores a memory's ``tags`` and ``metadata``: each as a statement's parameter,
    and back from a row."""

    tags_param: Callable[[Sequence[str]], Any]
    metadata_param: Callable[[Mapping[str, Any]], Any]
    read_tags: Callable[[Any], tuple[str, ...]]
    read_metadata: Callable[[Any], Any]


def scope_columns(scope: Scope) -> tuple[str, str]:
    """A scope as its stored ``agent`` and ``session`` columns ("" for none: the columns are keys)."""
    return scope.agent or "", scope.session or ""


def like_escape(value: str) -> str:
    """``value`` as a LIKE pattern matching it literally (with ``ESCAPE '\\'``)."""
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def order_sql(seq: str) -> dict[Order, str]:
    """``list``'s orders over alias ``m``; ties go to the later stored (``seq``, the backend's
    stored-order column), so both backends list equal rows alike."""
    return {
        "recent": f"m.created_at DESC, m.{seq} DESC",
        "oldest": f"m.created_at ASC, m.{seq} ASC",
        "importance": f"m.importance DESC, m.created_at DESC, m.{seq} DESC",
        "accessed": f"COALESCE(m.last_accessed, m.created_at) DESC, m.{seq} DESC",
    }


def in_order_asked(memories: Sequence[Memory], ids: Sequence[str]) -> list[Memory]:
    """``memories`` in the order of ``ids`` (a forget's or a job's report lists them so)."""
    order = {memory_id: i for i, memory_id in enumerate(ids)}
    return sorted(memories, key=lambda m: order.get(m.id, 0))


class SqlMemoryStore:
    """The reads both SQL memory stores share; a backend sets the class attributes and implements
    ``_filter_sql`` and ``_select`` (see module docstring)."""

    db: Any  # the backend's database: ``read()`` opens a connection for one read
    _mark: ClassVar[str]  # the driver's placeholder
    _seq: ClassVar[str]  # the column ordering ``memories`` and ``memory_versions`` as stored
    _vector_key: ClassVar[tuple[str, str]]  # a ``memory_vectors v`` row belongs to the ``m`` row where these match
    _order_sql: ClassVar[dict[Order, str]]  # ``order_sql(_seq)``, set for each backend below
    _drop_vector_sql: ClassVar[str]  # deletes the vector of the memory whose id is its one parameter
    _stored: ClassVar[StoredAs]  # how tags and metadata are stored

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Ties go to the later stored (the backend's ``_seq``): on SQLite, without one, rows came
        # in whatever order its plan gave.
        cls._order_sql = order_sql(cls._seq)

    @staticmethod
    def _filter_sql(filt: MemoryFilter, alias: str = "m") -> tuple[str, list[Any]]:
        raise NotImplementedError

    def _select(self, conn: Any, where: str, params: Sequence[Any], tail: str = "") -> list[Memory]:
        raise NotImplementedError

    # --- rows ------------------------------------------------------------------------------
    def _decode(self, row: Sequence[Any], links: tuple[str, ...]) -> Memory:
        """A memory row (``memory_select``; what follows ``MEMORY_COLUMNS`` is left alone) as its
        ``Memory``, with ``links`` (read apart: each backend has its way)."""
        (memory_id, agent, session, key, content, category, kind, layer, tags, metadata, importance, related_entity,
         source, created_at, updated_at, last_accessed, recall_count, superseded_by, search_context, valid_from,
         valid_until, superseded_at, received_at) = row[1:AFTER_MEMORY]
        return Memory(
            id=memory_id, scope=Scope(agent or None, session or None), key=key, content=content,
            category=Category(category), type=kind, layer=Layer(layer), tags=self._stored.read_tags(tags),
            metadata=self._stored.read_metadata(metadata), importance=importance, related_entity=related_entity,
            source=source, created_at=created_at, updated_at=updated_at, last_accessed=last_accessed,
            recall_count=recall_count, superseded_by=superseded_by, search_context=search_context,
            valid_from=valid_from, valid_until=valid_until, superseded_at=superseded_at, received_at=received_at,
            links=links,
        )

    def _memory_params(self, memory: Memory) -> tuple[Any, ...]:
        """``memory`` as ``_import_sql``'s parameters: ``MEMORY_COLUMNS``, then its ``content_hash``."""
        agent, session = scope_columns(memory.scope)
        return (
            memory.id, agent, session, memory.key, memory.content, memory.category.value, memory.type,
            memory.layer.value, self._stored.tags_param(memory.tags), self._stored.metadata_param(dict(memory.metadata)),
            memory.importance, memory.related_entity, memory.source, memory.created_at, memory.updated_at,
            memory.last_accessed, memory.recall_count, memory.superseded_by, memory.search_context,
            memory.valid_from, memory.valid_until, memory.superseded_at, memory.received_at,
            text.content_hash(memory.content),
        )

    @classmethod
    def _import_sql(cls) -> str:
        """The insert of an imported memory (``_memory_params``), kept whole: its id and times too."""
        return f"INSERT INTO memories ({MEMORY_COLUMNS}, content_hash) VALUES ({', '.join([cls._mark] * (_WIDTH + 1))})"

    def _changed_by_update(self, conn: Any, old: Memory, draft: MemoryDraft) -> None:
        """Told after ``_update`` wrote a change (in its transaction): a backend's caches may need to know."""

    # --- writes ----------------------------------------------------------------------------
    def _insert_draft(self, conn: Any, memory_id: str, scope: tuple[str, str], key: str, draft: MemoryDraft,
                      digest: str, created: float, now: float, returning: str = "") -> Any:
        """Insert ``draft`` as a new memory (``upsert`` chose its key and checked for duplicates).
        ``returning`` (a ``RETURNING`` clause over alias ``m``) reads the row back in the same
        statement; the statement's cursor is returned. It arrives here ``now`` (``received_at``),
        whatever creation time the draft gives."""
        marks = ", ".join([self._mark] * 21)
        alias = " AS m" if returning else ""
        return conn.execute(
            f"INSERT INTO memories{alias} (id, agent, session, key, content, content_hash, category, type, layer,"
            " tags, metadata, importance, related_entity, source, created_at, updated_at, last_accessed,"
            f" search_context, valid_from, valid_until, received_at) VALUES ({marks}){returning}",
            (
                memory_id, *scope, key, draft.content, digest, draft.category.value, draft.type, draft.layer.value,
                self._stored.tags_param(draft.tags), self._stored.metadata_param(dict(draft.metadata)), draft.importance,
                draft.related_entity, draft.source, created, created, now, draft.search_context,
                draft.valid_from, draft.valid_until, now,
            ),
        )

    def _update(self, conn: Any, old: Memory, draft: MemoryDraft, digest: str, now: float) -> WriteResult:
        """``upsert`` of a key already stored: ``old`` becomes ``draft``, keeping its content as a
        version when it changes; a draft changing nothing only marks the memory accessed. Its arrival
        (``received_at``) is kept: a change is no new arrival."""
        m = self._mark
        if not draft_changes(old, draft):
            conn.execute(f"UPDATE memories SET last_accessed = {m} WHERE id = {m}", (now, old.id))
            return WriteResult(self._select(conn, f"m.id = {m}", (old.id,))[0], "unchanged")
        if old.content != draft.content:
            conn.execute(
                f"INSERT INTO memory_versions (memory_id, content, replaced_at) VALUES ({m}, {m}, {m})",
                (old.id, old.content, now),
            )
        if old.content != draft.content or old.search_context != draft.search_context:
            # The old vector no longer describes what is indexed.
            conn.execute(self._drop_vector_sql, (old.id,))
        conn.execute(
            f"UPDATE memories SET content = {m}, content_hash = {m}, category = {m}, type = {m}, layer = {m}, tags = {m},"
            f" metadata = {m}, importance = {m}, related_entity = {m}, source = {m}, updated_at = {m}, last_accessed = {m},"
            f" search_context = {m}, valid_from = {m}, valid_until = {m} WHERE id = {m}",
            (
                draft.content, digest, draft.category.value, draft.type, draft.layer.value,
                self._stored.tags_param(draft.tags), self._stored.metadata_param(dict(draft.metadata)), draft.importance,
                draft.related_entity, draft.source, now, now,
                draft.search_context, draft.valid_from, draft.valid_until, old.id,
            ),
        )
        self._changed_by_update(conn, old, draft)
        return WriteResult(self._select(conn, f"m.id = {m}", (old.id,))[0], "updated", previous=old)

    def _merge_metadata(self, conn: Any, memory_id: str, values: Mapping[str, Any],
                        expect: Mapping[str, Any] | None, lock: str = "") -> Memory | None:
        """``merge_metadata`` in the caller's write (``lock``: what the backend appends to lock the
        row it reads): only the ``metadata`` column is written."""
        m = self._mark
        found = self._select(conn, f"m.id = {m}", (memory_id,), lock)
        merged = None if not found else merged_metadata(found[0], values, expect)
        if merged is None:
            return None
        conn.execute(f"UPDATE memories SET metadata = {m} WHERE id = {m}", (self._stored.metadata_param(merged), memory_id))
        return replace(found[0], metadata=merged)

    def _raise_received_at(self, conn: Any, memory_id: str, at: float) -> tuple[Memory | None, bool]:
        """``raise_received_at`` in the caller's write, and whether it changed the row. The
        comparison is the statement's own condition, so an arrival a concurrent writer raised past
        ``at`` is never lowered."""
        m = self._mark
        cursor = conn.execute(
            f"UPDATE memories SET received_at = {m} WHERE id = {m} AND (received_at IS NULL OR received_at < {m})",
            (at, memory_id, at))
        found = self._select(conn, f"m.id = {m}", (memory_id,))
        return (found[0] if found else None), cursor.rowcount > 0

    def _move_many(self, conn: Any, moves: Mapping[str, Scope],
                   lock: str = "") -> tuple[dict[str, Memory | EngramError], list[str]]:
        """``move_many`` in the caller's write (``lock``: what the backend appends to lock a row),
        and the ids it moved (those a scope index files by scope must index again).
        The supersessions, the links crossing agents and the keys are decided in the same write as
        the moves, against the scopes the memories have once the whole group moved, so a link or a
        memory of the key made meanwhile by another writer is seen."""
        m = self._mark
        known: dict[str, Memory] = {}
        for memory_id in sorted(moves):  # locked in one order: two groups moved at once never wait on each other
            found = self._select(conn, f"m.id = {m}", (memory_id,), lock)
            if found:
                known[memory_id] = found[0]
        for memory in list(known.values()):
            related = self._select(conn, f"m.superseded_by = {m}", (memory.id,))
            if memory.superseded_by:
                related += self._select(conn, f"m.id = {m}", (memory.superseded_by,))
            known |= {r.id: r for r in related if r.id not in known}
        out: dict[str, Memory | EngramError] = {i: known[i] for i in moves if i in known}
        refused = refused_moves(moves, known)
        out |= refused
        planned = {i: scope for i, scope in moves.items() if i in known and i not in refused and known[i].scope != scope}
        for memory_id, scope in planned.items():
            agent, session = scope_columns(scope)
            key = self._free_key(conn, agent, session, known[memory_id].key)
            ends = conn.execute(
                f"SELECT t.id, t.agent FROM memory_links l JOIN memories t ON t.id = l.to_id WHERE l.from_id = {m}",
                (memory_id,)).fetchall()
            # An end moved with it is judged by the agent it moves to.
            cut = [end for end, end_agent in ends
                   if crosses_agents(agent, scope_columns(planned[end])[0] if end in planned else end_agent)]
            if cut:
                marks = ", ".join([m] * len(cut))
                conn.execute(f"DELETE FROM memory_links WHERE (from_id = {m} AND to_id IN ({marks}))"
                             f" OR (to_id = {m} AND from_id IN ({marks}))", (memory_id, *cut, memory_id, *cut))
            conn.execute(f"UPDATE memories SET agent = {m}, session = {m}, key = {m} WHERE id = {m}",
                         (agent, session, key, memory_id))
        for memory_id in planned:
            out[memory_id] = self._select(conn, f"m.id = {m}", (memory_id,))[0]
        return out, list(planned)

    @staticmethod
    def _free_key(conn: Any, agent: str, session: str, proposed: str) -> str:
        raise NotImplementedError

    # --- reads -----------------------------------------------------------------------------
    def get(self, ref: str, filt: MemoryFilter) -> Memory | None:
        where, params = self._filter_sql(MemoryFilter(scopes=filt.scopes, include_superseded=True))
        mark = self._mark
        with self.db.read() as conn:
            found = self._select(conn, f"m.id = {mark} AND {where}", [ref, *params])
            if found:
                return found[0]
            # Most specific scope first: a session's key shadows the agent's, which shadows global.
            found = self._select(
                conn, f"m.key = {mark} AND {where}", [ref, *params], "ORDER BY m.session DESC, m.agent DESC LIMIT 1"
            )
            return found[0] if found else None

    def list(self, filt: MemoryFilter, *, order: Order = "recent", limit: int = 50, offset: int = 0) -> list[Memory]:
        where, params = self._filter_sql(filt)
        with self.db.read() as conn:
            return self._select(
                conn, where, [*params, limit, offset], f"ORDER BY {self._order_sql[order]} LIMIT {self._mark} OFFSET {self._mark}"
            )

    def count(self, filt: MemoryFilter) -> int:
        where, params = self._filter_sql(filt)
        with self.db.read() as conn:
            return int(conn.execute(f"SELECT COUNT(*) FROM memories m WHERE {where}", params).fetchone()[0])

    def count_by_kind(self, filt: MemoryFilter) -> list[KindCount]:
        where, params = self._filter_sql(filt)
        with self.db.read() as conn:
            return kind_counts(conn.execute(kind_counts_sql(where, *self._vector_key), params).fetchall())

    def sessions_of(self, agent: str) -> list[str]:
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT DISTINCT session FROM memories WHERE agent = {self._mark} AND session <> '' ORDER BY 1", [agent])
            return [session for (session,) in rows.fetchall()]

    def count_links(self, filt: MemoryFilter) -> int:
        where_from, params_from = self._filter_sql(filt, "a")
        where_to, params_to = self._filter_sql(filt, "b")
        with self.db.read() as conn:
            sql = links_among_sql(where_from, where_to)
            return int(conn.execute(sql, [*params_from, *params_to]).fetchone()[0])

    def neighbours(self, memory_id: str, filt: MemoryFilter, *, limit: int = 20) -> list[Memory]:
        return linked_memories(self, memory_id, filt, limit)

    def versions(self, memory_id: str) -> list[MemoryVersion]:
        with self.db.read() as conn:
            return [
                MemoryVersion(memory_id, content, replaced_at)
                for content, replaced_at in conn.execute(
                    "SELECT content, replaced_at FROM memory_versions"
                    f" WHERE memory_id = {self._mark} ORDER BY replaced_at, {self._seq}",
                    (memory_id,),
                ).fetchall()
            ]

    def missing_vectors(self, limit: int = 1000) -> list[Memory]:
        vector_key, memory_key = self._vector_key
        with self.db.read() as conn:
            return self._select(
                conn,
                f"NOT EXISTS (SELECT 1 FROM memory_vectors v WHERE {vector_key} = {memory_key})",
                [limit],
                f"ORDER BY m.{self._seq} LIMIT {self._mark}",
            )

    @staticmethod
    def _counts(conn: Any) -> tuple[int, dict[str, int], dict[str, int], int, int]:
        """``stats``' counts: memories, by category, by scope, links (each once) and vectors."""
        total = conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
        by_category = dict(conn.execute("SELECT category, COUNT(*) FROM memories GROUP BY category").fetchall())
        by_scope: dict[str, int] = {}
        for agent, session, n in conn.execute("SELECT agent, session, COUNT(*) FROM memories GROUP BY 1, 2").fetchall():
            label = str(Scope(agent or None, session or None))
            by_scope[label] = by_scope.get(label, 0) + n
        links = conn.execute("SELECT COUNT(*) FROM memory_links").fetchone()[0] // 2
        vectors = conn.execute("SELECT COUNT(*) FROM memory_vectors").fetchone()[0]
        return total, by_category, by_scope, links, vectors
