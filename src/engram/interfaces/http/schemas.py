"""Request bodies of the HTTP API (validated by FastAPI; engram validates the values again).

Every body is a ``Body``: an unknown field is refused, and so is a value of the wrong JSON type,
never converted (pydantic's default would read ``"dry_run": "yes"`` as true, ``"5"`` as 5 and
``true`` as 1.0), as the library (``engram.model``) and MCP refuse them; the problem names the field
and the type allowed (``dry_run: Input should be a valid boolean``).

A JSON ``null`` for a field that has a default means "not given", as MCP and the chat agent's tools
read it (``model.given_arguments``): ``"category": null`` stores in ``knowledge``. A required field
sent as null is still refused naming it; a field whose default is null already took it, so PATCH's
null, which clears a field (RFC 7396), keeps its meaning.

/openapi.json (OpenAPI 3.1, JSON Schema) says so field by field, as ``{"anyOf": [..., {"type":
"null"}]}``: a field whose null is taken (its default, or the value null itself) allows null, and
one whose null is refused does not (``_nulls_as_read``, ``NOT_NULL``), so a client generated from
the document, or a schema-driven test, reads what the server does. It said ``"category": {"type":
"string"}`` for a field the server takes null for, and allowed null for PATCH's ``content``,
which the server refuses."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictFloat,
    StrictInt,
    model_validator,
)
from pydantic_core import PydanticCustomError

from engram.errors import ValidationError
from engram.history.settings import MAX_RECAP_TOP_K
from engram.interfaces.bounds import bounded_integer, bounded_number
from engram.model import MAX_REASON_CHARS, given_arguments, usable_text

ScopeName = Literal["agent", "session", "global"]


def _usable(value: str) -> str:
    """``model.usable_text``'s rule (no NUL, no lone surrogate) for a body that reaches no engram
    validation under its own wire name: the problem then names the body's field, not the engine's."""
    try:
        return usable_text("", value)
    except ValidationError as exc:
        raise PydanticCustomError("unusable_text", "{problem} (allowed: {allowed})",
                                  {"problem": exc.problem, "allowed": exc.allowed}) from None


def _not_blank(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("blank", "must not be empty or only spaces (allowed: some text)")
    return value


UsableText = Annotated[str, AfterValidator(_usable)]
SearchText = Annotated[UsableText, AfterValidator(_not_blank)]


def _whole(value: Any) -> Any:
    """A whole number sent as a float (5.0) as the int it is: JSON Schema's "integer" takes it, and
    so do the library (``model.parse_integer``) and MCP; 5.5, "5" and true are still refused."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


WholeNumber = Annotated[StrictInt, BeforeValidator(_whole)]


# Importance and relevance: 0 to 1, the range of recall's scores.
FromZeroToOne = bounded_number(0, 1)
ZeroOrMore = bounded_number(0)
# How many earlier exchanges semantic recall returns: as far as the history.recap_top_k setting goes.
RecapTopK = bounded_integer(1, MAX_RECAP_TOP_K, WholeNumber)


# What a property's schema says about it rather than about its values: kept beside an ``anyOf``.
_ABOUT = ("title", "description", "default", "examples", "deprecated")
_NULL = {"type": "null"}


def _without_null(schema: dict[str, Any]) -> None:
    """A property's schema without its null branch: for a PATCH field whose null the server
    refuses (``MemoryPatch``), though its Python type is optional to tell "not sent" apart."""
    branches = [branch for branch in schema.get("anyOf", ()) if branch != _NULL]
    if "anyOf" in schema and len(branches) == 1:
        del schema["anyOf"]
        schema.update(branches[0])
    elif "anyOf" in schema:
        schema["anyOf"] = branches


NOT_NULL: dict[str, Any] = {"json_schema_extra": _without_null}


def _nulls_as_read(schema: dict[str, Any], model: type[BaseModel]) -> None:
    """A body's schema allowing null for every field whose null ``_null_is_not_given`` takes as
    not given (not required, a default other than None), as the server reads it."""
    properties = schema.get("properties", {})
    for name, field in model.model_fields.items():
        wire = field.alias or name
        described = properties.get(wire)
        if described is None or field.is_required() or field.get_default(call_default_factory=True) is None:
            continue
        if "anyOf" in described:
            if _NULL not in described["anyOf"]:
                described["anyOf"].append(_NULL)
            continue
        about = {key: described.pop(key) for key in _ABOUT if key in described}
        properties[wire] = {"anyOf": [described, _NULL], **about}


class Body(BaseModel):
    """A request body: known fields only, each of its own JSON type (an int still passes as a float)."""

    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra=_nulls_as_read)

    @model_validator(mode="before")
    @classmethod
    def _null_is_not_given(cls, data: Any) -> Any:
        """The body without the keys sent as null whose field has a non-null default, so the default
        applies (``model.given_arguments``, the rule of MCP's tools). A required field's null is kept,
        to be refused naming it, and so is the null of a field whose default is None: it already
        means that default, and PATCH tells a null sent (clear) from a field left out (keep).

        A name the body does not take is refused first, null or not, with the names it does take:
        dropped with the nulls, PATCH's misspelt ``{"metdata": null}`` answered "unchanged" and
        cleared nothing, and pydantic's own refusal ("Extra inputs are not permitted") said what
        was wrong but not what was allowed. ``field`` in the error's context names the key under
        the body's location (``problems`` joins them: ``messages[2].bogus``)."""
        if not isinstance(data, dict):
            return data
        names = [field.alias or name for name, field in cls.model_fields.items()]
        unknown = next((name for name in data if name not in names), None)
        if unknown is not None:
            # A name holding a lone surrogate ("\\ud800" in the body) spelled as JSON escapes it:
            # pydantic cannot carry one in an error, nor the response encode it.
            raise PydanticCustomError("unknown_field", "{problem} (allowed: {allowed})",
                                      {"problem": "unknown field", "allowed": ", ".join(names),
                                       "field": unknown.encode("utf-8", "backslashreplace").decode("utf-8")})
        keep_null = [field.alias or name for name, field in cls.model_fields.items()
                     if field.is_required() or field.get_default(call_default_factory=True) is None]
        return given_arguments(data, keep_null)


class MemoryIn(Body):
    content: str = Field(..., description="The memory itself.")
    key: str | None = Field(None, description="Upsert by this key (default: made from the content).")
    category: Literal["core", "knowledge", "conversation"] = "knowledge"
    type: str | None = Field(None, description="experience, conversation, learned, social, decision, achievement, ...")
    layer: Literal["episodic", "semantic", "procedural"] | None = None
    tags: list[str] | None = Field(None, description="Replace the tags (omitted: an update by key keeps them).")
    metadata: dict[str, Any] | None = Field(None, description="Replace the metadata (omitted: an update keeps it).")
    importance: FromZeroToOne = 0.5
    related_entity: str | None = None
    source: str | None = None
    scope: ScopeName = "agent"
    links: list[str] = Field(default_factory=list, description="Keys or ids to link to.")
    search_context: str | None = Field(
        None, description="Text that helps find this memory without being part of it (e.g. the turns around it)."
    )
    valid_from: StrictFloat | str | None = Field(
        None, description="When the fact began to hold: ISO 8601 or epoch seconds (default: a date the content states)."
    )
    valid_until: StrictFloat | str | None = Field(None, description="When the fact stopped holding: ISO 8601 or epoch seconds.")


class MemoryPatch(Body):
    """PATCH: the fields sent change, the others are kept; null clears an optional field (tags,
    metadata, related_entity, source, search_context, valid_from, valid_until) and is refused,
    naming the field, for one every memory has (content, category, type, layer, importance)."""

    # None: not sent (``exclude_unset``); a null sent is refused, so the schema allows none (NOT_NULL).
    content: str | None = Field(None, **NOT_NULL)
    category: Literal["core", "knowledge", "conversation"] | None = Field(None, **NOT_NULL)
    type: str | None = Field(None, **NOT_NULL)
    layer: Literal["episodic", "semantic", "procedural"] | None = Field(None, **NOT_NULL)
    tags: list[str] | None = None
    metadata: dict[str, Any] | None = None
    importance: FromZeroToOne | None = Field(None, **NOT_NULL)
    related_entity: str | None = None
    source: str | None = None
    search_context: str | None = None
    valid_from: StrictFloat | str | None = None
    valid_until: StrictFloat | str | None = None


class MemoryReplace(Body):
    """PUT: the memory's fields become these; one not sent gets the value a new memory would
    (``Engram.replace``). Id, key, scope, creation time and links stay."""

    content: str = Field(..., description="The memory itself.")
    category: Literal["core", "knowledge", "conversation"] = "knowledge"
    type: str | None = Field(None, description="Default: learned (conversation for that category).")
    layer: Literal["episodic", "semantic", "procedural"] | None = Field(None, description="Default: routed from the type.")
    tags: list[str] | None = Field(None, description="Default: none.")
    metadata: dict[str, Any] | None = Field(None, description="Default: none.")
    importance: FromZeroToOne = 0.5
    related_entity: str | None = None
    source: str | None = None
    search_context: str | None = None
    valid_from: StrictFloat | str | None = Field(
        None, description="ISO 8601 or epoch seconds (default: a date the content states)."
    )
    valid_until: StrictFloat | str | None = None


# The other end of a supersede or link is named as the route's own memory is: ``by``/``to`` by id
# or key (an id first), ``by_key``/``to_key`` by key alone; exactly one, checked by the engine
# (``Engram.named``), which names them.
class SupersedeIn(Body):
    by: str | None = Field(None, description="Id or key of the memory that supersedes this one (or give by_key).")
    by_key: str | None = Field(None, description="The key of the memory that supersedes this one, always read as a "
                                                 "key (for a key that is also another memory's id).")


class ForgetIn(Body):
    query: str | None = Field(None, description="Forget memories containing all these words.")
    tag: str | None = None
    older_than_days: ZeroOrMore | None = None
    reason: str | None = Field(None, description="Why, kept in the audit trail.",
                               json_schema_extra={"maxLength": MAX_REASON_CHARS})
    dry_run: bool = False
    erase: bool = Field(False, description="Also erase them: their audit rows keep only ids, times and scopes.")
    scope: Literal["session", "agent", "global"] | None = Field(
        None, description="Keep the forget to this one scope (as list's scope narrows); default: every scope the "
                          "caller reads.")


class LinkIn(Body):
    to: str | None = Field(None, description="Id or key of the memory to link to (or give to_key).")
    to_key: str | None = Field(None, description="The key of the memory to link to, always read as a key (for a key "
                                                 "that is also another memory's id).")


class SemanticRecallIn(Body):
    """Clawless's request: ``{"input": "current question", "chatId": "optional", "topK": 3}``;
    anything else is refused, as engram's own bodies are. ``topK`` left out is the
    ``history.recap_top_k`` setting (Clawless's ``CONVERSATION_HISTORY_RECAP_TOP_K``)."""

    input: SearchText = Field(..., description="The current question.")
    chatId: UsableText | None = None  # noqa: N815 - the wire name
    topK: RecapTopK | None = None  # noqa: N815 - as far as history.recap_top_k


class ToolCallIn(Body):
    id: str
    name: str
    arguments: str | dict[str, Any] = "{}"


class MessageIn(Body):
    """A message to append; an assistant message may call tools, a tool message answers one."""

    role: Literal["system", "user", "assistant", "tool"]  # (in the order of model.Role, which refusals list)
    content: str = ""
    tool_calls: list[ToolCallIn] | None = None
    tool_call_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class SummaryIn(Body):
    """sclaw's ``SetSummary``: the text that replaces a conversation's summary (a blank one is
    refused, as ``History.set_summary`` refuses it; ``DELETE .../summary`` removes one)."""

    summary: str = Field(..., description="The new summary (not blank; DELETE .../summary removes one).")


class MessagesIn(Body):
    """Messages to append together, all or none (a run's turn: the user's words, the tool calls
    and their results, the answer); a tool result may answer a call made earlier in the list."""

    # At most 1,000 a request (HTTP's own bound); an empty list is refused by ``append_many``, as at every door.
    messages: list[MessageIn] = Field(..., max_length=1000)


class ReadinessOut(BaseModel):
    """What ``GET /readyz`` answers (``readiness.Readiness.answer`` builds it): documented here so
    /openapi.json shows the fields a probe or monitor reads, on 200 and 503 alike."""

    status: Literal["starting", "ready", "degraded"]
    pending: list[str] | None = Field(None, description="Start-up steps still running (503): store, model, maintenance")
    failed: dict[str, str] | None = Field(None, description="Steps that failed, each with its error (`degraded`)")
    detail: str | None = Field(None, description="What is pending or failed, in words")
