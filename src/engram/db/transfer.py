"""Moving up: copy an SQLite store into PostgreSQL, verifiably and resumably.

What moves: memories, links, versions, vectors, conversation history (messages with their
numbering, summaries, the semantic exchange index), the audit trail and API tokens (their
hashes: tokens issued on SQLite keep working against PostgreSQL).

Tables are copied in batches, each batch its own transaction with ``ON CONFLICT DO NOTHING``
(versions: "insert where no identical row"), so an interrupted copy resumes by running again:
what is already there is skipped. Memories keep their ids, keys and times; vectors keep their
float32 values and embedding identity. Afterwards every copied table is verified by row count
and by a SHA-256 checksum over the file's rows in id order, computed the same way on both sides:
on the target, the rows under the keys the file holds (``transfer_rows.KEYS``), so several files
(``per_agent_databases``: each agent's, and the shared one) go one after another into one
database, each verified against its own rows. Before anything is written, a row of the file whose
key the target holds with other content is settled by ``transfer_overlap``'s rules (two copies of
one memory: the newer kept, the other's content as a version; one conversation in two files: the
older messages numbered before the others, or merged in time order; one token used or revoked on
either side: the later use and any revocation kept) or is a conflict (the same memory id in
another scope, the same scope and key under another id, a token id naming another token...): the
file is refused, naming them, and nothing is overwritten. Each file
numbers its audit trail from 1: entries that would land on the target's are renumbered after them
(``transfer_audit``), remembered in ``engram_meta`` so a resumed copy lands where it began and a
file used since its copy has only its new entries numbered after the target's.
A verified copy is recorded there too (``transfer_record``): run again once PostgreSQL is in use,
a file unchanged since is skipped, so what was removed there since (a memory forgotten, history
compacted) is not filled in again.

Only tables this module knows are copied; any other table in the SQLite file is reported in
``TransferReport.unknown_tables`` (full-text shadow tables and the migration record excepted).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engram import jsondoc
from engram.db import transfer_audit, transfer_overlap, transfer_record, transfer_rows, transfer_text
from engram.db.pg_settings import DSN_ALLOWED, PostgresSettings, dsn_problem
from engram.db.postgres import PgDatabase, redact_dsn  # raises MissingDependencyError without the extra
from engram.db.sqlite import Database
from engram.errors import DimensionError, IntegrityError, NotFoundError, StorageError, ValidationError
from engram.store.postgres import ensure_vector_index
from engram.store.vectors import parse_identity_dims
from engram.text import counted

Progress = Callable[[str, int, int], None]  # (table, rows done, rows total)
Shift = Callable[[tuple[Any, ...]], tuple[Any, ...]]  # a file's row as it lands in the target (renumbered, settled)
BATCH = 1000
KNOWN_TABLES = (
    "memories", "memory_links", "memory_versions", "memory_vectors",
    "history_messages", "history_summaries", "history_exchanges", "audit_log", "api_tokens",
)
# memory_reindex: rows the file's own full-text index is to take again (a copy indexes everything).
_IGNORED = ("schema_migrations", "engram_meta", "sqlite_sequence", "memory_reindex")


@dataclass
class TableReport:
    source: int = 0
    copied: int = 0
    # Rows offered and found already there as they are (shown as "already there"): an earlier or
    # interrupted copy's; rows left out for the target's copy are counted in ``resolved`` instead.
    skipped: int = 0
    target: int = 0
    source_checksum: str = ""
    target_checksum: str = ""
    # Rows of the file the verification leaves out, the target's copy being the one kept (a newer
    # copy of the same memory and its vector, a summary joined, a token used or revoked on either
    # side): ``TransferReport.resolved`` names them.
    resolved: int = 0

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

    # How far this file's newest audit entries were renumbered (after the target's; ``transfer_audit``).
    audit_offset: int = 0
    # Why nothing of this file was copied, when ``root.migrate_every_file`` went on to the next one.
    refused: str | None = None
    # Each row the target held otherwise and how it was settled (``transfer_overlap``): which copy
    # of a memory was kept, a conversation's messages placed before the target's or merged among
    # them, a summary joined, a token's later use or revocation taken.
    resolved: list[str] = field(default_factory=list)
    # When the target verified a copy of these very rows (``transfer_record``): nothing was copied
    # this time, so nothing removed there since came back. None when this run copied.
    already_copied: str | None = None
    # When the target verified a copy of this file as it was before its rows changed: this run
    # copied what the target lacks, which may bring back rows removed there since then.
    changed_since: str | None = None

    @property
    def verified(self) -> bool:
        return self.refused is None and all(t.verified for t in self.tables.values())




def sqlite_tables(source: Database) -> list[str]:
    with source.read() as conn:
        return [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]


def _source_rows(source: Database, table: str, shift: Shift | None = None) -> Iterator[list[tuple[Any, ...]]]:
    """The file's rows of ``table`` in batches, in id order, each as ``shift`` lands it (audit
    entries after the target's, a conversation's messages before the target's, a memory replacing
    the target's copy with the reads of both)."""
    with source.read() as conn:
        cursor = conn.execute(transfer_rows.QUERIES[table][0])
        while batch := cursor.fetchmany(BATCH):
            yield [shift(tuple(r)) for r in batch] if shift else [tuple(r) for r in batch]


def _held(conn: Any, table: str, batch: list[tuple[Any, ...]]) -> dict[tuple[Any, ...], tuple[Any, ...]]:
    """The target's rows under the keys of ``batch`` (rows of the file), by key."""
    width = len(transfer_rows.KEYS[table])
    columns = [list(column) for column in zip(*(row[:width] for row in batch), strict=True)]
    arrays = ", ".join(f"%s::{kind}[]" for kind in transfer_rows.KEYS[table])
    select = transfer_rows.QUERIES[table][1].split(" ORDER BY ")[0]  # the same columns, looked up by key instead of scanned
    rows = conn.execute(f"{select} WHERE ({transfer_rows.KEY_COLUMNS[table]}) IN (SELECT * FROM unnest({arrays}))", columns)
    return {tuple(row[:width]): tuple(row) for row in rows}


def _compare(source: Database, target: PgDatabase, table: str, shift: Shift | None = None,
             leave_out: frozenset[Any] = frozenset()) -> transfer_rows.Comparison:
    """The file's rows of ``table`` (renumbered by ``shift``) beside the target's, in the file's
    order; rows whose key is in ``leave_out`` (settled otherwise, ``transfer_overlap``) are only counted there."""
    with target.read() as conn:
        return transfer_rows.compare(table, _source_rows(source, table, shift), lambda batch: _held(conn, table, batch),
                                     leave_out)


def fingerprint(source: Database, tables: list[str]) -> str | None:
    """A SHA-256 over the file's own rows of ``tables`` (as written there: not renumbered or
    settled against any target), so it changes exactly when the file's rows do (``transfer_record``).
    None when the file holds none: every such file would have one fingerprint, and one copied
    would make the next look copied already (a new agent's file never copied said "already copied")."""
    digest, rows = hashlib.sha256(), 0
    for table in tables:
        digest.update(table.encode() + b"\x00")
        for batch in _source_rows(source, table):
            rows += len(batch)
            for row in batch:
                digest.update(hashlib.sha256(transfer_rows.canonical(table, row)).digest())
    return digest.hexdigest() if rows else None


def _conversation(source: Database, agent: str, conversation: str) -> list[tuple[Any, ...]]:
    """The file's messages of one conversation, in seq order."""
    select = transfer_rows.QUERIES["history_messages"][0].split(" ORDER BY ")[0]
    with source.read() as conn:
        return [tuple(row) for row in conn.execute(f"{select} WHERE agent = ? AND conversation = ? ORDER BY seq",
                                                   (agent, conversation))]


def _settle(source: Database, target: PgDatabase, tables: list[str], shown: str) -> transfer_overlap.Overlaps:
    """Before anything is written: each row of the file the target holds otherwise, settled by
    ``transfer_overlap``'s rules (two copies of one memory, one conversation in two files, one token
    on both sides) or listed as a conflict (the same memory id in another scope, a key under another
    id, a token id naming another token...)."""
    overlaps = transfer_overlap.Overlaps()
    if "memories" in tables:
        with target.read() as conn:
            overlaps.conflicts += transfer_overlap.key_conflicts(conn, _source_rows(source, "memories"))
        transfer_overlap.settle_memories(overlaps, _compare(source, target, "memories").differing, shown)
    if "history_messages" in tables:
        with source.read() as conn:
            firsts, spans = transfer_overlap.conversations(conn)
        with target.read() as conn:
            transfer_overlap.known_offsets(overlaps, conn, firsts)
        clashing = {row[:2] for row, _ in _compare(source, target, "history_messages", overlaps.shift_message).differing}
        with target.read() as conn:
            transfer_overlap.settle_conversations(overlaps, conn, clashing, spans, firsts,
                                                  lambda agent, key: _conversation(source, agent, key))
    if "history_summaries" in tables:
        transfer_overlap.settle_summaries(overlaps, _compare(source, target, "history_summaries").differing)
    if "api_tokens" in tables:
        transfer_overlap.settle_tokens(overlaps, _compare(source, target, "api_tokens").differing, shown)
    settled = {(memory_id,) for memory_id in (*overlaps.kept, *overlaps.replaced)}  # their vectors go with the copy kept
    for table in tables:
        if table not in ("memories", "history_messages", "history_summaries", "audit_log", "api_tokens"):
            overlaps.conflicts += [transfer_overlap.describe(table, row, len(transfer_rows.KEYS[table]))
                                   for row, _ in _compare(source, target, table).differing
                                   if not (table == "memory_vectors" and row[:1] in settled)]
    return overlaps


def copy_sqlite_to_postgres(
    sqlite_path: Path | str,
    database_url: str,
    *,
    settings: PostgresSettings | None = None,
    progress: Progress | None = None,
    key: str | None = None,
    named: str | None = None,
) -> TransferReport:
    """Copy every known table of an SQLite store into PostgreSQL, then verify counts and checksums
    of the file's rows (the target may hold other files' rows besides: ``per_agent_databases``).

    ``key`` opens an encrypted (SQLCipher) store: ``privacy.encryption_key``. ``named``: where
    ``database_url`` was given (``--to``, ``database_url (from ENGRAM_DATABASE_URL)``), put before
    the error when it cannot be reached, as a store opened on it says.

    Safe to run again after an interruption (copied rows are skipped). A file whose rows are the
    ones of a copy the target verified before is not read into it again (``transfer_record``):
    ``TransferReport.already_copied`` says when, and nothing removed there since comes back; a file
    changed since such a copy is copied as usual, ``TransferReport.changed_since`` saying so. What the target holds
    otherwise and a rule settles (``transfer_overlap``) is listed in ``TransferReport.resolved``.
    Raises ValidationError (field ``database_url``) when ``database_url`` names no PostgreSQL
    database (a file path, ``sqlite:///x.db``), NotFoundError when the SQLite file does not exist,
    ValidationError (field ``from``) when it is a folder, ValidationError (field ``to``), before
    anything of the file is written, when the target holds one of its rows with other content that
    no rule settles or one of its memories' keys under another id, DimensionError when the target
    already holds vectors of another embedding identity, StorageError when either database fails.
    """
    # Checked before anything is opened, as the setting and ``engram migrate --to`` check it: given
    # here it said "is not a postgresql:// URL" (naming no field) or libpq's own "missing '='". The
    # value is not repeated: it may hold a password.
    problem = dsn_problem(database_url)
    if problem:
        raise ValidationError("database_url", problem, DSN_ALLOWED)
    path = Path(sqlite_path)
    if not path.exists():
        raise NotFoundError("SQLite store", str(path))
    if path.is_dir():  # opened, it failed as an unreadable database (or a ValueError for "/"): name what it is
        raise ValidationError("from", f"{jsondoc.shown(str(path))} is a folder", "engram's SQLite file (memory.db)")
    source = Database(path, key=key)
    try:
        target = PgDatabase.connect(database_url, settings)
    except StorageError as exc:
        source.close()
        if named is None:
            raise
        raise StorageError(f"{named}: {exc}") from exc
    except BaseException:
        source.close()
        raise
    report = TransferReport(source=str(path), target=redact_dsn(database_url))
    try:
        present = sqlite_tables(source)
        report.unknown_tables = [
            t for t in present
            if t not in KNOWN_TABLES and t not in _IGNORED and not t.startswith("memories_fts")
        ]
        tables = [table for table in KNOWN_TABLES if table in present]
        digest = fingerprint(source, tables)
        # A file without rows is copied (nothing) and verified as any other: nothing of it can bring
        # back a row removed there, and it is not reported as a copy it never was.
        earlier = transfer_record.earlier_copy(target, digest, path) if digest else transfer_record.EarlierCopy()
        if earlier.unchanged_at is not None:  # copying again would bring back what was removed there since
            report.already_copied = earlier.unchanged_at
            return report
        report.changed_since = earlier.changed_since
        transfer_text.refuse_nul(source, tables)
        overlaps = _settle(source, target, tables, report.target)
        transfer_overlap.refuse(report.target, overlaps.conflicts)
        shifts: dict[str, Shift] = {"history_messages": overlaps.shift_message, "memories": overlaps.land_memory}
        if "audit_log" in tables:
            claimed = transfer_audit.spans(source, target)
            report.audit_offset = claimed[-1][2] if claimed else 0
            shifts["audit_log"] = transfer_audit.shift(claimed)
            transfer_overlap.refuse(report.target, [transfer_overlap.describe("audit_log", row, 1) for row, _ in
                                                    _compare(source, target, "audit_log", shifts["audit_log"]).differing])
        with source.read() as conn:
            row = conn.execute("SELECT value FROM engram_meta WHERE name = 'embedding_identity'").fetchone()
        report.embedding_identity = row[0] if row else None
        if report.embedding_identity:
            _claim_identity(target, report.embedding_identity)
        report.resolved = overlaps.notes
        target.transact(lambda conn: transfer_overlap.apply(
            overlaps, conn, lambda row: transfer_rows.pg_params("memories", row), report.target))
        kept = frozenset((memory_id,) for memory_id in overlaps.kept)
        leave_out = {"memories": kept, "memory_vectors": kept, "history_summaries": frozenset(overlaps.joined),
                     "api_tokens": frozenset((token_id,) for token_id in overlaps.tokens)}
        for table in tables:
            report.tables[table] = _copy_table(source, target, table, progress, shifts.get(table),
                                               leave_out.get(table, frozenset()))
        if report.embedding_identity:
            dims = parse_identity_dims(report.embedding_identity)
            target.transact(lambda conn: ensure_vector_index(conn, dims))
        if "audit_log" in report.tables:
            target.transact(transfer_audit.advance_sequence)
        for table, table_report in report.tables.items():
            compared = _compare(source, target, table, shifts.get(table), leave_out.get(table, frozenset()))
            table_report.source, table_report.source_checksum = compared.source, compared.source_checksum
            table_report.target, table_report.target_checksum = compared.target, compared.target_checksum
            table_report.resolved = compared.left_out
        if report.verified and digest:
            transfer_record.record_copy(target, digest, path, time.time())
    finally:
        source.close()
        target.close()
    return report


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


def _copy_table(source: Database, target: PgDatabase, table: str, progress: Progress | None,
                shift: Shift | None = None, leave_out: frozenset[Any] = frozenset()) -> TableReport:
    with source.read() as conn:
        total = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    report = TableReport()
    done = 0
    if progress:
        progress(table, 0, total)
    width = len(transfer_rows.KEYS[table])
    for batch in _source_rows(source, table, shift):
        # Rows whose copy in the target is kept are not offered (a kept memory's vector describes its content).
        params = [transfer_rows.pg_params(table, row) for row in batch if row[:width] not in leave_out]

        def work(conn: Any, params: list[tuple[Any, ...]] = params) -> int:
            inserted = 0
            with conn.cursor() as cur:
                cur.executemany(transfer_rows.INSERTS[table], params, returning=True)
                while True:
                    inserted += len(cur.fetchall())
                    if not cur.nextset():
                        break
            return inserted

        inserted = target.transact(work) if params else 0  # one transaction per batch: an interruption keeps what was done
        report.copied += inserted
        # Rows left out are counted as kept there (``TableReport.resolved``), not also as already there.
        report.skipped += len(params) - inserted
        done += len(batch)
        if progress:
            progress(table, done, total)
    # Skipped rows are ones the target already held (copied by an earlier run, or written just now by a
    # settlement: ``transfer_overlap.apply``); a clash was refused before, and the verification confirms.
    return report


def require_verified(*reports: TransferReport) -> None:
    """Raise IntegrityError naming, per file, the tables whose counts or checksums differ, or why
    the file was refused."""
    bad = []
    for report in reports:
        tables = [name for name, t in report.tables.items() if not t.verified]
        if report.refused or tables:
            bad.append(f"{report.source}: {report.refused or 'does not match the source in: ' + ', '.join(tables)}")
    if bad and len(reports) == 1:
        raise IntegrityError(f"copy to {reports[0].target} {bad[0].split(': ', 1)[1]}")
    if bad:
        raise IntegrityError(f"copy to {reports[0].target} incomplete, {len(bad)} of {counted(len(reports), 'file')}:"
                             f" {'; '.join(bad)}")
