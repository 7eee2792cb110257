"""The SQLite memory store (the default): one file, FTS5 with BM25, links, versions, vectors.

Full text: FTS5 over key, content, search_context and the memory's time as words ("May 8 2023",
UTC; a generated column), with porter stemming, kept in sync by triggers, ranked by BM25 with key
matches weighted twice (as PtrClaw's JSON backend weighs key hits), search_context matches 0.3
(context helps find a memory; it is not the memory) and time words like content. The query is
built from word tokens only (``engram.text``), so no user string can be an FTS syntax error;
when FTS finds nothing, a ``LIKE`` scan over the same words answers instead (PtrClaw) on stores
small enough to scan, and word prefixes through the index on larger ones. On large stores
ranking is bounded in work: rows holding only a query's most common terms are not ranked
(``store/fts.py``, ``[full_text]``).

Vectors: float32 blobs in ``memory_vectors`` are the record, each row with its own increasing
sequence number. Searches run over caches of them keyed by that number (``store/sqlite_vectors.py``:
an exact in-process matrix for small stores, an HNSW graph saved beside the file for large ones);
candidates are joined back through SQL with the filter, so deleted or replaced vectors drop out.
"""

from __future__ import annotations

import dataclasses
import glob
import json
import logging
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from engram import text
from engram.db.migrate import applied, migrate, pending
from engram.db.sqlite import Database
from engram.errors import DimensionError, EngramError, StorageError
from engram.ids import new_id
from engram.model import Memory, MemoryDraft, MemoryFilter, MemoryVersion, Scope, WriteResult, metadata_text
from engram.store.base import (
    BOOST_DIGITS,
    SUCCESSOR_CHAIN_SQL,
    BatchWrite,
    ImportResult,
    ImportUpdate,
    StoreStats,
    SupersedeCycle,
    apply_updates,
    apply_write,
    import_links,
    move_one,
)
from engram.store.filter_sql import FilterDialect, filter_clause
from engram.store.free_key import free_key
from engram.store.fts import FtsRanker
from engram.store.index_settings import FullTextSettings, VectorIndexSettings
from engram.store.sql_store import SqlMemoryStore, StoredAs, in_order_asked, like_escape, memory_select, scope_columns
from engram.store.sqlite_text import SqliteTextIndex
from engram.store.sqlite_vectors import SqliteVectorSearch
from engram.store.vectors import checked_vectors
from engram.store.where_sql import SQLITE_FOLD_CASE, SQLITE_METADATA_TEXT, sqlite_fold_case, sqlite_where
from engram.where import fold_case

log = logging.getLogger(__name__)
T = TypeVar("T")

_SUCCESSOR_CHAIN = SUCCESSOR_CHAIN_SQL.format(mark="?")
_COLUMNS = memory_select("rowid")
# Tags and metadata as JSON text.
_STORED = StoredAs(tags_param=lambda tags: json.dumps(list(tags)), metadata_param=json.dumps,
                   read_tags=lambda stored: tuple(json.loads(stored)), read_metadata=json.loads)
# Approximate candidates fetched (growing 4x from limit * 2 + 16) before a filter is searched exactly.
_MAX_APPROXIMATE_FETCH = 1024
# A time range holding at most this many rows is searched exactly through its time index, without
# walking the graph: those rows' vectors cost less to score than walks that would find too few of them.
_TIME_RANGE_EXACT_ROWS = 20_000
# Shortest query term searched as a word prefix when nothing matched (shorter ones match too much).
_MIN_PREFIX = 3


def _stored_metadata_text(document: str | None, keys: str) -> str | None:
    """``metadata_text`` of the value a row's metadata JSON holds under ``keys`` (a JSON list of
    keys, in turn: ``Compare.keys``), NULL when absent: the SQL function ``where_sql`` compares
    equality with values other than strings by."""
    try:
        data = json.loads(document) if document else None
    except ValueError:
        return None
    for key in json.loads(keys):
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return metadata_text(data)


def _fold_case(text: Any) -> Any:
    """``engram.where.fold_case`` for SQL (icontains, the related entity); other values as they are."""
    return fold_case(text) if isinstance(text, str) else text



def _one_of(column: str, values: list[str], params: list[Any]) -> str:
    params.extend(values)
    return f"{column} IN ({','.join('?' * len(values))})"


def _has_tags(alias: str, tags: Sequence[str], params: list[Any]) -> list[str]:
    params.extend(tags)
    return [f"EXISTS (SELECT 1 FROM json_each({alias}.tags) WHERE value = ?)"] * len(tags)


def _scope_among(alias: str, scopes: list[tuple[str, str]], params: list[Any]) -> str:
    # One parameter however many scopes (filter_sql.MANY_SCOPES says why).
    params.append(json.dumps(scopes))
    return (f"({alias}.agent, {alias}.session) IN (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]')"
            " FROM json_each(?))")


_DIALECT = FilterDialect(mark="?", false="0", one_of=_one_of, has_tags=_has_tags, where=sqlite_where,
                         fold_case=sqlite_fold_case, scope_among=_scope_among)


def filter_sql(filt: MemoryFilter, alias: str = "m") -> tuple[str, list[Any]]:
    """Translate a MemoryFilter into a WHERE clause; ``MemoryFilter.matches`` is the reference."""
    return filter_clause(filt, alias, _DIALECT)



class SqliteMemoryStore(SqlMemoryStore):
    """MemoryStore on one SQLite file (see module docstring); the reads it shares with PostgreSQL
    are ``SqlMemoryStore``'s."""

    name = "sqlite"
    _mark = "?"
    _seq = "rowid"
    _vector_key = ("v.memory_rowid", "m.rowid")
    _drop_vector_sql = "DELETE FROM memory_vectors WHERE memory_rowid = (SELECT rowid FROM memories WHERE id = ?)"
    _filter_sql = staticmethod(filter_sql)
    _stored = _STORED

    def __init__(
        self,
        path: Path | str,
        *,
        busy_timeout_ms: int = 30_000,
        key: str | None = None,
        before_migrate: Callable[[Database], None] | None = None,
        vector_index: VectorIndexSettings | None = None,
        full_text: FullTextSettings | None = None,
        after_close: Callable[[], None] | None = None,
    ) -> None:
        self.path = Path(path)
        self._after_close = after_close  # e.g. the clean-close stamp (lifecycle.clean_close)
        self.db = Database(path, busy_timeout_ms=busy_timeout_ms, key=key)
        self.db.conn.create_function(SQLITE_METADATA_TEXT, 2, _stored_metadata_text)
        self.db.conn.create_function(SQLITE_FOLD_CASE, 1, _fold_case)
        # An existing database about to change shape is backed up first (lifecycle.backup).
        if before_migrate is not None and applied(self.db) and pending(self.db):
            before_migrate(self.db)
        migrate(self.db)
        index_path = None if str(path) == ":memory:" else self.path.with_name(self.path.name + ".usearch")
        self._vectors = SqliteVectorSearch(self.db, index_path, vector_index)
        text_path = None if str(path) == ":memory:" else self.path.with_name(self.path.name + ".tantivy")
        self._text_index = SqliteTextIndex(self.db, text_path, full_text or FullTextSettings())
        self._fts = FtsRanker(full_text, self._text_index)
        self._own_writes = 0

    # --- rows ------------------------------------------------------------------------------
    def _memories(self, conn: Any, rows: Sequence[Sequence[Any]]) -> list[Memory]:
        if not rows:
            return []
        ids = [row[1] for row in rows]
        links: dict[str, tuple[str, ...]] = {}
        for chunk in _chunks(ids, 500):
            marks = ",".join("?" * len(chunk))
            # One row per memory, its link ids joined by SQLite (ids hold no comma): a densely linked
            # memory costs one string split, not a Python step per link.
            for from_id, joined in conn.execute(
                f"SELECT from_id, group_concat(to_id) FROM memory_links WHERE from_id IN ({marks}) GROUP BY from_id",
                chunk,
            ):
                links[from_id] = tuple(sorted(joined.split(",")))
        return [self._decode(row, links.get(row[1], ())) for row in rows]

    def _select(self, conn: Any, where: str, params: Sequence[Any], tail: str = "") -> list[Memory]:
        rows = conn.execute(f"SELECT {_COLUMNS} FROM memories m WHERE {where} {tail}", params).fetchall()
        return self._memories(conn, rows)

    # --- writes ----------------------------------------------------------------------------
    def upsert(self, draft: MemoryDraft, *, proposed_key: str, now: float) -> WriteResult:
        agent, session = scope_columns(draft.scope)
        digest = text.content_hash(draft.content)
        with self.db.write() as conn:
            if draft.key is not None:
                existing = self._select(
                    conn, "m.agent = ? AND m.session = ? AND m.key = ?", (agent, session, draft.key)
                )
                if existing:
                    return self._update(conn, existing[0], draft, digest, now)
                key = draft.key
            else:
                same = self._select(
                    conn,
                    "m.agent = ? AND m.session = ? AND m.content_hash = ?",
                    (agent, session, digest),
                )
                if same:
                    return WriteResult(same[0], "duplicate")
                key = self._free_key(conn, agent, session, proposed_key)
            memory_id = new_id()
            created = draft.created_at if draft.created_at is not None else now
            self._insert_draft(conn, memory_id, (agent, session), key, draft, digest, created, now)
            self._own_writes += 1
            # Read back without asking memory_links: a new id (a fresh UUIDv7) has no links yet; a
            # batch write's links are made after this upsert, by link(), and its record read
            # again then (apply_write).
            row = conn.execute(f"SELECT {_COLUMNS} FROM memories m WHERE m.id = ?", (memory_id,)).fetchone()
            return WriteResult(self._decode(row, ()), "created")

    def write_batch(
        self, writes: Sequence[BatchWrite], *, now: float, identity: str | None, all_or_nothing: bool = False
    ) -> list[WriteResult | EngramError]:
        # One BEGIN IMMEDIATE ... COMMIT for the batch; a savepoint per write undoes a failing one
        # alone (the nested upsert/set_vectors/link calls join this transaction). All or nothing,
        # a failing write's error leaves the block instead, which rolls the whole batch back.
        out: list[WriteResult | EngramError] = []
        with self.db.write() as conn:
            for write in writes:
                if all_or_nothing:
                    out.append(apply_write(self, write, now=now, identity=identity))
                    continue
                conn.execute("SAVEPOINT engram_write")
                try:
                    out.append(apply_write(self, write, now=now, identity=identity))
                except EngramError as exc:
                    conn.execute("ROLLBACK TO engram_write")
                    out.append(exc)
                conn.execute("RELEASE engram_write")
        return out

    def atomic(self, work: Callable[[], T]) -> T:
        # One BEGIN IMMEDIATE ... COMMIT: the store's calls inside join it (``Database.write``), and
        # an error out of ``work`` rolls every one of them back. The full-text index's marks are
        # rows of the same file, so they go with it.
        with self.db.write():
            return work()

    def _changed_by_update(self, conn: Any, old: Memory, draft: MemoryDraft) -> None:
        self._own_writes += 1
        if old.search_context != draft.search_context and old.content == draft.content:
            # Neither a version nor (without an embedder) a new vector shows this change to the text index.
            self._mark_for_reindex(conn, [old.id])

    def _mark_for_reindex(self, conn: Any, memory_ids: Sequence[str]) -> None:
        """Have the full-text index take these rows again at its next catch-up, in any process: in
        the database, in the same write, so a command that exits before its next search leaves no
        document filed under the old scope or search context."""
        rowids = [r for chunk in _chunks(list(memory_ids), 500) for (r,) in conn.execute(
            f"SELECT rowid FROM memories WHERE id IN ({','.join('?' * len(chunk))})", chunk)]
        self._text_index.mark(conn, rowids)

    @staticmethod
    def _free_key(conn: Any, agent: str, session: str, proposed: str) -> str:
        # Each batch is one query seeking the (agent, session, key) index once a key.
        def held(keys: Sequence[str]) -> set[str]:
            marks = ",".join("?" * len(keys))
            sql = f"SELECT key FROM memories WHERE agent = ? AND session = ? AND key IN ({marks})"
            return {row[0] for row in conn.execute(sql, (agent, session, *keys))}

        return free_key(proposed, held)

    def delete(self, ids: Sequence[str]) -> list[Memory]:
        removed: list[Memory] = []
        with self.db.write() as conn:
            for chunk in _chunks(list(ids), 500):
                marks = ",".join("?" * len(chunk))
                removed.extend(self._select(conn, f"m.id IN ({marks})", chunk))
                # Their documents leave the full-text index at its next catch-up in any process.
                rowids = [int(r) for (r,) in conn.execute(f"SELECT rowid FROM memories WHERE id IN ({marks})", chunk)]
                self._text_index.mark(conn, rowids, forgotten=True)
                conn.execute(f"DELETE FROM memory_links WHERE from_id IN ({marks}) OR to_id IN ({marks})", chunk + chunk)
                conn.execute(f"DELETE FROM memory_versions WHERE memory_id IN ({marks})", chunk)
                conn.execute(f"DELETE FROM memories WHERE id IN ({marks})", chunk)
            self._own_writes += 1
        return in_order_asked(removed, ids)  # as PostgreSQL answers

    def link(self, a_id: str, b_id: str) -> bool:
        if a_id == b_id:
            return False
        with self.db.write() as conn:
            found = conn.execute("SELECT COUNT(*) FROM memories WHERE id IN (?, ?)", (a_id, b_id)).fetchone()[0]
            if found != 2:
                return False
            conn.executemany(
                "INSERT OR IGNORE INTO memory_links (from_id, to_id) VALUES (?, ?)", [(a_id, b_id), (b_id, a_id)]
            )
            self._own_writes += 1
            return True

    def unlink(self, a_id: str, b_id: str) -> bool:
        with self.db.write() as conn:
            cursor = conn.execute(
                "DELETE FROM memory_links WHERE (from_id = ? AND to_id = ?) OR (from_id = ? AND to_id = ?)",
                (a_id, b_id, b_id, a_id),
            )
            self._own_writes += 1
            return cursor.rowcount > 0

    def move(self, memory_id: str, scope: Scope) -> Memory | None:
        return move_one(self.move_many({memory_id: scope}), memory_id)

    def move_many(self, moves: Mapping[str, Scope]) -> dict[str, Memory | EngramError]:
        with self.db.write() as conn:
            out, moved = self._move_many(conn, moves)
            if moved:
                # The full-text index files each document under its scope (and its key): indexed again.
                self._mark_for_reindex(conn, list(moved))
                self._own_writes += 1
            return out

    def take_in(self, memory: Memory, versions: Sequence[MemoryVersion],
                vector: tuple[str, np.ndarray] | None = None) -> Memory | None:
        """Store ``memory`` as another database held it (its id, times, recall count and last access),
        with its ``versions`` and, given ``(identity, array)``, its vector, in one write: a memory
        moved by hand from another agent's own database (``files.cross_moves``). Its key is the
        free one ``free_key`` finds from it when its scope holds it; a link is kept where the other
        end is stored and within the agent (``import_links``). Returns the memory as stored, None
        when its id is stored already (nothing written). Raises ``DimensionError`` (nothing written)
        for a vector of another identity than the store's."""
        with self.db.write() as conn:
            if conn.execute("SELECT 1 FROM memories WHERE id = ?", (memory.id,)).fetchone():
                return None
            agent, session = scope_columns(memory.scope)
            memory = dataclasses.replace(memory, key=self._free_key(conn, agent, session, memory.key))
            self.import_memories([memory])  # joins this write
            conn.executemany("INSERT INTO memory_versions (memory_id, content, replaced_at) VALUES (?, ?, ?)",
                             [(memory.id, v.content, v.replaced_at) for v in versions])
            if vector is not None:
                self.set_vectors(vector[0], [(memory.id, vector[1])])
            return self._select(conn, "m.id = ?", (memory.id,))[0]

    def superseded_by_it(self, memory_id: str) -> list[Memory]:
        """The memories ``memory_id`` supersedes (their ``superseded_by`` names it): a memory moved
        by hand to another agent's database (``files.cross_moves``) must not leave them naming an
        id their database no longer holds."""
        with self.db.read() as conn:
            return self._select(conn, "m.superseded_by = ?", (memory_id,))

    def touch(
        self, ids: Sequence[str], now: float, *, recall: bool = True, importance_boost: float = 0.0,
        importance_cap: float = 1.0,
    ) -> None:
        if not ids:
            return
        count = 1 if recall else 0
        with self.db.write() as conn:
            for chunk in _chunks(list(ids), 500):
                marks = ",".join("?" * len(chunk))
                # MAX(importance, ...) keeps a memory already above the cap where it is; a boosted
                # one is rounded (BOOST_DIGITS) so repeated boosts do not print as 0.7999999999999999.
                conn.execute(
                    f"UPDATE memories SET last_accessed = ?, recall_count = recall_count + ?,"
                    f" importance = CASE WHEN ? > 0 THEN MAX(importance, MIN(?, ROUND(importance + ?, {BOOST_DIGITS})))"
                    f" ELSE importance END WHERE id IN ({marks})",
                    [now, count, importance_boost, importance_cap, importance_boost, *chunk],
                )

    def merge_metadata(self, memory_id: str, values: Mapping[str, Any], *,
                       expect: Mapping[str, Any] | None = None) -> Memory | None:
        # BEGIN IMMEDIATE: the read and the write are one turn of the file's single writer.
        with self.db.write() as conn:
            merged = self._merge_metadata(conn, memory_id, values, expect)
            if merged is not None:
                self._own_writes += 1  # a metadata filter may read it: cached recalls are stale
            return merged

    def raise_received_at(self, memory_id: str, at: float) -> Memory | None:
        with self.db.write() as conn:
            memory, changed = self._raise_received_at(conn, memory_id, at)
            if changed:
                self._own_writes += 1  # a cached recall holds the memory with its old arrival
            return memory

    def set_superseded(
        self, memory_id: str, successor_id: str | None, *, now: float | None = None, valid_until: float | None = None
    ) -> bool:
        with self.db.write() as conn:
            # In the write (BEGIN IMMEDIATE: one writer at a time, every process on the file), so a
            # supersede the other way round committed a moment ago is seen, and one racing waits.
            if successor_id is not None and (successor_id == memory_id or conn.execute(
                    _SUCCESSOR_CHAIN, (successor_id, memory_id)).fetchone() is not None):
                raise SupersedeCycle(memory_id, successor_id)
            # An explicit valid_until already stored wins over the one superseding closes with.
            cursor = conn.execute(
                "UPDATE memories SET superseded_by = ?, superseded_at = ?,"
                " valid_until = COALESCE(valid_until, ?) WHERE id = ?"
                " AND (? IS NULL OR EXISTS (SELECT 1 FROM memories WHERE id = ?))",
                (successor_id, now if successor_id is not None else None,
                 valid_until if successor_id is not None else None, memory_id, successor_id, successor_id),
            )
            self._own_writes += 1
            return cursor.rowcount > 0

    def import_memories(self, memories: Sequence[Memory], updates: Sequence[ImportUpdate] = ()) -> ImportResult:
        imported, skipped = 0, 0
        with self.db.write() as conn:
            for memory in memories:
                agent, session = scope_columns(memory.scope)
                clash = conn.execute(
                    "SELECT 1 FROM memories WHERE id = ? OR (agent = ? AND session = ? AND key = ?)",
                    (memory.id, agent, session, memory.key),
                ).fetchone()
                if clash:
                    skipped += 1
                    continue
                conn.execute(self._import_sql(), self._memory_params(memory))
                imported += 1
            ends = sorted({m.id for m in memories if m.links} | {o for m in memories for o in m.links})
            agent_of: dict[str, str] = {}
            for start in range(0, len(ends), 500):
                chunk = ends[start:start + 500]
                agent_of.update(conn.execute(
                    f"SELECT id, agent FROM memories WHERE id IN ({', '.join('?' * len(chunk))})", chunk))
            conn.executemany("INSERT OR IGNORE INTO memory_links (from_id, to_id) VALUES (?, ?)",
                             import_links(memories, agent_of))
            self._own_writes += 1
            apply_updates(self, updates)  # each upsert joins this transaction
        return ImportResult(imported, skipped)

    # --- reads -----------------------------------------------------------------------------
    def get_many_held(self, ids: Sequence[str]) -> list[Memory]:
        # In a write transaction (BEGIN IMMEDIATE, or the caller's ``atomic``): no other process
        # writes the file until it ends.
        with self.db.write():
            return self.get_many(ids)

    def get_many(self, ids: Sequence[str]) -> list[Memory]:
        out: list[Memory] = []
        with self.db.read() as conn:
            for chunk in _chunks(list(ids), 500):
                out.extend(self._select(conn, f"m.id IN ({','.join('?' * len(chunk))})", chunk))
        return in_order_asked(out, ids)

    def search_text(self, query: str, filt: MemoryFilter, *, limit: int) -> list[tuple[Memory, float]]:
        if self._narrow_time_range(filt) == "":
            return []  # an empty time range: ranking would widen to every match before finding none
        terms = text.query_terms(query)
        if not terms:
            return self._search_single_chars(query, filt, limit)
        where, params = filter_sql(filt)
        with self.db.read() as conn:
            version = self._index_version(conn)
            rank, first = self._ranking(conn, terms, filt, version, limit)
            best = self._best_passing(conn, rank, where, params, limit, first=first)
            if best is None:
                # Nothing matched a whole word: substrings on stores small enough to scan (PtrClaw),
                # word prefixes through the index on larger ones.
                if self._fts.scans_affordable(conn):
                    return self._search_like(conn, terms, where, params, limit)
                prefixed = [term for term in terms if len(term) >= _MIN_PREFIX]
                best = self._best_passing(
                    conn, lambda fetch: self._fts.ranked_prefix(conn, prefixed, fetch), where, params, limit
                ) if prefixed else None
                if best is None:
                    return []
            return self._ranked_memories(conn, best)

    def _ranking(self, conn: Any, terms: list[str], filt: MemoryFilter, version: object,
                 limit: int) -> tuple[Callable[[int], list[tuple[int, float]]], int | None]:
        """How ``_best_passing`` ranks this query, and its first fetch: FTS5, or on a large store the
        Tantivy index first. Every row the index returns is scored exactly (~30 µs each), so it
        starts with fewer spare rows than FTS5 (whose cost does not depend on the rows returned).
        When the filter rejects most of those rows, a filter on scopes alone asks the index once
        more for those scopes' rows; any other filter (a time range, tags) widens through FTS5
        as on any store: thousands of rows scored one by one would cost more."""
        fts5 = lambda fetch: self._fts.ranked(conn, terms, fetch, version=version)  # noqa: E731
        if not self._fts.uses_index(conn, terms):
            return fts5, None
        first = limit + 16
        scopes_only = dataclasses.replace(filt, scopes=()) == MemoryFilter(scopes=())
        scopes = [scope_columns(scope) for scope in filt.scopes]

        def rank(fetch: int) -> list[tuple[int, float]]:
            if fetch > first * 8 or (fetch > first and not scopes_only):
                return fts5(fetch)
            found = self._fts.indexed(conn, terms, fetch, version=version, own_writes=self._own_writes,
                                      scopes=scopes if fetch > first else None)
            return found if found is not None else fts5(fetch)

        return rank, first

    def _ranked_memories(self, conn: Any, best: list[tuple[int, float]]) -> list[tuple[Memory, float]]:
        """The memories of ranked ``(rowid, score)`` pairs, in that order, with their scores."""
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM json_each(?) j CROSS JOIN memories m ON m.rowid = j.value"
            " ORDER BY j.key",
            [json.dumps([rowid for rowid, _ in best])],
        ).fetchall()
        memories = self._memories(conn, rows)
        return [(memory, max(score, 1e-9)) for memory, (_, score) in zip(memories, best, strict=True)]

    def text_scores(self, query: str, ids: Sequence[str]) -> dict[str, float]:
        terms = text.query_terms(query)
        if not terms or not ids:
            return {}
        with self.db.read() as conn:
            rowids = dict(conn.execute(
                "SELECT m.rowid, m.id FROM json_each(?) j CROSS JOIN memories m ON m.id = j.value",
                [json.dumps(list(ids))],
            ).fetchall())
            version = self._index_version(conn)
            if self._fts.uses_index(conn, terms):
                scores = self._fts.indexed_scores(conn, terms, list(rowids), version=version)
            else:
                scores = self._fts.scores_for(conn, terms, list(rowids), version=version)
        return {rowids[rowid]: max(score, 1e-9) for rowid, score in scores.items()}

    def _index_version(self, conn: Any) -> object:
        # Moves with every commit: another connection's (data_version, counted per connection) or this store's own.
        return (id(conn), conn.execute("PRAGMA data_version").fetchone()[0], self._own_writes)

    def text_score_ceiling(self, query: str) -> float | None:
        terms = text.query_terms(query)
        if not terms:
            return None
        with self.db.read() as conn:
            return self._fts.ceiling(conn, terms, version=self._index_version(conn))

    @staticmethod
    def _best_passing(
        conn: Any, rank: Callable[[int], list[tuple[int, float]]], where: str, params: list[Any], limit: int, *,
        first: int | None = None
    ) -> list[tuple[int, float]] | None:
        """The best ``limit`` ranked rows passing the filter, or None when full text matched nothing.

        Ranking inside FTS first and filtering only the best rows costs less than filtering every
        match; filters are usually loose, so over-fetch and widen."""
        fetch = first or limit * 2 + 32
        while True:
            ranked = rank(fetch)
            # CROSS JOIN keeps SQLite from scanning a scope index instead of the few rowids.
            passed = {rowid for (rowid,) in conn.execute(
                f"SELECT m.rowid FROM json_each(?) j CROSS JOIN memories m ON m.rowid = j.value WHERE {where}",
                [json.dumps([rowid for rowid, _ in ranked]), *params],
            )}
            if len(passed) >= limit or len(ranked) < fetch:
                break
            fetch *= 8
        if not ranked:
            return None
        return [(rowid, score) for rowid, score in ranked if rowid in passed][:limit]

    def _search_single_chars(self, query: str, filt: MemoryFilter, limit: int) -> list[tuple[Memory, float]]:
        """A query of one-letter tokens only (``recall b``): PtrClaw's LIKE on stores small enough
        to scan; on larger ones the letters as whole words through the index ("Plan B")."""
        chars = text.single_char_terms(query)
        if not chars:
            return []
        where, params = filter_sql(filt)
        with self.db.read() as conn:
            if self._fts.scans_affordable(conn):
                return self._search_like(conn, chars, where, params, limit)
            best = self._best_passing(conn, lambda fetch: self._fts.ranked(conn, chars, fetch), where, params, limit)
            if best is None:
                return []
            return self._ranked_memories(conn, best)

    def _search_like(
        self, conn: Any, terms: list[str], where: str, params: list[Any], limit: int
    ) -> list[tuple[Memory, float]]:
        """PtrClaw's fallback: substring matches, scored by how many terms they contain."""
        tests = [_contains(term) for term in terms]
        hits_expr = " + ".join(f"({test.format(column='m.content')} OR {test.format(column='m.key')})"
                               for test, _ in tests)
        pattern_params = [param for _, param in tests for _ in range(2)]
        rows = conn.execute(
            f"SELECT {_COLUMNS}, ({hits_expr}) AS hits FROM memories m WHERE {where} AND ({hits_expr}) > 0"
            f" ORDER BY hits DESC, m.created_at DESC, m.id DESC LIMIT ?",  # (ties: every backend alike)
            [*pattern_params, *params, *pattern_params, limit],
        ).fetchall()
        memories = self._memories(conn, rows)
        return [(memory, float(row[-1])) for memory, row in zip(memories, rows, strict=True)]

    def find_matching_all(self, query: str, filt: MemoryFilter) -> list[Memory]:
        terms = text.every_word(query)
        if not terms:
            return []
        where, params = filter_sql(filt)
        # Only the memory's own words count here, not its search_context.
        match = "{key content} : (" + " AND ".join(f'"{term}"' for term in terms) + ")"
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM memories_fts CROSS JOIN memories m ON m.rowid = memories_fts.rowid"
                f" WHERE memories_fts MATCH ? AND {where}",
                [match, *params],
            ).fetchall()
            # The index stems ("organ" matches "organization"): only memories holding each word itself.
            return [m for m in self._memories(conn, rows) if text.holds_every_word(query, m.key, m.content)]

    def matching_ids(self, ids: Sequence[str], filt: MemoryFilter) -> dict[str, float]:
        # Ids and dates only (no row is built), a parameter per id: a JSON array joined instead
        # cost ten times more here.
        where, params = filter_sql(filt)
        found: dict[str, float] = {}
        with self.db.read() as conn:
            for chunk in _chunks(list(dict.fromkeys(ids)), 500):
                marks = ",".join("?" * len(chunk))
                found.update(conn.execute(
                    f"SELECT m.id, m.created_at FROM memories m WHERE m.id IN ({marks}) AND {where}", [*chunk, *params]))
        return found

    def change_token(self) -> object | None:
        # data_version moves when another connection commits; own writes are counted here.
        with self.db.read() as conn:
            return (id(conn), conn.execute("PRAGMA data_version").fetchone()[0], self._own_writes)

    def iter_all(self) -> Iterator[Memory]:
        last = 0
        while True:
            with self.db.read() as conn:
                rows = conn.execute(
                    f"SELECT {_COLUMNS} FROM memories m WHERE m.rowid > ? ORDER BY m.rowid LIMIT 1000", (last,)
                ).fetchall()
                batch = self._memories(conn, rows)
            if not rows:
                return
            last = rows[-1][0]
            yield from batch

    def stats(self) -> StoreStats:
        with self.db.read() as conn:
            total, by_category, by_scope, links, vectors = self._counts(conn)
        size = sum(os.path.getsize(p) for p in _db_files(self.path) if os.path.exists(p))
        return StoreStats(
            backend=self.name, location=self.location(), memories=total, by_category=by_category,
            by_scope=by_scope, links=links, vectors=vectors, size_bytes=size,
            embedding_identity=self.vector_identity(),
        )

    def location(self) -> str:
        return str(self.path)

    # --- vectors ---------------------------------------------------------------------------
    def vector_identity(self) -> str | None:
        with self.db.read() as conn:
            row = conn.execute("SELECT value FROM engram_meta WHERE name = 'embedding_identity'").fetchone()
            return row[0] if row else None

    def set_vectors(self, identity: str, items: Sequence[tuple[str, np.ndarray]]) -> None:
        blobs = [(array.tobytes(), memory_id) for memory_id, array in checked_vectors(identity, items)]
        with self.db.write() as conn:
            current = conn.execute("SELECT value FROM engram_meta WHERE name = 'embedding_identity'").fetchone()
            if current is None:
                conn.execute("INSERT INTO engram_meta (name, value) VALUES ('embedding_identity', ?)", (identity,))
            elif current[0] != identity:
                raise DimensionError(
                    "embedding", f"store holds vectors of {current[0]}, not {identity}", "reindex to switch models"
                )
            conn.executemany(
                "INSERT OR REPLACE INTO memory_vectors (memory_rowid, vector)"
                " SELECT rowid, ? FROM memories WHERE id = ?",
                blobs,
            )
            self._own_writes += 1

    def clear_vectors(self) -> None:
        with self.db.write() as conn:
            conn.execute("DELETE FROM memory_vectors")
            # A new generation of vectors: saved graphs of the old one are not reused.
            conn.execute("DELETE FROM engram_meta WHERE name IN ('embedding_identity', 'vector_epoch')")
            self._own_writes += 1

    def vectors_for(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        with self.db.read() as conn:
            for chunk in _chunks(list(ids), 500):
                marks = ",".join("?" * len(chunk))
                for memory_id, blob in conn.execute(
                    f"SELECT m.id, v.vector FROM memory_vectors v JOIN memories m ON m.rowid = v.memory_rowid"
                    f" WHERE m.id IN ({marks})",
                    chunk,
                ):
                    out[memory_id] = np.frombuffer(blob, dtype=np.float32)
        return out

    def search_vector(self, vector: np.ndarray, filt: MemoryFilter, *, limit: int) -> list[tuple[Memory, float]]:
        return self.start_vector_search(vector, filt, limit=limit)()

    def start_vector_search(self, vector: np.ndarray, filt: MemoryFilter, *,
                            limit: int) -> Callable[[], list[tuple[Memory, float]]]:
        """``search_vector``, begun: the graph's walks run on worker threads while the caller
        searches full text on this one (recall does); the returned call, which must be made,
        waits for them and joins the memories. Database work stays on the caller's thread."""
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        where, params = filter_sql(filt)
        ranged = self._narrow_time_range(filt)
        if ranged is not None:
            # The graph holds the whole store: over a narrow time range ("in June", "last week")
            # its walks find too few rows of that range, so those rows are scored exactly.
            hits = [] if ranged == "" else self._join_vector_hits(
                self._vectors.exact_filtered(query, where, params, limit, index=ranged), where, params, limit)
            return lambda: hits
        # Over-fetch, then filter in SQL: filters are usually loose next to the store's size.
        fetch = limit * 2 + 16
        first = self._vectors.start_top(query, fetch, self._own_writes)

        def finish() -> list[tuple[Memory, float]]:
            candidates = first()
            hits = self._join_vector_hits(candidates, where, params, limit)
            if len(hits) >= limit or len(candidates) < fetch:
                return hits[:limit]
            return self._widened_vector_search(query, where, params, limit, fetch * 4)

        return finish

    def _widened_vector_search(self, query: np.ndarray, where: str, params: list[Any], limit: int,
                               fetch: int) -> list[tuple[Memory, float]]:
        """A filter kept too few of the first candidates: ask for more, then search its rows exactly."""
        while True:
            candidates = self._vectors.top(query, fetch, self._own_writes)
            hits = self._join_vector_hits(candidates, where, params, limit)
            if len(hits) >= limit or len(candidates) < fetch:
                return hits[:limit]
            if self._vectors.approximate and fetch >= _MAX_APPROXIMATE_FETCH:
                # A selective filter: search its rows exactly rather than walk the whole graph.
                exact = self._vectors.exact_filtered(query, where, params, limit)
                return self._join_vector_hits(exact, where, params, limit)
            fetch *= 4

    def _narrow_time_range(self, filt: MemoryFilter) -> str | None:
        """For a filter bounding event or record time to at most ``_TIME_RANGE_EXACT_ROWS`` rows
        (counted through that time's index, so never more than that many are read): the index
        to search them by ("" when the range holds none); None otherwise."""
        bounds = [
            ("memories_event_time", "COALESCE(m.valid_from, m.created_at)", filt.happened_from, filt.happened_before,
             ">=", "<"),
            ("memories_created", "m.created_at", filt.since, filt.until, ">=", "<="),
        ]
        best: tuple[int, str] | None = None
        with self.db.read() as conn:
            for index, column, low, high, low_op, high_op in bounds:
                if low is None and high is None:
                    continue
                clauses = [f"{column} {low_op} ?"] * (low is not None) + [f"{column} {high_op} ?"] * (high is not None)
                values = [v for v in (low, high) if v is not None]
                rows = int(conn.execute(
                    f"SELECT count(*) FROM (SELECT 1 FROM memories m INDEXED BY {index}"
                    f" WHERE {' AND '.join(clauses)} LIMIT ?)",
                    [*values, _TIME_RANGE_EXACT_ROWS + 1],
                ).fetchone()[0])
                if rows <= _TIME_RANGE_EXACT_ROWS and (best is None or rows < best[0]):
                    best = (rows, index)
        if best is None:
            return None
        return "" if best[0] == 0 else best[1]

    def _join_vector_hits(
        self, candidates: list[tuple[int, float]], where: str, params: list[Any], limit: int
    ) -> list[tuple[Memory, float]]:
        """The best ``limit`` candidates (vector sequence, cosine) that still exist and pass the
        filter, in order. Candidates are checked by sequence number first and only the kept
        ones are read in full (over-fetched candidates cost an index lookup, not a Memory)."""
        if not candidates:
            return []
        kept: set[int] = set()
        with self.db.read() as conn:
            for chunk in _chunks([seq for seq, _ in candidates], 500):
                marks = ",".join("?" * len(chunk))
                # CROSS JOIN keeps the candidates as the outer loop: the planner would otherwise
                # walk every memory of the scope (the filter's index) and look each vector up.
                kept.update(row[0] for row in conn.execute(
                    f"SELECT v.seq FROM memory_vectors v CROSS JOIN memories m ON m.rowid = v.memory_rowid"
                    f" WHERE v.seq IN ({marks}) AND {where}",
                    [*chunk, *params],
                ))
            best = [(seq, score) for seq, score in candidates if seq in kept][:limit]
            if not best:
                return []
            marks = ",".join("?" * len(best))
            rows = conn.execute(
                f"SELECT {_COLUMNS}, v.seq FROM memory_vectors v CROSS JOIN memories m"
                f" ON m.rowid = v.memory_rowid WHERE v.seq IN ({marks})",
                [seq for seq, _ in best],
            ).fetchall()
            memories = dict(zip((row[-1] for row in rows), self._memories(conn, rows), strict=True))
        return [(memories[seq], score) for seq, score in best if seq in memories]

    def warm_up_in_background(self) -> threading.Thread:
        """Open (or catch up) the vector index in a daemon thread: a fresh process about to recall
        maps a large store's graphs (~0.4 s for ten segments) while its model loads. A failure is
        only logged: the first search opens it again and raises it."""
        def warm() -> None:
            try:
                self._vectors.sync(self._own_writes)
            except Exception:  # the edge of a background thread: the first search reports it
                log.debug("opening the vector index in the background failed", exc_info=True)

        thread = threading.Thread(target=warm, name="engram-vector-index", daemon=True)
        thread.start()
        return thread

    def sync_vector_index(self) -> None:
        """Bring the vector caches and the saved index up to date now (after a bulk load or a
        reindex) instead of at the next search. Raises: StorageError."""
        self._vectors.sync(self._own_writes)

    def scrub_vector_index(self) -> None:
        """After an erase: no vector of a deleted row left in the graph saved beside the file
        (``SqliteVectorSearch.scrub``). Raises: StorageError."""
        self._vectors.scrub()

    def sync_text_index(self) -> None:
        """Build or catch up the full-text index of a large store now (after a bulk load) instead
        of at the next search; nothing on smaller stores or without tantivy. Another process
        writing the index at the same time is logged, not raised: that index catches up at the
        next search."""
        with self.db.read() as conn:
            rows = self._fts.row_estimate(conn)
        if self._text_index.wanted(rows):
            try:
                self._text_index.sync(self._own_writes)
            except (StorageError, OSError) as exc:
                log.warning("full-text index not caught up now: %s", exc)

    def close(self) -> None:
        self._text_index.close()
        self._vectors.close()
        self.db.close()
        if self._after_close is not None:
            after, self._after_close = self._after_close, None
            after()


# SQLite refuses a LIKE pattern over SQLITE_MAX_LIKE_PATTERN_LENGTH bytes (50,000 by default):
# "LIKE or GLOB pattern too complex", which reached a client as a storage failure for a recall
# whose query held one very long word.
_LIKE_PATTERN_BYTES = 50_000


def _contains(term: str) -> tuple[str, str]:
    """An SQL test that ``{column}`` contains ``term`` (ASCII letters in either case, as LIKE
    matches them) and its parameter: LIKE, or for a term too long for a LIKE pattern, ``instr``
    over ``lower`` (ASCII-only, as LIKE's case folding), which has no such limit."""
    pattern = "%" + like_escape(term) + "%"
    if len(pattern.encode("utf-8")) <= _LIKE_PATTERN_BYTES:
        return "({column} LIKE ? ESCAPE '\\')", pattern
    return "(instr(lower({column}), lower(?)) > 0)", term


def _chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _db_files(path: Path) -> list[str]:
    """The database, its WAL files and the indexes kept beside it (store/ann.py, store/text_index.py)."""
    text_index = Path(f"{path}.tantivy")
    index_files = [str(p) for p in text_index.iterdir() if p.is_file()] if text_index.is_dir() else []
    segments = [str(p) for p in path.parent.glob(f"{glob.escape(path.name)}.usearch.[0-9]*")]
    return [str(path), f"{path}-wal", f"{path}-shm", f"{path}.usearch", f"{path}.usearch.json",
            f"{path}.tantivy.json", *segments, *index_files]
