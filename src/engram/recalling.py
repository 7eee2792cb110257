"""Recall: the memories most relevant to a query, as this view may read them, within the time the
query names.

``recall`` checks its arguments, reads a time phrase from ``when`` or the query
(``engram.temporal``: a range, or one anchored at a memory's time: ``_anchor``), runs the search
(``search.recall``, which owns the ranking, through the engine's ``RecallCache``: a result is kept
until the store changes) and shapes the answer: the page past ``offset``, contents as known at
``known_at`` (``_as_known``), the read trail's event, and the recall counted as a use of its hits
(``_touch_recalled``, ``lifecycle.strengthen``), as ``mark_used`` counts a read that is not a recall.

A part of ``Engram``: a mixin composed in ``engine`` (``scoping`` says why the engine is built from mixins).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from engram import jsondoc
from engram.errors import StorageError, ValidationError
from engram.events import ReadEvent
from engram.lifecycle.decay import strengthen
from engram.model import (
    MAX_LINK_DEPTH,
    MAX_RECALL_LIMIT,
    MAX_RECALL_WINDOW,
    Hit,
    Memory,
    MemoryFilter,
    RecallResult,
    ScoreParts,
    parse_flag,
    parse_integer,
    parse_limit,
    parse_offset,
    parse_query,
    parse_relevance,
)
from engram.scoping import Filters, ScopeChoice
from engram.search import RecallRequest, recall
from engram.temporal.reader import QueryTime, anchored_range, as_known


class _Recalling:
    """``Engram``'s recall and the uses it counts."""

    def recall(
        self,
        query: str,
        *,
        limit: int | None = None,
        filters: Filters | None = None,
        depth: int = 0,
        min_relevance: float | None = None,
        mode: str = "auto",
        touch: bool | None = None,
        background: bool = False,
        offset: int = 0,
        when: str | None = None,
        as_of: float | str | None = None,
        known_at: float | str | None = None,
        scope: ScopeChoice | None = None,
    ) -> RecallResult:
        """The memories most relevant to ``query``, best first, each with its score's parts.

        ``limit`` is 1 to ``MAX_RECALL_LIMIT`` (100); ``offset`` skips that many hits, for the next
        page (``offset + limit`` at most ``MAX_RECALL_WINDOW``).

        ``depth`` 1-3 follows links that many hops, each hop adding at most ``limit`` linked
        memories (the hits taking turns, best first; ``Hit.via`` names the parent); ``mode`` is
        auto, hybrid, text or vector.
        An embedder failure falls back to full text with a note; nothing relevant is an empty
        result with a note. Recalled memories are marked accessed and strengthened (recall count
        +1, importance + ``lifecycle.strengthen.importance_boost``) unless ``touch=False`` or
        ``background=True`` (a maintenance job's recall is not a use of the memory).

        Time: ``when`` ("last week", "in March", "since Monday"; a phrase in the query is read the
        same way unless ``time.read_queries`` is off) keeps memories whose event time (valid_from,
        else created_at) falls in that range; ``as_of`` keeps facts valid then (superseded ones
        included while they held); ``known_at`` shows memories as they were recorded then, with
        the content they had. The range read is named in the result's notes.

        ``scope`` (as ``list`` takes it: global, agent, session or a ``Scope``) searches that scope
        only, before ``limit`` is applied, so better matches elsewhere never crowd its memories out.
        """
        self.writes.refuse_when_closed("read")
        query = parse_query(query)
        if mode not in ("auto", "hybrid", "text", "vector"):
            raise ValidationError("mode", f"unknown mode {jsondoc.shown(mode)}", ["auto", "hybrid", "text", "vector"])
        depth = parse_integer(depth, "depth", 0, MAX_LINK_DEPTH)
        if touch is not None:  # a truthy "no" (an adapter's per-call option) would have touched
            touch = parse_flag(touch, "touch")
        limit = parse_limit(self.recall_settings.limit if limit is None else limit, MAX_RECALL_LIMIT)
        offset = parse_offset(offset, MAX_RECALL_WINDOW - limit)
        if min_relevance is not None:  # scores run 0-1: a cut outside drops everything, or nothing, unsaid
            min_relevance = parse_relevance(min_relevance)
        filters = filters or Filters()
        if as_of is not None or known_at is not None:
            filters = replace(filters, as_of=filters.as_of if as_of is None else as_of,
                              known_at=filters.known_at if known_at is None else known_at)
        filt = self._filter(filters, scope=scope)
        read = self._anchor(self.time.read(query, when, self.clock()), filt)
        if read.range is None:
            result = self._recall(RecallRequest(query, filt, offset + limit, depth, min_relevance, mode))
        else:
            result = self._recall_in_range(query, read, filt, offset + limit, depth, min_relevance, mode)
        if offset:
            result = replace(result, hits=result.hits[offset:])
        if filt.known_at is not None:
            result = self._as_known(result, filt.known_at)
        if filt.valid_at is not None:
            result = replace(result, notes=(*result.notes, f"facts valid as of {self.time.describe(filt.valid_at)}"))
        if self.events.has_readers and not background:  # the read trail (lifecycle.audit_reads)
            # The query as redact would store it: the trail keeps it, and the chat agent recalls with
            # the user's message as it was said.
            self.events.emit_read(ReadEvent(
                self.privacy.screen(query, field="query", as_json=False)[0],
                tuple((h.memory.id, h.memory.key, round(h.score, 6)) for h in result.hits), result.mode,
                self.scope, self.origin, self.clock()))
        wanted = self.recall_settings.touch_on_recall if touch is None else touch
        if wanted and not background and result.hits:
            self._touch_recalled(result)
        if self.embedding_note and mode != "text":
            result = replace(result, notes=(self.embedding_note, *result.notes))
        return result

    def _touch_recalled(self, result: RecallResult) -> None:
        """Count a recall of ``result``'s hits (``lifecycle.strengthen``), unless the engine was
        closed once the read itself was done (``close`` from another thread while this recall ran):
        the hits are the caller's answer, and losing one recall count is better than failing a read
        that succeeded (SQLite said "Cannot operate on a closed database", naming the file; an
        in-memory or JSON-file store counted the recall after close)."""
        if self.closed:
            return
        try:
            strengthen(self, [hit.memory for hit in result.hits], self.strengthen, now=self.clock())
        except StorageError:
            if not self.closed:  # (close sets the flag before it shuts the store: a failure after it is the close's)
                raise

    def _recall_in_range(
        self, query: str, read: QueryTime, filt: MemoryFilter, limit: int, depth: int, min_relevance: float | None,
        mode: str,
    ) -> RecallResult:
        """Recall within a time range. A phrase read from the query that leaves nothing is not
        taken as a filter after all: the whole query is searched at any time, saying so."""
        assert read.range is not None
        span = read.range
        timed = replace(filt, happened_from=_later(filt.happened_from, span.start),
                        happened_before=_earlier(filt.happened_before, span.end))
        note = f"time: {span.describe(self.time.zone)}"
        if not read.query:  # the query was only a time phrase: what happened then, latest first
            memories = self._shown(self.store.list(timed, order="recent", limit=limit))
            hits = tuple(Hit(m, 1.0, ScoreParts(fused=1.0)) for m in memories)
            return RecallResult(hits, "time", (note,) if hits else (note, "nothing relevant: no memory in that time"))
        result = self._recall(RecallRequest(read.query, timed, limit, depth, min_relevance, mode))
        if result.hits or not read.from_query:
            return replace(result, notes=(note, *result.notes))
        wider = self._recall(RecallRequest(query, filt, limit, depth, min_relevance, mode))
        return replace(wider, notes=(note, "nothing in that time; matches from any time", *wider.notes))

    def _anchor(self, read: QueryTime, filt: MemoryFilter) -> QueryTime:
        """``when="before the launch"``: the range ends (or, after/since, starts) at the event time
        of the memory that best matches "the launch"; ``ValidationError`` when no memory names it."""
        if read.anchor is None:
            return read
        direction, words = read.anchor
        found = self.store.search_text(words, filt, limit=1)
        if not found:
            raise ValidationError("when", f"no memory names {jsondoc.shown(words)}",
                                  "before/after/since words a memory contains, or a time phrase (last week, in March)")
        anchor = found[0][0]
        span = anchored_range(direction, words, anchor.event_time)
        return replace(read, range=replace(span, phrase=f"{span.phrase} (the time of {anchor.key!r})"))

    def _as_known(self, result: RecallResult, known_at: float) -> RecallResult:
        """Each hit with the content it had at record time ``known_at`` (from its versions)."""
        hits = tuple(
            replace(hit, memory=as_known(hit.memory, self.store.versions(hit.memory.id), known_at))
            if hit.memory.updated_at > known_at else hit
            for hit in result.hits
        )
        note = f"as known at {self.time.describe(known_at)}: contents as recorded then"
        return replace(result, hits=hits, notes=(*result.notes, note))

    def _recall(self, request: RecallRequest) -> RecallResult:
        # A result is the embedder's too: after ``engram.embedder = ...`` (another model, or none) a
        # cached one was the old embedder's answer, its vectors searched where the new one's are not.
        identity = None if self.embedder is None else getattr(self.embedder, "identity", None)
        cache_key, token = repr((request, identity)), self.store.change_token()
        result = self.recall_cache.get(cache_key, token)
        if result is None:
            with self.metrics.timed("recall"):
                result = recall(self.store, request, self.recall_settings, embedder=self.embedder, clock=self.clock)
            if all(note.startswith("nothing relevant") for note in result.notes):  # never keep a fallback
                self.recall_cache.put(cache_key, token, result)
        return result

    def mark_used(self, memories: Sequence[Memory]) -> None:
        """Count a read that is not a recall (an adapter's ``get`` by key, a listing it hands an
        agent) as a use of ``memories``, as recall counts its hits: marked accessed and strengthened
        (``lifecycle.strengthen``), following ``recall.touch_on_recall``. The lifecycle jobs purge
        knowledge that looks unused, so what an agent is given must not look so. Only memories this
        view may read are marked: a ``Memory`` is a record anyone can build, and one carrying another
        agent's id is passed over, as a forgotten one is (one id query)."""
        self.writes.refuse_when_closed()
        if memories and self.recall_settings.touch_on_recall:
            readable = self.store.matching_ids([m.id for m in memories], self._reaching(memories))
            strengthen(self, [m for m in memories if m.id in readable], self.strengthen, now=self.clock())


def _later(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else max(a, b)


def _earlier(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)
