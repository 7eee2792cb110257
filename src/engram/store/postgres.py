"""The PostgreSQL + pgvector memory store: many processes on many hosts sharing one database.

Semantics are those of ``store/sqlite.py`` (the contract in ``store/base.py``); what differs is
how they stay true with concurrent writers in other processes:

- ``upsert`` and ``import_memories`` take a transaction-scoped advisory lock per scope, so the
  dedup check, the key-suffix choice and the insert are one step for every process; the
  ``UNIQUE (agent, session, key)`` constraint stays as the backstop.
- ``touch`` increments ``recall_count`` in SQL (no read-modify-write, no lost updates) and, like
  ``delete``, locks its rows in id order so concurrent callers cannot deadlock each other.
- Links have foreign keys: a link to a memory another process is deleting fails instead of
  dangling, and deleting a memory removes its links, versions and vector.
- Every call is its own short transaction; embedding happens in the engine between calls.

Full text: a generated ``tsvector`` (key weighted A, content B, search context C) with a GIN
index, ranked by BM25 as SQLite's FTS5 ranks (``store/pg_text.py``; on large tables only some rows
are ranked: ``store/pg_candidates.py``). The query is built from
``engram.text.query_terms`` word tokens, each passed as a parameter to ``plainto_tsquery`` (through
``engram_words``, which folds diacritics as FTS5 does: ``cafe`` finds "café" and back) and
OR-ed (AND-ed for forget-by-query), so no user string is ever parsed as tsquery syntax. Words
PostgreSQL's english configuration drops as stopwords, which no ``tsvector`` holds, are found
among each row's words and scored by BM25 as FTS5 scores them (``store/pg_text.py``; engram keeps
stopwords only in a query of nothing else: ``recall "he also"``, ``forget --query he``). When
nothing matches, an ILIKE scan over the same words answers (recall only).

Vectors: pgvector with an HNSW cosine index on ``embedding::vector(dims)`` (``halfvec`` past
2,000 dimensions, none past 4,000: ``ensure_vector_index``), created when the
first embedding identity is recorded; ``search_vector`` applies the filter in the same SQL with
pgvector's iterative index scan, so a narrow filter still returns ``limit`` hits.

Planner statistics: a write that inserts rows counts them, and once this store has inserted
50 rows + 10% of the table's rows as last analyzed (autovacuum's own rule), it runs ``ANALYZE
memories`` in its transaction (``_count_inserted``). Without statistics (a new database filled
in bulk: ``import``, ``remember_many``, a migration, faster than autovacuum's minute) the planner
read the duplicate check and the key lookup through ``memories_scope_kind``, every row of the
scope, not their own indexes: each upsert slowed as the scope grew (~2 ms to ~9 ms at 6,000 rows).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np
from psycopg.types.json import Json

from engram import text
from engram.db.postgres import PgDatabase, is_retryable
from engram.errors import DimensionError, EngramError, StorageError, ValidationError
from engram.ids import new_id
from engram.model import Memory, MemoryDraft, MemoryFilter, Scope, WriteResult
from engram.store import pg_candidates, pg_text
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
from engram.store.index_settings import FullTextSettings
from engram.store.sql_store import (
    AFTER_MEMORY,
    SqlMemoryStore,
    StoredAs,
    in_order_asked,
    like_escape,
    memory_select,
    scope_columns,
)
from engram.store.vectors import checked_vectors, parse_identity_dims
from engram.store.where_sql import postgres_fold_case, postgres_where

_SUCCESSOR_CHAIN = SUCCESSOR_CHAIN_SQL.format(mark="%s")
# A memory row, then its links (at ``AFTER_MEMORY``), read in the same statement.
_COLUMNS = (
    f"{memory_select('seq')}, ARRAY(SELECT l.to_id FROM memory_links l WHERE l.from_id = m.id ORDER BY l.to_id) AS links"
)
# Tags as text[], metadata as JSONB (psycopg hands back a list and a dict).
_STORED = StoredAs(tags_param=list, metadata_param=Json, read_tags=tuple, read_metadata=lambda stored: stored)
_INDEX_LOCK = 0x656E6772616E  # advisory lock held while creating a vector index
_SUPERSEDE_LOCK = 0x656E67726173  # advisory lock a supersede holds while it checks for a cycle and writes
_IDENTITY = "embedding_identity"
T = TypeVar("T")
# Threads a store begins vector searches on (``start_vector_search``); a search finding them all
# busy runs on its caller's thread instead of waiting in line.
_SIDE_THREADS = 4
# Rows this store inserts before it analyzes the table: autovacuum's default rule
# (autovacuum_analyze_threshold + autovacuum_analyze_scale_factor x the rows last analyzed).
_ANALYZE_BASE = 50
_ANALYZE_SCALE = 0.1


def _scope_lock_key(agent: str, session: str) -> str:
    return f"engram-scope\x1f{agent}\x1f{session}"



def _one_of(column: str, values: list[str], params: list[Any]) -> str:
    params.append(values)
    return f"{column} = ANY(%s)"


def _has_tags(alias: str, tags: Sequence[str], params: list[Any]) -> list[str]:
    params.append(list(tags))
    return [f"{alias}.tags @> %s::text[]"]


_DIALECT = FilterDialect(mark="%s", false="FALSE", one_of=_one_of, has_tags=_has_tags, where=postgres_where,
                         fold_case=postgres_fold_case)


def filter_sql(filt: MemoryFilter, alias: str = "m") -> tuple[str, list[Any]]:
    """Translate a MemoryFilter into a WHERE clause; ``MemoryFilter.matches`` is the reference."""
    return filter_clause(filt, alias, _DIALECT)



def _tsquery(terms: Sequence[str], joiner: str) -> str:
    """SQL for a tsquery built from parameters only: ``plainto_tsquery`` never fails on input.
    Each term goes through ``engram_words`` as indexed text does (its diacritics folded: step 0012)."""
    return f" {joiner} ".join(["plainto_tsquery('english', engram_words(%s))"] * len(terms))


def _tsquery_any_of(sets: Sequence[Sequence[str]]) -> tuple[str, list[str]]:
    """SQL for a tsquery matching rows that hold all the terms of one of ``sets``, and its parameters."""
    return " || ".join(f"({_tsquery(one, '&&')})" for one in sets), [term for one in sets for term in one]


def _refuse_nul(draft_or_memory: MemoryDraft | Memory) -> None:
    # PostgreSQL text cannot hold NUL; refuse it as bad input before anything is written.
    if "\x00" in draft_or_memory.content:
        raise ValidationError("content", "contains a NUL character", "text without NUL characters")


class PostgresMemoryStore(SqlMemoryStore):
    """MemoryStore on a shared PostgreSQL database (see module docstring); the reads it shares
    with SQLite are ``SqlMemoryStore``'s."""

    name = "postgres"
    _mark = "%s"
    _seq = "seq"
    _vector_key = ("v.memory_id", "m.id")
    _drop_vector_sql = "DELETE FROM memory_vectors WHERE memory_id = %s"
    _filter_sql = staticmethod(filter_sql)
    _stored = _STORED

    def __init__(self, db: PgDatabase, *, defer_vector_index: bool = False,
                 full_text: FullTextSettings | None = None, ef_search: int = 200) -> None:
        """``defer_vector_index``: ``set_vectors`` does not create the HNSW index (bulk loads: inserting
        into a live HNSW index costs ~10x building it once afterwards); call ``build_vector_index``
        when loading is done. Searches stay exact (a scan) until then. ``full_text``: how many rows
        one ranked text query may score (``store/pg_candidates.py``)."""
        self.db = db
        self.defer_vector_index = defer_vector_index
        self.full_text = full_text or FullTextSettings()
        # pgvector's hnsw.ef_search for a vector query, at least twice the rows asked for.
        self.ef_search = ef_search
        self._term_stats = pg_text.TermStatistics()
        self._corpus = pg_text.CorpusStatistics()
        self._queries = pg_text.QueryStatistics()
        self._side_lock = threading.Lock()
        self._side: ThreadPoolExecutor | None = None
        # Rows inserted since this store last analyzed, and how many make it analyze again (None:
        # not read yet from the table's last statistics).
        self._analyze_lock = threading.Lock()
        self._inserted = 0
        self._analyze_after: float | None = None

    # --- rows ------------------------------------------------------------------------------
    def _memory(self, row: Sequence[Any]) -> Memory:
        """A ``_COLUMNS`` row (anything after its links left alone) as its ``Memory``."""
        return self._decode(row, tuple(row[AFTER_MEMORY]))

    def _select(self, conn: Any, where: str, params: Sequence[Any], tail: str = "") -> list[Memory]:
        rows = conn.execute(f"SELECT {_COLUMNS} FROM memories m WHERE {where} {tail}", params).fetchall()
        return [self._memory(row) for row in rows]

    # --- writes ----------------------------------------------------------------------------
    def upsert(self, draft: MemoryDraft, *, proposed_key: str, now: float) -> WriteResult:
        _refuse_nul(draft)
        agent, session = scope_columns(draft.scope)
        digest = text.content_hash(draft.content)

        def work(conn: Any) -> WriteResult:
            # One writer per scope at a time, across processes: dedup and key choice cannot race.
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (_scope_lock_key(agent, session),))
            if draft.key is not None:
                existing = self._select(
                    conn, "m.agent = %s AND m.session = %s AND m.key = %s", (agent, session, draft.key), "FOR UPDATE OF m"
                )
                if existing:
                    return self._update(conn, existing[0], draft, digest, now)
                key = draft.key
            else:
                same = self._select(
                    conn, "m.agent = %s AND m.session = %s AND m.content_hash = %s", (agent, session, digest),
                    "ORDER BY m.seq LIMIT 1",
                )
                if same:
                    return WriteResult(same[0], "duplicate")
                key = self._free_key(conn, agent, session, proposed_key)
            memory_id = new_id()
            created = draft.created_at if draft.created_at is not None else now
            # Read back in the insert itself (one round trip, not two), without asking memory_links:
            # a new id (a fresh UUIDv7) has no links yet; a batch write's links are made after this
            # upsert, by link(), and its record read again then (apply_write).
            row = self._insert_draft(conn, memory_id, (agent, session), key, draft, digest, created, now,
                                     returning=f" RETURNING {memory_select('seq')}").fetchone()
            self._count_inserted(conn, 1)
            return WriteResult(self._decode(row, ()), "created")

        return self.db.transact(work)

    def write_batch(
        self, writes: Sequence[BatchWrite], *, now: float, identity: str | None, all_or_nothing: bool = False
    ) -> list[WriteResult | EngramError]:
        # One transaction (one commit) for the batch: upsert, set_vectors, link and get_many join it
        # (PgDatabase.transact), and each write runs in its own savepoint, undone alone when it is
        # refused. Writes go scope by scope in one fixed order, so two processes' batches take
        # the scopes' advisory locks in the same order and cannot deadlock on them; within a
        # scope the callers' order is kept (it decides which of two equal texts is the duplicate).
        # All or nothing, a refused write's error leaves ``work``, which rolls the whole batch back
        # (no savepoint per write then: nothing is kept after a failure anyway).
        order = sorted(range(len(writes)), key=lambda i: _scope_lock_key(*scope_columns(writes[i].draft.scope)))

        def work(conn: Any) -> list[WriteResult | EngramError]:
            out: dict[int, WriteResult | EngramError] = {}
            for i in order:
                if all_or_nothing:
                    out[i] = apply_write(self, writes[i], now=now, identity=identity)
                    continue
                try:
                    with conn.transaction():
                        out[i] = apply_write(self, writes[i], now=now, identity=identity)
                except EngramError as exc:
                    if isinstance(exc, StorageError) and is_retryable(exc):
                        raise  # the whole transaction was aborted: transact runs the batch again
                    out[i] = exc
            return [out[i] for i in range(len(writes))]

        return self.db.transact(work)

    def atomic(self, work: Callable[[], T]) -> T:
        # One transaction: the store's calls inside join it (``PgDatabase.transact``, each in a
        # savepoint), an error out of ``work`` rolls them all back, and a deadlock or serialisation
        # victim is run again whole (``work`` changes nothing outside the database).
        return self.db.transact(lambda _conn: work())

    @staticmethod
    def _free_key(conn: Any, agent: str, session: str, proposed: str) -> str:
        # Keys looked up by equality: index seeks under any collation, where ``LIKE 'p-%'`` seeks
        # only under C's (under a linguistic one it reads the scope's keys).
        def held(keys: Sequence[str]) -> set[str]:
            sql = "SELECT key FROM memories WHERE agent = %s AND session = %s AND key = ANY(%s)"
            return {row[0] for row in conn.execute(sql, (agent, session, list(keys)))}

        return free_key(proposed, held)

    def _count_inserted(self, conn: Any, rows: int) -> None:
        """Count ``rows`` inserted; past 50 + 10% of the rows PostgreSQL last analyzed, run ``ANALYZE
        memories`` here, in the writing transaction (see module docstring).

        Why not wait for autovacuum: it looks once a minute and counts only committed rows, and a
        never-analyzed table leaves the planner guessing, so a bulk write into a new database (one
        batch of thousands, or many quick ones) chose ``memories_scope_kind`` over the duplicate
        check's and the key lookup's own indexes for every row it wrote. In the transaction, the
        sample holds its own uncommitted rows and later statements of the batch are planned with
        them. ``SKIP_LOCKED``: when another process (or autovacuum) is analyzing the table, this
        write never waits for it (nor deadlocks with it on the scope locks); that analysis serves."""
        if self._analyze_after is None:  # this store's first insert: when was the table last analyzed?
            self._analyze_after = self._analyze_threshold(conn)
        with self._analyze_lock:
            self._inserted += rows
            due = self._analyze_after is not None and self._inserted >= self._analyze_after
            if due:
                self._inserted, self._analyze_after = 0, float("inf")  # other threads count on meanwhile
        if due:
            conn.execute("ANALYZE (SKIP_LOCKED) memories")
            self._analyze_after = self._analyze_threshold(conn)

    @staticmethod
    def _analyze_threshold(conn: Any) -> float:
        """Rows to insert before analyzing again: 50 + 10% of the rows the last ANALYZE saw
        (``reltuples``: -1 before any; in a transaction that analyzed, what it saw)."""
        analyzed = conn.execute("SELECT reltuples FROM pg_class WHERE oid = 'memories'::regclass").fetchone()[0]
        return _ANALYZE_BASE + _ANALYZE_SCALE * max(float(analyzed), 0.0)

    def get_many_held(self, ids: Sequence[str]) -> list[Memory]:
        if not ids:
            return []
        # Locked in id order (as ``delete`` locks), so two merges of overlapping rows wait, not deadlock.
        return in_order_asked(self.db.transact(
            lambda conn: self._select(conn, "m.id = ANY(%s)", (list(ids),), "ORDER BY m.id FOR UPDATE OF m")), ids)

    def delete(self, ids: Sequence[str]) -> list[Memory]:
        if not ids:
            return []

        def work(conn: Any) -> list[Memory]:
            # Lock in id order (as touch does) so concurrent multi-row writers cannot deadlock.
            removed = self._select(conn, "m.id = ANY(%s)", (list(ids),), "ORDER BY m.id FOR UPDATE OF m")
            # Links, versions and vectors go with their memory (ON DELETE CASCADE).
            conn.execute("DELETE FROM memories WHERE id = ANY(%s)", (list(ids),))
            return removed

        return in_order_asked(self.db.transact(work), ids)

    def link(self, a_id: str, b_id: str) -> bool:
        if a_id == b_id:
            return False

        def work(conn: Any) -> bool:
            # KEY SHARE keeps both ends from being deleted until this transaction commits.
            found = conn.execute(
                "SELECT id FROM memories WHERE id IN (%s, %s) ORDER BY id FOR KEY SHARE", (a_id, b_id)
            ).fetchall()
            if len(found) != 2:
                return False
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO memory_links (from_id, to_id) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                    [(a_id, b_id), (b_id, a_id)],
                )
            return True

        return self.db.transact(work)

    def unlink(self, a_id: str, b_id: str) -> bool:
        def work(conn: Any) -> bool:
            cursor = conn.execute(
                "DELETE FROM memory_links WHERE (from_id = %s AND to_id = %s) OR (from_id = %s AND to_id = %s)",
                (a_id, b_id, b_id, a_id),
            )
            return cursor.rowcount > 0

        return self.db.transact(work)

    def move(self, memory_id: str, scope: Scope) -> Memory | None:
        return move_one(self.move_many({memory_id: scope}), memory_id)

    def move_many(self, moves: Mapping[str, Scope]) -> dict[str, Memory | EngramError]:
        # Each new scope's writers wait (as ``upsert`` does): the keys chosen stay free until commit.
        # Locked in one order, so two groups moved at once never wait on each other.
        locks = sorted({_scope_lock_key(*scope_columns(scope)) for scope in moves.values()})

        def work(conn: Any) -> dict[str, Memory | EngramError]:
            for lock in locks:
                conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (lock,))
            return self._move_many(conn, moves, "FOR UPDATE OF m")[0]

        return self.db.transact(work)

    def touch(
        self, ids: Sequence[str], now: float, *, recall: bool = True, importance_boost: float = 0.0,
        importance_cap: float = 1.0,
    ) -> None:
        if not ids:
            return

        def work(conn: Any) -> None:
            # The increments happen in SQL, so concurrent recalls never lose a count or a boost;
            # GREATEST keeps a memory already above the cap where it is.
            conn.execute(
                "WITH target AS (SELECT id FROM memories WHERE id = ANY(%s) ORDER BY id FOR NO KEY UPDATE)"
                " UPDATE memories m SET last_accessed = %s, recall_count = m.recall_count + %s,"
                " importance = CASE WHEN %s > 0 THEN GREATEST(m.importance,"
                f" LEAST(%s, ROUND((m.importance + %s)::numeric, {BOOST_DIGITS})::double precision))"
                " ELSE m.importance END FROM target WHERE m.id = target.id",
                (list(ids), now, 1 if recall else 0, importance_boost, importance_cap, importance_boost),
            )

        self.db.transact(work)

    def merge_metadata(self, memory_id: str, values: Mapping[str, Any], *,
                       expect: Mapping[str, Any] | None = None) -> Memory | None:
        # FOR NO KEY UPDATE holds the row until commit: an upsert racing it (FOR UPDATE) waits and then
        # writes its whole row, and one that came first is waited for, ``expect`` read as it committed.
        return self.db.transact(lambda conn: self._merge_metadata(conn, memory_id, values, expect, "FOR NO KEY UPDATE OF m"))

    def raise_received_at(self, memory_id: str, at: float) -> Memory | None:
        return self.db.transact(lambda conn: self._raise_received_at(conn, memory_id, at)[0])

    def set_superseded(
        self, memory_id: str, successor_id: str | None, *, now: float | None = None, valid_until: float | None = None
    ) -> bool:
        superseding = successor_id is not None

        def work(conn: Any) -> bool:
            if superseding:
                # Supersedes take their turn, on every host: the chain below is read after the lock,
                # in a statement of its own (READ COMMITTED), so it holds every supersede committed
                # before, and one racing the other way round waits and then sees the cycle.
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SUPERSEDE_LOCK,))
                # (FOR SHARE holds the successor's row until commit: a concurrent forget waits.)
                if conn.execute("SELECT 1 FROM memories WHERE id = %s FOR SHARE", (successor_id,)).fetchone() is None:
                    return False
                if successor_id == memory_id or conn.execute(
                        _SUCCESSOR_CHAIN, (successor_id, memory_id)).fetchone() is not None:
                    raise SupersedeCycle(memory_id, successor_id)
            # An explicit valid_until already stored wins over the one superseding closes with.
            cursor = conn.execute(
                "UPDATE memories SET superseded_by = %s, superseded_at = %s,"
                " valid_until = COALESCE(valid_until, %s) WHERE id = %s",
                (successor_id, now if superseding else None, valid_until if superseding else None, memory_id),
            )
            return cursor.rowcount > 0

        return self.db.transact(work)

    def import_memories(self, memories: Sequence[Memory], updates: Sequence[ImportUpdate] = ()) -> ImportResult:
        for memory in memories:
            _refuse_nul(memory)
        # The updates' scopes too: their upserts take those locks again (held already, no wait).
        scopes = sorted({_scope_lock_key(*scope_columns(m.scope)) for m in memories}
                        | {_scope_lock_key(*scope_columns(u.draft.scope)) for u in updates})

        def work(conn: Any) -> ImportResult:
            for scope_key in scopes:  # sorted: two importers never wait on each other in a cycle
                conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (scope_key,))
            imported = 0
            if memories:  # (executemany of no rows gives no result to fetch: only updates)
                with conn.cursor() as cur:
                    cur.executemany(
                        f"{self._import_sql()} ON CONFLICT DO NOTHING RETURNING id",
                        [self._memory_params(memory) for memory in memories],
                        returning=True,
                    )
                    while True:
                        imported += len(cur.fetchall())
                        if not cur.nextset():
                            break
                    self._count_inserted(conn, imported)  # before the updates' upserts look rows up
                    ends = sorted({m.id for m in memories if m.links} | {o for m in memories for o in m.links})
                    if ends:
                        agent_of = dict(conn.execute("SELECT id, agent FROM memories WHERE id = ANY(%s)", (ends,)).fetchall())
                        both_ways = import_links(memories, agent_of)
                        if both_ways:
                            cur.executemany("INSERT INTO memory_links (from_id, to_id) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                                            both_ways)
            # Each upsert joins this transaction (a savepoint): its failure undoes the import whole.
            apply_updates(self, updates)
            return ImportResult(imported, len(memories) - imported)

        return self.db.transact(work)

    # --- reads -----------------------------------------------------------------------------
    def get_many(self, ids: Sequence[str]) -> list[Memory]:
        if not ids:
            return []
        with self.db.read(statements_alone=True) as conn:
            out = self._select(conn, "m.id = ANY(%s)", (list(ids),))
        return in_order_asked(out, ids)

    def search_text(self, query: str, filt: MemoryFilter, *, limit: int) -> list[tuple[Memory, float]]:
        terms = text.query_terms(query)
        if not terms:
            # One-letter tokens only (``recall b``): PtrClaw's LIKE fallback on them.
            chars = text.single_char_terms(query)
            if not chars:
                return []
            where, params = filter_sql(filt)
            with self.db.read(statements_alone=True) as conn:
                return self._search_like(conn, chars, where, params, limit)
        where, params = filter_sql(filt)
        with self.db.read(statements_alone=True) as conn:
            stats = self._term_stats.get(conn)
            lexemes, freqs = self._queries.get(conn, terms, stats)
            if not all(lexemes):
                # Words PostgreSQL's english configuration drops ("he also", "the a of": engram keeps
                # stopwords only in a query of nothing else): every word ranked by BM25 as FTS5 ranks
                # it, those found in the rows' words (store/pg_text.py); substrings only when
                # no word matched (as on SQLite).
                # A query of stopwords alone (engram's list, which holds PostgreSQL's and more, as
                # "also") reads at most the budget's newest rows on a large table: most rows hold
                # those words and no index lists them, so ranking them all read the whole table
                # (seconds at 1M rows) for the query that says least; the newest are the rows
                # recall's recency favours. One with another word without a lexeme (circled
                # numbers) reads every row, so no row holding that word is missed.
                only_stopwords = all(term in text.STOPWORDS for term in terms)
                rows = self._ranked_with_words(conn, terms, lexemes, freqs, where, params, limit,
                                               newest=self._bounding(stats) if only_stopwords else None)
                return self._hits(rows) if rows else self._search_like(conn, terms, where, params, limit)
            weights = self._weights(conn, terms, lexemes, freqs)
            selective = self._selective_terms(terms, lexemes, stats)
            # Rows holding two of the terms (large tables: store/pg_candidates.py), when far fewer.
            tiers = self._pair_tiers(terms, lexemes, freqs, stats, selective, limit)
            # MaxScore (store/pg_candidates.py): the rarest terms' rows first, when they decide alone.
            tried: tuple[list[str], list[Any]] = ([], [])
            for rarest in pg_candidates.rarest_prefixes(terms, lexemes, freqs, limit, self.full_text.max_ranked_rows):
                if tiers and sum(f for t, f in zip(terms, freqs, strict=True) if t in rarest) > 2 * tiers[0][1]:
                    break  # proving costs more than twice the rows the first tier reads
                bound = pg_candidates.bound_without(rarest, terms, lexemes, weights[:2])
                if pg_candidates.typical_score(rarest, terms, lexemes, weights[:2]) < bound:
                    continue  # their rows would seldom reach it: ranking them would not decide
                tried = (rarest, self._ranked(conn, weights, rarest, where, params, limit))
                found = tried[1]
                if len(found) >= limit and float(found[-1][-1]) >= bound:
                    return self._hits(found)
            rows: list[Any] = []
            for sets in self._conjunctions(terms, lexemes, freqs, stats):  # common words only
                rows = self._ranked_any_of(conn, weights, sets, where, params, limit)
                if len(rows) >= limit:
                    return self._hits(rows)
            for sets, _ in tiers:
                rows = self._ranked_any_of(conn, weights, sets, where, params, limit)
                if len(rows) >= limit:
                    return self._hits(rows)
            if selective and set(selective) == set(tried[0]):
                rows = tried[1]  # ranked already
            else:
                rows = self._ranked(conn, weights, selective, where, params, limit) if selective else []
            if not rows:  # every match ranked: a small table, rare terms, or no selective row passed
                rows = self._ranked(conn, weights, terms, where, params, limit)
            if not rows:
                return self._search_like(conn, terms, where, params, limit)
        return self._hits(rows)

    def _hits(self, rows: list[Any]) -> list[tuple[Memory, float]]:
        """Ranked rows as hits, each score kept above 0: a word in most rows scores ~0 (its IDF
        floor), and recall reads 0 as no match."""
        return [(self._memory(row), max(float(row[-1]), 1e-9)) for row in rows]

    def _weights(self, conn: Any, terms: list[str], lexemes: list[list[str]],
                 freqs: list[float]) -> tuple[list[str], list[float], float]:
        """The query's lexemes, their IDF weights and the mean row length: BM25's parameters."""
        corpus = self._corpus.get(conn)
        lexeme_list, idfs = pg_text.lexeme_weights(terms, lexemes, freqs, corpus)
        return lexeme_list, idfs, max(corpus.avgdl, 1.0)

    def _selective_terms(self, terms: list[str], lexemes: list[list[str]],
                         stats: pg_text.TermStats | None) -> list[str] | None:
        """The terms whose rows are ranked when ranking every match would exceed the budget
        (``store/pg_candidates.py``), or None to rank every match."""
        budget = self._bounding(stats)
        if budget is None or stats is None:
            return None
        counts = [stats.rows_holding(lex) for lex in lexemes]
        return pg_candidates.selective_terms(terms, counts, budget)

    def _conjunctions(self, terms: list[str], lexemes: list[list[str]], freqs: list[float],
                      stats: pg_text.TermStats | None) -> list[list[list[str]]]:
        """The row sets ranked for a query of common words only (``store/pg_candidates.py``), each as
        the term sets a row holds all of one of; none for other queries. The terms' rows are the
        counts their IDFs come from (``freqs``), so "rarest" means "weightiest in the score":
        ANALYZE's sampled shares can order two mid-frequency words the other way."""
        budget = self._bounding(stats)
        if budget is None or stats is None:
            return []
        return pg_candidates.conjunctions(terms, [freq if lex else 0.0 for lex, freq in zip(lexemes, freqs, strict=True)],
                                          stats.rows, budget)

    def _pair_tiers(self, terms: list[str], lexemes: list[list[str]], freqs: list[float],
                    stats: pg_text.TermStats | None, selective: list[str] | None,
                    limit: int) -> list[tuple[list[list[str]], float]]:
        """On a table larger than the budget, ``pg_candidates.pair_tiers`` against the rows the ranking
        would read otherwise (the ``selective`` terms' rows, or every match); else none."""
        if self._bounding(stats) is None or stats is None:
            return []
        counts = [freq if lex else 0.0 for lex, freq in zip(lexemes, freqs, strict=True)]
        planned = sum(count for term, count in zip(terms, counts, strict=True) if selective is None or term in selective)
        return pg_candidates.pair_tiers(terms, counts, stats.rows, limit, planned)

    def _ranked(self, conn: Any, weights: tuple[list[str], list[float], float], ranked: list[str], where: str,
                params: list[Any], limit: int) -> list[Any]:
        """Rows holding any of ``ranked`` that pass the filter, best first by the BM25 of the
        whole query (``ranked`` is every term, or some of them)."""
        return self._ranked_any_of(conn, weights, [[term] for term in ranked], where, params, limit)

    def _ranked_any_of(self, conn: Any, weights: tuple[list[str], list[float], float], sets: list[list[str]],
                       where: str, params: list[Any], limit: int) -> list[Any]:
        """Rows holding all the terms of one of ``sets`` that pass the filter, best first by the
        BM25 of the whole query."""
        lexemes, idfs, avgdl = weights
        ranked, ranked_params = _tsquery_any_of(sets)
        return conn.execute(
            f"SELECT {_COLUMNS}, s.score FROM memories m,"
            f" (SELECT {ranked} AS ranked, {pg_text.BM25_PARAMS_SQL}) q,"
            f" LATERAL ({pg_text.bm25_sql(len(lexemes))}) s"
            f" WHERE m.search_all @@ q.ranked AND {where} ORDER BY s.score DESC, m.seq LIMIT %s",
            [*ranked_params, *pg_text.bm25_params(lexemes, idfs, avgdl), *params, limit],
        ).fetchall()

    def _bounding(self, stats: pg_text.TermStats | None) -> int | None:
        """The ranking budget (``full_text.max_ranked_rows``) when ranking is bounded: a table
        ANALYZE has counted and found larger than it. None: rank every match."""
        budget = self.full_text.max_ranked_rows
        if budget <= 0 or stats is None or stats.rows <= budget:
            return None
        return budget

    def _ranked_with_words(self, conn: Any, terms: list[str], lexemes: list[list[str]], freqs: list[float],
                           where: str, params: list[Any], limit: int, ids: Sequence[str] | None = None,
                           newest: int | None = None) -> list[Any]:
        """Rows holding any term that pass the filter (or, with ``ids``, those of these rows holding
        one), best first by BM25, for a query some of whose ``terms`` have no lexeme: those are
        searched in each row's words (``store/pg_text.py``), a scan of the filtered rows, or of the
        ``newest`` of them when given."""
        indexed = [(term, lex, freq) for term, lex, freq in zip(terms, lexemes, freqs, strict=True) if lex]
        words = [(term, freq) for term, lex, freq in zip(terms, lexemes, freqs, strict=True) if not lex]
        corpus = self._corpus.get(conn)
        lexeme_list, idfs = pg_text.lexeme_weights([t for t, _, _ in indexed], [lex for _, lex, _ in indexed],
                                                   [f for _, _, f in indexed], corpus)
        idfs += [pg_text.idf(corpus.rows, freq) for _, freq in words]
        chosen, chosen_params = ("m.id = ANY(%s)", [list(ids)]) if ids is not None else (where, params)
        source, source_params = "memories m", []
        if ids is None and newest is not None:
            source, source_params = f"(SELECT * FROM memories m WHERE {chosen} ORDER BY m.seq DESC LIMIT %s) m", \
                [*chosen_params, newest]
            chosen, chosen_params = "TRUE", []
        # A row holding none of the terms scores 0 (each term's part is 0 without it); one holding
        # one scores above 0 (IDFs are floored above 0).
        return conn.execute(
            f"SELECT {_COLUMNS}, s.score FROM {source}, (SELECT {pg_text.BM25_PARAMS_SQL}) q,"
            f" LATERAL ({pg_text.bm25_sql(len(lexeme_list), len(words))}) s"
            f" WHERE {chosen} AND s.score > 0 ORDER BY s.score DESC, m.seq LIMIT %s",
            [*source_params, *pg_text.bm25_params(lexeme_list, idfs, max(corpus.avgdl, 1.0), [t for t, _ in words]),
             *chosen_params, len(ids) if ids is not None else limit],
        ).fetchall()

    def text_scores(self, query: str, ids: Sequence[str]) -> dict[str, float]:
        terms = text.query_terms(query)
        if not terms or not ids:
            return {}
        with self.db.read(statements_alone=True) as conn:
            lexemes, freqs = self._queries.get(conn, terms, self._term_stats.get(conn))
            if not all(lexemes):
                rows = self._ranked_with_words(conn, terms, lexemes, freqs, "", [], 0, ids=ids)
                return {str(row[1]): max(float(row[-1]), 1e-9) for row in rows}  # row[1]: m.id
            lexeme_list, idfs, avgdl = self._weights(conn, terms, lexemes, freqs)
            rows = conn.execute(
                f"SELECT m.id, s.score FROM memories m,"
                f" (SELECT {_tsquery(terms, '||')} AS query, {pg_text.BM25_PARAMS_SQL}) q,"
                f" LATERAL ({pg_text.bm25_sql(len(lexeme_list))}) s WHERE m.id = ANY(%s) AND m.search_all @@ q.query",
                [*terms, *pg_text.bm25_params(lexeme_list, idfs, avgdl), list(ids)],
            ).fetchall()
        return {str(memory_id): max(float(score), 1e-9) for memory_id, score in rows}

    def text_score_ceiling(self, query: str) -> float | None:
        terms = text.query_terms(query)
        if not terms:
            return None
        with self.db.read(statements_alone=True) as conn:
            lexemes, freqs = self._queries.get(conn, terms, self._term_stats.get(conn))
            ceiling = pg_text.ceiling(lexemes, freqs, self._corpus.get(conn))
        return ceiling if ceiling > 0 else None

    def _search_like(
        self, conn: Any, terms: list[str], where: str, params: list[Any], limit: int
    ) -> list[tuple[Memory, float]]:
        """PtrClaw's fallback: substring matches, scored by how many terms they contain."""
        patterns, test = ["%" + like_escape(term) + "%" for term in terms], "(m.content ILIKE %s OR m.key ILIKE %s)"
        hits_expr = " + ".join(f"{test}::int" for _ in patterns)
        pattern_params = [p for p in patterns for _ in range(2)]
        rows = conn.execute(
            f"SELECT {_COLUMNS}, ({hits_expr}) AS hits FROM memories m WHERE {where} AND ({hits_expr}) > 0"
            f' ORDER BY hits DESC, m.created_at DESC, m.id COLLATE "C" DESC LIMIT %s',  # (ties: as SQLite)
            [*pattern_params, *params, *pattern_params, limit],
        ).fetchall()
        return [(self._memory(row), float(row[-1])) for row in rows]

    def find_matching_all(self, query: str, filt: MemoryFilter) -> list[Memory]:
        terms = text.every_word(query)
        if not terms:
            return []
        where, params = filter_sql(filt)
        with self.db.read() as conn:
            # A word PostgreSQL's stopword list drops ("he", "at") has no lexeme for ``search`` to
            # hold: it must appear as a whole word of the key or content (never as a substring:
            # "he" is not in "mother"). The other words are matched through the index.
            lexemes = pg_text.lexemes_of(conn, terms)
            indexed = [term for term, lex in zip(terms, lexemes, strict=True) if lex]
            dropped = [term for term, lex in zip(terms, lexemes, strict=True) if not lex]
            tests = [f"m.search @@ ({_tsquery(indexed, '&&')})"] if indexed else []
            tests += ["(strpos(engram_spaced(m.content), %s) > 0 OR strpos(engram_spaced(m.key), %s) > 0)"] * len(dropped)
            word_params = [word for word in pg_text.spaced_words(dropped) for _ in range(2)]
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM memories m WHERE {' AND '.join(tests)} AND {where} ORDER BY m.seq",
                [*indexed, *word_params, *params],
            ).fetchall()
        # The index stems ("organ" matches "organization"): only memories holding each word itself.
        return [m for m in map(self._memory, rows) if text.holds_every_word(query, m.key, m.content)]

    def matching_ids(self, ids: Sequence[str], filt: MemoryFilter) -> dict[str, float]:
        if not ids:
            return {}
        where, params = filter_sql(filt)
        with self.db.read(statements_alone=True) as conn:
            rows = conn.execute(f"SELECT m.id, m.created_at FROM memories m WHERE m.id = ANY(%s) AND {where}",
                                [list(dict.fromkeys(ids)), *params]).fetchall()
        return {memory_id: created_at for memory_id, created_at in rows}

    def change_token(self) -> object | None:
        return None  # many hosts write one database: no cheap way to know, so recall is not cached

    def iter_all(self) -> Iterator[Memory]:
        last = 0
        while True:
            with self.db.read() as conn:
                rows = conn.execute(
                    f"SELECT {_COLUMNS} FROM memories m WHERE m.seq > %s ORDER BY m.seq LIMIT 1000", (last,)
                ).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            yield from (self._memory(row) for row in rows)

    def stats(self) -> StoreStats:
        with self.db.read() as conn:
            total, by_category, by_scope, links, vectors = self._counts(conn)
            size = conn.execute(
                "SELECT SUM(pg_total_relation_size(t::regclass)) FROM unnest(ARRAY['memories', 'memory_links',"
                " 'memory_versions', 'memory_vectors', 'engram_meta']) AS t"
            ).fetchone()[0]
            identity = self._identity(conn)
        return StoreStats(
            backend=self.name, location=self.location(), memories=total, by_category=by_category, by_scope=by_scope,
            links=links, vectors=vectors, size_bytes=int(size or 0), embedding_identity=identity,
        )

    def location(self) -> str:
        return self.db.where

    # --- vectors ---------------------------------------------------------------------------
    @staticmethod
    def _identity(conn: Any, lock: str = "") -> str | None:
        row = conn.execute(f"SELECT value FROM engram_meta WHERE name = %s {lock}", (_IDENTITY,)).fetchone()
        return row[0] if row else None

    def vector_identity(self) -> str | None:
        with self.db.read(statements_alone=True) as conn:
            return self._identity(conn)

    def set_vectors(self, identity: str, items: Sequence[tuple[str, np.ndarray]]) -> None:
        rows = [(array, memory_id) for memory_id, array in checked_vectors(identity, items)]
        dims = parse_identity_dims(identity)

        def work(conn: Any) -> None:
            conn.execute(
                "INSERT INTO engram_meta (name, value) VALUES (%s, %s) ON CONFLICT (name) DO NOTHING", (_IDENTITY, identity)
            )
            # FOR SHARE: a concurrent clear_vectors waits until these vectors are in.
            current = self._identity(conn, "FOR SHARE")
            if current != identity:
                raise DimensionError("embedding", f"store holds vectors of {current}, not {identity}", "reindex to switch models")
            if not self.defer_vector_index:
                ensure_vector_index(conn, dims)
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO memory_vectors (memory_id, embedding) SELECT id, %s FROM memories WHERE id = %s"
                    " ON CONFLICT (memory_id) DO UPDATE SET embedding = EXCLUDED.embedding",
                    rows,
                )

        self.db.transact(work)

    def build_vector_index(self, *, maintenance_work_mem: str = "256MB") -> bool:
        """Create the HNSW index for the recorded embedding identity (after a deferred bulk load);
        False when no identity is recorded yet. Raises ``StorageError``."""

        def work(conn: Any) -> bool:
            identity = self._identity(conn)
            if identity is None:
                return False
            # A bigger build buffer keeps the graph in memory while it is built (this transaction only).
            conn.execute("SELECT set_config('maintenance_work_mem', %s, true)", (maintenance_work_mem,))
            ensure_vector_index(conn, parse_identity_dims(identity))
            return True

        return bool(self.db.transact(work))

    def clear_vectors(self) -> None:
        def work(conn: Any) -> None:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_INDEX_LOCK,))
            conn.execute("DELETE FROM engram_meta WHERE name = %s", (_IDENTITY,))
            conn.execute("DELETE FROM memory_vectors")
            # The index casts to a fixed size; a new model may have another, so it goes too.
            for (index,) in conn.execute(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'memory_vectors' AND indexname LIKE 'memory_vectors_hnsw_%%'"
            ).fetchall():
                conn.execute(f'DROP INDEX IF EXISTS "{index}"')

        self.db.transact(work)

    def vectors_for(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        # Binary results: pgvector's text form is parsed number by number (~50 µs a 384-d vector).
        with self.db.read(statements_alone=True) as conn, conn.cursor(binary=True) as cur:
            rows = cur.execute(
                "SELECT memory_id, embedding FROM memory_vectors WHERE memory_id = ANY(%s)", (list(ids),)
            ).fetchall()
        return {memory_id: np.asarray(vector.to_numpy(), dtype=np.float32) for memory_id, vector in rows}

    def search_vector(self, vector: np.ndarray, filt: MemoryFilter, *, limit: int) -> list[tuple[Memory, float]]:
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if limit <= 0 or not np.any(query):
            return []
        where, params = filter_sql(filt)
        ef_search = min(1000, max(self.ef_search, 2 * limit))
        with self.db.read() as conn:
            # One round trip for the identity and the scan's settings (transaction-local). Iterative
            # scan: when the filter drops candidates, HNSW keeps searching for more.
            identity = conn.execute(
                "SELECT (SELECT value FROM engram_meta WHERE name = %s),"
                " set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', %s, true)",
                (_IDENTITY, str(ef_search)),
            ).fetchone()[0]
            if identity is None or parse_identity_dims(identity) != query.shape[0]:
                return []
            dims = query.shape[0]
            # Ordered by the index's expression, so the index is used; scored at full precision.
            kind = _index_kind(dims)[0]
            exact = f"v.embedding::vector({dims}) <=> %s::vector({dims})"
            distance = f"v.embedding::{kind}({dims}) <=> %s::{kind}({dims})"
            rows = conn.execute(
                f"SELECT {_COLUMNS}, 1 - ({exact}) AS score FROM memory_vectors v JOIN memories m ON m.id = v.memory_id"
                f" WHERE {where} ORDER BY {distance} LIMIT %s",
                [query, *params, query, limit],
            ).fetchall()
        # relaxed_order may return neighbours slightly out of order: sort by the exact score.
        hits = [(self._memory(row), float(row[-1])) for row in rows]
        return sorted(hits, key=lambda hit: -hit[1])

    def start_vector_search(self, vector: np.ndarray, filt: MemoryFilter, *,
                            limit: int) -> Callable[[], list[tuple[Memory, float]]]:
        """``search_vector``, begun on another connection of the pool: the server walks the HNSW
        graph in one backend process while the caller searches full text in another (recall
        does), so the two sides of a hybrid recall take the longer one's time, not the sum. The
        returned call waits for the hits (and raises what the search raised). Inside a
        transaction on this thread the search runs here: another connection would not see its
        writes."""
        if self.db.in_transaction():
            hits = self.search_vector(vector, filt, limit=limit)
            return lambda: hits
        with self._side_lock:
            if self._side is None:
                self._side = ThreadPoolExecutor(_SIDE_THREADS, thread_name_prefix="engram-pg-vector")
            future = self._side.submit(self.search_vector, vector, filt, limit=limit)

        def finish() -> list[tuple[Memory, float]]:
            if future.cancel():  # not begun: every thread busy with other recalls' searches
                return self.search_vector(vector, filt, limit=limit)
            return future.result()

        return finish

    def close(self) -> None:
        with self._side_lock:
            side, self._side = self._side, None
        if side is not None:
            side.shutdown(wait=True)
        self.db.close()


# pgvector's HNSW index holds vectors of at most 2,000 dimensions and half-precision ones of at
# most 4,000: a larger model (text-embedding-3-large, gemini-embedding-001: 3,072) is indexed as
# halfvec (its neighbours found at half precision, their scores computed at full), and past 4,000
# there is no index: the search is exact, reading every vector.
_VECTOR_INDEX_DIMS = 2000
_HALFVEC_INDEX_DIMS = 4000


def _index_kind(dims: int) -> tuple[str, str]:
    """The type the index casts vectors of ``dims`` to, and its cosine operator class (``vector``
    where there is no index: an exact search has no reason to round to half precision)."""
    if dims <= _VECTOR_INDEX_DIMS or dims > _HALFVEC_INDEX_DIMS:
        return "vector", "vector_cosine_ops"
    return "halfvec", "halfvec_cosine_ops"


def ensure_vector_index(conn: Any, dims: int) -> None:
    """The HNSW cosine index for vectors of ``dims``, created once across processes (none past
    4,000 dimensions, which pgvector cannot index)."""
    if dims > _HALFVEC_INDEX_DIMS:
        return
    name = f"memory_vectors_hnsw_{int(dims)}"
    if conn.execute("SELECT to_regclass(%s)", (name,)).fetchone()[0] is not None:
        return
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_INDEX_LOCK,))
    kind, operators = _index_kind(dims)
    conn.execute(
        f"CREATE INDEX IF NOT EXISTS {name} ON memory_vectors"
        f" USING hnsw ((embedding::{kind}({int(dims)})) {operators})"
    )

