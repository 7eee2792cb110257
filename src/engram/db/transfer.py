"""Moving up: copy an SQLite store into PostgreSQL, verifiably and resumably.

What moves: memories, links, versions, vectors, conversation history (messages with their
numbering, summaries, the semantic exchange index), the audit trail and API tokens (their
hashes: tokens issued on SQLite keep working against PostgreSQL).

Tables are copied in batches, each batch its own transaction with ``ON CONFLICT DO NOTHING``
(versions: "insert where no identical row"), so an interrupted copy resumes by running again:
what is already there is skipped. Memories keep their ids, keys and times; vectors keep their
float32 values and embedding identity. Afterwards every copied table is verified by row count
and by a SHA-256 checksum over its rows in id order, computed the same way on both sides.

Only tables this module knows are copied; any other table in the SQLite file is reported in
``TransferReport.unknown_tables`` (full-text shadow tables and the migration record excepted).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from engram import text
from engram.db.pg_settings import PostgresSettings
from engram.db.postgres import PgDatabase, redact_dsn  # raises MissingDependencyError without the extra
from engram.db.sqlite import Database
from engram.errors import DimensionError, IntegrityError, MissingDependencyError, NotFoundError, ValidationError
from engram.store.postgres import ensure_vector_index
from engram.store.vectors import parse_identity_dims

try:
    from psycopg.types.json import Json, Jsonb
except ImportError as exc:  # without the postgres extra: `engram migrate` names it (exit 4), not a traceback
    raise MissingDependencyError("copying into PostgreSQL", "postgres", exc.name or "psycopg") from exc

Progress = Callable[[str, int, int], None]  # (table, rows done, rows total)
BATCH = 1000
KNOWN_TABLES = (
    "memories", "memory_links", "memory_versions", "memory_vectors",
    "history_messages", "history_summaries", "history_exchanges", "audit_log", "api_tokens",
)
_IGNORED = ("schema_migrations", "engram_meta", "sqlite_sequence")


@dataclass
class TableReport:
    source: int = 0
    copied: int = 0
    skipped: int = 0
    target: int = 0
    source_checksum: str = ""
    target_checksum: str = ""

    @property
    def verified(self) -> bool:
        return self.source == self.target and self.source_checksum == self.target_checksum


@dataclass
class TransferReport:
    source: str
    target: str
    tables: dict[str, TableReport] = field(default_factory=dict)
    unknown_tables: list[str] = field(default_factory=list)
    embedding_identity: str | None = None
    # Where the source's maintenance schedule was carried (``root.migrate_to_postgres``), or None.
    schedule: str | None = None
    # The memory folder's sync state handed over to the target (``root.migrate_to_postgres``), or None.
    sync_state: str | None = None

    @property
    def verified(self) -> bool:
        return all(t.verified for t in self.tables.values())


# Each table: the SQLite query (rows in id order), the PostgreSQL query (same columns, same
# order) and the insert statement. Rows are compared through ``_canonical``.
_MEMORY_COLUMNS = (
    "id, agent, session, key, content, category, type, layer, tags, metadata, importance, related_entity, source,"
    " created_at, updated_at, last_accessed, recall_count, superseded_by, search_context,"
    " valid_from, valid_until, superseded_at"
)
_MESSAGE_COLUMNS = "role, content, tool_calls, tool_call_id, metadata, created_at"
_EXCHANGE_COLUMNS = "fingerprint, conversation, user_text, assistant_text, created_at, identity, vector, agent"
_AUDIT_COLUMNS = "seq, at, action, origin, reason, actor_scope, memory_id, memory_key, memory_scope, detail"
_TOKEN_COLUMNS = "id, agent, name, token_hash, created_at, last_used_at, revoked_at"
# Columns holding JSON text in SQLite, by position, and how PostgreSQL takes each: JSONB, or JSON
# where the text must come back as written (metadata: PostgreSQL migration 0009; the audit
# trail's detail: 0016).
_JSON_COLUMNS: dict[str, dict[int, type[Json] | type[Jsonb]]] = {
    "history_messages": {5: Jsonb, 7: Json}, "audit_log": {9: Json}}
_QUERIES: dict[str, tuple[str, str]] = {
    "memories": (
        f"SELECT {_MEMORY_COLUMNS} FROM memories ORDER BY id",
        f"SELECT {_MEMORY_COLUMNS} FROM memories ORDER BY id",
    ),
    "memory_links": (
        "SELECT from_id, to_id FROM memory_links ORDER BY from_id, to_id",
        "SELECT from_id, to_id FROM memory_links ORDER BY from_id, to_id",
    ),
    "memory_versions": (
        "SELECT memory_id, replaced_at, content FROM memory_versions ORDER BY memory_id, replaced_at, content",
        'SELECT memory_id, replaced_at, content FROM memory_versions ORDER BY memory_id, replaced_at, content COLLATE "C"',
    ),
    "memory_vectors": (
        "SELECT m.id, v.vector FROM memory_vectors v JOIN memories m ON m.rowid = v.memory_rowid ORDER BY m.id",
        "SELECT memory_id, embedding FROM memory_vectors ORDER BY memory_id",
    ),
    # History keeps its (agent, conversation, seq) numbering, so owners, positions and order are unchanged.
    "history_messages": (
        f"SELECT agent, conversation, seq, {_MESSAGE_COLUMNS} FROM history_messages ORDER BY agent, conversation, seq",
        f"SELECT agent, conversation, seq, {_MESSAGE_COLUMNS} FROM history_messages ORDER BY agent, conversation, seq",
    ),
    "history_summaries": (
        "SELECT agent, conversation, summary, updated_at FROM history_summaries ORDER BY agent, conversation",
        "SELECT agent, conversation, summary, updated_at FROM history_summaries ORDER BY agent, conversation",
    ),
    "history_exchanges": (
        f"SELECT {_EXCHANGE_COLUMNS} FROM history_exchanges ORDER BY fingerprint",
        f'SELECT {_EXCHANGE_COLUMNS} FROM history_exchanges ORDER BY fingerprint COLLATE "C"',
    ),
    # The audit trail keeps its seq (the order entries were written); see _after_copy.
    "audit_log": (
        f"SELECT {_AUDIT_COLUMNS} FROM audit_log ORDER BY seq",
        f"SELECT {_AUDIT_COLUMNS} FROM audit_log ORDER BY seq",
    ),
    "api_tokens": (
        f"SELECT {_TOKEN_COLUMNS} FROM api_tokens ORDER BY id",
        f'SELECT {_TOKEN_COLUMNS} FROM api_tokens ORDER BY id COLLATE "C"',
    ),
}
_INSERTS = {
    "memories": (
        f"INSERT INTO memories ({_MEMORY_COLUMNS}, content_hash) VALUES"
        " (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT DO NOTHING RETURNING id"
    ),
    "memory_links": "INSERT INTO memory_links (from_id, to_id) VALUES (%s, %s) ON CONFLICT DO NOTHING RETURNING from_id",
    "memory_versions": (
        "INSERT INTO memory_versions (memory_id, replaced_at, content) SELECT %s, %s, %s WHERE NOT EXISTS"
        " (SELECT 1 FROM memory_versions WHERE memory_id = %s AND replaced_at = %s AND content = %s) RETURNING memory_id"
    ),
    "memory_vectors": (
        "INSERT INTO memory_vectors (memory_id, embedding) VALUES (%s, %s) ON CONFLICT DO NOTHING RETURNING memory_id"
    ),
    "history_messages": (
        f"INSERT INTO history_messages (agent, conversation, seq, {_MESSAGE_COLUMNS})"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT DO NOTHING RETURNING seq"
    ),
    "history_summaries": (
        "INSERT INTO history_summaries (agent, conversation, summary, updated_at) VALUES (%s, %s, %s, %s)"
        " ON CONFLICT DO NOTHING RETURNING conversation"
    ),
    "history_exchanges": (
        f"INSERT INTO history_exchanges ({_EXCHANGE_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT DO NOTHING RETURNING fingerprint"
    ),
    "audit_log": (
        f"INSERT INTO audit_log ({_AUDIT_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT DO NOTHING RETURNING seq"
    ),
    "api_tokens": (
        f"INSERT INTO api_tokens ({_TOKEN_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT DO NOTHING RETURNING id"
    ),
}


def _canonical(table: str, row: tuple[Any, ...]) -> bytes:
    """One row as bytes that do not depend on which database it came from."""
    if table == "memories":
        values = list(row)
        values[8] = list(json.loads(values[8]) if isinstance(values[8], str) else values[8])
        values[9] = json.loads(values[9]) if isinstance(values[9], str) else values[9]
        return json.dumps([repr(v) if isinstance(v, float) else v for v in values], sort_keys=True).encode()
    if table == "memory_vectors":
        vector = row[1]
        array = np.frombuffer(vector, dtype=np.float32) if isinstance(vector, bytes) else vector.to_numpy()
        return row[0].encode() + b"\x00" + np.asarray(array, dtype="<f4").tobytes()
    values = list(row)
    for i in _JSON_COLUMNS.get(table, ()):
        values[i] = json.loads(values[i]) if isinstance(values[i], str) else values[i]
    if table == "history_exchanges" and values[6] is not None:
        values[6] = bytes(values[6]).hex()
    row = tuple(values)
    return json.dumps([repr(v) if isinstance(v, float) else v for v in row], sort_keys=True).encode()


def _pg_params(table: str, row: tuple[Any, ...]) -> tuple[Any, ...]:
    if table == "memories":
        values = list(row)
        values[8] = json.loads(values[8])
        values[9] = Json(json.loads(values[9]))
        return (*values, text.content_hash(values[4]))
    if table == "memory_versions":
        return (*row, *row)
    if table == "memory_vectors":
        return (row[0], np.frombuffer(row[1], dtype=np.float32))
    if table in _JSON_COLUMNS:
        values = list(row)
        for i, wrap in _JSON_COLUMNS[table].items():
            values[i] = None if values[i] is None else wrap(json.loads(values[i]))
        return tuple(values)
    return row


def sqlite_tables(source: Database) -> list[str]:
    with source.read() as conn:
        return [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]


def _source_rows(source: Database, table: str) -> Iterator[list[tuple[Any, ...]]]:
    with source.read() as conn:
        cursor = conn.execute(_QUERIES[table][0])
        while batch := cursor.fetchmany(BATCH):
            yield [tuple(r) for r in batch]


def _checksum_rows(table: str, batches: Iterator[list[tuple[Any, ...]]]) -> tuple[int, str]:
    digest, count = hashlib.sha256(), 0
    for batch in batches:
        for row in batch:
            digest.update(_canonical(table, row))
            digest.update(b"\n")
            count += 1
    return count, digest.hexdigest()


def _target_rows(target: PgDatabase, table: str) -> Iterator[list[tuple[Any, ...]]]:
    with target.read() as conn, conn.cursor(name=f"verify_{table}") as cursor:
        cursor.execute(_QUERIES[table][1])
        while batch := cursor.fetchmany(BATCH):
            yield [tuple(r) for r in batch]


def copy_sqlite_to_postgres(
    sqlite_path: Path | str,
    database_url: str,
    *,
    settings: PostgresSettings | None = None,
    progress: Progress | None = None,
    key: str | None = None,
) -> TransferReport:
    """Copy every known table of an SQLite store into PostgreSQL, then verify counts and checksums.

    ``key`` opens an encrypted (SQLCipher) store: ``privacy.encryption_key``.

    Safe to run again after an interruption (copied rows are skipped). Raises NotFoundError when
    the SQLite file does not exist, DimensionError when the target already holds vectors of
    another embedding identity, StorageError when either database fails.
    """
    path = Path(sqlite_path)
    if not path.exists():
        raise NotFoundError("SQLite store", str(path))
    source = Database(path, key=key)
    target = PgDatabase.connect(database_url, settings)
    report = TransferReport(source=str(path), target=redact_dsn(database_url))
    try:
        present = sqlite_tables(source)
        report.unknown_tables = [
            t for t in present
            if t not in KNOWN_TABLES and t not in _IGNORED and not t.startswith("memories_fts")
        ]
        _require_target_from_source(source, target, report.target)
        with source.read() as conn:
            row = conn.execute("SELECT value FROM engram_meta WHERE name = 'embedding_identity'").fetchone()
        report.embedding_identity = row[0] if row else None
        if report.embedding_identity:
            _claim_identity(target, report.embedding_identity)
        for table in KNOWN_TABLES:
            if table not in present:
                continue
            report.tables[table] = _copy_table(source, target, table, progress)
        if report.embedding_identity:
            dims = parse_identity_dims(report.embedding_identity)
            target.transact(lambda conn: ensure_vector_index(conn, dims))
        if "audit_log" in report.tables:
            target.transact(_advance_audit_sequence)
        for table, table_report in report.tables.items():
            table_report.source, table_report.source_checksum = _checksum_rows(table, _source_rows(source, table))
            table_report.target, table_report.target_checksum = _checksum_rows(table, _target_rows(target, table))
    finally:
        source.close()
        target.close()
    return report


def _require_target_from_source(source: Database, target: PgDatabase, shown: str) -> None:
    """Refuse, before anything is written, a target holding memories this store does not: a copy
    resumes into an earlier copy of the same store, never merges two stores (a memory of the target
    under one of the source's keys made the copy drop the source's and then fail on its links)."""
    with target.read() as conn:
        if conn.execute("SELECT NOT EXISTS (SELECT 1 FROM memories)").fetchone()[0]:
            return
        held = conn.execute("SELECT id, key FROM memories").fetchall()
    with source.read() as conn:
        ours = {row[0] for row in conn.execute("SELECT id FROM memories")}
    foreign = [key for memory_id, key in held if memory_id not in ours]
    if foreign:
        raise ValidationError("to", f"{shown} already holds {len(foreign)} memories this store does not"
                              f" (key {foreign[0]!r}, ...): a migration copies one store into an empty"
                              " database, or resumes its own earlier copy",
                              "an empty database; to merge stores, `engram export` one and `engram import` it")


def _claim_identity(target: PgDatabase, identity: str) -> None:
    def work(conn: Any) -> None:
        conn.execute(
            "INSERT INTO engram_meta (name, value) VALUES ('embedding_identity', %s) ON CONFLICT (name) DO NOTHING",
            (identity,),
        )
        current = conn.execute("SELECT value FROM engram_meta WHERE name = 'embedding_identity'").fetchone()[0]
        if current != identity:
            raise DimensionError("embedding", f"the target holds vectors of {current}, the source {identity}",
                                 "an empty target, or one with the same embedding model")

    target.transact(work)


def _copy_table(source: Database, target: PgDatabase, table: str, progress: Progress | None) -> TableReport:
    with source.read() as conn:
        total = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    report = TableReport()
    done = 0
    if progress:
        progress(table, 0, total)
    for batch in _source_rows(source, table):
        params = [_pg_params(table, row) for row in batch]

        def work(conn: Any, params: list[tuple[Any, ...]] = params) -> int:
            inserted = 0
            with conn.cursor() as cur:
                cur.executemany(_INSERTS[table], params, returning=True)
                while True:
                    inserted += len(cur.fetchall())
                    if not cur.nextset():
                        break
            return inserted

        inserted = target.transact(work)  # one transaction per batch: an interruption keeps what was done
        report.copied += inserted
        report.skipped += len(batch) - inserted
        done += len(batch)
        if progress:
            progress(table, done, total)
    # Skipped rows were either copied by an earlier run or clash with other data in the target;
    # the verification that follows tells which.
    return report


def _advance_audit_sequence(conn: Any) -> None:
    # Copied rows kept their seq: new entries must be numbered after them.
    conn.execute(
        "SELECT setval(pg_get_serial_sequence('audit_log', 'seq'), GREATEST((SELECT MAX(seq) FROM audit_log), 1))"
    )


def require_verified(report: TransferReport) -> None:
    """Raise IntegrityError naming the tables whose counts or checksums differ."""
    bad = [name for name, t in report.tables.items() if not t.verified]
    if bad:
        raise IntegrityError(f"copy to {report.target} does not match the source in: {', '.join(bad)}")
