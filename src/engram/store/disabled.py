"""The disabled store: memory turned off. Every call answers empty, False or zero, never an error,
and nothing is kept (PtrClaw's NoneMemory; sclaw's graceful degradation)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, NoReturn, TypeVar

import numpy as np

from engram.errors import EngramError
from engram.model import Memory, MemoryDraft, MemoryFilter, MemoryVersion, Order, Scope, WriteResult
from engram.store.base import BatchWrite, ImportResult, ImportUpdate, KindCount, StoreStats, write_each

T = TypeVar("T")


class DisabledMemoryStore:
    name = "disabled"
    # Nothing is kept: writers do not run the embedding model for it (``store.base.keeps_nothing``).
    keeps_nothing = True

    def upsert(self, draft: MemoryDraft, *, proposed_key: str, now: float) -> WriteResult:
        # Nothing is stored: the record exists only in the answer.
        memory = Memory(
            id="", key=draft.key or proposed_key, content=draft.content, category=draft.category,
            type=draft.type, layer=draft.layer, tags=draft.tags, metadata=dict(draft.metadata),
            importance=draft.importance, scope=draft.scope, created_at=now, updated_at=now,
        )
        return WriteResult(memory, "unchanged", ("memory is disabled: nothing was stored",))

    def write_batch(
        self, writes: Sequence[BatchWrite], *, now: float, identity: str | None, all_or_nothing: bool = False
    ) -> list[WriteResult | EngramError]:
        # All or nothing holds as it is: nothing is kept, and no write fails.
        return write_each(self, writes, now=now, identity=identity)

    def atomic(self, work: Callable[[], T]) -> T:
        # All or nothing holds as it is: nothing ``work`` writes is kept.
        return work()

    def get(self, ref: str, filt: MemoryFilter) -> Memory | None:
        return None

    def move(self, memory_id: str, scope: Scope) -> Memory | None:
        return None

    def move_many(self, moves: Mapping[str, Scope]) -> dict[str, Memory | EngramError]:
        return {}

    def get_many(self, ids: Sequence[str]) -> list[Memory]:
        return []

    def get_many_held(self, ids: Sequence[str]) -> list[Memory]:
        return []

    def list(self, filt: MemoryFilter, *, order: Order = "recent", limit: int = 50, offset: int = 0) -> list[Memory]:
        return []

    def count(self, filt: MemoryFilter) -> int:
        return 0

    def count_by_kind(self, filt: MemoryFilter) -> list[KindCount]:
        return []

    def sessions_of(self, agent: str) -> list[str]:
        return []

    def count_links(self, filt: MemoryFilter) -> int:
        return 0

    def search_text(self, query: str, filt: MemoryFilter, *, limit: int) -> list[tuple[Memory, float]]:
        return []

    def text_scores(self, query: str, ids: Sequence[str]) -> dict[str, float]:
        return {}

    def text_score_ceiling(self, query: str) -> float | None:
        return None

    def find_matching_all(self, query: str, filt: MemoryFilter) -> list[Memory]:
        return []

    def delete(self, ids: Sequence[str]) -> list[Memory]:
        return []

    def link(self, a_id: str, b_id: str) -> bool:
        return False

    def unlink(self, a_id: str, b_id: str) -> bool:
        return False

    def neighbours(self, memory_id: str, filt: MemoryFilter, *, limit: int = 20) -> list[Memory]:
        return []

    def matching_ids(self, ids: Sequence[str], filt: MemoryFilter) -> dict[str, float]:
        return {}

    def touch(
        self, ids: Sequence[str], now: float, *, recall: bool = True, importance_boost: float = 0.0,
        importance_cap: float = 1.0,
    ) -> None:
        pass

    def merge_metadata(self, memory_id: str, values: Mapping[str, Any], *,
                       expect: Mapping[str, Any] | None = None) -> Memory | None:
        return None

    def raise_received_at(self, memory_id: str, at: float) -> Memory | None:
        return None

    def set_superseded(
        self, memory_id: str, successor_id: str | None, *, now: float | None = None, valid_until: float | None = None
    ) -> bool:
        return False

    def change_token(self) -> object | None:
        return None

    def versions(self, memory_id: str) -> list[MemoryVersion]:
        return []

    def import_memories(self, memories: Sequence[Memory], updates: Sequence[ImportUpdate] = ()) -> ImportResult:
        return ImportResult(0, len(memories))

    def iter_all(self) -> Iterator[Memory]:
        return iter(())

    def stats(self) -> StoreStats:
        return StoreStats(self.name, self.location(), 0, {}, {}, 0, 0, 0, None)

    def location(self) -> str:
        return ""

    def vector_identity(self) -> str | None:
        return None

    def set_vectors(self, identity: str, items: Sequence[tuple[str, np.ndarray]]) -> None:
        pass

    def search_vector(self, vector: np.ndarray, filt: MemoryFilter, *, limit: int) -> list[tuple[Memory, float]]:
        return []

    def vectors_for(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        return {}

    def missing_vectors(self, limit: int = 1000) -> list[Memory]:
        return []

    def clear_vectors(self) -> None:
        pass

    def close(self) -> None:
        pass


class NotMadeYetStore(DisabledMemoryStore):
    """The empty, read-only view of a database not made yet (``has_no_database_yet``: one SQLite
    database per agent and none made for this agent so far, or a new home): every read answers as
    an empty database would, in the figures of the backend and file that will hold it. A write
    raises: reads go through this view so that they make no file, and a write has to open the real
    database (its first write makes it), never be dropped here as the disabled store drops it."""

    def __init__(self, backend: str, location: str) -> None:
        self.name = backend
        self._location = location

    def location(self) -> str:
        return self._location

    def _refuse(self, *_: object, **__: object) -> NoReturn:
        from engram.errors import StorageError

        raise StorageError(f"{self._location} is not made yet and this view only reads: open the agent's engine to write")

    upsert = write_batch = move = move_many = delete = link = unlink = _refuse  # type: ignore[assignment]
    set_superseded = import_memories = set_vectors = clear_vectors = _refuse  # type: ignore[assignment]
