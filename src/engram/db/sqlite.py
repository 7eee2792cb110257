"""SQLite connections for engram: the right driver, the sqlite-vec extension, safe pragmas.

Python builds without loadable-extension support (like some pyenv/Debian builds) cannot load
sqlite-vec through the standard ``sqlite3``; there ``pysqlite3`` (the ``pysqlite3-binary``
wheel, SQLite 3.51) is used instead. Both speak DB-API, so the rest of engram does not care.

Writes use ``BEGIN IMMEDIATE`` so a writer takes the lock up front and waits ``busy_timeout``
for it, instead of failing with "database is locked" when a read transaction tries to upgrade.
With WAL and ``synchronous=NORMAL`` a committed transaction survives a crash of the process.
"""

from __future__ import annotations

import contextlib
import sqlite3 as _stdlib_sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from engram.errors import IntegrityError, StorageError


def _pick_driver() -> ModuleType:
    probe = _stdlib_sqlite3.connect(":memory:")
    try:
        if hasattr(probe, "enable_load_extension"):
            return _stdlib_sqlite3
    finally:
        probe.close()
    try:
        import pysqlite3.dbapi2 as driver  # type: ignore[import-not-found]
    except ImportError:
        return _stdlib_sqlite3  # no extensions: vectors fall back to numpy search
    return driver


driver: ModuleType = _pick_driver()
DatabaseError: type[Exception] = driver.DatabaseError
OperationalError: type[Exception] = driver.OperationalError


def _load_vec(conn: Any) -> bool:
    try:
        import sqlite_vec  # type: ignore[import-not-found]

        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
        return True
    except (ImportError, AttributeError, DatabaseError):
        return False


class Database:
    """One SQLite connection shared by the threads of a process, serialised by a lock.

    ``read()`` and ``write()`` yield the connection under the lock; ``write()`` wraps the block
    in a ``BEGIN IMMEDIATE`` transaction that commits on success and rolls back on error.
    """

    def __init__(self, path: Path | str, *, busy_timeout_ms: int = 30_000) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self.conn = driver.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=busy_timeout_ms / 1000
            )
            self.has_vec = _load_vec(self.conn)
            self.conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA synchronous = NORMAL")
            self.conn.execute("PRAGMA temp_store = MEMORY")
            self.conn.execute("PRAGMA foreign_keys = ON")
        except DatabaseError as exc:
            if "not a database" in str(exc) or "malformed" in str(exc):
                raise IntegrityError(f"{self.path} is not a readable SQLite database: {exc}") from exc
            raise StorageError(f"cannot open SQLite database {self.path}: {exc}") from exc
        self.lock = threading.RLock()
        self._depth = 0

    @contextlib.contextmanager
    def read(self) -> Iterator[Any]:
        with self.lock, translate_errors(self.path):
            yield self.conn

    @contextlib.contextmanager
    def write(self) -> Iterator[Any]:
        """A write transaction; nested calls join the outer one."""
        with self.lock, translate_errors(self.path):
            if self._depth:
                self._depth += 1
                try:
                    yield self.conn
                finally:
                    self._depth -= 1
                return
            self.conn.execute("BEGIN IMMEDIATE")
            self._depth = 1
            try:
                yield self.conn
            except BaseException:
                self._depth = 0
                self.conn.execute("ROLLBACK")
                raise
            self._depth = 0
            self.conn.execute("COMMIT")

    def integrity_check(self) -> str:
        with self.read() as conn:
            return str(conn.execute("PRAGMA integrity_check").fetchone()[0])

    def close(self) -> None:
        with self.lock:
            self.conn.close()


@contextlib.contextmanager
def translate_errors(where: str) -> Iterator[None]:
    """Driver exceptions become engram's StorageError/IntegrityError, with the file named."""
    try:
        yield
    except DatabaseError as exc:
        text = str(exc)
        if "malformed" in text or "not a database" in text:
            raise IntegrityError(f"SQLite database {where} is damaged: {text}") from exc
        raise StorageError(f"SQLite error on {where}: {text}") from exc
