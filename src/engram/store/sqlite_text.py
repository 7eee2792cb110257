"""Keeps the SQLite store's Tantivy index (``store/text_index.py``) caught up with the database.

Used only above ``full_text.index_threshold`` rows, with tantivy installed, for a database on disk
that is not encrypted (the index would hold its text in clear). Any process may have written
since the index last caught up; before a search it indexes:

- rows above the highest rowid it covers. SQLite reuses the rowids of the newest rows once they
  are deleted, so when the row at that rowid is no longer the memory indexed there, the highest
  rowid still holding the memory it was indexed for is found (binary search) and every row above
  it is indexed again;
- rows whose content changed (a new ``memory_versions`` row) or that got a new vector
  (``memory_vectors`` sequence: content or search context changed and was embedded again);
- rows changed in a way neither shows (a move to another scope, a change of search context
  alone) and rows forgotten, which the write marks in ``memory_reindex`` (``mark``, migrations
  0011 and 0013), so the process that catches up need not be the one that wrote: a forgotten
  row's document is deleted and, the row being gone, not indexed again.

A write that adds marks drops those the index has already taken (its sidecar says how far). With
no sidecar beside the file there is no index, nor one being built (a first build writes one before
it reads a row), so a forgotten row needs no mark. Candidates are joined back through SQL, so a
document not yet caught up (a row forgotten while another process was starting the first build,
a text change not yet indexed) drops out or is scored on the row's current text by the store:
what a stale index can cost is a missed candidate, never a wrong score or a memory of another scope.

Freshness is checked with ``PRAGMA data_version`` plus the store's own write counter, so an
unchanged database costs one pragma per search. A search catches up at most ``INLINE_ROWS`` rows
itself; a longer backlog (the first build: ~1 min at 576k rows; a large import by another
process) is indexed by a background thread while FTS5 answers, so no person waits for it.
"""

from __future__ import annotations

import bisect
import logging
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from engram.db.sqlite import Database
from engram.errors import StorageError
from engram.store import text_index
from engram.store.index_settings import FullTextSettings

log = logging.getLogger(__name__)

_READ_CHUNK = 20_000
# Rows a search may index before answering; a larger backlog is caught up in the background,
# starting BUILD_DELAY_S later: a one-shot command (engram recall) is done by then and never
# pays for a build it would not finish, while a server builds it soon after its first search.
INLINE_ROWS = 20_000
BUILD_DELAY_S = 5.0
_ROW_COLUMNS = "m.rowid, m.id, m.agent, m.session, m.key, m.content, coalesce(m.search_context, ''), m.time_words"


class SqliteTextIndex:
    """Candidate rowids for a query's terms over one database (see module docstring)."""

    def __init__(self, db: Database, index_path: Path | None, settings: FullTextSettings) -> None:
        self.db = db
        self.index_path = None if db.encrypted else index_path
        self.settings = settings
        self._lock = threading.Lock()
        self._index: text_index.TextIndex | None = None
        self._version: tuple[int, int] | None = None
        self._warned = False
        self._building = threading.Event()  # a background catch-up holds the lock: searches skip the index
        self._timer: threading.Timer | None = None
        self._closed = False

    def wanted(self, rows: int) -> bool:
        """Whether a store of about ``rows`` rows searches through the index."""
        settings = self.settings
        if self.index_path is None or not settings.index_enabled or rows <= settings.index_threshold:
            return False
        if text_index.available():
            return True
        if not self._warned:
            log.warning("tantivy is not installed (pip install 'engram-recall[fulltext]'):"
                        " large stores rank full text with FTS5 alone")
            self._warned = True
        return False

    def mark(self, conn: Any, rowids: Sequence[int], *, forgotten: bool = False) -> None:
        """Record, in the caller's write transaction, that the documents of ``rowids`` are to be
        taken again (changed in a way neither ``memory_versions`` nor ``memory_vectors`` shows) or,
        ``forgotten``, dropped, by the next catch-up in any process (see module docstring)."""
        meta = None if self.index_path is None else text_index.read_meta(self.index_path)
        if meta is not None:
            conn.execute("DELETE FROM memory_reindex WHERE seq <= ?", (meta.reindex,))  # already taken
        elif forgotten:  # no index: a first build reads every row there is
            conn.executemany("DELETE FROM memory_reindex WHERE memory_rowid = ?", [(r,) for r in rowids])
            return
        # A later mark replaces a row's earlier one (a higher seq; AUTOINCREMENT never reuses one).
        conn.executemany("INSERT OR REPLACE INTO memory_reindex (memory_rowid) VALUES (?)", [(r,) for r in rowids])

    def candidates(self, terms: Sequence[str], k: int, own_writes: int,
                   scopes: Sequence[tuple[str, str]] | None = None) -> list[int] | None:
        """Up to ``k`` candidate rowids for the query ``terms`` (engram's word tokens), best first,
        or None when the index cannot answer now (the caller ranks with FTS5 instead)."""
        if self._building.is_set():
            return None
        with self._lock:
            try:
                if not self._refresh(own_writes, max_rows=INLINE_ROWS):
                    self._catch_up_in_background(own_writes)
                    return None
                assert self._index is not None
                tokens = [token for term in terms for token in self._index.tokens(term)]
                found = self._index.search(tokens, k, scopes)
            except (StorageError, OSError, ValueError) as exc:
                # Busy with another process's writer, unreadable, damaged: FTS5 answers instead.
                log.warning("full-text index not used for this search: %s", exc)
                self._index, self._version = None, None
                return None
        return list(dict.fromkeys(found))  # a crash between commit and sidecar can index a row twice

    def sync(self, own_writes: int) -> None:
        """Catch up now (after a bulk load) instead of at the next search. Raises: StorageError."""
        with self._lock:
            self._refresh(own_writes)

    def _catch_up_in_background(self, own_writes: int) -> None:
        """Index a long backlog in a thread (the lock held meanwhile, searches use FTS5). A daemon
        thread: a short-lived process that exits first leaves the index where its last commit put
        it, and the next process goes on from there."""
        self._building.set()

        def run() -> None:
            try:
                with self._lock:
                    if self._closed:  # the store closed before the build began
                        return
                    self._refresh(own_writes)
                log.info("full-text index caught up")
            except (StorageError, OSError, ValueError) as exc:
                log.warning("full-text index not caught up: %s", exc)
                self._index, self._version = None, None
            finally:
                self._building.clear()

        self._timer = threading.Timer(BUILD_DELAY_S, run)
        self._timer.name, self._timer.daemon = "engram-text-index", True
        self._timer.start()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()  # a build not yet begun never starts on a closed store
        with self._lock:  # one under way finishes first (its last commit stays usable)
            self._closed = True
            self._index = None
            self._version = None

    # --- catching up -----------------------------------------------------------------------
    def _refresh(self, own_writes: int, max_rows: int | None = None) -> bool:
        """Catch the index up; False (nothing done) when that means indexing more than ``max_rows``."""
        with self.db.read() as conn:
            version = (conn.execute("PRAGMA data_version").fetchone()[0], own_writes)
        if version == self._version and self._index is not None:
            return True
        if self._index is None:
            assert self.index_path is not None
            self._index = text_index.TextIndex(self.index_path)
        index = self._index
        meta = index.read_meta()
        with self.db.read() as conn:
            high = int(conn.execute("SELECT coalesce(max(rowid), 0) FROM memories").fetchone()[0])
            # The sequences AUTOINCREMENT keeps (migrations 0005, 0011, 0012), not max(seq): forgetting
            # the memory holding the newest row takes that row away, and a lower maximum read as a
            # database older than the index (restored from a backup) rebuilt the whole index.
            sequences = dict(conn.execute(
                "SELECT name, seq FROM sqlite_sequence"
                " WHERE name IN ('memory_versions', 'memory_vectors', 'memory_reindex')").fetchall())
            versions, vectors, reindex = (
                int(sequences.get(name) or 0) for name in ("memory_versions", "memory_vectors", "memory_reindex"))
            if meta.versions > versions or meta.vectors > vectors or meta.reindex > reindex:
                meta = text_index.TextIndexMeta()  # built for a newer database (restored from a backup?)
            start = min(self._unchanged_up_to(conn, index, meta), high)
            changed: set[int] = set()
            if meta.covered:  # a fresh index reads every row below anyway
                changed.update(r for (r,) in conn.execute(
                    "SELECT m.rowid FROM memory_versions v JOIN memories m ON m.id = v.memory_id WHERE v.seq > ?",
                    (meta.versions,)))
                changed.update(r for (r,) in conn.execute(
                    "SELECT memory_rowid FROM memory_vectors WHERE seq > ?", (meta.vectors,)))
                changed.update(r for (r,) in conn.execute(
                    "SELECT memory_rowid FROM memory_reindex WHERE seq > ?", (meta.reindex,)))
            changed = {r for r in changed if r <= start}
            if max_rows is not None and (high - start) + len(changed) > max_rows:
                return False
            covered_id = conn.execute("SELECT id FROM memories WHERE rowid = ?", (high,)).fetchone()
        if not meta.covered and (start < high or changed):
            # Before a first build reads a row: forgets meanwhile are then marked (``mark``).
            index.write_meta(text_index.TextIndexMeta(versions=versions, vectors=vectors, reindex=reindex))
        if start < high or changed:
            # Documents above ``start`` are indexed again (rowids reused), or all of them when the
            # sidecar says nothing is covered (lost, or a crash before the first one was written).
            above = start if start < meta.covered or not meta.covered else None
            index.write(self._rows(start, changed), changed, replace_above=above, threads=1 if meta.covered else 2)
        caught_up = (start, versions, vectors, reindex) == (meta.covered, meta.versions, meta.vectors, meta.reindex)
        if not caught_up or start < high or changed:
            index.write_meta(text_index.TextIndexMeta(
                covered=high, covered_id=text_index.id_hash(covered_id[0]) if covered_id else 0,
                versions=versions, vectors=vectors, reindex=reindex,
            ))
        self._version = version
        return True

    def _unchanged_up_to(self, conn: Any, index: text_index.TextIndex, meta: text_index.TextIndexMeta) -> int:
        """The highest rowid up to which every row is still the memory the index holds for it."""
        if not meta.covered:
            return 0

        def same(rowid: int) -> bool:
            # The newest row at or below ``rowid`` is the memory indexed for it (or there is none).
            row = conn.execute(
                "SELECT rowid, id FROM memories WHERE rowid <= ? ORDER BY rowid DESC LIMIT 1", (rowid,)
            ).fetchone()
            if row is None:
                return True
            expected = meta.covered_id if row[0] == meta.covered else index.indexed_id(int(row[0]))
            return expected == text_index.id_hash(row[1])

        if same(meta.covered):
            return meta.covered
        # Rowids are reused only above the highest one left, so the rows stop being the indexed
        # ones at one rowid and stay changed above it: the first in 1..covered that is changed
        # (covered itself is, as just seen), found by bisection; every rowid below it is unchanged.
        first_changed = bisect.bisect_left(range(meta.covered + 1), True, lo=1, hi=meta.covered,
                                           key=lambda rowid: not same(rowid))
        return first_changed - 1

    def _rows(self, after: int, changed: set[int]) -> Iterator[text_index.TextRow]:
        """The rows to index: every row above ``after`` (in chunks) and the ``changed`` ones."""
        last = after
        while True:
            with self.db.read() as conn:
                rows = conn.execute(
                    f"SELECT {_ROW_COLUMNS} FROM memories m WHERE m.rowid > ? ORDER BY m.rowid LIMIT ?",
                    (last, _READ_CHUNK),
                ).fetchall()
            if not rows:
                break
            yield from (text_index.TextRow(*row) for row in rows)
            last = int(rows[-1][0])
        ordered = sorted(changed)
        for start in range(0, len(ordered), 500):
            chunk = ordered[start : start + 500]
            with self.db.read() as conn:
                rows = conn.execute(
                    f"SELECT {_ROW_COLUMNS} FROM memories m WHERE m.rowid IN ({','.join('?' * len(chunk))})", chunk
                ).fetchall()
            yield from (text_index.TextRow(*row) for row in rows)
