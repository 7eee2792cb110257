"""The single writer: concurrent ``remember`` calls become one embedding batch and one transaction.

``Engram.remember`` validates on the caller's thread (a bad field raises there, before anything
is queued) and hands a ``PendingWrite`` to the engine's ``WriteQueue``. The queue is a ``Drain``
(``engram.drain``): whichever caller holds the lead takes everything pending, embeds the texts
that need a vector in one model call, and stores the whole batch with ``store.write_batch``: one
transaction holding every row, vector and link. Once its texts are embedded the leader hands the
lead on, so the next batch is embedded while this one commits (commits still take turns on the
database's lock). Each caller returns only after the commit that holds its write, with
its own result or its own error (a write the store refuses is undone alone; the others are kept).
After the commit the leader announces the batch's events (``Announce``) to the engine's listeners
together, before answering: the file mirror then writes each file once for the whole batch and
the audit trail inserts its rows in one transaction, instead of each caller waking to announce
its own write, which made several mirror passes per batch, each rewriting whole files.

Whether the store can keep this embedder's vectors (it holds no other model's) is looked up before
embedding, so texts whose vectors could not be kept are not embedded; the answer is kept for a
second (``IDENTITY_RECHECK_S``), because reading it takes the database's lock, which the batch
before holds while it commits: the model would wait for every commit. The write transaction checks
the identity again, and a batch refused because another process switched models meanwhile is
written again without vectors, with the warning the look-up would have given.

A write that only repeats what is stored (same content in its scope, or an unchanged key) needs
no vector; those are found with a read before embedding, and anything that turns out otherwise
inside the transaction is embedded right after it (rare: it takes a concurrent writer).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Literal

import numpy as np

from engram.drain import Drain
from engram.errors import DimensionError, EngramError, StorageError
from engram.events import EventBus, MemoryEvent
from engram.model import Memory, MemoryDraft, MemoryFilter, Scope, WriteResult
from engram.search import TextEmbedder
from engram.store.base import BatchWrite, MemoryStore, keeps_nothing, write_each

log = logging.getLogger("engram.writes")

# Writes per batch at most: one model call of the embedder's usual batch size.
MAX_BATCH = 64
# Seconds a looked-up embedding identity is trusted before a batch (see the module docstring).
IDENTITY_RECHECK_S = 1.0


@dataclass(frozen=True, slots=True)
class Announce:
    """What a write's caller wants announced once it is committed: ``events(result)`` on ``bus``."""

    bus: EventBus
    events: Callable[[WriteResult], Sequence[MemoryEvent]]


@dataclass(frozen=True, slots=True)
class PendingWrite:
    """One validated ``remember``: the draft, its proposed key, link target ids, the time, and
    what to announce once it is committed.

    ``settle`` makes the reads the write depends on (the stored tags a keyed update keeps, the
    link targets that must exist) and returns the write to store, or raises the error its caller
    gets (nothing stored). The writer runs it just before the batch, so a caller that must not block
    (``Engram.remember_soon``) never reads the store itself; it passes a ``KeptByKey`` that reads
    the memory stored under a draft's key once a batch (the vector check needs it too). ``answer`` turns the stored result
    into what the caller gets (the writer runs it after the batch is announced)."""

    draft: MemoryDraft
    proposed_key: str
    links: tuple[str, ...]
    now: float
    announce: Announce | None = None
    settle: Callable[[PendingWrite, KeptByKey], PendingWrite] | None = None
    answer: Callable[[WriteResult], WriteResult] | None = None


class KeptByKey:
    """The memory stored under a keyed draft's key in its scope (None: none, or no key), read at
    most once a batch: a keyed update's ``settle`` (the tags it keeps) and the writer's check
    whether its text changed (``needs_vector``) ask for the same row."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store
        self._found: dict[tuple[Scope, str], Memory | None] = {}

    def __call__(self, draft: MemoryDraft) -> Memory | None:
        if draft.key is None:
            return None
        where = (draft.scope, draft.key)
        if where not in self._found:
            kept = self._store.get(draft.key, MemoryFilter(scopes=(draft.scope,), include_superseded=True))
            self._found[where] = kept if kept is not None and kept.key == draft.key else None
        return self._found[where]


def needs_vector(draft: MemoryDraft, kept: Memory | MemoryDraft | None) -> bool:
    """False when ``kept``, what is stored under this draft's key when it is written, already says
    the same (its vector stays): an unchanged upsert by key is common (agents re-storing what they
    know). A new text without a key is embedded even when it may turn out a duplicate: finding
    that out costs a look-up per write, and a repeated text is rare."""
    return kept is None or (kept.content, kept.search_context) != (draft.content, draft.search_context)


def embed_texts(embedder: TextEmbedder, items: Sequence[tuple[str, str | None]]) -> np.ndarray:
    """Vectors for ``(content, search_context)`` pairs. A memory with search context gets the
    normalised sum of its content's vector and the vector of content + context: found by what it
    says, helped by what surrounds it. Raises what ``embedder.embed`` raises."""
    texts = [content for content, _ in items]
    with_context = [i for i, (_, context) in enumerate(items) if context]
    texts += [f"{items[i][0]}\n{items[i][1]}" for i in with_context]
    vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
    blended = vectors[: len(items)].copy()
    for extra, i in enumerate(with_context):
        mixed = blended[i] + vectors[len(items) + extra]
        blended[i] = mixed / (np.linalg.norm(mixed) or 1.0)
    return blended


def identity_warning(store: MemoryStore, embedder: TextEmbedder) -> str | None:
    """Why vectors of this embedder cannot be stored here (another model's are), or None."""
    identity, stored = str(embedder.identity), store.vector_identity()
    if stored is not None and stored != identity:
        return f"not embedded: the store holds {stored} vectors; run `engram reindex` for {identity}"
    return None


def not_embedded(exc: EngramError) -> str:
    return f"not embedded ({exc}); full-text recall still finds it"


# Items of a bulk write (``Engram.remember_many``) embedded per model call, progress told after each.
BULK_CHUNK = 100


def settle_bulk(drafts: Sequence[MemoryDraft], keeps: Sequence[tuple[bool, bool]], store: MemoryStore,
                embedding: bool) -> tuple[list[MemoryDraft], list[bool]]:
    """A bulk write's drafts as they will be stored, and whether each one's text is new where it
    goes (it needs a vector). A keyed draft keeps the tags and metadata it was not given (``keeps``:
    tags, metadata) from the memory stored under its key, or from the draft before it in the
    batch with that key (written before it, so that is what it finds); its text is new unless
    that memory or draft says the same (``needs_vector``). The store is read only for what is
    asked: nothing to keep and no ``embedding`` reads nothing."""
    kept = KeptByKey(store)
    earlier: dict[tuple[Scope, str], MemoryDraft] = {}
    settled, fresh = [], []
    for draft, (keep_tags, keep_metadata) in zip(drafts, keeps, strict=True):
        before: Memory | MemoryDraft | None = None
        if draft.key is not None:
            before = earlier.get((draft.scope, draft.key))
            if before is None and (keep_tags or keep_metadata or embedding):
                before = kept(draft)
            if before is not None and (keep_tags or keep_metadata):
                draft = dataclasses.replace(draft, tags=before.tags if keep_tags else draft.tags,
                                            metadata=before.metadata if keep_metadata else draft.metadata)
            earlier[(draft.scope, draft.key)] = draft
        settled.append(draft)
        fresh.append(needs_vector(draft, before))
    return settled, fresh


def bulk_vectors(embedder: TextEmbedder | None, store: MemoryStore, drafts: Sequence[MemoryDraft],
                 fresh: Sequence[bool], progress: Callable[[int, int], None] | None = None,
                 ) -> tuple[dict[int, np.ndarray], str | None]:
    """Vectors, by position, for the drafts whose text is new (``fresh``), ``BULK_CHUNK`` drafts a
    model call, with ``progress(done, total)`` after each chunk but the last (its caller tells the
    end once the batch is stored); and the warning of the writes left without the vector they
    need: the store holds another model's vectors, or the model failed (it is not called again,
    and the vectors already made are kept)."""
    total = len(drafts)
    warning = None if embedder is None else identity_warning(store, embedder)
    vectors: dict[int, np.ndarray] = {}
    for start in range(0, total, BULK_CHUNK):
        wanted = [i for i in range(start, min(total, start + BULK_CHUNK)) if fresh[i]]
        if embedder is not None and warning is None and wanted:
            try:
                rows = embed_texts(embedder, [(drafts[i].content, drafts[i].search_context) for i in wanted])
                vectors.update(zip(wanted, rows, strict=True))
            except EngramError as exc:
                warning = not_embedded(exc)
        if progress is not None and start + BULK_CHUNK < total:
            progress(start + BULK_CHUNK, total)
    return vectors, warning


def embed_missed(embedder: TextEmbedder | None, drafts: Sequence[MemoryDraft], fresh: Sequence[bool],
                 vectors: dict[int, np.ndarray], warning: str | None) -> tuple[dict[int, np.ndarray], str | None]:
    """``vectors`` with those of the drafts found new (``fresh``) only after ``bulk_vectors`` ran
    (another writer changed the text stored under their key meanwhile), in one model call; none
    when the model failed or cannot be kept (``warning``: the writes without their vector say so)."""
    missed = [i for i, new in enumerate(fresh) if new and i not in vectors]
    if embedder is None or warning is not None or not missed:
        return vectors, warning
    try:
        rows = embed_texts(embedder, [(drafts[i].content, drafts[i].search_context) for i in missed])
    except EngramError as exc:
        return vectors, not_embedded(exc)
    return {**vectors, **dict(zip(missed, rows, strict=True))}, warning


def closed_refusal(to: Literal["read", "write"] = "write") -> StorageError:
    """The one refusal of a call to a closed engine (``Engram``'s and ``AsyncEngram``'s alike):
    ``to`` says whether the call would have read or written."""
    return StorageError(f"this engram is closed: open a new one to {to}")


class WriteQueue:
    """One writer per store (shared by the engine's views): see the module docstring."""

    def __init__(self, store: MemoryStore, embedder: TextEmbedder | None, max_batch: int = MAX_BATCH) -> None:
        self.store = store
        self._embedder: TextEmbedder | None = None
        self.embedder = embedder
        self._drain: Drain[PendingWrite, WriteResult] = Drain(self._run, max_batch, early_handoff=True)
        # Set once the batch in progress has committed (a new one per batch; set when idle).
        self._committed = threading.Event()
        self._committed.set()
        # The last identity look-up: (embedder identity, its warning or None, monotonic time).
        self._identity_seen: tuple[str, str | None, float] | None = None
        self._closed = False

    @property
    def embedder(self) -> TextEmbedder | None:
        """The model writes are embedded with: the engine's, or None when the store keeps nothing
        (``keeps_nothing``: memory turned off), so no write runs the model for a vector that is
        dropped. Every write path (``remember``, ``update``, ``remember_many``, ``embed_missing``)
        embeds with this one."""
        return self._embedder

    @embedder.setter
    def embedder(self, embedder: TextEmbedder | None) -> None:
        self._embedder = None if keeps_nothing(self.store) else embedder

    @property
    def closed(self) -> bool:
        """True once ``close`` was called: every view of the engine shares this queue, so it is
        the one record of the engine being closed."""
        return self._closed

    @property
    def waiting(self) -> int:
        """Writes queued behind the batch in progress."""
        return self._drain.waiting

    def write(self, pending: PendingWrite) -> WriteResult:
        """Store ``pending`` in the next batch; returns after the commit that holds it. Raises the
        error the store gave this write alone (or the batch's, when the commit itself failed);
        ``StorageError`` at once after ``close``."""
        self.refuse_when_closed()
        return self._drain.submit(pending)

    def close(self, timeout: float | None = None) -> bool:
        """Refuse new writes, then wait until every write queued so far is committed and answered;
        False on ``timeout`` (or when called from a listener of a batch in progress, which cannot
        wait for itself)."""
        self._closed = True
        return self._drain.wait_idle(timeout)

    def write_soon(self, pending: PendingWrite) -> Future[WriteResult]:
        """``write`` without waiting: the future is answered after the commit (see ``Drain.submit_soon``)."""
        self.refuse_when_closed()
        return self._drain.submit_soon(pending)

    def refuse_when_closed(self, to: Literal["read", "write"] = "write") -> None:
        """Raise ``StorageError`` once ``close`` was called. Every write of the engine asks this
        first, the ones that reach the store without the queue (``remember_many``, ``forget``,
        ``link``...) too, before reading, embedding or storing anything; every read asks it too
        (``to="read"``): the queue holds the one closed flag of an engine and all its views."""
        if self._closed:
            # Clearer than the database's own "Cannot operate on a closed database" from a batch, and
            # the same on every store: an in-memory or JSON-file store would answer as if open.
            raise closed_refusal(to)

    def _run(self, batch: list[PendingWrite], hand_off: Callable[[], None]) -> list[WriteResult | Exception]:
        """Each write settled (an error there answers that write alone), the settled ones stored
        as one batch, then each answer made."""
        committed = threading.Event()
        before, self._committed = self._committed, committed
        try:
            return self._settle_and_store(batch, hand_off, before, committed)
        finally:
            committed.set()  # (already set after a commit; here when the batch failed before it)

    def _settle_and_store(self, batch: list[PendingWrite], hand_off: Callable[[], None],
                          before: threading.Event, committed: threading.Event) -> list[WriteResult | Exception]:
        if any(p.settle is not None for p in batch):
            # Its reads must see every write queued before it: the batch before may be committing.
            before.wait()
        answers: dict[int, WriteResult | Exception] = {}
        settled: list[tuple[int, PendingWrite]] = []
        kept = KeptByKey(self.store)
        for i, pending in enumerate(batch):
            try:
                settled.append((i, pending if pending.settle is None else pending.settle(pending, kept)))
            except Exception as exc:
                answers[i] = exc
        if settled:
            self._answer(settled, self._store([p for _, p in settled], hand_off, committed, kept), answers)
        return [answers[i] for i in range(len(batch))]

    @staticmethod
    def _answer(settled: list[tuple[int, PendingWrite]], stored: list[WriteResult | EngramError],
                answers: dict[int, WriteResult | Exception]) -> None:
        for (i, pending), result in zip(settled, stored, strict=True):
            if pending.answer is not None and isinstance(result, WriteResult):
                try:
                    result = pending.answer(result)
                except Exception as exc:  # (the write is stored: only its caller's view of it failed)
                    result = exc
            answers[i] = result

    def _store(self, batch: list[PendingWrite], hand_off: Callable[[], None],
               committed: threading.Event, kept: KeptByKey) -> list[WriteResult | EngramError]:
        now = max(p.now for p in batch)
        vectors, skipped, warning = self._vectors(batch, kept)
        hand_off()  # the next batch embeds while this one commits: the model never waits for a commit
        writes = [BatchWrite(p.draft, p.proposed_key, vectors.get(i), p.links) for i, p in enumerate(batch)]
        identity = None if self.embedder is None else str(self.embedder.identity)
        results = self._write(writes, now, identity)
        if identity is not None and any(isinstance(r, DimensionError) for r in results):
            results, warning = self._rewrite_refused(writes, results, now, warning)
        committed.set()  # the next batch's reads may go on (before the announcement, which may write)
        notes = dict.fromkeys(range(len(batch)), warning)
        changed = {i: r.memory for i, r in enumerate(results)
                   if isinstance(r, WriteResult) and r.action in ("created", "updated") and r.memory.id}
        if warning is None and (late := [i for i in skipped if i in changed]):
            notes.update(dict.fromkeys(late, self._embed_late([changed[i] for i in late])))
        out: list[WriteResult | EngramError] = []
        for i, result in enumerate(results):
            note = notes[i]
            if note is not None and i in changed and isinstance(result, WriteResult):
                result = dataclasses.replace(result, warnings=(*result.warnings, note))
            out.append(result)
        announce(batch, out)
        return out

    def _write(self, writes: list[BatchWrite], now: float, identity: str | None) -> list[WriteResult | EngramError]:
        batch_write = getattr(self.store, "write_batch", None)  # a plug-in store may predate it
        if batch_write is not None:
            return list(batch_write(writes, now=now, identity=identity))
        return write_each(self.store, writes, now=now, identity=identity)

    def _rewrite_refused(self, writes: list[BatchWrite], results: list[WriteResult | EngramError], now: float,
                         warning: str | None) -> tuple[list[WriteResult | EngramError], str | None]:
        """The writes the store refused for their vectors, written again without them when the
        store now holds another model's vectors (another process switched models since the
        identity was looked up), each with the warning the look-up would have given."""
        assert self.embedder is not None
        self._identity_seen = None
        switched = identity_warning(self.store, self.embedder)
        if switched is None:
            return results, warning
        refused = [i for i, r in enumerate(results) if isinstance(r, DimensionError)]
        again = self._write([dataclasses.replace(writes[i], vector=None) for i in refused], now, None)
        results = list(results)
        for i, result in zip(refused, again, strict=True):
            results[i] = result
        return results, switched

    def _identity_warning(self) -> str | None:
        """``identity_warning`` for this queue's embedder, looked up at most once a second."""
        assert self.embedder is not None
        identity, now = str(self.embedder.identity), time.monotonic()
        seen = self._identity_seen
        if seen is not None and seen[0] == identity and now - seen[2] < IDENTITY_RECHECK_S:
            return seen[1]
        warning = identity_warning(self.store, self.embedder)
        self._identity_seen = (identity, warning, now)
        return warning

    def _vectors(self, batch: list[PendingWrite], kept: KeptByKey) -> tuple[dict[int, np.ndarray], list[int], str | None]:
        """Vectors for the writes that will need one, by position; the positions left out as
        needing none; a warning for every write when embedding is impossible (another model's
        vectors are stored, or the embedder failed)."""
        if self.embedder is None:
            return {}, [], None
        warning = self._identity_warning()
        if warning is not None:
            return {}, [], warning
        wanted, skipped = [], []
        for i, p in enumerate(batch):
            (wanted if needs_vector(p.draft, kept(p.draft)) else skipped).append(i)
        if not wanted:
            return {}, skipped, None
        try:
            rows = embed_texts(self.embedder, [(batch[i].draft.content, batch[i].draft.search_context) for i in wanted])
        except EngramError as exc:
            return {}, [], not_embedded(exc)
        return dict(zip(wanted, rows, strict=True)), skipped, None

    def _embed_late(self, memories: list[Memory]) -> str | None:
        """Vectors for memories the look-up said were unchanged that have none after the write (a
        concurrent writer got between the two); a warning when that fails."""
        assert self.embedder is not None
        have = self.store.vectors_for([m.id for m in memories])
        memories = [m for m in memories if m.id not in have]
        if not memories:
            return None
        try:
            rows = embed_texts(self.embedder, [(m.content, m.search_context) for m in memories])
            self.store.set_vectors(str(self.embedder.identity), list(zip([m.id for m in memories], rows, strict=True)))
        except EngramError as exc:
            return not_embedded(exc)
        return None


def announce(batch: Sequence[PendingWrite], results: Sequence[WriteResult | EngramError]) -> None:
    """The committed batch's events, each bus told once with all of its own, in the batch's order.
    Never raises: the writes are stored whatever a listener or an event maker does."""
    by_bus: dict[int, tuple[EventBus, list[MemoryEvent]]] = {}
    for pending, result in zip(batch, results, strict=True):
        if pending.announce is None or not isinstance(result, WriteResult):
            continue
        try:
            made = pending.announce.events(result)
        except Exception:
            log.exception("the events of write %s could not be made", result.memory.id)
            continue
        by_bus.setdefault(id(pending.announce.bus), (pending.announce.bus, []))[1].extend(made)
    for bus, events in by_bus.values():
        bus.emit_all(events)
