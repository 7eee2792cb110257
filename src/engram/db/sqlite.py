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
import os
import sqlite3 as _stdlib_sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from engram.db.foreign import refuse_foreign
from engram.errors import EncryptionKeyError, IntegrityError, StorageError


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
# Every driver's DatabaseError that may reach translate_errors (SQLCipher's joins when first used).
_DB_ERRORS: list[type[Exception]] = [driver.DatabaseError]


def cipher_driver() -> ModuleType:
    """SQLCipher's DB-API module (encryption at rest); ``MissingDependencyError`` without it."""
    try:
        import sqlcipher3.dbapi2 as cipher  # type: ignore[import-not-found]
    except ImportError:
        from engram.errors import MissingDependencyError

        raise MissingDependencyError("encryption at rest", "lifecycle", "sqlcipher3-binary") from None
    if cipher.DatabaseError not in _DB_ERRORS:
        _DB_ERRORS.append(cipher.DatabaseError)
    return cipher


def db_errors() -> tuple[type[Exception], ...]:
    return tuple(_DB_ERRORS)


def connect(path: str, *, key: str | None = None, timeout_s: float = 30.0, readonly: bool = False) -> Any:
    """A raw connection to ``path``: SQLCipher with ``PRAGMA key`` first when a key is given.

    ``readonly`` opens an existing file without the right to write or create it (a missing file
    is an error, never a new empty database). A key that does not open the file (a wrong one, or
    one set for a file that is not encrypted) raises ``EncryptionKeyError``; a file that is not a
    database, ``IntegrityError``; each naming the file."""
    module = cipher_driver() if key else driver
    target, uri = path, False
    if readonly:
        target, uri = Path(path).absolute().as_uri() + "?mode=ro", True
    try:
        conn = module.connect(target, isolation_level=None, check_same_thread=False, timeout=timeout_s, uri=uri)
        if key:
            # SQLCipher logs its own lines to stderr at WARN ("ERROR CORE sqlcipher_page_cipher: hmac
            # check failed ...") before a wrong key's error, which engram names itself (below).
            conn.execute("PRAGMA cipher_log_level = NONE")
            conn.execute("PRAGMA key = '" + key.replace("'", "''") + "'")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except db_errors() as exc:
        if key and "not a database" in str(exc):
            raise key_error(path) from exc
        if "not a database" in str(exc) or "malformed" in str(exc):
            hint = "" if key else " (encrypted? set privacy.encryption_key_file or privacy.encryption_key)"
            raise IntegrityError(f"{path} is not a readable SQLite database{hint}: {exc}") from exc
        raise StorageError(f"cannot open SQLite database {path}: {exc}") from exc


# The first 16 bytes of every plain SQLite file; an encrypted one starts with random salt instead.
_PLAIN_HEADER = b"SQLite format 3\x00"


def is_plain(path: str | Path) -> bool:
    """Whether ``path`` is an unencrypted SQLite file (its header; False when it cannot be read)."""
    try:
        with open(path, "rb") as file:
            return file.read(len(_PLAIN_HEADER)) == _PLAIN_HEADER
    except OSError:
        return False


def key_error(path: str) -> EncryptionKeyError:
    """The error for a key SQLCipher could not open ``path`` with. A plain file is told apart by its
    header; otherwise the key is wrong (SQLCipher cannot tell a wrong key from a first page
    damaged beyond its checksum, and the wrong key is by far the likelier)."""
    plain = is_plain(path)
    setting = "privacy.encryption_key or privacy.encryption_key_file"
    if plain:
        return EncryptionKeyError(f"{path} is not encrypted, but an encryption key is set ({setting}): an existing "
                                  "file is not converted; unset the key to open it")
    return EncryptionKeyError(f"{path}: the encryption key is wrong ({setting}); the file opens only with the key "
                              "it was made with")


def use_wal(conn: Any, timeout_s: float) -> None:
    """``PRAGMA journal_mode = WAL`` on ``conn``, tried again for up to ``timeout_s`` while another
    connection holds the file. Switching a file to WAL needs it to itself, and SQLite answers
    "database is locked" at once rather than call the busy handler where waiting could deadlock:
    threads or processes opening a new file together failed so (8 threads, ~1 round in 20)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except (_stdlib_sqlite3.Error, *db_errors()) as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(0.01)


def truncate_wal(conn: Any, path: str) -> None:
    """Checkpoint the WAL of ``conn`` into its file and truncate it to nothing, so no earlier page
    image is left in it (an erase). Waits for readers as long as the busy timeout allows; raises
    ``StorageError`` when a reader still held it back (the WAL then keeps frames)."""
    busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    if busy:
        raise StorageError(f"{path}: another connection's read kept the WAL from being emptied; it still holds"
                           f" earlier page images until a later checkpoint")


def _load_vec(conn: Any) -> bool:
    try:
        import sqlite_vec  # type: ignore[import-not-found]

        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
        return True
    except (ImportError, AttributeError, *db_errors()):
        return False


class Database:
    """One SQLite connection shared by the threads of a process, serialised by a lock.

    ``read()`` and ``write()`` yield the connection under the lock; ``write()`` wraps the block
    in a ``BEGIN IMMEDIATE`` transaction that commits on success and rolls back on error.
    """

    def __init__(self, path: Path | str, *, busy_timeout_ms: int = 30_000, key: str | None = None) -> None:
        self.path = str(path)
        self.encrypted = bool(key)
        if self.path != ":memory:":
            refuse_unwritable(Path(self.path))
        self.conn = connect(self.path, key=key, timeout_s=busy_timeout_ms / 1000)
        try:
            # Before any pragma or migration changes it: another system's database is not opened.
            refuse_foreign(self.conn, self.path)
        except BaseException:
            self.conn.close()
            raise
        try:
            self.has_vec = _load_vec(self.conn)
            self.conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            use_wal(self.conn, busy_timeout_ms / 1000)
            self.conn.execute("PRAGMA synchronous = NORMAL")
            self.conn.execute("PRAGMA temp_store = MEMORY")
            self.conn.execute("PRAGMA foreign_keys = ON")
            # Zero what every write frees (deleted rows, the old copy of an updated row, cells moved
            # by a page split, freed pages): an erase then needs no VACUUM of the whole file, only
            # of a file written before this (``FileCare.scrub``). Costs a little I/O on each write.
            self.conn.execute("PRAGMA secure_delete = ON")
        except db_errors() as exc:
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

    def integrity_check(self, quick: bool = False) -> str:
        """``ok``, or the problems SQLite found (one per line)."""
        pragma = "quick_check" if quick else "integrity_check"
        with self.read() as conn:
            rows = conn.execute(f"PRAGMA {pragma}").fetchall()
        return "\n".join(str(row[0]) for row in rows)

    def vacuum(self) -> None:
        """Rebuild the file to drop free pages (needs no open transaction)."""
        with self.read() as conn:
            conn.execute("VACUUM")

    def close(self) -> None:
        with self.lock:
            self.conn.close()


def refuse_unwritable(path: Path) -> None:
    """Create ``path``'s folder if needed; raise ``StorageError`` naming the file or folder when
    engram could not write it. Every database engram opens is written (recall counts a use, WAL
    keeps ``-wal`` and ``-shm`` files beside it), so a read-only one is refused here, in words,
    rather than with SQLite's "unable to open database file" or at the first write."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageError(f"cannot create the folder {path.parent}: {exc.strerror or exc}") from exc
    advice = "(check its permissions, or whether its disk is mounted read-only)"
    for file in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if file.exists() and not os.access(file, os.W_OK):
            raise StorageError(f"the database file {file} is not writable {advice}")
    if not os.access(path.parent, os.W_OK | os.X_OK):
        raise StorageError(f"the folder {path.parent} is not writable, and SQLite keeps files beside "
                           f"{path.name} there {advice}")


@contextlib.contextmanager
def translate_errors(where: str) -> Iterator[None]:
    """Driver exceptions become engram's StorageError/IntegrityError, with the file named."""
    try:
        yield
    except db_errors() as exc:
        text = str(exc)
        if "malformed" in text or "not a database" in text:
            raise IntegrityError(f"SQLite database {where} is damaged: {text}") from exc
        raise StorageError(f"SQLite error on {where}: {text}") from exc
