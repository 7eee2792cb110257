"""Named, ordered migrations: ``db/migrations/<dialect>/NNNN_name.sql``.

Each step runs in one transaction together with its record in ``schema_migrations``, so a
crash leaves either the whole step applied or none of it. ``pending()`` only reads.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from importlib import resources

from engram.db.sqlite import Database


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def available(dialect: str) -> list[Migration]:
    folder = resources.files("engram.db") / "migrations" / dialect
    steps = []
    for entry in folder.iterdir():
        if entry.name.endswith(".sql"):
            number, _, rest = entry.name.partition("_")
            steps.append(Migration(int(number), rest.removesuffix(".sql"), entry.read_text("utf-8")))
    return sorted(steps, key=lambda m: m.version)


_RECORD_TABLE = """CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)"""


def applied(db: Database) -> set[int]:
    with db.read() as conn:
        exists = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='schema_migrations'"
        ).fetchone()
        if not exists:
            return set()
        return {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}


def pending(db: Database, dialect: str = "sqlite") -> list[Migration]:
    done = applied(db)
    return [m for m in available(dialect) if m.version not in done]


def migrate(db: Database, dialect: str = "sqlite") -> list[Migration]:
    """Apply every pending step; safe when several processes start at once."""
    ran: list[Migration] = []
    if not pending(db, dialect):
        return ran
    with db.write() as conn:
        conn.execute(_RECORD_TABLE)
        # Re-read under the write lock: another process may have migrated meanwhile.
        done = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
        for step in available(dialect):
            if step.version in done:
                continue
            for statement in _statements(step.sql):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
                (step.version, step.name, time.time()),
            )
            ran.append(step)
    return ran


def _statements(sql: str) -> list[str]:
    """Split a migration into statements, keeping trigger bodies (BEGIN … END;) whole."""
    statements, current = [], []
    depth = 0
    for line in sql.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("--"):
            continue
        current.append(line)
        upper = stripped.upper()
        if upper.endswith("BEGIN"):
            depth += 1
        if upper.startswith("END;") and depth:
            depth -= 1
        if stripped.endswith(";") and depth == 0:
            statements.append("\n".join(current))
            current = []
    if current:
        statements.append("\n".join(current))
    return statements
