"""Moving back: copy a PostgreSQL database into an SQLite file (``engram migrate --from URL``), the
way ``db/transfer.py`` copies one up, verifiably and resumably.

What moves is what the copy up carries: memories, links, versions, vectors (with the embedding
identity), conversation history (messages with their numbering, summaries, the semantic exchange
index), the audit trail and API tokens, every agent's, into one file (the shared SQLite file a home
without ``per_agent_databases`` uses). The same tables, columns and keys (``transfer_rows``); rows
are compared through ``transfer_rows.canonical`` both ways, so a row verified going up verifies
coming back.

The file is either new, or holds only rows of this database as they are there (an earlier copy, whole
or interrupted): anything else in it (another store's memories, a row changed since) refuses the copy
before anything is written, naming the rows, as there is no rule for settling a file against the
database it came from. Each batch is its own transaction with ``INSERT OR IGNORE`` (versions:
"where no identical row"), so an interrupted copy resumes by running again, and a second run copies
nothing: its report counts every row as already there (``TableReport.skipped``). Afterwards every
table is verified by row count and SHA-256 checksum over the database's rows and the file's rows
under their keys.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from engram.db import transfer_overlap, transfer_rows
from engram.db.pg_settings import DSN_ALLOWED, PostgresSettings, dsn_problem
from engram.db.postgres import PgDatabase, redact_dsn  # raises MissingDependencyError without the extra
from engram.db.sqlite import Database
from engram.db.transfer import BATCH, KNOWN_TABLES, Progress, TableReport, TransferReport
from engram.errors import DimensionError, StorageError, ValidationError

# The file's inserts, in the columns of ``transfer_rows.QUERIES`` (a row read from PostgreSQL as is,
# then ``_file_params``). A vector lands on its memory's rowid; a version where no identical one is.
_INSERTS = {
    "memories": (f"INSERT OR IGNORE INTO memories ({transfer_rows.MEMORY_COLUMNS}, content_hash) VALUES"
                 f" ({', '.join(['?'] * (transfer_rows.MEMORY_COLUMNS.count(',') + 2))})"),
    "memory_links": "INSERT OR IGNORE INTO memory_links (from_id, to_id) VALUES (?, ?)",
    "memory_versions": ("INSERT INTO memory_versions (memory_id, replaced_at, content) SELECT ?, ?, ? WHERE NOT EXISTS"
                        " (SELECT 1 FROM memory_versions WHERE memory_id = ? AND replaced_at = ? AND content = ?)"),
    "memory_vectors": "INSERT OR IGNORE INTO memory_vectors (memory_rowid, vector) SELECT rowid, ? FROM memories WHERE id = ?",
    "history_messages": (f"INSERT OR IGNORE INTO history_messages (agent, conversation, seq, {transfer_rows.MESSAGE_COLUMNS})"
                         " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"),
    "history_summaries": ("INSERT OR IGNORE INTO history_summaries (agent, conversation, summary, updated_at)"
                          " VALUES (?, ?, ?, ?)"),
    "history_exchanges": (f"INSERT OR IGNORE INTO history_exchanges ({transfer_rows.EXCHANGE_COLUMNS})"
                          " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
    "audit_log": f"INSERT OR IGNORE INTO audit_log ({transfer_rows.AUDIT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    "api_tokens": f"INSERT OR IGNORE INTO api_tokens ({transfer_rows.TOKEN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
}


def _json_text(value: Any, *, ascii_only: bool) -> str | None:
    """A JSON column as the SQLite stores write it: memories' tags and metadata with ``json.dumps``'
    defaults (``store.sqlite``), messages' and audit entries' with ``ensure_ascii=False``."""
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=ascii_only)


def _file_params(table: str, row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A row read from PostgreSQL as the file's insert takes it."""
    values = list(row)
    if table == "memories":
        values[8] = _json_text(list(values[8]), ascii_only=True)
        values[9] = _json_text(values[9], ascii_only=True)
        from engram import text

        return (*values, text.content_hash(values[4]))
    if table == "memory_versions":
        return (*row, *row)
    if table == "memory_vectors":
        vector = np.asarray(values[1].to_numpy() if hasattr(values[1], "to_numpy") else values[1], dtype="<f4")
        return (vector.tobytes(), values[0])
    if table == "history_exchanges" and values[6] is not None:
        values[6] = bytes(values[6])
    for i in transfer_rows.JSON_COLUMNS.get(table, ()):
        values[i] = _json_text(values[i], ascii_only=False)
    return tuple(values)


def _database_rows(source: PgDatabase, table: str) -> Iterator[list[tuple[Any, ...]]]:
    """The database's rows of ``table`` in batches, in key order."""
    with source.read() as conn, conn.cursor() as cursor:
        cursor.execute(transfer_rows.QUERIES[table][1])
        while batch := cursor.fetchmany(BATCH):
            yield [tuple(r) for r in batch]


def _in_file(conn: Any, table: str, batch: list[tuple[Any, ...]]) -> dict[tuple[Any, ...], tuple[Any, ...]]:
    """The file's rows under the keys of ``batch`` (rows of the database), by key."""
    width = len(transfer_rows.KEYS[table])
    select = transfer_rows.QUERIES[table][0].split(" ORDER BY ")[0]
    names = ", ".join(f"c{i}" for i in range(select.count(",") + 1))
    keys = ", ".join(f"c{i}" for i in range(width))
    wanted = ", ".join([f"({', '.join(['?'] * width)})"] * len(batch))
    rows = conn.execute(f"WITH f({names}) AS ({select}) SELECT * FROM f WHERE ({keys}) IN (VALUES {wanted})",
                        [value for row in batch for value in row[:width]])
    return {tuple(row[:width]): tuple(row) for row in rows}


def _compare(source: PgDatabase, target: Database, table: str) -> transfer_rows.Comparison:
    """The database's rows of ``table`` beside the file's under their keys (a row the file lacks
    counts on one side only)."""
    with target.read() as conn:
        return transfer_rows.compare(table, _database_rows(source, table), lambda batch: _in_file(conn, table, batch))


def _file_count(target: Database, table: str) -> int:
    with target.read() as conn:
        return conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


def _refuse_foreign_rows(source: PgDatabase, target: Database, shown: str) -> None:
    """Refuse, before anything is written, a file holding rows that are not this database's as
    they are there (another store's, or rows changed or removed there since an earlier copy)."""
    clashes: list[transfer_overlap.Clash] = []
    extra: list[str] = []
    for table in KNOWN_TABLES:
        compared = _compare(source, target, table)
        clashes += [transfer_overlap.describe(table, row, len(transfer_rows.KEYS[table])) for row, _ in compared.differing]
        others = _file_count(target, table) - compared.target
        if others:
            extra.append(f"{others} {table} row{'s' if others != 1 else ''} the database does not hold")
    if clashes or extra:
        said = "; ".join([*(clash.said for clash in clashes[:5]), *extra])
        more = f" (and {len(clashes) - 5} more)" if len(clashes) > 5 else ""
        raise ValidationError("to", f"{shown} holds rows that are not this database's: {said}{more}; nothing was copied",
                              "a new file, or this database's own earlier copy to resume")


def copy_postgres_to_sqlite(
    database_url: str,
    sqlite_path: Path | str,
    *,
    settings: PostgresSettings | None = None,
    progress: Progress | None = None,
    key: str | None = None,
    named: str | None = None,
) -> TransferReport:
    """Copy every known table of a PostgreSQL database into an SQLite file (made when missing, with
    engram's schema), then verify counts and checksums of every table. ``key`` encrypts the file
    (SQLCipher: ``privacy.encryption_key``); ``named``: where ``database_url`` was given
    (``--from``), put before the error when it cannot be reached.

    Safe to run again after an interruption; run again after a whole copy, nothing is copied and
    each table's rows are counted as already there (``TableReport.skipped``). Raises
    ValidationError (field ``database_url``) when ``database_url`` names no PostgreSQL database,
    ValidationError (field ``to``) when the path is a folder or, before anything is written, when
    the file holds rows that are not the database's as they are there, DimensionError when the file
    holds vectors of another embedding identity, StorageError when either database fails.
    """
    problem = dsn_problem(database_url)
    if problem:
        raise ValidationError("database_url", problem, DSN_ALLOWED)
    path = Path(sqlite_path)
    if path.is_dir():
        raise ValidationError("to", f"{path} is a folder", "a path for engram's SQLite file (memory.db)")
    try:
        source = PgDatabase.connect(database_url, settings)
    except StorageError as exc:
        if named is None:
            raise
        raise StorageError(f"{named}: {exc}") from exc
    report = TransferReport(source=redact_dsn(database_url), target=str(path))
    try:
        from engram.store.sqlite import SqliteMemoryStore

        path.parent.mkdir(parents=True, exist_ok=True)
        # Opened as the store opens it: made with engram's schema when missing (its migrations),
        # with the SQL functions its generated columns and triggers call.
        store = SqliteMemoryStore(path, key=key)
    except BaseException:
        source.close()
        raise
    target = store.db
    try:
        _refuse_foreign_rows(source, target, str(path))
        with source.read() as conn:
            row = conn.execute("SELECT value FROM engram_meta WHERE name = 'embedding_identity'").fetchone()
        report.embedding_identity = row[0] if row else None
        if report.embedding_identity:
            _claim_identity(target, report.embedding_identity)
        for table in KNOWN_TABLES:
            report.tables[table] = _copy_table(source, target, table, progress)
        for table, table_report in report.tables.items():
            compared = _compare(source, target, table)
            table_report.source, table_report.source_checksum = compared.source, compared.source_checksum
            table_report.target, table_report.target_checksum = compared.target, compared.target_checksum
    finally:
        source.close()
        store.close()
    return report


def _claim_identity(target: Database, identity: str) -> None:
    with target.write() as conn:
        conn.execute("INSERT OR IGNORE INTO engram_meta (name, value) VALUES ('embedding_identity', ?)", (identity,))
        current = conn.execute("SELECT value FROM engram_meta WHERE name = 'embedding_identity'").fetchone()[0]
    if current != identity:
        raise DimensionError("embedding", f"the file holds vectors of {current}, the database {identity}",
                             "a new file, or one with the same embedding model")


def _copy_table(source: PgDatabase, target: Database, table: str, progress: Progress | None) -> TableReport:
    with source.read() as conn:
        total = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    report, done = TableReport(), 0
    if progress:
        progress(table, 0, total)
    for batch in _database_rows(source, table):
        with target.write() as conn:  # one transaction per batch: an interruption keeps what was done
            # rowcount: the rows the statements inserted, not those their triggers wrote (full text)
            inserted = conn.executemany(_INSERTS[table], [_file_params(table, row) for row in batch]).rowcount
        # A row not inserted is one the file held already: ``_refuse_foreign_rows`` let only
        # identical ones stay, and the verification that follows says so.
        report.copied += inserted
        report.skipped += len(batch) - inserted
        done += len(batch)
        if progress:
            progress(table, done, total)
    return report
