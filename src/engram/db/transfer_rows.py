"""What ``db/transfer.py`` copies, table by table: the columns read from the SQLite file and from
PostgreSQL (the same columns in the same order, so a row compares across the two), each table's key,
the insert statement, and a row as bytes that do not depend on which database it came from
(``canonical``: counts and checksums are computed on both sides the same way)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engram import text
from engram.errors import MissingDependencyError
from engram.history.sql_store import MESSAGE_COLUMNS  # a message's columns, as both history stores write them
from engram.store.sql_store import MEMORY_COLUMNS  # a memory's columns, as both memory stores read and import them

try:
    from psycopg.types.json import Json, Jsonb
except ImportError as exc:  # without the postgres extra: `engram migrate` names it (exit 4), not a traceback
    raise MissingDependencyError("copying into PostgreSQL", "postgres", exc.name or "psycopg") from exc

# Each table: the SQLite query (rows in id order), the PostgreSQL query (same columns, same
# order) and the insert statement. Rows are compared through ``canonical``.
EXCHANGE_COLUMNS = "fingerprint, conversation, user_text, assistant_text, created_at, identity, vector, agent"
AUDIT_COLUMNS = "seq, at, action, origin, reason, actor_scope, memory_id, memory_key, memory_scope, detail"
TOKEN_COLUMNS = "id, agent, name, token_hash, created_at, last_used_at, revoked_at"
# Columns holding JSON text in SQLite, by position, and how PostgreSQL takes each: JSONB, or JSON
# where the text must come back as written (metadata: PostgreSQL migration 0009; the audit
# trail's detail: 0016).
JSON_COLUMNS: dict[str, dict[int, type[Json] | type[Jsonb]]] = {
    "history_messages": {5: Jsonb, 7: Json}, "audit_log": {9: Json}}
QUERIES: dict[str, tuple[str, str]] = {
    "memories": (
        f"SELECT {MEMORY_COLUMNS} FROM memories ORDER BY id",
        f"SELECT {MEMORY_COLUMNS} FROM memories ORDER BY id",
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
        f"SELECT agent, conversation, seq, {MESSAGE_COLUMNS} FROM history_messages ORDER BY agent, conversation, seq",
        f"SELECT agent, conversation, seq, {MESSAGE_COLUMNS} FROM history_messages ORDER BY agent, conversation, seq",
    ),
    "history_summaries": (
        "SELECT agent, conversation, summary, updated_at FROM history_summaries ORDER BY agent, conversation",
        "SELECT agent, conversation, summary, updated_at FROM history_summaries ORDER BY agent, conversation",
    ),
    "history_exchanges": (
        f"SELECT {EXCHANGE_COLUMNS} FROM history_exchanges ORDER BY fingerprint",
        f'SELECT {EXCHANGE_COLUMNS} FROM history_exchanges ORDER BY fingerprint COLLATE "C"',
    ),
    # The audit trail keeps its seq (the order entries were written); see _after_copy.
    "audit_log": (
        f"SELECT {AUDIT_COLUMNS} FROM audit_log ORDER BY seq",
        f"SELECT {AUDIT_COLUMNS} FROM audit_log ORDER BY seq",
    ),
    "api_tokens": (
        f"SELECT {TOKEN_COLUMNS} FROM api_tokens ORDER BY id",
        f'SELECT {TOKEN_COLUMNS} FROM api_tokens ORDER BY id COLLATE "C"',
    ),
}
# Each table's key: its leading columns in both queries above, with their PostgreSQL types. The
# target's rows of one file are the rows under the keys that file holds (versions: the whole row).
KEYS: dict[str, tuple[str, ...]] = {
    "memories": ("text",), "memory_links": ("text", "text"), "memory_versions": ("text", "float8", "text"),
    "memory_vectors": ("text",), "history_messages": ("text", "text", "int8"), "history_summaries": ("text", "text"),
    "history_exchanges": ("text",), "audit_log": ("int8",), "api_tokens": ("text",),
}
KEY_COLUMNS = {
    "memories": "id", "memory_links": "from_id, to_id", "memory_versions": "memory_id, replaced_at, content",
    "memory_vectors": "memory_id", "history_messages": "agent, conversation, seq", "history_summaries": "agent, conversation",
    "history_exchanges": "fingerprint", "audit_log": "seq", "api_tokens": "id",
}
INSERTS = {
    "memories": (
        f"INSERT INTO memories ({MEMORY_COLUMNS}, content_hash) VALUES"
        f" ({', '.join(['%s'] * (MEMORY_COLUMNS.count(',') + 2))})"
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
        f"INSERT INTO history_messages (agent, conversation, seq, {MESSAGE_COLUMNS})"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT DO NOTHING RETURNING seq"
    ),
    "history_summaries": (
        "INSERT INTO history_summaries (agent, conversation, summary, updated_at) VALUES (%s, %s, %s, %s)"
        " ON CONFLICT DO NOTHING RETURNING conversation"
    ),
    "history_exchanges": (
        f"INSERT INTO history_exchanges ({EXCHANGE_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT DO NOTHING RETURNING fingerprint"
    ),
    "audit_log": (
        f"INSERT INTO audit_log ({AUDIT_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT DO NOTHING RETURNING seq"
    ),
    "api_tokens": (
        f"INSERT INTO api_tokens ({TOKEN_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT DO NOTHING RETURNING id"
    ),
}


def canonical(table: str, row: tuple[Any, ...]) -> bytes:
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
    for i in JSON_COLUMNS.get(table, ()):
        values[i] = json.loads(values[i]) if isinstance(values[i], str) else values[i]
    if table == "history_exchanges" and values[6] is not None:
        values[6] = bytes(values[6]).hex()
    row = tuple(values)
    return json.dumps([repr(v) if isinstance(v, float) else v for v in row], sort_keys=True).encode()


Row = tuple[Any, ...]


@dataclass
class Comparison:
    """One side's rows of a table beside the other side's rows under the same keys."""

    source: int = 0
    target: int = 0
    source_checksum: str = ""
    target_checksum: str = ""
    # Rows of the source held otherwise in the target, each with the target's row.
    differing: list[tuple[Row, Row]] = field(default_factory=list)
    left_out: int = 0


def compare(table: str, batches: Iterable[list[Row]], held: Callable[[list[Row]], dict[Row, Row]],
            leave_out: frozenset[Any] = frozenset()) -> Comparison:
    """Count and checksum the source's rows of ``table`` (``batches``, in the source's order) and
    the target's rows under their keys (``held`` looks up one batch's); a row the target lacks counts
    on one side only. Rows whose key is in ``leave_out`` (settled otherwise) are only counted there.
    Both directions of a copy (``transfer``, ``transfer_back``) verify with this."""
    mine, theirs, result = hashlib.sha256(), hashlib.sha256(), Comparison()
    width = len(KEYS[table])
    for batch in batches:
        there_by_key = held(batch)
        for row in batch:
            if row[:width] in leave_out:
                result.left_out += 1
                continue
            ours = canonical(table, row)
            mine.update(ours + b"\n")
            result.source += 1
            there = there_by_key.get(row[:width])
            if there is None:
                continue
            found = canonical(table, there)
            theirs.update(found + b"\n")
            result.target += 1
            if found != ours:
                result.differing.append((row, there))
    result.source_checksum, result.target_checksum = mine.hexdigest(), theirs.hexdigest()
    return result


def pg_params(table: str, row: tuple[Any, ...]) -> tuple[Any, ...]:
    if table == "memories":
        values = list(row)
        values[8] = json.loads(values[8])
        values[9] = Json(json.loads(values[9]))
        return (*values, text.content_hash(values[4]))
    if table == "memory_versions":
        return (*row, *row)
    if table == "memory_vectors":
        return (row[0], np.frombuffer(row[1], dtype=np.float32))
    if table in JSON_COLUMNS:
        values = list(row)
        for i, wrap in JSON_COLUMNS[table].items():
            values[i] = None if values[i] is None else wrap(json.loads(values[i]))
        return tuple(values)
    return row
