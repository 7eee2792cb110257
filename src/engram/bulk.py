"""Storing an import's memories while the model embeds them.

An import used to write its rows (one transaction), announce them (the ``imported`` event: audit
rows, memory-folder files) and only then start the model, which read the rows back a batch at a
time and wrote each batch's vectors before embedding the next. Everything but the model was time
the model waited for, and the model leaves room for it: its runs do not keep every core busy all
the time (the serial parts between runs of 16 texts). So here the caller's thread
embeds the memories' texts straight from the parsed records, while one writer thread stores the
rows, emits the event and then stores each batch's vectors as they come (onnxruntime and SQLite
release the GIL). The store is used by one thread at a time: the caller's reads come before the
writer starts, and ``embed_missing`` after it has finished.

Every memory an import stores arrives here now (``received_at``, ``arrived``) unless it carries an
arrival already: one engram's own snapshot moves (a restore, an agent's memories moving between
databases), which was its arrival in the store it left. The source's record times are kept as they
were; the lifecycle jobs measure from the later of those and the arrival, so a year of memories
brought from another system is not past every limit at once.

The rows decide what is kept (an id or key already stored is skipped in the transaction), so a
vector is stored only for a memory whose stored text is the text that was embedded; anything left
without a vector (a skipped record whose id held other text, a memory that lacked one before) is
embedded afterwards by ``Engram.embed_missing`` as before. The outcome is the same as storing,
announcing and then embedding in turn: the same rows, event and vectors, progress ending where it
did. An import the store refuses may have embedded one batch meanwhile (its vectors reach only the
embedding cache).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from engram.errors import EngramError
from engram.model import Memory
from engram.store.base import ImportResult, ImportUpdate
from engram.writes import embed_texts, identity_warning

if TYPE_CHECKING:
    from engram.engine import Engram

# Memories per model call: what ``Engram.embed_missing`` reads at a time, so progress moves alike.
BATCH = 256

Progress = Callable[[int, int], None]  # (embedded, total)


def store_and_embed(engram: Engram, memories: Sequence[Memory], *, reason: str | None = None,
                    progress: Progress | None = None, stored: Callable[[], None] | None = None,
                    updates: Sequence[ImportUpdate] = (), guard_new: bool = True) -> ImportResult:
    """Store ``memories`` and make ``updates`` in one transaction (``store.import_memories``, after
    the engine's ``guard``; with ``guard_new`` False, only when there are ``updates``), emit
    ``imported`` for the new ones with ``reason`` (the caller announces the updates), and embed
    them, overlapped as the module says; an updated text is embedded after, with what else lacks a vector. ``progress(done,
    total)`` is called after each batch of vectors, and ``stored()`` once the rows are committed
    (first seen between two batches, else at the end); both on the caller's thread.

    Raises what ``store.import_memories`` or the guard raises (nothing is embedded then); an
    embedding failure is not raised: the rows are kept and full text finds them, as in
    ``Engram.embed_missing``.
    """
    memories = arrived(memories, engram.clock())
    todo = _to_embed(engram, memories)
    writer = _Writer(engram, memories, reason, updates, guard_new)
    writer.start()
    done, failed, embedder = 0, False, engram.writes.embedder  # None when the store keeps nothing
    try:
        for start in range(0, len(todo), BATCH):
            if writer.error is not None:
                break
            assert embedder is not None  # nothing is left to embed without one
            batch = todo[start:start + BATCH]
            try:
                vectors = embed_texts(embedder, [(m.content, m.search_context) for m in batch])
            except EngramError:
                failed = True  # the model failed: the rows are kept, full text finds them
                break
            writer.put(batch, vectors)
            done += len(batch)
            if stored is not None and writer.stored.is_set():
                stored, told = None, stored
                told()
            if progress is not None and stored is None:  # embedding is reported after storing
                progress(done, len(todo))
    finally:
        result = writer.finish()  # raises the writer's error
    if stored is not None:
        stored()
        if progress is not None and done:
            progress(done, len(todo))
    if embedder is not None and not failed:
        # What is still without a vector: records skipped for another text under their id, or a
        # memory that had none before this import.
        engram.embed_missing(None if progress is None else _after(progress, done, max(done, result.imported)))
    return result


def arrived(memories: Sequence[Memory], now: float) -> list[Memory]:
    """``memories`` as an import stores them: each without an arrival time (``received_at``) arriving ``now``."""
    return [m if m.received_at is not None else replace(m, received_at=now) for m in memories]


def _after(progress: Progress, done: int, total: int) -> Progress:
    """``embed_missing``'s progress continued from ``done`` of ``total`` already embedded."""
    return lambda n, _left: progress(done + n, max(total, done + n))


def _to_embed(engram: Engram, memories: Sequence[Memory]) -> list[Memory]:
    """The memories worth embedding before their rows are written: none without an embedder or
    when the store holds another model's vectors (``embed_missing`` says so as before); else those
    whose id has no vector yet (a second run of an import embeds nothing)."""
    embedder = engram.writes.embedder  # the writer's: None when the store keeps nothing
    if embedder is None or not memories or identity_warning(engram.store, embedder) is not None:
        return []
    have = engram.store.vectors_for([m.id for m in memories])
    return [m for m in memories if m.id not in have]


class _Writer(threading.Thread):
    """Stores the rows, emits ``imported``, then stores the vectors handed to it, in that order."""

    def __init__(self, engram: Engram, memories: Sequence[Memory], reason: str | None,
                 updates: Sequence[ImportUpdate], guard_new: bool = True) -> None:
        super().__init__(name="engram-import-writer", daemon=True)
        self.engram = engram
        self.guard_new = guard_new
        self.memories = memories
        self.updates = updates
        self.reason = reason
        self.result = ImportResult(0, 0)
        self.error: BaseException | None = None
        self.stored = threading.Event()  # the rows are committed
        self._vectors: queue.SimpleQueue[tuple[Sequence[Memory], np.ndarray] | None] = queue.SimpleQueue()

    def put(self, batch: Sequence[Memory], vectors: np.ndarray) -> None:
        self._vectors.put((batch, vectors))

    def finish(self) -> ImportResult:
        """Wait for everything handed over to be stored; raises what the writer raised."""
        self._vectors.put(None)
        self.join()
        if self.error is not None:
            raise self.error
        return self.result

    def run(self) -> None:
        engram = self.engram
        try:
            if (self.updates or (self.memories and self.guard_new)) and engram.guard is not None:
                engram.guard("import")
            self.result = (engram.store.import_memories(self.memories, self.updates)
                           if self.memories or self.updates else ImportResult(0, 0))
            self.stored.set()
            if not self.result.imported:
                return
            stored = engram.store.get_many([m.id for m in self.memories])
            engram._emit("imported", stored, reason=self.reason)
            texts = {m.id: (m.content, m.search_context) for m in stored}
            identity = None if engram.embedder is None else str(engram.embedder.identity)
            while (item := self._vectors.get()) is not None:
                batch, vectors = item
                kept = [(m.id, v) for m, v in zip(batch, vectors, strict=True)
                        if texts.get(m.id) == (m.content, m.search_context)]
                if kept and identity is not None:
                    engram.store.set_vectors(identity, kept)
        except BaseException as exc:  # handed to the caller's thread by finish()
            self.error = exc
