"""What the web page reads beyond the memory collection: the link graph, the dashboard's numbers
and the list of conversations. Read-only: nothing here changes a memory (the graph's query
neighbourhood recalls with ``touch=False``, so looking is not using)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query

from engram.interfaces import present, seams
from engram.interfaces.bounds import LinkDepth, bounded_integer
from engram.interfaces.http.routes_memory import QUERY_WIRE, Eng
from engram.interfaces.http.routing import Router
from engram.model import MAX_LIST_LIMIT, Memory

router = Router(prefix="/api/v1", tags=["page"])


def _graph(memories: list[Memory], *, total: int, hits: dict[str, float] | None = None) -> dict[str, Any]:
    """Nodes and the links among them (each link once); ``degree`` counts links inside the graph."""
    ids = {m.id for m in memories}
    edges = sorted({(min(m.id, o), max(m.id, o)) for m in memories for o in m.links if o in ids})
    degree: dict[str, int] = {}
    for a, b in edges:
        degree[a] = degree.get(a, 0) + 1
        degree[b] = degree.get(b, 0) + 1
    nodes = [{"id": m.id, "key": m.key, "content": m.content[:200], "category": m.category.value, "type": m.type,
              "importance": m.importance, "scope": str(m.scope), "degree": degree.get(m.id, 0),
              **({"score": round(hits[m.id], 4)} if hits and m.id in hits else {})} for m in memories]
    return {"nodes": nodes, "edges": [{"source": a, "target": b} for a, b in edges], "total": total,
            "truncated": total > len(memories)}


GraphLimit = bounded_integer(1, 5000)  # the page's graph: its most important memories

@router.get("/graph", summary="The link graph: every visible memory (most important first), or a query's neighbourhood")
def graph(
    eng: Eng,
    q: Annotated[str | None, Query(max_length=2000)] = None,
    limit: Annotated[GraphLimit, Query()] = 3000,
    depth: Annotated[LinkDepth, Query()] = 2,
) -> dict[str, Any]:
    if q is None or not q.strip():
        memories: list[Memory] = []
        while len(memories) < limit:  # the engine pages at MAX_LIST_LIMIT
            page = eng.list(order="importance", limit=min(limit - len(memories), MAX_LIST_LIMIT), offset=len(memories))
            memories += page
            if len(page) < MAX_LIST_LIMIT:
                break
        return _graph(memories, total=eng.count())
    with present.wire_names(QUERY_WIRE):
        result = eng.recall(q, limit=min(limit, 50), depth=depth, touch=False)
    found = {h.memory.id: h.memory for h in result.hits}
    for hit in list(result.hits)[:20]:  # one more ring of neighbours around the best hits
        # Superseded ones left out, as from the whole graph (eng.list) and from recall.
        for neighbour in eng.neighbours(hit.memory, limit=20, include_superseded=False):  # (the hit as found: not read again)
            found.setdefault(neighbour.id, neighbour)
            if len(found) >= limit:
                break
    memories = list(found.values())[:limit]
    return _graph(memories, total=len(found), hits={h.memory.id: h.score for h in result.hits if h.via is None})


@router.get("/dashboard", summary="This agent's figures (as /stats) with the server's recall and embedding latency")
def dashboard(eng: Eng) -> dict[str, Any]:
    # The latency samples are the server's, every agent's calls together (``engram.metrics``): their
    # percentiles say how fast the server answers, but how many there are would tell an agent how
    # much the other agents recall and embed, so no count is shown (``engram stats`` shows it to
    # whoever holds the database).
    latency = {s.name: {"p50_ms": s.p50_ms, "p95_ms": s.p95_ms, "p99_ms": s.p99_ms, "max_ms": s.max_ms}
               for s in eng.metrics.summary()}
    return {**present.agent_stats_dict(eng.visible_stats()), "latency": latency, "latency_of": "server"}


@router.get("/history", summary="The conversations this agent may browse, with how many messages each holds")
def conversations(eng: Eng) -> dict[str, Any]:
    return {"conversations": [{"conversation": key, "messages": n} for key, n in seams.conversations(eng)]}
