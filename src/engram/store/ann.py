"""An approximate nearest-neighbour index (HNSW, usearch, cosine) persisted beside a database.

Keys are the sequence numbers of ``memory_vectors`` rows, so an entry whose vector was replaced
or deleted simply no longer joins in SQL. The graph is saved as ``<database>.usearch`` with a
JSON sidecar ``<database>.usearch.json`` saying which embedding identity and vector epoch it was
built for and up to which sequence number it covers; a fresh process maps the file read-only
(usearch ``view``: ~40 ms at 100k vectors) and only copies it into memory when it must change it.

usearch keeps a removed entry's vector in its slot, and so in the saved file, until a new entry
takes the slot (the oldest freed first): ``remove`` therefore fills every free slot of a segment it
removed from with a placeholder, a random unit vector under a key from ``PLACEHOLDER_BASE`` up that
joins no row, so the vector of a forgotten (erased) memory is gone from the file at the next save.

A large index is several graphs ("segments" of ``segment_size`` entries, see ``AnnIndex``): the
first is saved at ``<database>.usearch``, the next ones at ``<database>.usearch.1``, ``.2``, ...

Saving writes every file to a temporary name and renames them, the graphs first: a reader that
reads the sidecar first and then the graphs may see graphs newer than its sidecar (it then skips
keys the graphs already hold), never older ones.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engram.errors import MissingDependencyError, StorageError
from engram.store.index_settings import VectorIndexSettings

_FORMAT = 1
# Keys of placeholders (see the module docstring): above any sequence number SQLite gives a row.
PLACEHOLDER_BASE = 1 << 62


def available() -> bool:
    """Whether usearch is installed (the ``ann`` extra)."""
    try:
        import usearch.index  # noqa: F401
    except ImportError:
        return False
    return True


def _usearch() -> Any:
    try:
        from usearch.index import Index
    except ImportError:
        raise MissingDependencyError("the approximate vector index", "ann", "usearch") from None
    return Index


@dataclass(slots=True)
class AnnMeta:
    """What a saved graph covers: identity and epoch of the vectors, highest sequence added."""

    identity: str
    epoch: str
    covered: int = 0
    removed: int = 0
    dtype: str = "f16"
    connectivity: int = 16
    format: int = _FORMAT
    segments: int = 1
    placeholders: int = 0  # entries that only hold the slot of a removed one


_WALKERS_LOCK = threading.Lock()
_WALKERS: tuple[int, ThreadPoolExecutor] | None = None  # (the process that made it, the pool)


def _walkers() -> ThreadPoolExecutor | None:
    """The threads segments are walked on (one per core, at most 4), shared by every index of the
    process (a forked child makes its own: it inherits no threads); None on a single core."""
    global _WALKERS
    threads = min(os.cpu_count() or 1, 4)
    if threads < 2:
        return None
    with _WALKERS_LOCK:
        if _WALKERS is None or _WALKERS[0] != os.getpid():
            _WALKERS = (os.getpid(), ThreadPoolExecutor(threads, thread_name_prefix="engram-ann"))
        return _WALKERS[1]


def _merge(walked: list[tuple[np.ndarray, np.ndarray]], k: int) -> list[tuple[int, float]]:
    """The best ``k`` (key, cosine) of several walks' (keys, distances), with numpy: ten segments'
    candidates as Python tuples cost ~2 ms a recall at 1M."""
    if not walked:
        return []
    keys = np.concatenate([found for found, _ in walked])
    distances = np.concatenate([distance for _, distance in walked])
    order = np.argsort(distances, kind="stable")
    keys, distances = keys[order], distances[order]
    # A key is in one segment, unless segments saved by two processes overlap: keep its best.
    _, first = np.unique(keys, return_index=True)
    if len(first) < len(keys):
        first.sort()
        keys, distances = keys[first], distances[first]
    return list(zip(keys[:k].tolist(), (1.0 - distances[:k]).tolist(), strict=True))


def sidecar_path(path: Path) -> Path:
    return path.with_name(path.name + ".json")


def segment_path(path: Path, n: int) -> Path:
    """Where segment ``n`` is saved: the first at ``path`` itself (a store from before segments
    reads as one segment), the others at ``path.1``, ``path.2``, ..."""
    return path if n == 0 else path.with_name(f"{path.name}.{n}")


class AnnIndex:
    """HNSW graphs of unit vectors keyed by non-negative integers (see module docstring).

    Entries fill segments of ``segment_size`` in turn, each its own graph, searched one after the
    other and merged: a greedy walk over one graph of a million dense near-duplicates settles in
    a region and misses neighbours in others (60% of the exact top 10 on bench/speed.py's 1M
    store), while graphs of 100k keep ~98% and several walks start from several places."""

    def __init__(self, dims: int, meta: AnnMeta, settings: VectorIndexSettings, *,
                 segments: list[Any] | None = None, view: bool = False) -> None:
        """Raises: MissingDependencyError without usearch."""
        self._cls = _usearch()
        self.dims = dims
        self.meta = meta
        self.settings = settings
        self.segments: list[Any] = segments if segments is not None else [self._new_segment()]
        self.viewed = [view] * len(self.segments)  # read-only maps of the saved files
        self.dirty = [not view] * len(self.segments)  # changed since opened: saved by ``save``

    @property
    def view(self) -> bool:
        return any(self.viewed)

    def _new_segment(self) -> Any:
        return self._cls(
            ndim=self.dims, metric="cos", dtype=self.meta.dtype, connectivity=self.meta.connectivity,
            expansion_add=self.settings.expansion_add, expansion_search=self.settings.expansion_search,
        )

    @classmethod
    def create(cls, dims: int, identity: str, epoch: str, settings: VectorIndexSettings) -> AnnIndex:
        meta = AnnMeta(identity, epoch, dtype=settings.dtype, connectivity=settings.connectivity)
        return cls(dims, meta, settings)

    @classmethod
    def open(cls, path: Path, dims: int, identity: str, epoch: str, settings: VectorIndexSettings) -> AnnIndex | None:
        """The saved graphs at ``path`` mapped read-only, or None when one is missing, unreadable or
        was built for other vectors or other settings (the caller then builds a new one)."""
        try:
            raw = json.loads(sidecar_path(path).read_text("utf-8"))
            meta = AnnMeta(**raw)
        except (OSError, ValueError, TypeError):
            return None
        if (meta.format, meta.identity, meta.epoch, meta.dtype, meta.connectivity) != (
            _FORMAT, identity, epoch, settings.dtype, settings.connectivity
        ) or meta.segments < 1:
            return None
        segments = []
        for n in range(meta.segments):
            try:
                index = _usearch().restore(str(segment_path(path, n)), view=True)
            except (OSError, RuntimeError, ValueError):
                return None
            if index is None or index.ndim != dims:
                return None
            # A graph from before segments (or a larger segment size) is used as it is: rebuilding
            # 1M entries takes minutes, too long inside whatever recall opens it first. New entries
            # go to new segments; the next rebuild (a model change, rebuild_stale_share, or the
            # files deleted) splits it.
            index.expansion_search = settings.expansion_search
            segments.append(index)
        return cls(dims, meta, settings, segments=segments, view=True)

    def __len__(self) -> int:
        """Entries of rows (placeholders are not counted)."""
        return sum(len(segment) for segment in self.segments) - self.meta.placeholders

    def _writable(self, n: int) -> Any:
        if self.viewed[n]:
            # A view is a read-only memory map of the file; changing it needs a private copy.
            segment = self.segments[n] = self.segments[n].copy()
            segment.expansion_add = self.settings.expansion_add
            segment.expansion_search = self.settings.expansion_search
            self.viewed[n] = False
        self.dirty[n] = True
        return self.segments[n]

    def _held(self, keys: np.ndarray) -> np.ndarray:
        held = np.zeros(len(keys), dtype=bool)
        for segment in self.segments:
            if len(segment):
                held |= np.asarray(segment.contains(keys), dtype=bool)
        return held

    def add(self, keys: np.ndarray, vectors: np.ndarray, *, threads: int = 0) -> int:
        """Add rows (keys already present are skipped) to the last segment, opening a new one when
        it is full; returns how many were added."""
        keys = np.asarray(keys, dtype=np.uint64)
        if not len(keys):
            return 0
        fresh = ~self._held(keys)
        if not fresh.any():
            return 0
        keys, vectors = keys[fresh], np.ascontiguousarray(vectors[fresh], dtype=np.float32)
        done = 0
        while done < len(keys):
            room = self.settings.segment_size - len(self.segments[-1])
            if room <= 0:
                self.segments.append(self._new_segment())
                self.viewed.append(False)
                self.dirty.append(True)
                continue
            part = slice(done, done + room)
            self._writable(len(self.segments) - 1).add(keys[part], vectors[part], threads=threads)
            done += len(keys[part])
        self.meta.segments = len(self.segments)
        self.meta.covered = max(self.meta.covered, int(keys.max()))
        return len(keys)

    def remove(self, keys: np.ndarray) -> int:
        """Remove entries and overwrite their vectors (``_fill``); their graph nodes stay as
        waypoints, holding placeholders, until the next rebuild."""
        keys = np.asarray(keys, dtype=np.uint64)
        removed = 0
        for n, segment in enumerate(self.segments):
            if not len(keys) or not len(segment):
                continue
            present = np.asarray(segment.contains(keys), dtype=bool)
            if present.any():
                writable = self._writable(n)
                removed += int(writable.remove(keys[present]))
                self._fill(writable)
        self.meta.removed += removed
        return removed

    def _fill(self, segment: Any) -> None:
        """Give every free slot of ``segment`` a placeholder, so no removed entry's vector is left
        in it: usearch hands out the oldest free slot first, so reaching the slots just freed means
        filling them all (slots freed by an engram that did not fill them are filled too)."""
        free = int(segment.stats.nodes) - len(segment)
        if free <= 0:
            return
        start = PLACEHOLDER_BASE + self.meta.placeholders
        # Random directions: nearly orthogonal to every embedding, so a walk rarely proposes one.
        filler = np.random.default_rng().standard_normal((free, self.dims)).astype(np.float32)
        filler /= np.linalg.norm(filler, axis=1, keepdims=True)
        segment.add(np.arange(start, start + free, dtype=np.uint64), filler)
        self.meta.placeholders += free

    def keys(self) -> np.ndarray:
        """The keys of rows' entries (no placeholder)."""
        parts = [np.asarray(segment.keys, dtype=np.int64) for segment in self.segments if len(segment)]
        keys = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        return keys[keys < PLACEHOLDER_BASE]

    def search(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Up to ``k`` (key, cosine similarity) pairs, best first, over every segment."""
        return self.start_search(query, k)()

    def start_search(self, query: np.ndarray, k: int) -> Callable[[], list[tuple[int, float]]]:
        """``search``, begun: the segments are walked on worker threads (usearch releases the GIL
        while it walks: ten walks at 1M took 11.7 ms one after the other, 7.1 ms on two cores)
        while the caller does other work; the returned call waits for them and merges."""
        if not len(self) or k <= 0:
            return list
        query = np.asarray(query, dtype=np.float32)
        ef = max(self.settings.expansion_search, k)  # HNSW returns at most ef candidates

        def walk(segment: Any) -> tuple[np.ndarray, np.ndarray]:
            segment.expansion_search = ef
            # A graph no bigger than the walk would visit is scanned exactly: same cost, and a small
            # HNSW graph (built with several threads) can leave an entry unreachable.
            result = segment.search(query, k, exact=len(segment) <= ef)
            keys, distances = np.asarray(result.keys, dtype=np.int64), np.asarray(result.distances, dtype=np.float64)
            rows = keys < PLACEHOLDER_BASE
            return keys[rows], distances[rows]

        segments = [segment for segment in self.segments if len(segment)]
        pool = _walkers() if len(segments) > 1 else None
        if pool is None:
            walked = [walk(segment) for segment in segments]
            return lambda: _merge(walked, k)
        futures = [pool.submit(walk, segment) for segment in segments]
        return lambda: _merge([future.result() for future in futures], k)

    def stale_share(self) -> float:
        total = len(self) + self.meta.removed
        return self.meta.removed / total if total else 0.0

    def save(self, path: Path) -> None:
        """Write the segments changed since they were opened, and the sidecar, atomically
        (temporary files, then renames, the graphs first), then drop segment files beyond the
        current count (left by a larger graph). A segment opened from ``path`` and not changed is
        that file already: rewriting it made a change to one segment (an erase) cost the whole graph.

        Raises: StorageError when the folder cannot be written."""
        folder = path.parent
        temporary: list[str] = []
        written: list[tuple[int, str]] = []
        try:
            try:
                for n, segment in enumerate(self.segments):
                    if not self.dirty[n] and segment_path(path, n).exists():
                        continue
                    fd, tmp_graph = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=folder)
                    os.close(fd)
                    temporary.append(tmp_graph)
                    segment.save(tmp_graph)
                    written.append((n, tmp_graph))
                fd, tmp_meta = tempfile.mkstemp(prefix=path.name + ".", suffix=".json.tmp", dir=folder)
                os.close(fd)
                temporary.append(tmp_meta)
                self.meta.segments = len(self.segments)
                Path(tmp_meta).write_text(json.dumps(asdict(self.meta)), "utf-8")
                for n, tmp_graph in written:
                    os.replace(tmp_graph, segment_path(path, n))
                os.replace(tmp_meta, sidecar_path(path))
                self.dirty = [False] * len(self.segments)
            finally:
                for leftover in temporary:
                    if os.path.exists(leftover):
                        os.unlink(leftover)
            n = len(self.segments)
            while segment_path(path, n).exists():
                segment_path(path, n).unlink()
                n += 1
        except OSError as exc:
            raise StorageError(f"cannot save the vector index {path}: {exc}") from exc
