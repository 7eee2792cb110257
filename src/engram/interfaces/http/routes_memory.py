"""``/api/v1/memory``: list, search, PHP entity's per-type lists, CRUD, forget, links, versions."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Annotated, Any, Literal

from fastapi import Depends, Query

from engram.engine import Engram, Filters, one_selector
from engram.errors import ValidationError
from engram.interfaces import present
from engram.interfaces.bounds import LinkDepth, ListLimit, ListOffset, RecallLimit
from engram.interfaces.http import (
    problems,
    refs,  # noqa: F401 - registers the ``ref`` path converter
)
from engram.interfaces.http.auth import agent_engine, agent_engine_opener
from engram.interfaces.http.routing import Router
from engram.interfaces.http.schemas import (
    ForgetIn,
    FromZeroToOne,
    LinkIn,
    MemoryIn,
    MemoryPatch,
    MemoryReplace,
    SupersedeIn,
)
from engram.model import MAX_REASON_CHARS, Memory

router = Router(prefix="/api/v1/memory", tags=["memory"])

# PHP entity's routes name types in the plural.
TYPE_ROUTES = {"experiences": "experience", "learned": "learned", "conversations": "conversation",
               "social": "social", "decisions": "decision", "achievements": "achievement"}


Eng = Annotated[Engram, Depends(agent_engine)]
EngOpener = Annotated[Callable[..., Engram], Depends(agent_engine_opener)]
Limit = Annotated[ListLimit, Query()]  # the engine's, as every door's list
Offset = Annotated[ListOffset, Query()]
Order = Literal["recent", "oldest", "importance", "accessed"]
# Time filters: ISO 8601 or epoch seconds, read by the engine (which names the field when it cannot).
AsOf = Annotated[str | None, Query(max_length=64, description="Only facts valid at this time.")]
When = Annotated[str | None, Query(max_length=200, description="yesterday, last week, in March, since Monday, ...")]
KnownAt = Annotated[str | None, Query(max_length=64, description="As recorded at this time, with the contents of then.")]
Since = Annotated[str | None, Query(max_length=200, description="Created at or after: ISO 8601, epoch seconds or a "
                                                               "phrase (yesterday, last week).")]
Until = Annotated[str | None, Query(max_length=200, description="Created at or before: as since (a day or a phrase "
                                                               "counts whole).")]
# Metadata conditions as JSON text (a query string has no objects), read by the engine (engram.where).
Where = Annotated[str | None, Query(max_length=8000, description=(
    'Metadata conditions as JSON, mem0\'s filter language (types kept): {"priority": {"gte": 2}}; '
    'eq ne gt gte lt lte in nin contains icontains, "*" (present), AND/OR/NOT.'))]
# Its length is the engine's to check (``model.parse_reason``), as for a body's reason; the schema shows it.
Reason = Annotated[str | None, Query(description="Why, kept in the audit trail.",
                                     json_schema_extra={"maxLength": MAX_REASON_CHARS})]
Erase = Annotated[bool, Query(description="Also erase it: its audit rows keep only its id, times and scope.")]
# The engine's bound for a memory's links and those it supersedes (``Engram.neighbours``/``supersedes``
# check it), so every door takes the same limits.
LinkLimit = Annotated[ListLimit, Query()]
# Routes that name a memory (by id or key, or a link's other end) answer 404 when none has it.
NAMED = problems.responses(404)


# The query parameters named otherwise than the engine's fields (engine -> wire): ``?tag=`` is
# ``tags``, ``?entity=`` ``related_entity``; every other filter has the engine's name. The one map
# both ways: ``_filters`` reads the parameters by it, ``present.wire_names`` names an error's field
# by it, so the client reads the parameter it sent.
FILTER_WIRE = {"tags": "tag", "related_entity": "entity"}
_FILTER_FIELD = {wire: engine for engine, wire in FILTER_WIRE.items()}
# Recall's text is ``?q=`` (search, graph).
QUERY_WIRE = {"query": "q"}


def _filters(**wire: Any) -> Filters:
    """The list/recall filters the client sent, by their wire names, as the engine's ``Filters``."""
    return Filters(**{_FILTER_FIELD.get(name, name): value for name, value in wire.items()})


@router.get("", summary="List memories (PHP: GET /api/v1/memory?type=&limit=)")
def list_memories(
    eng: Eng,
    type: str | None = None,
    category: str | None = None,
    layer: str | None = None,
    tag: Annotated[list[str] | None, Query()] = None,
    entity: str | None = None,
    scope: Literal["global", "agent", "session"] | None = None,
    order: Order = "recent",
    limit: Limit = 50,
    offset: Offset = 0,
    as_of: AsOf = None,
    known_at: KnownAt = None,
    since: Since = None,
    until: Until = None,
    where: Where = None,
) -> dict[str, Any]:
    filters = _filters(category=category, type=type, layer=layer, tag=tag, entity=entity, as_of=as_of,
                       known_at=known_at, since=since, until=until, where=where)
    with present.wire_names(FILTER_WIRE):
        items = eng.list(filters, order=order, limit=limit, offset=offset, scope=scope)
        total = eng.count(filters, scope=scope)
    return {"memories": [present.memory_dict(m) for m in items], "total": total, "limit": limit, "offset": offset}


@router.get("/search", summary="Recall: the memories most relevant to q, with each score's parts")
def search(
    eng: Eng,
    q: Annotated[str, Query(min_length=1, max_length=2000)],
    limit: Annotated[RecallLimit | None, Query(description="default: the recall.limit setting")] = None,
    type: str | None = None,
    category: str | None = None,
    layer: str | None = None,
    tag: Annotated[list[str] | None, Query()] = None,
    entity: str | None = None,
    min_relevance: Annotated[FromZeroToOne | None, Query()] = None,
    depth: Annotated[LinkDepth, Query(description="Link hops to follow; each adds at most `limit` linked memories.")] = 0,
    mode: Literal["auto", "hybrid", "text", "vector"] = "auto",
    touch: Annotated[bool | None, Query(description="false: a look, not a use (no access mark, no strengthening); "
                                                    "default: recall.touch_on_recall")] = None,
    when: When = None,
    as_of: AsOf = None,
    known_at: KnownAt = None,
    since: Since = None,
    until: Until = None,
    where: Where = None,
    scope: Literal["global", "agent", "session"] | None = None,
) -> dict[str, Any]:
    filters = _filters(category=category, type=type, layer=layer, tag=tag, entity=entity, as_of=as_of,
                       known_at=known_at, since=since, until=until, where=where)
    with present.wire_names({**FILTER_WIRE, **QUERY_WIRE}):
        result = eng.recall(q, limit=limit, filters=filters, min_relevance=min_relevance, depth=depth, mode=mode,
                            touch=touch, when=when, scope=scope)
    return present.recall_dict(result)


def _type_route(plural: str, type_: str) -> None:
    def by_type(eng: Eng, limit: Limit = 50, offset: Offset = 0) -> dict[str, Any]:
        items = eng.list(Filters(type=type_), limit=limit, offset=offset)
        return {"type": type_, "memories": [present.memory_dict(m) for m in items]}

    router.add_api_route(f"/{plural}", by_type, methods=["GET"], summary=f"Memories of type {type_}",
                         operation_id=f"list_{plural}")


for _plural, _type in TYPE_ROUTES.items():
    _type_route(_plural, _type)


@router.post("", status_code=201, summary="Store a memory (upsert by key)", responses=NAMED)
async def create(eng: Eng, body: MemoryIn) -> dict[str, Any]:
    # Awaited on the event loop, not run on a worker thread: concurrent stores wait in the write
    # queue as futures, and a pooled thread leads each batch (``Engram.remember_soon``).
    result = await asyncio.wrap_future(eng.remember_soon(
        body.content, key=body.key, category=body.category, type=body.type, layer=body.layer, tags=body.tags,
        metadata=body.metadata, importance=body.importance, related_entity=body.related_entity, source=body.source,
        scope=body.scope, links=body.links, search_context=body.search_context, valid_from=body.valid_from,
        valid_until=body.valid_until))
    return present.write_dict(result)


@router.post("/forget", summary="Forget by query, tag or age, with a reason")
def forget_many(open_engine: EngOpener, body: ForgetIn) -> dict[str, Any]:
    one_selector("forget", {"query": body.query, "tag": body.tag, "older_than_days": body.older_than_days})
    # A dry run only reads: it makes no database for an agent with none yet (per_agent_databases).
    eng = open_engine(reading=body.dry_run)
    removed = eng.forget(query=body.query, tag=body.tag,
                         older_than_s=None if body.older_than_days is None else body.older_than_days * present.DAY_S,
                         reason=body.reason, dry_run=body.dry_run, erase=body.erase, scope=body.scope)
    answer = {"forgotten": [present.memory_dict(m) for m in removed], "count": len(removed), "dry_run": body.dry_run}
    return present.forget_answer(answer, removed, erase=body.erase, dry_run=body.dry_run)


# ``{ref:ref}``: one path segment, percent-encoded (``notes%2Ftoday``), see ``refs``; every route
# here has a twin under ``/by-key?key=`` (``routes_by_key``) that reaches any key.
@router.get("/{ref:ref}", summary="One memory by id or key (percent-encoded; any key: /by-key?key=)", responses=NAMED)
def read(eng: Eng, ref: str) -> dict[str, Any]:
    return present.memory_dict(eng.get(ref))


def patch_memory(eng: Engram, ref: str | Memory, body: MemoryPatch) -> dict[str, Any]:
    """JSON null clears a field (RFC 7396's merge patch); a field not sent is kept."""
    sent = body.model_dump(exclude_unset=True)
    cleared = [name for name, value in sent.items() if value is None]
    try:
        result = eng.update(ref, **{name: value for name, value in sent.items() if value is not None}, clear=cleared)
    except ValidationError as exc:
        # Here a clear is a field sent as null: named as the client wrote it (the field the error
        # ``names``), not as the engine's argument.
        if exc.field != "clear" or exc.names not in cleared:
            raise
        raise ValidationError(exc.names, exc.problem, exc.allowed) from None
    return present.write_dict(result)


def replace_memory(eng: Engram, ref: str | Memory, body: MemoryReplace) -> dict[str, Any]:
    return present.write_dict(eng.replace(ref, **body.model_dump()))


def forget_one(eng: Engram, ref: str | Memory, reason: str | None, erase: bool = False) -> dict[str, Any]:
    removed = eng.forget(ref, reason=reason, erase=erase)
    answer = {"forgotten": [m.id for m in removed], "count": len(removed), "reason": reason}
    return present.forget_answer(answer, removed, erase=erase, dry_run=False)


def versions_of(eng: Engram, ref: str | Memory) -> dict[str, Any]:
    return present.versions_dict(eng.versions(ref))


def links_of(eng: Engram, memory: Memory, limit: int) -> dict[str, Any]:
    return {"memory": present.memory_dict(memory),
            "neighbours": [present.memory_dict(m) for m in eng.neighbours(memory, limit=limit)]}


def supersedes_of(eng: Engram, memory: Memory, limit: int) -> dict[str, Any]:
    return present.supersedes_dict(memory, eng.supersedes(memory, limit=limit))


def link_to(eng: Engram, memory: Memory, body: LinkIn) -> dict[str, Any]:
    other = eng.named(body.to, body.to_key, field="link", names=("to", "to_key"))
    return {"linked": [memory.id, other.id], "changed": eng.link(memory, other)}


def supersede_by(eng: Engram, memory: Memory, body: SupersedeIn) -> dict[str, Any]:
    successor = eng.named(body.by, body.by_key, field="supersede", names=("by", "by_key"))
    return present.memory_dict(eng.supersede(memory, successor))


@router.patch("/{ref:ref}", summary="Change the fields sent (null clears one); the old content is kept in its versions",
              responses=NAMED)
def patch(eng: Eng, ref: str, body: MemoryPatch) -> dict[str, Any]:
    return patch_memory(eng, ref, body)


@router.put("/{ref:ref}", summary="Replace a memory: fields not sent return to their defaults (content required)",
            responses=NAMED)
def replace(eng: Eng, ref: str, body: MemoryReplace) -> dict[str, Any]:
    return replace_memory(eng, ref, body)


@router.delete("/{ref:ref}", summary="Forget one memory, with a reason", responses=NAMED)
def delete(eng: Eng, ref: str, reason: Reason = None, erase: Erase = False) -> dict[str, Any]:
    return forget_one(eng, ref, reason, erase)


@router.post("/{ref:ref}/supersede", summary="Mark a memory superseded (kept; its valid time closed where the new one begins)",
             responses=NAMED)
def supersede(eng: Eng, ref: str, body: SupersedeIn) -> dict[str, Any]:
    return supersede_by(eng, eng.get(ref), body)


@router.get("/{ref:ref}/versions", summary="Earlier contents of a memory, oldest first", responses=NAMED)
def versions(eng: Eng, ref: str) -> dict[str, Any]:
    return versions_of(eng, ref)


@router.get("/{ref:ref}/supersedes", summary="The memory and those it supersedes (its superseded_by is the other way)",
            responses=NAMED)
def supersedes(eng: Eng, ref: str, limit: LinkLimit = 50) -> dict[str, Any]:
    return supersedes_of(eng, eng.get(ref), limit)


@router.get("/{ref:ref}/links", summary="The memory and its linked neighbours", responses=NAMED)
def links(eng: Eng, ref: str, limit: LinkLimit = 50) -> dict[str, Any]:
    return links_of(eng, eng.get(ref), limit)


@router.post("/{ref:ref}/links", status_code=201, summary="Link two memories (both ways)", responses=NAMED)
def add_link(eng: Eng, ref: str, body: LinkIn) -> dict[str, Any]:
    return link_to(eng, eng.get(ref), body)


@router.delete("/{ref:ref}/links/{other:ref}", summary="Remove the link between two memories", responses=NAMED)
def remove_link(eng: Eng, ref: str, other: str) -> dict[str, Any]:
    # Each end resolved here, as add_link does, so an error names the path's ``ref`` and ``other``
    # (``eng.unlink(ref, other)`` named them by the engine's arguments, ``a`` and ``b``).
    memory = eng.get(ref)
    return {"unlinked": eng.unlink(memory, eng.named(other, None, field="unlink", names=("other", "other_key")))}
