"""Everything but the memory collection: health, metrics, stats, import/export, history, audit,
and Clawless's semantic recall. History, audit and semantic recall go through ``seams``."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from fastapi import Body, Depends, Query, Request, Response
from fastapi.responses import JSONResponse

from engram.audit import AUDITED
from engram.interfaces import present, seams
from engram.interfaces.bounds import bounded_integer
from engram.interfaces.http import (
    problems,
    refs,  # noqa: F401 - registers the ``ref`` path converter
)
from engram.interfaces.http.auth import metrics_access
from engram.interfaces.http.routes_memory import Eng
from engram.interfaces.http.routing import Router
from engram.interfaces.http.schemas import MessageIn, MessagesIn, ReadinessOut, SemanticRecallIn, SummaryIn

public = Router(tags=["service"])
router = Router(prefix="/api/v1", tags=["service"])
compat = Router(tags=["clawless"])


@public.get("/healthz", summary="Liveness: no token needed")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@public.get("/readyz", summary="Readiness: 200 once start-up work is done ('degraded' if a step failed), else 503",
            responses={200: {"model": ReadinessOut, "description": "Ready, or `degraded` naming a step that failed"},
                       503: {"model": ReadinessOut, "description": "Start-up work still pending (`pending`)"}})
def readyz(request: Request) -> JSONResponse:
    status, body, headers = request.app.state.readiness.answer()
    return JSONResponse(body, status_code=status, headers=headers)


@public.get("/metrics", summary="Prometheus metrics (a token of server.metrics_agent, when the server has tokens)",
            response_class=Response, dependencies=[Depends(metrics_access)],
            responses={200: {"description": "Prometheus text format",
                             "content": {"text/plain": {"schema": {"type": "string"}}}},
                       **problems.responses(401, 403)})
def metrics(request: Request) -> Response:
    return Response(request.app.state.metrics.render(), media_type="text/plain; version=0.0.4")


HistoryLimit = bounded_integer(1, 1000)  # a conversation's recent messages


@router.get("/stats", summary="What this agent sees: its memories by category, type and scope, their links and vectors")
def stats(eng: Eng) -> dict[str, Any]:
    return present.agent_stats_dict(eng.visible_stats())


@router.get("/export", summary="Snapshot of every memory this agent sees (no embeddings)")
def export(eng: Eng, scope: Literal["global", "agent", "session"] | None = None) -> Response:
    return Response(eng.export_snapshot(scope=scope), media_type="application/json")


@router.post("/import", summary="Import a snapshot (engram's or PtrClaw's); all or nothing")
def import_(eng: Eng, document: Annotated[dict[str, Any] | list[Any], Body(...)]) -> dict[str, Any]:
    result = eng.import_snapshot(json.dumps(document))
    return {"imported": result.imported, "skipped": result.skipped, "warnings": list(result.warnings)}


# --- history (the conversation history store) -----------------------------------------------
# ``{conversation:ref}``: the key as one percent-encoded segment (``web:a%2Fb``), see ``refs``.
# The history store names it ``key``; an error names the path's ``conversation`` (``present.wire_names``).
CONVERSATION_WIRE = {"key": "conversation"}
@router.get("/history/{conversation:ref}", summary="Recent messages of a conversation")
def history_recent(eng: Eng, conversation: str, limit: Annotated[HistoryLimit, Query()] = 50) -> dict[str, Any]:
    with present.wire_names(CONVERSATION_WIRE):
        messages = seams.history(eng).recent(conversation, limit)
    return {"conversation": conversation, "messages": [_plain(m) for m in messages]}


@router.post("/history/{conversation:ref}", status_code=201,
             summary="Append a message to a conversation (stored: false when history is off)")
def history_append(eng: Eng, conversation: str, body: MessageIn) -> dict[str, Any]:
    store = seams.history(eng)
    calls = None if body.tool_calls is None else [call.model_dump() for call in body.tool_calls]
    with present.wire_names(CONVERSATION_WIRE):
        done = store.append_reported(conversation, body.role, body.content, tool_calls=calls,
                                     tool_call_id=body.tool_call_id, metadata=body.metadata)
    return {"conversation": conversation, "appended": _plain(done.messages[0]), "stored": done.stored,
            "warnings": list(done.warnings)}


@router.post("/history/{conversation:ref}/messages", status_code=201,
             summary="Append several messages to a conversation, all or none (stored: false when history is off)")
def history_append_many(eng: Eng, conversation: str, body: MessagesIn) -> dict[str, Any]:
    store = seams.history(eng)
    with present.wire_names(CONVERSATION_WIRE):
        done = store.append_many_reported(conversation, [m.model_dump(exclude_none=True) for m in body.messages])
    return {"conversation": conversation, "appended": [_plain(m) for m in done.messages], "stored": done.stored,
            "warnings": list(done.warnings)}


@router.get("/history/{conversation:ref}/summary", summary="The summary that replaced compacted messages")
def history_summary(eng: Eng, conversation: str) -> dict[str, Any]:
    with present.wire_names(CONVERSATION_WIRE):
        summary = seams.history(eng).summary(conversation)
    return {"conversation": conversation, "summary": summary}


@router.put("/history/{conversation:ref}/summary", summary="Replace a conversation's summary (sclaw's SetSummary)")
def history_set_summary(eng: Eng, conversation: str, body: SummaryIn) -> dict[str, Any]:
    history = seams.history(eng)
    with present.wire_names(CONVERSATION_WIRE):
        warnings = history.set_summary(conversation, body.summary)
        summary = history.summary(conversation)
    return {"conversation": conversation, "summary": summary, "warnings": list(warnings)}


@router.delete("/history/{conversation:ref}/summary", summary="Remove a conversation's summary (its messages stay)")
def history_clear_summary(eng: Eng, conversation: str) -> dict[str, Any]:
    with present.wire_names(CONVERSATION_WIRE):
        seams.history(eng).clear_summary(conversation)
    return {"conversation": conversation, "summary": ""}


@router.delete("/history/{conversation:ref}", summary="Delete a conversation's history")
def history_purge(eng: Eng, conversation: str) -> dict[str, Any]:
    with present.wire_names(CONVERSATION_WIRE):
        purged = seams.history(eng).purge(conversation)
    return {"conversation": conversation, "purged": purged}


# --- audit trail -----------------------------------------------------------------------------
AuditLimit = bounded_integer(1, 500)
_TIME = "epoch seconds, ISO 8601 (2026-04-12, 2026-04-12T09:30+02:00) or a phrase: yesterday, last week, 2 days ago, 3 hours ago"


@router.get("/audit", summary="Recent audit entries of this agent, newest first, optionally narrowed")
def audit(
    eng: Eng,
    limit: Annotated[AuditLimit, Query()] = 50,
    # The engine's actions (``audit.AUDITED``, checked there): a list of its own here left out
    # ``recalled``, which the answer shows but the filter refused.
    action: Annotated[str | None, Query(json_schema_extra={"enum": list(AUDITED)})] = None,
    since: Annotated[str | None, Query(max_length=200, description=_TIME)] = None,
    until: Annotated[str | None, Query(max_length=200, description=_TIME)] = None,
    memory: Annotated[str | None, Query(max_length=300, description="id or key")] = None,
) -> dict[str, Any]:
    entries = seams.audit(eng).recent(limit=limit, action=action, since=since, until=until, memory=memory)
    return {"entries": [_plain(e) for e in entries]}


# --- Clawless --------------------------------------------------------------------------------
@compat.post("/api/memory/semantic-recall", summary="Clawless: matching conversation entries and a recap block")
def semantic_recall(eng: Eng, body: SemanticRecallIn) -> dict[str, Any]:
    return _plain(seams.semantic_recall(eng, body.input, body.chatId, body.topK))


def _plain(value: Any) -> Any:
    """Records from other parts as JSON-ready values (dataclasses, pydantic models, dicts)."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if hasattr(value, "__dataclass_fields__"):
        from dataclasses import asdict

        return asdict(value)
    return value



