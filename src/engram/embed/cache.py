"""A persistent embedding cache: (identity string, sha256 of text) -> float32 vector.

Vectors live in one SQLite table (WAL mode and a busy timeout, so several processes can share the
file) with an in-process LRU in front. Keys hash the text, so the file holds no memory content.
Because the identity is part of the key, a model change never serves another model's vectors.
The file is opened on first use, not in the constructor. Thread-safe: one connection under a lock.

With ``key`` (the store's ``privacy.encryption_key``) the file is a SQLCipher database like the
store: a vector per content and text hashes that confirm a guessed text are worth protecting. A
file that does not open with the key (a plaintext cache from before the key was set, or another
key's) is only a cache: it is deleted and started afresh rather than left readable.

The file holds at most ``max_entries`` rows (``embeddings.cache_max_entries``): every distinct text
embedded, recall queries included, would otherwise stay for good, and so would the rows of a model
no longer configured. Each write deletes, in the same transaction, the rows written or used before
the newest ``max_entries``, whatever their model's identity (so an old model's rows, unused, go
first): the least recently used go, nearly (see ``_EVICT``). Deleted vectors are zeroed
(``secure_delete``) and their pages reused by later writes; the file shrinks only when ``vacuum``
(``engram vacuum``) rebuilds it.

Until engram's shared SQLite helper exists this opens the file with ``pysqlite3.dbapi2`` when it
is importable, else the standard library's ``sqlite3``.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engram.errors import StorageError
from engram.model import parse_integer

try:  # pragma: no cover - depends on the platform
    from pysqlite3 import dbapi2 as sqlite3
except ImportError:  # pragma: no cover
    import sqlite3  # type: ignore[no-redef]

log = logging.getLogger(__name__)

# A rowid table (the key a unique index beside it), not ``WITHOUT ROWID``: a row is a whole vector
# (1.5 KB at 384 dimensions), and a WITHOUT ROWID table keeps its rows in the key's b-tree, two
# or three to a page, so each insert at a random hash split and rewrote full pages: a batch of
# stores wrote ~2.5x the bytes to the WAL and spent ~2.3x the CPU (53 us a row against 23 here),
# the file grew to ~2.7x its payload, and the cache's writes were ~15% of the CPU of a store
# through the server's write queue. A file made with the earlier layout is moved into this one
# when opened (``_to_rowid_layout``): the bound below orders rows by rowid.
_TABLE = """
CREATE TABLE IF NOT EXISTS embedding_cache (
    identity  TEXT NOT NULL,
    text_hash BLOB NOT NULL,
    vector    BLOB NOT NULL,
    created   REAL NOT NULL DEFAULT (unixepoch('subsec')),
    PRIMARY KEY (identity, text_hash)
)"""
# ``drop`` deletes a text's rows under every identity: without this it read the whole file.
_TEXT_INDEX = "CREATE INDEX IF NOT EXISTS embedding_cache_text ON embedding_cache (text_hash)"
# One row, 'zeroed_since', once ``drop`` vacuumed the file: every write since zeroed what it freed.
_META = """
CREATE TABLE IF NOT EXISTS embedding_cache_meta (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
)"""
_SCHEMA = ";\n".join((_TABLE, _TEXT_INDEX, _META))


# About 150 MB of vectors at 384 dimensions (1.5 KB a row), a few MB of hashes beside them.
DEFAULT_MAX_ENTRIES = 100_000
# The largest bound: SQLite's largest integer, which the eviction's statement is given.
MAX_ENTRIES = 2**63 - 1

# The bound, enforced in the transaction of each write (which holds SQLite's write lock, so every
# process's committed rows are seen and none is written meanwhile): the rows whose rowid is within
# ``max_entries`` of the largest are kept. A new row's rowid is the largest plus one, so rowid
# order is the order rows were written, by whichever process (the ``created`` clocks of several
# processes need not agree, and ``created`` has no index). It is one seek for ``max(rowid)`` and a
# delete of a range at the b-tree's start; no row is counted (a COUNT(*) reads a whole index), so
# a write costs the same at 100 rows as at 100,000 (at the bound, writing one vector deletes one:
# ~40 us more CPU than the ~75 us of the write alone, measured), and an older engram writing the
# same file without the bound is caught up by this one's next write. At most ``max_entries`` rows
# are kept; fewer when rows in that range were deleted since (an erase's ``drop``, a ``clear``, a
# text written again, which takes a new rowid, or a row used, below).
#
# Least recently used, nearly, with no column for it: a row read is moved to the newest rowid
# (``_MOVE``), so rowid order is the order rows were written or last used. A hit does not write:
# the keys used are kept in the process and moved in one transaction, at the process's next write
# (which holds the write lock anyway), at close, or, in a process that only reads, when
# ``_FLUSH_USES`` keys are waiting or ``_FLUSH_INTERVAL_S`` passed (without waiting for a busy
# file: the uses then wait for the next turn). Only a row in the oldest quarter of the kept range
# is moved: a move leaves a hole in that range, and a hot query moved at every use would fill the
# range with holes (with 50 queries used between writes, a 100,000 bound kept ~2,000 other rows).
# Moving only from the oldest quarter leaves holes there alone, so a full file keeps at least
# three quarters of ``max_entries`` rows, and a row used survives at least a quarter of
# ``max_entries`` more writes and moves after its use is recorded.
_EVICT = "DELETE FROM embedding_cache WHERE rowid <= (SELECT max(rowid) FROM embedding_cache) - ?"
# One row used, to the newest rowid if it is at or below the given one (the oldest quarter's top).
_MOVE = ("UPDATE embedding_cache SET rowid = (SELECT max(rowid) FROM embedding_cache) + 1"
         " WHERE identity = ? AND text_hash = ? AND rowid <= ?")
_FLUSH_USES = 1024
_FLUSH_INTERVAL_S = 60.0


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


class EmbeddingCache:
    """Persistent when given a path, in-process only (LRU) when ``path`` is None."""

    def __init__(self, path: Path | str | None, *, lru_size: int = 4096, busy_timeout_ms: int = 5000,
                 key: str | None = None, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        """``max_entries`` bounds the rows of the file (see the module's docstring).

        Raises:
            ValidationError: ``max_entries`` is not a whole number from 1 to SQLite's largest integer
                (``cache=False`` turns the cache off).
        """
        # A bound past SQLite's largest integer passed here, and the first write failed with
        # OverflowError (an internal error, not the bound named); the words are every range's.
        self.max_entries = parse_integer(max_entries, "max_entries", 1, MAX_ENTRIES)
        self.path = Path(path) if path is not None else None
        self.key = key
        self.lru_size = lru_size
        self.busy_timeout_ms = busy_timeout_ms
        self._lru: OrderedDict[tuple[str, bytes], np.ndarray] = OrderedDict()
        # Keys read (from the file or the LRU in front) since their use was last recorded in the
        # file, least recent first: see ``_EVICT``.
        self._used: OrderedDict[tuple[str, bytes], None] = OrderedDict()
        self._flushed_at = time.monotonic()
        self._conn: Any = None
        self._lock = threading.RLock()
        self.hits = 0
        self.misses = 0

    def __repr__(self) -> str:
        return f"EmbeddingCache({str(self.path) if self.path else 'memory'!r})"

    def _db(self) -> Any:
        if self._conn is None and self.path is not None:
            from engram.db.sqlite import use_wal

            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = self._open_encrypted() if self.key else sqlite3.connect(
                    str(self.path), check_same_thread=False, isolation_level=None)
                conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
                use_wal(conn, self.busy_timeout_ms / 1000)
                conn.execute("PRAGMA synchronous = NORMAL")
                conn.execute("PRAGMA secure_delete = ON")  # zero what a write frees: ``drop`` needs no VACUUM
                conn.executescript(_SCHEMA)
                _to_rowid_layout(conn, self.max_entries)
            except (sqlite3.Error, OSError) as exc:
                raise StorageError(f"embedding cache {self.path}: cannot open: {exc}") from exc
            self._conn = conn
        return self._conn

    def _open_encrypted(self) -> Any:
        from engram.db.sqlite import connect
        from engram.errors import IntegrityError

        assert self.path is not None and self.key is not None
        try:
            return connect(str(self.path), key=self.key)
        except IntegrityError:  # plaintext or another key's cache: drop it, never keep it readable
            for suffix in ("", "-wal", "-shm"):
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            return connect(str(self.path), key=self.key)

    def _remember(self, key: tuple[str, bytes], vec: np.ndarray) -> None:
        self._lru[key] = vec
        self._lru.move_to_end(key)
        while len(self._lru) > self.lru_size:
            self._lru.popitem(last=False)

    def get_many(self, identity: str, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vectors of those ``texts`` that are cached, by text.

        Raises:
            StorageError: the cache file cannot be read.
        """
        found: dict[str, np.ndarray] = {}
        with self._lock:
            missing: dict[bytes, str] = {}
            for text in texts:
                key = (identity, text_key(text))
                vec = self._lru.get(key)
                if vec is not None:
                    self._lru.move_to_end(key)
                    found[text] = vec
                    self._use(key)
                else:
                    missing[key[1]] = text
            db = self._db() if missing else None
            if db is not None:
                hashes = list(missing)
                try:
                    for start in range(0, len(hashes), 500):
                        chunk = hashes[start : start + 500]
                        rows = db.execute(
                            "SELECT text_hash, vector FROM embedding_cache"
                            f" WHERE identity = ? AND text_hash IN ({','.join('?' * len(chunk))})",
                            [identity, *chunk],
                        ).fetchall()
                        for h, blob in rows:
                            vec = np.frombuffer(blob, dtype=np.float32)
                            found[missing[bytes(h)]] = vec
                            self._remember((identity, bytes(h)), vec)
                            self._use((identity, bytes(h)))
                except sqlite3.Error as exc:
                    raise StorageError(f"embedding cache {self.path}: read failed: {exc}") from exc
            if self._used and (len(self._used) >= _FLUSH_USES
                               or time.monotonic() - self._flushed_at >= _FLUSH_INTERVAL_S):
                self._flush_uses(wait=False)
            self.hits += sum(1 for t in texts if t in found)
            self.misses += sum(1 for t in texts if t not in found)
        return found

    def put_many(self, identity: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Store vectors (float32 rows) for ``texts``.

        Raises:
            StorageError: the cache file cannot be written.
        """
        vectors = np.asarray(vectors, dtype=np.float32)
        with self._lock:
            rows = []
            for text, vec in zip(texts, vectors, strict=True):
                vec = np.array(vec, dtype=np.float32)  # own copy: callers may reuse their buffer
                key = (identity, text_key(text))
                self._remember(key, vec)
                rows.append((identity, key[1], vec.tobytes()))
            db = self._db()
            if db is None:
                return
            try:
                db.execute("BEGIN IMMEDIATE")
                self._move_used(db)  # before the new rows: they are newer than any use recorded
                db.executemany(
                    "INSERT OR REPLACE INTO embedding_cache (identity, text_hash, vector) VALUES (?, ?, ?)",
                    rows,
                )
                db.execute(_EVICT, (self.max_entries,))
                db.execute("COMMIT")
            except sqlite3.Error as exc:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise StorageError(f"embedding cache {self.path}: write failed: {exc}") from exc

    def drop(self, texts: Sequence[str]) -> int:
        """Forget the vectors of ``texts`` under every identity (an erased memory's: its hash would
        confirm a guessed text), leaving none of their bytes in the file or its WAL; how many rows
        went. The connection zeroes what a delete frees (``PRAGMA secure_delete``), so the WAL is
        only truncated; a file written before that (by an earlier version) is vacuumed once, then
        marked, since its free space may still hold deleted rows. Raises ``StorageError`` when the
        file cannot be written or a reader kept the WAL from being emptied."""
        from engram.db.sqlite import truncate_wal

        hashes = sorted({text_key(text) for text in texts})
        with self._lock:
            for key in [k for k in self._lru if k[1] in set(hashes)]:
                del self._lru[key]
            for key in [k for k in self._used if k[1] in set(hashes)]:
                del self._used[key]
            db = self._db()
            if db is None or not hashes:
                return 0
            gone = 0
            try:
                db.execute("BEGIN IMMEDIATE")
                for start in range(0, len(hashes), 500):
                    chunk = hashes[start:start + 500]
                    gone += db.execute(f"DELETE FROM embedding_cache WHERE text_hash IN ({','.join('?' * len(chunk))})",
                                       chunk).rowcount
                zeroed = db.execute("SELECT 1 FROM embedding_cache_meta WHERE name = 'zeroed_since'").fetchone()
                db.execute("COMMIT")
                if gone and zeroed is None:
                    db.execute("VACUUM")
                    db.execute("INSERT OR IGNORE INTO embedding_cache_meta (name, value) VALUES ('zeroed_since', ?)",
                               (str(time.time()),))
                if gone:
                    truncate_wal(db, str(self.path))
            except sqlite3.Error as exc:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise StorageError(f"embedding cache {self.path}: write failed: {exc}") from exc
            return gone

    def vacuum(self) -> tuple[int, int] | None:
        """Rebuild the file from its live rows (``VACUUM``), giving back the pages evicted and
        dropped vectors freed (they are reused, never returned, otherwise), and empty its WAL; its
        size in bytes (file and WAL) before and after. None when there is no file: an in-process
        cache, or a file not made yet (none is made here). Marks the file as ``drop`` marks it after
        its own VACUUM, so a later ``drop`` needs none. Raises ``StorageError`` when the file cannot
        be rebuilt, or a reader kept the WAL from being emptied."""
        from engram.db.sqlite import truncate_wal

        def size() -> int:
            assert self.path is not None
            return sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())

        with self._lock:
            if self.path is None or not self.path.exists():
                return None
            before = size()
            db = self._db()
            try:
                db.execute("VACUUM")
                db.execute("INSERT OR IGNORE INTO embedding_cache_meta (name, value) VALUES ('zeroed_since', ?)",
                           (str(time.time()),))
                truncate_wal(db, str(self.path))
            except sqlite3.Error as exc:
                raise StorageError(f"embedding cache {self.path}: vacuum failed: {exc}") from exc
            return before, size()

    def clear(self, identity: str | None = None) -> None:
        """Forget every cached vector, or only those of one identity."""
        with self._lock:
            if identity is None:
                self._lru.clear()
                self._used.clear()
            else:
                for key in [k for k in self._lru if k[0] == identity]:
                    del self._lru[key]
                for key in [k for k in self._used if k[0] == identity]:
                    del self._used[key]
            db = self._db()
            if db is not None:
                if identity is None:
                    db.execute("DELETE FROM embedding_cache")
                else:
                    db.execute("DELETE FROM embedding_cache WHERE identity = ?", (identity,))

    def __len__(self) -> int:
        with self._lock:
            db = self._db()
            if db is None:
                return len(self._lru)
            return db.execute("SELECT count(*) FROM embedding_cache").fetchone()[0]

    def _use(self, key: tuple[str, bytes]) -> None:
        """Note that ``key`` was read, to be recorded in the file later (``_EVICT``)."""
        if self.path is None:
            return  # in-process only: the LRU in front is all there is
        self._used[key] = None
        self._used.move_to_end(key)
        if len(self._used) > 4 * _FLUSH_USES:  # a file never writable: the oldest uses are let go
            self._used.popitem(last=False)

    def _move_used(self, db: Any) -> None:
        """In the caller's write transaction: move the rows used since the last time that are in the
        oldest quarter of the kept range to the newest rowids, least recently used first."""
        used, self._used = list(self._used), OrderedDict()
        self._flushed_at = time.monotonic()
        if not used:
            return
        top = db.execute("SELECT coalesce(max(rowid), 0) FROM embedding_cache").fetchone()[0]
        oldest_quarter_top = top - self.max_entries + -(-self.max_entries // 4)
        db.executemany(_MOVE, [(identity, text_hash, oldest_quarter_top) for identity, text_hash in used])

    def _flush_uses(self, *, wait: bool) -> None:
        """Record the uses waiting in a transaction of their own. Recency is a cache's hint: a file
        busy (``wait`` False: no waiting at all, so a hit stays cheap) or not writable leaves the
        uses for the next turn, and is no error of the read or close that asked."""
        db = self._conn
        if db is None or not self._used:
            return
        try:
            if not wait:
                db.execute("PRAGMA busy_timeout = 0")
            try:
                db.execute("BEGIN IMMEDIATE")
                used = OrderedDict(self._used)
                try:
                    self._move_used(db)
                    db.execute("COMMIT")
                except BaseException:
                    self._used = OrderedDict([*used.items(), *self._used.items()])
                    raise
            finally:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                if not wait:
                    db.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
        except sqlite3.Error as exc:
            self._flushed_at = time.monotonic()  # tried: not again at every hit
            log.debug("embedding cache %s: uses not recorded yet: %s", self.path, exc)

    def close(self) -> None:
        with self._lock:
            self._flush_uses(wait=True)
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def _to_rowid_layout(conn: Any, max_entries: int) -> None:
    """Move a cache file of the earlier ``WITHOUT ROWID`` layout into the rowid table, once: the
    bound orders rows by rowid, which that layout has not. Its newest ``max_entries`` rows by
    ``created`` (one clock wrote them, in one process's order) are copied in that order, so rowid
    order follows it; the rest is a cache and goes. One transaction under the write lock: another
    process opening the file at once finds it moved and does nothing."""
    if not _without_rowid(conn):
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        if _without_rowid(conn):
            conn.execute("ALTER TABLE embedding_cache RENAME TO embedding_cache_earlier")
            conn.execute(_TABLE)
            conn.execute(
                "INSERT INTO embedding_cache (identity, text_hash, vector, created)"
                " SELECT identity, text_hash, vector, created FROM"
                " (SELECT * FROM embedding_cache_earlier ORDER BY created DESC LIMIT ?) ORDER BY created",
                (max_entries,),
            )
            conn.execute("DROP TABLE embedding_cache_earlier")  # and its index of text hashes
            conn.execute(_TEXT_INDEX)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _without_rowid(conn: Any) -> bool:
    row = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'embedding_cache'").fetchone()
    return row is not None and "WITHOUT ROWID" in " ".join(row[0].upper().split())
