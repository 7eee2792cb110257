"""Other memory systems' SQLite databases, recognised by their tables.

PtrClaw (``~/.ptrclaw/memory.db``) keeps ``memories`` (key, content, category, timestamp,
session_id, ...) and ``memory_links`` (from_key, to_key); sclaw (``{data_dir}/memory.db``) keeps
``facts``, ``messages`` and ``summaries``; mcp-memory-service (``sqlite_vec.db``) keeps ``memories``
(content_hash, content, tags, memory_type, metadata, created_at, ...) beside its vectors.
engram's own database shares table names with PtrClaw's
(``memories``, ``memory_links``) but not their columns, and records its migrations in
``schema_migrations``. One recogniser serves both who need it: the importers, to detect what a
file is, and ``db.sqlite.Database``, to refuse opening another system's database as engram's
before it changes anything (its migrations would fail half-way with "table memories already
exists", or quietly add engram's tables beside sclaw's).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engram.errors import ConfigError

PTRCLAW = "ptrclaw-sqlite"
SCLAW = "sclaw"
MCP_MEMORY_SERVICE = "mcp-memory-service"  # its sqlite_vec.db; the kind reads its JSON export too
NAMES = {PTRCLAW: "PtrClaw", SCLAW: "sclaw", MCP_MEMORY_SERVICE: "mcp-memory-service"}

_HEADER = b"SQLite format 3\x00"
# The columns that tell each system's tables from engram's (and from any other).
_SIGNATURES: dict[str, dict[str, set[str]]] = {
    PTRCLAW: {"memories": {"key", "content", "category", "timestamp"}, "memory_links": {"from_key", "to_key"}},
    SCLAW: {"facts": {"id", "content"}, "messages": {"session_id", "seq", "role", "content"}},
    MCP_MEMORY_SERVICE: {"memories": {"content_hash", "content", "tags", "memory_type", "metadata", "created_at"}},
}


def _header(path: Path) -> bytes:
    """The first bytes of SQLite's file header (the magic string to the read/write versions), or
    fewer when the file is shorter or unreadable."""
    try:
        with path.open("rb") as handle:
            return handle.read(20)
    except OSError:
        return b""


def is_sqlite_file(path: Path) -> bool:
    """Whether ``path`` is a file starting with SQLite's header (read without opening a database)."""
    return starts_as_sqlite(_header(path))


def starts_as_sqlite(data: bytes) -> bool:
    """Whether ``data`` (a file's first bytes, or standard input's) starts with SQLite's header."""
    return data.startswith(_HEADER)


def is_wal_mode(path: Path) -> bool:
    """Whether the SQLite file at ``path`` is in WAL mode (its header's read and write versions are 2)."""
    header = _header(path)
    return header.startswith(_HEADER) and header[18:20] == b"\x02\x02"


def columns_by_table(conn: Any) -> dict[str, set[str]]:
    """Every ordinary table of the connection's main database and its column names. A virtual
    table is left out: reading its columns needs its module, and mcp-memory-service's
    ``memory_embeddings`` is sqlite-vec's ``vec0``, which a connection without that extension
    cannot read ("no such module: vec0"); no system is recognised by one."""
    names = [row[0] for row in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
             if not (row[1] or "").lstrip().upper().startswith("CREATE VIRTUAL")]
    return {name: {row[1] for row in conn.execute(f'PRAGMA table_info("{name.replace(chr(34), chr(34) * 2)}")')}
            for name in names}


def schema_kind(tables: dict[str, set[str]]) -> str | None:
    """``PTRCLAW`` or ``SCLAW`` when ``tables`` (``columns_by_table``) are that system's, else None
    (engram's own database, which records its migrations, is never another system's)."""
    if "schema_migrations" in tables:
        return None
    for kind, signature in _SIGNATURES.items():
        if all(table in tables and needed <= tables[table] for table, needed in signature.items()):
            return kind
    return None


def refuse_foreign(conn: Any, path: str) -> None:
    """Raise ``ConfigError`` when the database at ``path`` is PtrClaw's or sclaw's: engram would
    otherwise migrate it into its own shape (or fail half-way). Called on every open: one query of
    table names settles engram's own and new databases."""
    names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "schema_migrations" in names or not names & {t for signature in _SIGNATURES.values() for t in signature}:
        return  # engram's own database, a new one, or one that is no other system's
    kind = schema_kind(columns_by_table(conn))
    if kind is None:
        return
    tables = ", ".join(_SIGNATURES[kind])
    raise ConfigError(
        f"{path} is a {NAMES[kind]} database ({tables}), not engram's: engram does not open it as its store. "
        f"Import it with `engram import {path}` (--from {kind}), and point `path` at engram's own "
        "database file (the default, home/memory.db, is created on first use)")
