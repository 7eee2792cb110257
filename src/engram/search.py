"""Recall: hybrid full-text + vector ranking, every score explainable.

The pipeline, for a query in a set of visible scopes:

1. candidates from full text (BM25 or the backend's own text score) and, when an embedder is
   configured and the store's vectors match it, from cosine similarity;
2. every candidate scored on *both* signals: a text candidate's cosine comes from its stored
   vector, a vector candidate's text score from the store (``text_scores``: on SQLite, the
   query's full-text ranking kept from step 1, its best 1,000 rows). (Giving a
   candidate one side missed a 0 there pushed strong text matches below weak vector matches.)
3. each signal on a scale that means the same from query to query: text divided by the
   backend's ceiling for the query (the score of a memory holding each query word once, so
   1 means "every word of the query, rarest included"), cosine as it is, floored at 0;
4. fusion: ``weighted`` (``text_weight * text + vector_weight * vector``, normalised by the
   weights' sum) or ``rrf`` (reciprocal rank fusion, rescaled so the best possible score is 1);
5. multipliers after fusion: recency ``exp(-ln 2 * age / half_life)`` (age since the last
   write) and importance
   ``(1 - w) + w * importance``; a relevant old memory can still outrank an irrelevant new one;
6. ``min_relevance`` cut, optional MMR diversity, the limit;
7. ``depth`` link expansion: each hop adds at most ``limit`` neighbours of the previous hop's
   memories (parents take turns, best first), each with a share of its parent's score;
8. each hit's ``links`` kept to memories in the scopes searched (``engram.visibility``): the
   reader's, since ``Engram`` searches the scopes its view may read.

Nothing relevant gives an empty result with a note saying why, never padding.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from engram.config import RecallSettings
from engram.errors import EngramError
from engram.model import Hit, Memory, MemoryFilter, RecallResult, ScoreParts
from engram.store.base import MemoryStore, newest_first
from engram.visibility import narrow_hits


class TextEmbedder(Protocol):
    """What engram needs of an embedder (``engram.embed.Embedder`` provides it)."""

    @property
    def identity(self) -> Any: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


@dataclass(frozen=True, slots=True)
class RecallRequest:
    query: str
    filt: MemoryFilter
    limit: int
    depth: int = 0
    min_relevance: float | None = None
    mode: str = "auto"  # auto | hybrid | text | vector


@dataclass(slots=True)
class _Candidate:
    memory: Memory
    text_raw: float = 0.0
    text_rank: int | None = None
    cosine: float | None = None
    vector_rank: int | None = None
    parts: dict[str, float] = field(default_factory=dict)


def recall(
    store: MemoryStore,
    request: RecallRequest,
    settings: RecallSettings,
    *,
    embedder: TextEmbedder | None = None,
    now: float | None = None,
    clock: Callable[[], float] = time.time,
) -> RecallResult:
    """Run the recall pipeline (module docstring); never raises for embedder failures."""
    now = clock() if now is None else now
    notes: list[str] = []
    pool = max(request.limit * 5, 50)
    use_text = request.mode in ("auto", "hybrid", "text")
    use_vector = request.mode in ("auto", "hybrid", "vector")

    candidates: dict[str, _Candidate] = {}
    query_vector = None
    vector_hits: Callable[[], list[tuple[Memory, float]]] | None = None
    # A model still loading (a fresh process): full text is searched while it loads, then the
    # vectors. Otherwise the vector search is begun first and full text searched while it runs.
    text_first = use_text and bool(getattr(embedder, "warming", False))
    if text_first:
        _text_candidates(store, request, pool, candidates)
    if use_vector:
        query_vector, note = _query_vector(store, request, embedder)
        if note:
            notes.append(note)
        if query_vector is not None:
            vector_hits = _start_vector_search(store, request, query_vector, pool,
                                               side_by_side=use_text and not text_first)
            query_vector = np.asarray(query_vector, dtype=np.float32).reshape(-1)
    try:
        if use_text and not text_first:
            _text_candidates(store, request, pool, candidates)
    finally:
        # Always asked for: a begun search holds its index until it is (after an error too).
        found = vector_hits() if vector_hits is not None else []
    _add_vector_candidates(found, candidates)
    vector_ok = query_vector is not None
    mode = "hybrid" if (use_text and vector_ok) else ("vector" if vector_ok else "text")
    if not use_text and not vector_ok:
        use_text = True
        _text_candidates(store, request, pool, candidates)
    if use_text and vector_ok:
        _complete_signals(store, request.query, query_vector, candidates)

    # A text score below a ten-thousandth of the best is no evidence: SQLite's BM25 gives a word found in
    # most rows (more than half) almost nothing (its IDF floor), and rows matching only such words would
    # pad the result with 0.000 hits. Alone in a query, such a word still finds its rows (all score alike).
    text_floor = max((c.text_raw for c in candidates.values() if c.text_rank is not None), default=0.0) * 1e-4
    pool_candidates = [
        c for c in candidates.values()
        if c.text_raw > text_floor
        or (c.vector_rank is not None and (c.cosine or 0.0) >= settings.min_similarity)
    ]
    ceiling = store.text_score_ceiling(request.query) if use_text else None
    scored = _fuse(pool_candidates, settings, text_on=use_text, vector_on=vector_ok, text_ceiling=ceiling)
    _apply_multipliers(scored, settings, now)
    threshold = settings.min_relevance if request.min_relevance is None else request.min_relevance
    scored = [s for s in scored if s.score >= threshold and s.score > 0]
    # Text is capped at 1 (a full match); among equal scores the stronger raw text match goes first.
    scored.sort(key=lambda s: (s.score, s.text_raw, s.memory.created_at), reverse=True)
    use_mmr = settings.mmr_lambda is not None and vector_ok and embedder is not None
    # Hits (with their explained parts) are built for what can be returned: MMR reorders them all.
    hits = [s.hit() for s in (scored if use_mmr else scored[: request.limit])]
    if use_mmr:
        hits = _mmr(hits, store, settings.mmr_lambda, request.limit)
    hits = hits[: request.limit]
    passed: dict[str, float] = {}  # links expansion found the filter lets through
    if request.depth > 0 and hits:
        hits = _expand_links(store, hits, request, settings, passed)
    if hits:
        # Every candidate and every link expansion let through matched the filter, so is readable:
        # only the other links are asked about.
        readable = MemoryFilter(scopes=request.filt.scopes, include_superseded=True)
        hits = narrow_hits(store, hits, readable, candidates.keys() | passed.keys())
    if not hits:
        reason = "no memory matched the query" if not pool_candidates else f"no memory scored above {threshold:g}"
        notes.append(f"nothing relevant: {reason}")
    return RecallResult(tuple(hits), mode=mode, notes=tuple(notes))


def _text_candidates(store: MemoryStore, request: RecallRequest, pool: int, candidates: dict[str, _Candidate]) -> None:
    for rank, (memory, score) in enumerate(store.search_text(request.query, request.filt, limit=pool)):
        candidates[memory.id] = _Candidate(memory, text_raw=score, text_rank=rank)


def _query_vector(store: MemoryStore, request: RecallRequest,
                  embedder: TextEmbedder | None) -> tuple[np.ndarray | None, str | None]:
    """The query's vector (None when the vector side is off) and a note saying why it is off."""
    if embedder is None:
        return None, None
    stored = store.vector_identity()
    wanted = str(embedder.identity)
    if stored is not None and stored != wanted:
        return None, f"stored vectors are {stored} but the embedder is {wanted}: run `engram reindex`; answered from full text"
    if stored is None:
        # No vector at all, yet memories: stored before an embedder was set up (a core-only
        # install given [local], say). Only full text can find them until they are embedded.
        if store.list(request.filt, limit=1):
            return None, f"no stored memory has a vector yet: answered from full text; `engram reindex` embeds them with {wanted}"
        return None, None
    try:
        return embedder.embed_query(request.query), None
    except EngramError as exc:
        return None, f"embedding the query failed ({exc}); answered from full text"


def _start_vector_search(store: MemoryStore, request: RecallRequest, query_vector: np.ndarray, pool: int, *,
                         side_by_side: bool) -> Callable[[], list[tuple[Memory, float]]]:
    """The nearest memories, as a call that returns them. A store that can begin a vector search
    and finish it later (``start_vector_search``: SQLite walks its graph on worker threads)
    begins it here, so full text is searched meanwhile; the answer is the same."""
    start = getattr(store, "start_vector_search", None) if side_by_side else None
    if start is not None:
        finish: Callable[[], list[tuple[Memory, float]]] = start(query_vector, request.filt, limit=pool)
        return finish
    hits = store.search_vector(query_vector, request.filt, limit=pool)
    return lambda: hits


def _add_vector_candidates(hits: list[tuple[Memory, float]], candidates: dict[str, _Candidate]) -> None:
    for rank, (memory, cosine) in enumerate(hits):
        candidate = candidates.get(memory.id)
        if candidate is None:
            candidate = candidates[memory.id] = _Candidate(memory)
        candidate.cosine = cosine
        candidate.vector_rank = rank


def _complete_signals(store: MemoryStore, query: str, query_vector: np.ndarray,
                      candidates: dict[str, _Candidate]) -> None:
    """Score every candidate on the side that did not find it: the cosine of a text candidate
    from its stored vector (none stored: it stays unscored there), the text score of a vector
    candidate from ``store.text_scores``."""
    no_cosine = [c.memory.id for c in candidates.values() if c.cosine is None]
    if no_cosine:
        unit_query = query_vector / (np.linalg.norm(query_vector) or 1.0)
        for memory_id, vector in store.vectors_for(no_cosine).items():
            if vector.shape != unit_query.shape:
                continue
            candidates[memory_id].cosine = float(vector @ unit_query) / (float(np.linalg.norm(vector)) or 1.0)
    no_text = [c.memory.id for c in candidates.values() if c.text_rank is None]
    if no_text:
        for memory_id, score in store.text_scores(query, no_text).items():
            candidates[memory_id].text_raw = score


@dataclass(slots=True)
class _Scored:
    """A candidate's score while ranking; becomes a Hit only if it can be returned."""

    memory: Memory
    text: float
    vector: float
    fused: float
    text_raw: float = 0.0
    recency: float = 1.0
    importance: float = 1.0
    score: float = 0.0

    def hit(self) -> Hit:
        parts = ScoreParts(text=round(self.text, 6), vector=round(self.vector, 6), fused=round(self.fused, 6),
                           recency=round(self.recency, 6), importance=round(self.importance, 6))
        return Hit(self.memory, self.score, parts)


def _fuse(candidates: list[_Candidate], settings: RecallSettings, *, text_on: bool, vector_on: bool,
          text_ceiling: float | None) -> list[_Scored]:
    if not candidates:
        return []
    # Without a ceiling from the backend, the best candidate's text score is the scale.
    scale = text_ceiling or max((c.text_raw for c in candidates), default=0.0) or 1.0
    text_w, vector_w = settings.text_weight, settings.vector_weight
    if not vector_on:
        text_w, vector_w = 1.0, 0.0
    elif not text_on:
        text_w, vector_w = 0.0, 1.0
    total_w = (text_w + vector_w) or 1.0
    scored = []
    for c in candidates:
        text_norm = min(c.text_raw / scale, 1.0)
        vector_norm = max(c.cosine, 0.0) if c.cosine is not None else 0.0
        if settings.fusion == "rrf" and text_on and vector_on:
            k = settings.rrf_k
            rrf = sum(w / (k + rank + 1) for w, rank in ((text_w, c.text_rank), (vector_w, c.vector_rank))
                      if rank is not None)
            fused = rrf / (total_w / (k + 1))
        else:
            fused = (text_w * text_norm + vector_w * vector_norm) / total_w
        scored.append(_Scored(c.memory, text_norm, vector_norm, fused, c.text_raw))
    return scored


def _apply_multipliers(scored: list[_Scored], settings: RecallSettings, now: float) -> None:
    decay = math.log(2) / settings.recency_half_life_s if settings.recency_half_life_s > 0 else 0.0
    weight = settings.importance_weight
    for s in scored:
        if decay:
            # Age since the last write (PtrClaw's entry ``timestamp``, which a store refreshes), as
            # hygiene measures it: a fact updated today is fresh, however long ago its key was made.
            written = s.memory.updated_at or s.memory.created_at
            s.recency = math.exp(-decay * max(0.0, now - written))
        if weight > 0:
            s.importance = (1.0 - weight) + weight * s.memory.importance
        s.score = s.fused * s.recency * s.importance


def _mmr(hits: list[Hit], store: MemoryStore, lam: float, limit: int) -> list[Hit]:
    """Maximal marginal relevance over the candidates' vectors (re-embedded from the store)."""
    vectors = {i: v / (np.linalg.norm(v) or 1.0) for i, v in store.vectors_for([h.memory.id for h in hits]).items()}
    if not vectors:
        return hits
    chosen: list[Hit] = []
    rest = list(hits)
    while rest and len(chosen) < limit:
        def gain(hit: Hit) -> float:
            vec = vectors.get(hit.memory.id)
            if vec is None or not chosen:
                return lam * hit.score
            similarity = max(float(vec @ vectors[c.memory.id]) for c in chosen if c.memory.id in vectors)
            return lam * hit.score - (1 - lam) * similarity

        best = max(rest, key=gain)
        chosen.append(best)
        rest.remove(best)
    return chosen + rest


def _expand_links(store: MemoryStore, hits: list[Hit], request: RecallRequest, settings: RecallSettings,
                  created: dict[str, float]) -> list[Hit]:
    """Follow links ``depth`` hops, each hop adding at most ``request.limit`` neighbours (deduplicated);
    a neighbour inherits a share of its parent's score.

    Why a bound per hop, and why this one: a recall's ``limit`` is what its caller made room for
    (an agent's prompt, a page of results). Without a bound, ``limit=5, depth=1`` on a densely
    linked store brought every hit's neighbours (up to 20 each: 100 memories) and cost grew with
    the links, not with what was asked. With it, a recall returns at most ``limit * (depth + 1)``
    memories, and each hop costs two store round trips however many parents the frontier holds
    (which of their links the filter lets through, then only the rows kept).

    Which neighbours fill a hop: parents take turns in rank order, each taking its newest
    neighbour not yet taken (``take_in_turns``). Ranking by inherited score instead would hand
    every place to the best hit's neighbours (they all share its score), so one hub would crowd
    out the context of every other hit; taking turns gives each hit its nearest context, the
    best hits first when places run out. Newest first within a parent is ``neighbours``' order
    (a recent note is likelier current). The choice is made here, once, from ids and dates every
    backend answers alike (``matching_ids``, ``newest_first``), so every backend returns the same
    neighbours. ``created`` receives the links the filter lets through, with their dates."""
    budget = request.limit
    seen = {hit.memory.id for hit in hits}
    refused: set[str] = set()  # links it does not
    result = list(hits)
    frontier = list(hits)
    for _ in range(request.depth):
        if not frontier:
            break
        # A memory from the store carries all its link ids, so the store is asked only which of
        # them the filter lets through, once per hop for the whole frontier and never twice for
        # one id (in a dense graph later hops meet the same memories again).
        unknown = {i for parent in frontier for i in parent.memory.links}.difference(seen, created, refused)
        if unknown:
            passed = store.matching_ids(sorted(unknown), request.filt)
            created.update(passed)
            refused.update(unknown.difference(passed))
        parents = {parent.memory.id: parent for parent in frontier}
        # No parent can add more than the hop's budget: each offers its newest ``budget``.
        candidates = {pid: newest_first((i for i in parent.memory.links if i not in seen), created)[:budget]
                      for pid, parent in parents.items()}
        chosen = take_in_turns(list(parents), candidates, budget)
        loaded = {m.id: m for m in store.get_many([neighbour for _, neighbour in chosen])}  # only the kept rows
        next_frontier = []
        for parent_id, neighbour_id in chosen:
            neighbour = loaded.get(neighbour_id)
            if neighbour is None:  # forgotten between the two calls
                continue
            seen.add(neighbour_id)
            parent = parents[parent_id]
            score = parent.score * settings.link_factor
            hit = Hit(neighbour, score, ScoreParts(link=round(score, 6)), via=parent_id)
            result.append(hit)
            next_frontier.append(hit)
        frontier = next_frontier
    return result


def take_in_turns(parents: Sequence[str], candidates: dict[str, list[str]], budget: int) -> list[tuple[str, str]]:
    """Up to ``budget`` ``(parent, neighbour)`` pairs: parents take turns in the order given, each
    taking its first candidate not already taken, until the budget or the candidates run out.
    Returned grouped by parent (in the order given), each parent's in its candidates' order, so
    scores inherited from parents ranked best first still read best first."""
    order = list(dict.fromkeys(parents))
    taken: dict[str, str] = {}
    by_parent: dict[str, list[str]] = {parent: [] for parent in order}
    queues = [(parent, iter(candidates.get(parent, ()))) for parent in order]
    while queues and len(taken) < budget:
        still: list[tuple[str, Any]] = []
        for parent, queue in queues:
            if len(taken) >= budget:
                break
            for neighbour in queue:
                if neighbour not in taken:
                    taken[neighbour] = parent
                    by_parent[parent].append(neighbour)
                    still.append((parent, queue))
                    break
        queues = still
    return [(parent, neighbour) for parent in order for neighbour in by_parent[parent]]
