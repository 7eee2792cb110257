"""Nearest-neighbour candidates for the SQLite store: exact for small stores, HNSW for large ones.

``memory_vectors`` rows are the record; everything here is a cache of them keyed by the row's
sequence number (``seq``, migration 0005), which the store joins back through SQL with its
filter, so a deleted or replaced vector never comes back even while a cache still holds it.

- Up to ``threshold`` vectors: an in-process matrix, searched exactly. After another process
  wrote, only rows with a higher ``seq`` are read, unless rows it holds were deleted (reload).
- Above it: an HNSW graph (``store/ann.py``) saved beside the database, plus a small exact
  "delta" of the rows newer than the graph. When the delta reaches ``merge_after`` rows they join
  the graph and the file is saved again. Entries deleted by anyone are removed from the graph
  once they are more than a sliver of it, and the graph is rebuilt when removed entries reach
  ``rebuild_stale_share`` or when the vectors' epoch (``clear_vectors``, a model change) changed.
  The graph's best ``rerank`` candidates are re-scored with the exact float32 vectors of their
  rows, so the order (and the cosine reported) is exact among them.

Freshness is checked with ``PRAGMA data_version`` (other connections' commits) plus the store's
own write counter, so an unchanged database costs one pragma per search.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from engram.db.sqlite import Database
from engram.errors import StorageError
from engram.store import ann
from engram.store.index_settings import VectorIndexSettings
from engram.store.vectors import VectorMatrix, parse_identity_dims, unit

log = logging.getLogger(__name__)

_READ_CHUNK = 20_000  # rows per read while building, so a 1M build never holds 1.5 GB of blobs
# Deleted entries left in the graph until they exceed this many (or 1% of it): SQL drops them anyway.
_STALE_SLACK = 64


def _vectors(blobs: list[bytes], dims: int) -> np.ndarray:
    matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dims)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


class SqliteVectorSearch:
    """Candidates ``(seq, cosine)`` for a query vector over one database's ``memory_vectors``."""

    def __init__(self, db: Database, index_path: Path | None, settings: VectorIndexSettings | None = None) -> None:
        self.db = db
        # No file beside an encrypted or in-memory database: the graph would hold its vectors in clear.
        self.index_path = None if db.encrypted else index_path
        self.settings = settings or VectorIndexSettings()
        self._lock = threading.Lock()
        self._version: tuple[int, int] | None = None
        self._state: tuple[str, str] | None = None  # (identity, epoch) the caches hold
        self._exact = VectorMatrix()
        self._exact_covered = 0
        self._graph: ann.AnnIndex | None = None
        self._delta = VectorMatrix()
        self._warned = False

    @property
    def approximate(self) -> bool:
        return self._graph is not None

    def top(self, query: np.ndarray, k: int, own_writes: int) -> list[tuple[int, float]]:
        """The ``k`` best ``(seq, cosine)`` pairs for ``query``, best first (approximate above the
        threshold). Raises: StorageError (database or index file)."""
        return self.start_top(query, k, own_writes)()

    def start_top(self, query: np.ndarray, k: int, own_writes: int) -> Callable[[], list[tuple[int, float]]]:
        """``top``, begun: caught up and the graph's walks started on worker threads (no database
        work there), so the caller can search full text meanwhile; the returned call, which the
        caller must make (it releases this index), waits for the walks and re-scores their best."""
        self._lock.acquire()
        try:
            self._refresh(own_writes)
            if self._state is None or len(query) != parse_identity_dims(self._state[0]):
                found: list[tuple[int, float]] = []  # no vectors, or a query from another model
            elif self._graph is None:
                found = self._exact.top(query, k)
            else:
                walks = self._graph.start_search(query, max(k, self.settings.rerank))
                return self._finishing(query, k, walks)  # releases the lock when called
        except BaseException:
            self._lock.release()
            raise
        self._lock.release()
        return lambda: found

    def _finishing(self, query: np.ndarray, k: int,
                   walks: Callable[[], list[tuple[int, float]]]) -> Callable[[], list[tuple[int, float]]]:
        done = False

        def finish() -> list[tuple[int, float]]:
            nonlocal done
            if done:
                raise RuntimeError("a vector search's answer was asked for twice")
            done = True
            try:
                found = walks()
                if self.settings.rerank:
                    found = self._exact_scores(query, found)
                merged = found + self._delta.top(query, k)
            finally:
                self._lock.release()  # held since start_top: nothing changes the graph mid-walk
            merged.sort(key=lambda pair: -pair[1])
            return merged[:k]

        return finish

    def _exact_scores(self, query: np.ndarray, found: list[tuple[int, float]]) -> list[tuple[int, float]]:
        """The graph's candidates scored by exact cosine on the stored float32 vectors.

        The graph holds f16 copies and walks a greedy path: on dense near-duplicates both misorder
        candidates whose cosines differ in the third decimal, so the top 10 of a wider candidate
        set, re-scored exactly, is the exact top 10 far more often (docs/benchmarks.md). Rows
        deleted since the graph was saved are dropped here (SQL would drop them anyway)."""
        if not found:
            return []
        rows: list[tuple[int, bytes]] = []
        with self.db.read() as conn:
            for start in range(0, len(found), 500):
                chunk = [seq for seq, _ in found[start: start + 500]]
                rows.extend(conn.execute(
                    f"SELECT seq, vector FROM memory_vectors WHERE seq IN ({','.join('?' * len(chunk))})", chunk
                ).fetchall())
        if not rows:
            return []
        scores = _vectors([blob for _, blob in rows], len(query)) @ unit(query)
        return sorted(((int(seq), float(score)) for (seq, _), score in zip(rows, scores, strict=True)),
                      key=lambda pair: -pair[1])

    def exact_filtered(self, query: np.ndarray, where: str, params: list[Any], k: int, *,
                       index: str | None = None) -> list[tuple[int, float]]:
        """Exact top ``k`` among the rows the filter keeps (``where`` over alias ``m``): the answer
        when a selective filter leaves too few of the approximate candidates. ``index`` names the
        index of ``memories`` that finds those rows (the caller knows it is selective; SQLite,
        without statistics, would walk a scope's index over the whole store)."""
        source = f"memories m INDEXED BY {index} CROSS JOIN memory_vectors v" if index else (
            "memory_vectors v JOIN memories m")
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT v.seq, v.vector FROM {source} ON m.rowid = v.memory_rowid WHERE {where}",
                params,
            ).fetchall()
        if not rows:
            return []
        matrix = VectorMatrix()
        matrix.load([(seq, np.frombuffer(blob, dtype=np.float32)) for seq, blob in rows])
        return matrix.top(query, k)

    def sync(self, own_writes: int) -> None:
        """Bring the caches (and the saved graph) up to date now, e.g. after a bulk load."""
        with self._lock:
            self._refresh(own_writes)

    def scrub(self) -> None:
        """After an erase: take every deleted row's entry out of the graph saved beside the database
        now, not once they are more than a sliver of it, overwriting their vectors (``AnnIndex.remove``),
        and save it. A saved graph this process cannot open (built for other vectors or settings,
        or usearch missing) is deleted: it may hold the erased vectors, and it is rebuilt when
        needed. Nothing when no graph is saved. Raises: StorageError."""
        if self.index_path is None or not ann.sidecar_path(self.index_path).exists():
            return
        with self._lock:
            graph = self._graph
            if graph is None and ann.available():
                with self.db.read() as conn:
                    meta = dict(conn.execute(
                        "SELECT name, value FROM engram_meta WHERE name IN ('embedding_identity', 'vector_epoch')"
                    ).fetchall())
                identity, epoch = meta.get("embedding_identity"), meta.get("vector_epoch")
                if identity is not None and epoch is not None:
                    graph = ann.AnnIndex.open(self.index_path, parse_identity_dims(identity), identity, epoch,
                                              self.settings)
            if graph is None:
                self._delete_saved()
                return
            with self.db.read() as conn:
                live = np.fromiter((row[0] for row in conn.execute(
                    "SELECT seq FROM memory_vectors INDEXED BY memory_vectors_memory WHERE seq <= ?",
                    (graph.meta.covered,))), dtype=np.int64)
            if graph.remove(np.setdiff1d(graph.keys(), live)):
                graph.save(self.index_path)

    def _delete_saved(self) -> None:
        assert self.index_path is not None
        try:
            n = 0
            while ann.segment_path(self.index_path, n).exists():
                ann.segment_path(self.index_path, n).unlink()
                n += 1
            ann.sidecar_path(self.index_path).unlink(missing_ok=True)
        except OSError as exc:
            raise StorageError(f"cannot delete the vector index {self.index_path}: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            self._graph = None
            self._exact = VectorMatrix()
            self._delta = VectorMatrix()
            self._version = None

    # --- refreshing ------------------------------------------------------------------------
    def _refresh(self, own_writes: int) -> None:
        with self.db.read() as conn:
            version = (conn.execute("PRAGMA data_version").fetchone()[0], own_writes)
            if version == self._version:
                return
            meta = dict(conn.execute(
                "SELECT name, value FROM engram_meta WHERE name IN ('embedding_identity', 'vector_epoch')"
            ).fetchall())
            total = conn.execute("SELECT COUNT(*) FROM memory_vectors INDEXED BY memory_vectors_memory").fetchone()[0]
        identity = meta.get("embedding_identity")
        if identity is None or total == 0:
            self._reset()
        else:
            epoch = meta.get("vector_epoch") or self._new_epoch()
            dims = parse_identity_dims(identity)
            if (identity, epoch) != self._state:
                self._reset()
                self._state = (identity, epoch)
            if total > self.settings.threshold and self.settings.enabled and self._ann_available():
                self._exact, self._exact_covered = VectorMatrix(), 0
                self._refresh_graph(dims, identity, epoch)
            else:
                self._graph, self._delta = None, VectorMatrix()
                self._refresh_exact(dims)
        self._version = version

    def _new_epoch(self) -> str:
        """Name this generation of vectors (``clear_vectors`` ends one): saved graphs of another
        generation are never reused, even when identity and sequence numbers happen to match."""
        with self.db.write() as conn:
            conn.execute("INSERT OR IGNORE INTO engram_meta (name, value) VALUES ('vector_epoch', ?)", (uuid.uuid4().hex,))
            return str(conn.execute("SELECT value FROM engram_meta WHERE name = 'vector_epoch'").fetchone()[0])

    def _reset(self) -> None:
        self._state = None
        self._exact, self._exact_covered = VectorMatrix(), 0
        self._graph, self._delta = None, VectorMatrix()

    def _ann_available(self) -> bool:
        if ann.available():
            return True
        if not self._warned:
            log.warning("usearch is not installed (pip install 'engram-recall[ann]'): large stores are searched exactly")
            self._warned = True
        return False

    def _rows_after(self, after: int, dims: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(seqs, unit vectors) of the rows with ``seq > after``, in chunks, in sequence order."""
        last = after
        while True:
            with self.db.read() as conn:
                rows = conn.execute(
                    "SELECT seq, vector FROM memory_vectors WHERE seq > ? ORDER BY seq LIMIT ?", (last, _READ_CHUNK)
                ).fetchall()
            if not rows:
                return
            seqs = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
            yield seqs, _vectors([row[1] for row in rows], dims)
            last = int(seqs[-1])

    def _live_up_to(self, covered: int) -> int:
        with self.db.read() as conn:
            return int(conn.execute(
                "SELECT COUNT(*) FROM memory_vectors INDEXED BY memory_vectors_memory WHERE seq <= ?", (covered,)
            ).fetchone()[0])

    def _live_seqs_up_to(self, covered: int) -> set[int]:
        with self.db.read() as conn:
            # The index on memory_rowid holds every seq: no page of vectors is read.
            return {row[0] for row in conn.execute(
                "SELECT seq FROM memory_vectors INDEXED BY memory_vectors_memory WHERE seq <= ?", (covered,))}

    def _refresh_exact(self, dims: int) -> None:
        if len(self._exact) and self._live_up_to(self._exact_covered) != len(self._exact):
            # Rows it holds were deleted or replaced (a replaced vector comes back with a new seq,
            # below): drop those by their seq, a read of integers, rather than read every vector again.
            self._exact.keep(self._live_seqs_up_to(self._exact_covered))
        for seqs, vectors in self._rows_after(self._exact_covered, dims):
            self._exact.extend(seqs.tolist(), vectors)
            self._exact_covered = int(seqs[-1])

    def _refresh_graph(self, dims: int, identity: str, epoch: str) -> None:
        settings = self.settings
        graph = self._graph
        if graph is None and self.index_path is not None:
            graph = ann.AnnIndex.open(self.index_path, dims, identity, epoch, settings)
        if graph is not None and graph.meta.covered > self._sequence_high_water():
            graph = None  # built for a newer database than this one (restored from a backup?)
        if graph is None:
            graph = ann.AnnIndex.create(dims, identity, epoch, settings)
        changed = self._drop_stale(graph)
        if graph.stale_share() >= settings.rebuild_stale_share:
            graph, changed = ann.AnnIndex.create(dims, identity, epoch, settings), True
        # Rows newer than the graph: searched exactly while few, merged into the graph when many.
        pending = [chunk for chunk in self._rows_after(graph.meta.covered, dims)]
        count = sum(len(seqs) for seqs, _ in pending)
        if count >= settings.merge_after:
            for seqs, vectors in pending:
                graph.add(seqs, vectors, threads=2)
            pending, changed = [], True
        self._delta = VectorMatrix()
        for seqs, vectors in pending:
            self._delta.extend(seqs.tolist(), vectors)
        self._graph = graph
        if changed and self.index_path is not None:
            graph.save(self.index_path)

    def _drop_stale(self, graph: ann.AnnIndex) -> bool:
        """Remove graph entries whose rows are gone, once there are more than a sliver of them."""
        if not len(graph):
            return False
        stale = len(graph) - self._live_up_to(graph.meta.covered)
        if stale <= max(_STALE_SLACK, len(graph) // 100):
            return False
        with self.db.read() as conn:
            live = np.fromiter(
                (row[0] for row in conn.execute(
                    "SELECT seq FROM memory_vectors INDEXED BY memory_vectors_memory WHERE seq <= ?",
                    (graph.meta.covered,))),
                dtype=np.int64,
            )
        gone = np.setdiff1d(graph.keys(), live, assume_unique=True)
        return graph.remove(gone) > 0

    def _sequence_high_water(self) -> int:
        with self.db.read() as conn:
            row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'memory_vectors'").fetchone()
        return int(row[0]) if row else 0
