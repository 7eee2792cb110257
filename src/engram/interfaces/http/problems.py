"""The one place errors become RFC 7807 problem details (``application/problem+json``).

Every error response has ``type``, ``title``, ``status`` and ``detail``; input errors add
``field`` (the field at fault), ``allowed`` (what would be accepted) and ``errors`` (each fault,
whether the route's schema or the engine refused it). The same shape is what
/openapi.json publishes for each route's errors (``PROBLEM_SCHEMA``, ``responses``, ``document``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from engram.errors import (
    ConfigError,
    EmbeddingError,
    EngramError,
    MissingDependencyError,
    NotFoundError,
    ProviderError,
    StorageError,
    ValidationError,
    refusal,
)
from engram.interfaces.present import field_name, served_text

log = logging.getLogger("engram.http")
MEDIA_TYPE = "application/problem+json"
JSON_BODY = "a JSON object in UTF-8, each name given once"

# Most specific first.
_STATUS: list[tuple[type[Exception], int, str]] = [
    (ValidationError, 422, "invalid-input"),
    (NotFoundError, 404, "not-found"),
    (MissingDependencyError, 501, "missing-dependency"),
    (ConfigError, 500, "configuration"),
    (StorageError, 503, "storage-unavailable"),
    (EmbeddingError, 503, "embedding-unavailable"),
    (ProviderError, 503, "provider-unavailable"),
]


# The shape of every error body, published in /openapi.json as ``Problem`` (``document``) and
# referenced by each API route's error responses (``responses``), so a client's generated types
# and a schema-checking test read what the server sends.
PROBLEM_SCHEMA: dict[str, Any] = {
    "title": "Problem",
    "type": "object",
    "description": "RFC 7807 problem details. Input errors add `field` (the field at fault) and, where it can be "
                   "said, `allowed`; every 422 lists its faults in `errors` (all of them when the API's schema "
                   "refuses the request, else the one named in `field`).",
    "required": ["type", "title", "status", "detail"],
    "properties": {
        "type": {"type": "string", "description": "https://engram.dev/problems/<slug>"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "field": {"type": "string", "description": "The field at fault (`body` for the body as a whole)."},
        "allowed": {"type": "string", "description": "What would be accepted."},
        "errors": {"type": "array", "items": {
            "type": "object", "required": ["field", "problem"],
            "properties": {"field": {"type": "string"}, "problem": {"type": "string"}}}},
        "ref": {"type": "string", "description": "The id or key that names no memory (404)."},
    },
}
_WHY = {400: "Malformed JSON: the body is not a JSON object in UTF-8", 401: "No valid bearer token",
        403: "The token's agent may not read this",
        404: "No memory of this agent has that id or key", 413: "The request body is over the server's limit",
        422: "Invalid input: `field` names it, `allowed` says what would be accepted",
        503: "The store, the embedding model or a provider is unavailable"}


def responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI responses for these error statuses, each a ``Problem`` as ``application/problem+json``."""
    ref = {"schema": {"$ref": "#/components/schemas/Problem"}}
    return {status: {"description": _WHY[status], "content": {MEDIA_TYPE: ref}} for status in statuses}


def document(app: FastAPI) -> None:
    """Publish the ``Problem`` schema in ``app``'s OpenAPI document (FastAPI adds only pydantic
    models), and make every 422 it documents one: FastAPI adds its own 422 (``{"detail": [...]}``
    as application/json) to any route with a parameter, which the handlers here never send."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = build()
            for operation in (op for item in schema.get("paths", {}).values() for op in item.values()):
                if "422" in operation.get("responses", {}):
                    operation["responses"]["422"] = responses(422)[422]
            schemas = schema.setdefault("components", {}).setdefault("schemas", {})
            for unused in ("HTTPValidationError", "ValidationError"):
                schemas.pop(unused, None)
            schemas["Problem"] = PROBLEM_SCHEMA
        return app.openapi_schema  # type: ignore[return-value]

    app.openapi = openapi  # type: ignore[method-assign]


def problem(status: int, slug: str, title: str, detail: str, *, headers: Mapping[str, str] | None = None,
            **extra: Any) -> JSONResponse:
    body = {"type": f"https://engram.dev/problems/{slug}", "title": title, "status": status, "detail": detail}
    body.update({k: v for k, v in extra.items() if v is not None})
    headers = dict(headers or {})
    if status == 401:
        headers.setdefault("WWW-Authenticate", "Bearer")
    return JSONResponse(body, status_code=status, media_type=MEDIA_TYPE, headers=headers or None)


def from_exception(exc: Exception) -> JSONResponse:
    for kind, status, slug in _STATUS:
        if isinstance(exc, kind):
            if isinstance(exc, ValidationError):
                # ``errors`` as the schema's refusals list theirs (``install``), so every 422 reads
                # alike: ``?layer=top`` (refused by the engine) as ``?order=sideways`` (by the schema).
                return problem(status, slug, "Invalid input", str(exc), field=exc.field, allowed=exc.allowed,
                               errors=[{"field": exc.field, "problem": exc.reason}])
            if isinstance(exc, NotFoundError):
                return problem(status, slug, "Not found", str(exc), ref=exc.ref)
            # An error of the server's state: the operator's log has its whole text, the client
            # what failed without the server's paths (``present.served_text``).
            log.error("engram error on request: %s", exc)
            return problem(status, slug, slug.replace("-", " ").capitalize(), served_text(exc))
    log.exception("unexpected error", exc_info=exc)
    return problem(500, "internal", "Internal error", f"{type(exc).__name__}")


def _unknown(error: Mapping[str, Any]) -> tuple[str, ...]:
    """The name a body refused as not one of its fields (``schemas.Body``), to add to its location."""
    name = (error.get("ctx") or {}).get("field") if error.get("type") == "unknown_field" else None
    return (str(name),) if name is not None else ()


_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def allowed_methods(request: Request) -> str:
    """The methods the request's path takes, for a 405's ``Allow`` (RFC 9110 requires it): each
    method a route would take the path with. Starlette's own header names only the first route
    with that path (``GET`` for ``PUT /api/v1/memory``, which takes ``POST`` too), and the handler
    used to drop even that."""
    routes = request.app.router.routes
    allowed = [method for method in _METHODS
               if any(route.matches({**request.scope, "method": method})[0] is Match.FULL for route in routes)]
    return ", ".join(allowed)


def install(app: FastAPI) -> None:
    """Register the handlers on ``app``."""

    @app.exception_handler(EngramError)
    async def _engram(_: Request, exc: EngramError) -> JSONResponse:
        return from_exception(exc)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        first = errors[0] if errors else {"loc": ("body",), "msg": "invalid request", "type": ""}
        if first.get("type") == "json_invalid":
            # The parser's reason is in ctx (msg is FastAPI's constant "JSON decode error").
            reason = (first.get("ctx") or {}).get("error") or first.get("msg")
            loc = first.get("loc", ())
            if len(loc) > 1 and isinstance(loc[1], int) and loc[1] > 0:
                reason = f"{reason} at character {loc[1]}"
            return problem(400, "malformed-json", "Malformed JSON", f"the body is not valid JSON: {reason}",
                           field="body", allowed=JSON_BODY)
        # Each in the engine's words (``errors.refusal``): a category the schema refuses reads as the
        # library's refusal of it, with what is allowed.
        # A body's unknown field is refused by the body (``schemas.Body``), its name in ``ctx``.
        refused = [refusal(e, field_name((*e.get("loc", ()), *_unknown(e)), located=True)) for e in errors or [first]]
        details = [{"field": r.field, "problem": r.reason} for r in refused]
        return problem(422, "invalid-input", "Invalid input", str(refused[0]), field=refused[0].field,
                       allowed=refused[0].allowed, errors=details)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        slug = {401: "unauthorized", 403: "forbidden", 404: "not-found", 405: "method-not-allowed",
                413: "too-large"}.get(exc.status_code, "http-error")
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            headers["Allow"] = allowed_methods(request)
        return problem(exc.status_code, slug, slug.replace("-", " ").capitalize(), str(exc.detail),
                       headers=headers)

    @app.exception_handler(Exception)
    async def _other(_: Request, exc: Exception) -> JSONResponse:
        return from_exception(exc)
