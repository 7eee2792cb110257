"""An approximate nearest-neighbour index (HNSW, usearch, cosine) persisted beside a database.

Keys are the sequence numbers of ``memory_vectors`` rows, so an entry whose vector was replaced
or deleted simply no longer joins in SQL. The graph is saved as ``<database>.usearch`` with a
JSON sidecar ``<database>.usearch.json`` saying which embedding identity and vector epoch it was
built for and up to which sequence number it covers; a fresh process maps the file read-only
(usearch ``view``: ~40 ms at 100k vectors) and only copies it into memory when it must change it.

Saving writes both files to temporary names and renames them, the graph first: a reader that
reads the sidecar first and then the graph may see a graph newer than its sidecar (it then skips
keys the graph already holds), never an older one.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engram.errors import MissingDependencyError, StorageError
from engram.store.index_settings import VectorIndexSettings

_FORMAT = 1


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


def sidecar_path(path: Path) -> Path:
    return path.with_name(path.name + ".json")


class AnnIndex:
    """An HNSW graph of unit vectors keyed by non-negative integers (see module docstring)."""

    def __init__(self, dims: int, meta: AnnMeta, settings: VectorIndexSettings, *, index: Any = None,
                 view: bool = False) -> None:
        """Raises: MissingDependencyError without usearch."""
        cls = _usearch()
        self.dims = dims
        self.meta = meta
        self.settings = settings
        self.view = view
        self.index = index if index is not None else cls(
            ndim=dims, metric="cos", dtype=meta.dtype, connectivity=meta.connectivity,
            expansion_add=settings.expansion_add, expansion_search=settings.expansion_search,
        )

    @classmethod
    def create(cls, dims: int, identity: str, epoch: str, settings: VectorIndexSettings) -> AnnIndex:
        meta = AnnMeta(identity, epoch, dtype=settings.dtype, connectivity=settings.connectivity)
        return cls(dims, meta, settings)

    @classmethod
    def open(cls, path: Path, dims: int, identity: str, epoch: str, settings: VectorIndexSettings) -> AnnIndex | None:
        """The saved graph at ``path`` mapped read-only, or None when it is missing, unreadable or
        was built for other vectors or other settings (the caller then builds a new one)."""
        try:
            raw = json.loads(sidecar_path(path).read_text("utf-8"))
            meta = AnnMeta(**raw)
        except (OSError, ValueError, TypeError):
            return None
        if (meta.format, meta.identity, meta.epoch, meta.dtype, meta.connectivity) != (
            _FORMAT, identity, epoch, settings.dtype, settings.connectivity
        ):
            return None
        try:
            index = _usearch().restore(str(path), view=True)
        except (OSError, RuntimeError, ValueError):
            return None
        if index is None or index.ndim != dims:
            return None
        index.expansion_search = settings.expansion_search
        return cls(dims, meta, settings, index=index, view=True)

    def __len__(self) -> int:
        return len(self.index)

    def _writable(self) -> None:
        if self.view:
            # A view is a read-only memory map of the file; changing it needs a private copy.
            self.index = self.index.copy()
            self.index.expansion_add = self.settings.expansion_add
            self.index.expansion_search = self.settings.expansion_search
            self.view = False

    def add(self, keys: np.ndarray, vectors: np.ndarray, *, threads: int = 0) -> int:
        """Add rows (keys already present are skipped); returns how many were added."""
        keys = np.asarray(keys, dtype=np.uint64)
        if not len(keys):
            return 0
        fresh = ~np.asarray(self.index.contains(keys), dtype=bool) if len(self.index) else np.ones(len(keys), bool)
        if not fresh.any():
            return 0
        self._writable()
        self.index.add(keys[fresh], np.ascontiguousarray(vectors[fresh], dtype=np.float32), threads=threads)
        self.meta.covered = max(self.meta.covered, int(keys.max()))
        return int(fresh.sum())

    def remove(self, keys: np.ndarray) -> int:
        """Remove entries (their graph nodes stay as waypoints until the next rebuild)."""
        keys = np.asarray(keys, dtype=np.uint64)
        if not len(keys):
            return 0
        self._writable()
        removed = int(self.index.remove(keys))
        self.meta.removed += removed
        return removed

    def keys(self) -> np.ndarray:
        return np.asarray(self.index.keys, dtype=np.int64)

    def search(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Up to ``k`` (key, cosine similarity) pairs, best first."""
        if not len(self.index) or k <= 0:
            return []
        # HNSW returns at most ef candidates, so a larger k needs a larger ef.
        self.index.expansion_search = max(self.settings.expansion_search, k)
        # A graph no bigger than the walk would visit is scanned exactly: same cost, and a small
        # HNSW graph (built with several threads) can leave an entry unreachable.
        exact = len(self.index) <= self.index.expansion_search
        found = self.index.search(np.asarray(query, dtype=np.float32), k, exact=exact)
        return [(int(key), 1.0 - float(dist)) for key, dist in zip(found.keys, found.distances, strict=True)]

    def stale_share(self) -> float:
        total = len(self.index) + self.meta.removed
        return self.meta.removed / total if total else 0.0

    def save(self, path: Path) -> None:
        """Write graph and sidecar atomically (temporary files, then renames, graph first).

        Raises: StorageError when the folder cannot be written."""
        folder = path.parent
        try:
            fd, tmp_graph = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=folder)
            os.close(fd)
            fd, tmp_meta = tempfile.mkstemp(prefix=path.name + ".", suffix=".json.tmp", dir=folder)
            os.close(fd)
            try:
                self.index.save(tmp_graph)
                Path(tmp_meta).write_text(json.dumps(asdict(self.meta)), "utf-8")
                os.replace(tmp_graph, path)
                os.replace(tmp_meta, sidecar_path(path))
            finally:
                for leftover in (tmp_graph, tmp_meta):
                    if os.path.exists(leftover):
                        os.unlink(leftover)
        except OSError as exc:
            raise StorageError(f"cannot save the vector index {path}: {exc}") from exc
