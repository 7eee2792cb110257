"""Text the SQLite file holds that PostgreSQL cannot store: a NUL character (``\\x00``), or its
escape ``\\u0000`` in JSON text (metadata, tags, a message's tool calls, an audit entry). engram
refuses one at every door now, but a file written before that was refused everywhere (a conversation
summary, a forget's reason, an imported entity or source) can hold one. ``db/transfer.py`` looks for
them before anything of the file is copied: found mid-copy, the insert failed with the driver's
"PostgreSQL text fields cannot contain NUL (0x00) bytes", naming no row, the file half copied."""

from __future__ import annotations

import json
from typing import Any

from engram.db import transfer_rows
from engram.db.sqlite import Database
from engram.errors import ValidationError
from engram.text import counted

_SHOWN = 5


# Columns holding JSON text: a NUL there is also its escape, ``\u0000``, which PostgreSQL's
# ``jsonb`` refuses and its ``json`` cannot read out (the metadata's ``->>``).
_JSON = {"memories": {"tags", "metadata"}, "history_messages": {"tool_calls", "metadata"}, "audit_log": {"detail"}}


def _json_nul(text: str) -> bool:
    """Whether the JSON ``text`` holds a string (or key) with a NUL once decoded; a ``\\u0000``
    (an escaped backslash, then ``u0000``) holds none."""
    try:
        found = json.loads(text, object_pairs_hook=lambda pairs: [item for pair in pairs for item in pair])
    except ValueError:
        return False  # not JSON: its own copy says so
    stack = [found]
    while stack:
        value = stack.pop()
        if isinstance(value, str) and "\x00" in value:
            return True
        if isinstance(value, list):
            stack.extend(value)
    return False


def _rows_with_nul(conn: Any, table: str) -> list[str]:
    """Each row of ``table`` holding a NUL in a text column, as ``table row KEY: COLUMN, ...``."""
    if table == "memory_vectors":  # a vector is bytes, whose zeros are no text's
        return []
    columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
    json_columns = _JSON.get(table, set())
    holds = [f"(typeof({c}) = 'text' AND (instr({c}, char(0)) > 0"
             + (f" OR instr({c}, '\\u0000') > 0))" if c in json_columns else "))") for c in columns]
    keys = transfer_rows.KEY_COLUMNS[table]
    width = keys.count(",") + 1
    found = []
    for row in conn.execute(f"SELECT {keys}, {', '.join(columns)} FROM {table} WHERE {' OR '.join(holds)}"):
        named = [column for column, value in zip(columns, row[width:], strict=True) if isinstance(value, str)
                 and ("\x00" in value or (column in json_columns and _json_nul(value)))]
        if named:
            key = tuple(value.replace("\x00", "\\x00") if isinstance(value, str) else value for value in row[:width])
            found.append(f"{table} row {key[0] if width == 1 else key!r}: {', '.join(named)}")
    return found


def refuse_nul(source: Database, tables: list[str]) -> None:
    """Raise ``ValidationError`` (field ``from``) naming the rows of ``tables`` that hold a NUL
    character, before anything is copied; nothing when none does."""
    with source.read() as conn:
        found = [said for table in tables for said in _rows_with_nul(conn, table)]
    if found:
        more = f" (and {len(found) - _SHOWN} more)" if len(found) > _SHOWN else ""
        raise ValidationError(
            "from", f"{source.path} holds {counted(len(found), 'row')} with a NUL character (\\x00), which PostgreSQL"
                    f" cannot store: {'; '.join(found[:_SHOWN])}{more}; nothing of this file was copied",
            "text without NUL characters: change or remove those rows in the SQLite file, then run again")
