"""An in-process matrix of unit vectors for exact cosine search (numpy matmul + argpartition).

Exact search over float32 costs ~0.4 ms at 10k and ~20 ms at 100k vectors on these machines
(PERFORMANCE.md); every backend that keeps vectors in process shares this one implementation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from engram.errors import DimensionError, ValidationError


def parse_identity_dims(identity: str) -> int:
    """The dimension count at the end of ``provider:model:dims``."""
    try:
        dims = int(identity.rsplit(":", 1)[1])
    except (IndexError, ValueError):
        raise ValidationError("embedding identity", f"{identity!r} does not end in a dimension count",
                              "provider:model:dims") from None
    if dims <= 0:
        raise ValidationError("embedding identity", f"{dims} dimensions", "a positive count")
    return dims


def checked_vectors(identity: str, items: Sequence[tuple[str, np.ndarray]]) -> list[tuple[str, np.ndarray]]:
    """``set_vectors``' items as flat float32 arrays, every one checked against the dimension count
    of ``identity`` before any is written. Raises ``DimensionError`` naming the first that differs,
    ``ValidationError`` for an identity without a count."""
    dims = parse_identity_dims(identity)
    arrays = []
    for memory_id, vector in items:
        array = np.asarray(vector, dtype=np.float32).reshape(-1)
        if array.shape[0] != dims:
            raise DimensionError("vector", f"has {array.shape[0]} dimensions for {memory_id}", f"{dims} ({identity})")
        arrays.append((memory_id, array))
    return arrays


def unit(vector: np.ndarray) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(array))
    return array / norm if norm > 0 else array


class VectorMatrix:
    """Row-normalised vectors with their ids; ``top`` answers exact cosine nearest neighbours.

    The rows live in a buffer with room to spare, as a list does: a catch-up after a few writes
    appends its rows in place instead of copying every row held (at 20k vectors of 384 floats
    that copy was 30 MB each time a search followed a write batch). ``matrix`` is the filled part."""

    def __init__(self) -> None:
        self.ids: list[Any] = []
        self._rows = np.zeros((0, 0), dtype=np.float32)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def matrix(self) -> np.ndarray:
        return self._rows[: len(self.ids)]

    @property
    def dims(self) -> int:
        return int(self._rows.shape[1]) if len(self.ids) else 0

    def load(self, items: Sequence[tuple[Any, np.ndarray]]) -> None:
        self.ids = [memory_id for memory_id, _ in items]
        if not items:
            self._rows = np.zeros((0, 0), dtype=np.float32)
            return
        matrix = np.vstack([np.asarray(v, dtype=np.float32) for _, v in items])
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        self._rows = matrix / norms

    def extend(self, ids: Sequence[object], unit_rows: np.ndarray) -> None:
        """Append rows that are already of unit length (an incremental catch-up)."""
        if not len(ids):
            return
        rows = np.asarray(unit_rows, dtype=np.float32)
        held, wanted = len(self.ids), len(self.ids) + len(rows)
        if not held:
            self._rows = rows.copy()
        else:
            if wanted > len(self._rows):
                # Half again as much room as needed: appends cost O(rows added) amortised.
                grown = np.empty((wanted + wanted // 2, self._rows.shape[1]), dtype=np.float32)
                grown[:held] = self._rows[:held]
                self._rows = grown
            self._rows[held:wanted] = rows
        self.ids.extend(ids)

    def keep(self, wanted: set[Any]) -> None:
        """Drop the rows whose id is not in ``wanted`` (deleted or replaced since), in place of
        loading every row again."""
        held = [i for i, memory_id in enumerate(self.ids) if memory_id in wanted]
        if len(held) == len(self.ids):
            return
        self._rows = self._rows[held] if held else np.zeros((0, 0), dtype=np.float32)
        self.ids = [self.ids[i] for i in held]

    def top(self, query: np.ndarray, k: int) -> list[tuple[Any, float]]:
        if not self.ids or k <= 0:
            return []
        scores = self.matrix @ unit(query)
        k = min(k, len(self.ids))
        best = np.argpartition(-scores, k - 1)[:k]
        best = best[np.argsort(-scores[best])]
        return [(self.ids[i], float(scores[i])) for i in best]
