"""engram's MCP server: memory tools and resources for one agent per connection.

Tools: one family by default, ClawCode's ``remember`` / ``recall`` / ``forget`` plus ``link``,
``get``, ``versions`` (a memory's earlier contents), ``list`` (recent memories), ``update`` (by id or key)
and ``supersede``; PtrClaw's ``memory_store`` /
``memory_recall`` / ``memory_forget`` / ``memory_link`` (``ptrclaw.py``) instead or as well when
``server.mcp_tools`` says so; with either, Clawless's ``semantic_recall`` over the agent's
conversations (``conversations.py``). Every tool has a title and annotations (read-only, destructive,
idempotent) so a client can tell a read from a deletion before calling it. Resources: the soul
block, the core memories and the operator memory file. The agent and session of a call come from
the connection, never from the tool arguments: on stdio from ``engram mcp --agent/--session``;
over HTTP from the bearer token (agent) and the ``X-Engram-Session`` header. Tools are plain
functions: the SDK runs them in worker threads, and they only translate arguments into ``Engram``
calls.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextvars import ContextVar
from typing import Annotated, Any, Literal

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, ConfigDict, Field, StrictFloat, WithJsonSchema, model_validator

from engram import jsondoc
from engram.about import __version__
from engram.engine import Engram, Filters
from engram.errors import ValidationError
from engram.interfaces import present, seams, tool_calls
from engram.interfaces.bounds import LinkDepth, ListLimit, ListOffset, RecallLimit
from engram.interfaces.mcp import context as mcp_context
from engram.interfaces.mcp import conversations, ptrclaw
from engram.interfaces.mcp.annotations import DELETE, LINK, READ, WRITE
from engram.interfaces.mcp.errors import EngramMCPServer, tool_errors
from engram.model import CLEARABLE_FIELDS, Memory

# Gives the Engram a call acts for from the transport's request: None on stdio, the
# authenticated Starlette request over HTTP; ``reading=True`` from a tool or resource that only
# reads (``annotations.READ``, or ``forget``'s dry run), which makes no database for an agent
# with none yet (one per agent).
Resolver = Callable[..., Engram]
_request: ContextVar[Any] = ContextVar("engram_mcp_request", default=None)


async def _remember_request(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    # Server middleware sees every message with its transport request; tools and resources read
    # it from this context variable (copied into the worker threads that run them).
    token = _request.set(ctx.request)
    try:
        return await call_next(ctx)
    finally:
        _request.reset(token)

INSTRUCTIONS = """\
engram is your long-term memory. Before answering anything that may depend on the past (the user's
preferences, earlier decisions, project facts), call `recall` with a short question. When you learn
something worth keeping beyond this conversation, call `remember` with one self-contained fact per
call. Use `forget` when the user asks you to, or when a memory is wrong; always give a reason.
"""


def build_server(resolve: Resolver, *, tools: Literal["both", "clawcode", "ptrclaw"] = "clawcode",
                 remote: bool = False) -> EngramMCPServer:
    """An MCPServer whose tools act on ``resolve()``; raises nothing (errors surface per call).
    ``remote``: served over HTTP, so a tool error of the server's state says what failed without
    the server's paths (``EngramMCPServer.remote``)."""
    server = EngramMCPServer("engram", instructions=INSTRUCTIONS, version=__version__, middleware=[_remember_request])
    server.remote = remote
    plain = resolve
    resolve = lambda reading=False: plain(_request.get(), reading=reading)  # noqa: E731
    if tools in ("both", "clawcode"):
        _clawcode_tools(server, resolve)
    if tools in ("both", "ptrclaw"):
        ptrclaw.register(server, resolve)
    conversations.register(server, resolve)  # Clawless's, beside either family
    _resources(server, resolve)
    return server


Category = Literal["core", "knowledge", "conversation"]


class RecallFilters(BaseModel):
    """``recall``'s ``filters``, checked by the SDK with the tool's other arguments: a wrong type
    or an unknown key is refused with its path (``filters.category``) and what is allowed, instead
    of reaching the engine as something it cannot read, or being ignored (a misspelt ``tag`` used
    to return unfiltered results). The schema also tells a client the keys before it calls."""

    model_config = ConfigDict(extra="forbid")

    tags: list[str] | None = Field(None, description="All of these tags must match.")
    session_id: str | None = Field(None, description="Only memories of this session.")
    category: Category | None = None
    type: str | None = Field(None, description="Only this type, e.g. decision.")

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        # Pydantic's own "extra inputs are not permitted" names the key but not the allowed ones.
        if isinstance(data, dict):
            unknown = [key for key in data if key not in cls.model_fields]
            if unknown:
                raise ValueError(f"unknown filter {', '.join(map(jsondoc.shown, unknown))} "
                                 f"(allowed: {', '.join(cls.model_fields)})")
        return data


# ``recall``'s filters are one argument, ``filters``: an error on one names it under that
# argument (``filters.tags[0]``), as the SDK's own check does (``present.wire_names``).
FILTERS_WIRE = {"tags": "filters.tags", "category": "filters.category", "type": "filters.type",
                "session": "filters.session_id"}


def _recall(engram: Engram, query: str, limit: int | None, min_relevance: float | None, filters: RecallFilters,
            depth: int, *, when: str | None = None, since: str | None = None, until: str | None = None,
            as_of: str | None = None, known_at: str | None = None,
            where: Any = None) -> dict[str, Any]:
    # The times go to the engine as given: it reads each (epoch seconds, ISO 8601 or a phrase) and
    # names the one it cannot read, in the words every other door gives.
    # ClawCode's session_id filter: that session's memories only, chosen by the engine before the
    # limit (filtering the hits afterwards lost a session's memory behind the agent's better ones).
    session_id = filters.session_id
    with present.wire_names(FILTERS_WIRE):
        view = engram if session_id is None else engram.for_session(session_id)
        result = view.recall(query, limit=limit, min_relevance=min_relevance, depth=depth, when=when,
                             filters=Filters(tags=filters.tags, category=filters.category, type=filters.type,
                                             since=since, until=until, as_of=as_of, known_at=known_at,
                                             where=where),
                             scope=None if session_id is None else "session")
    return present.tool_recall(result.hits, result.notes)


# ``forget``'s and ``list``'s ``filters``: recall's keys, as recall reads them (the same model, so
# the same errors). ``session_id`` keeps a query, tag, age or listing to that session, as
# ``recall``'s keeps its search; without it they act where the connection does.
FILTERS_HELP = ("Optional, as recall's: {\"session_id\": \"...\"} (that session's memories only, e.g. the one "
                "remember's context.session_id stored them in), \"tags\": [...] (all must match), \"category\", "
                "\"type\".")


def _list(engram: Engram, filters: RecallFilters, tags: list[str] | None, category: str | None, type: str | None,
          **rest: Any) -> list[Memory]:
    """``list``'s memories: its own tags, category and type with those of ``filters`` (tags: all of
    both must match; a category or type given both ways is refused, naming ``filters.*``), in
    ``filters.session_id``'s session only when given, as ``recall`` reads it."""
    for name, own, given in (("category", category, filters.category), ("type", type, filters.type)):
        if own is not None and given is not None:
            raise ValidationError(f"filters.{name}", f"{name} is given as an argument too",
                                  f"{name} once: as the argument or in filters")
    every_tag = None if tags is None and filters.tags is None else [*(tags or ()), *(filters.tags or ())]
    # An error on a value named in filters names it there; on list's own argument, that argument.
    given = {"tags": tags, "category": category, "type": type}
    with present.wire_names({name: wire for name, wire in FILTERS_WIRE.items() if given.get(name) is None}):
        view = engram if filters.session_id is None else engram.for_session(filters.session_id)
        return view.list(Filters(tags=every_tag, category=category or filters.category, type=type or filters.type,
                                 since=rest.pop("since"), until=rest.pop("until"), where=rest.pop("where")),
                         scope=None if filters.session_id is None else "session", **rest)


def _one_memory(engram: Engram, tool: str, memory_id: str | None, key: str | None) -> Memory:
    """The memory named by ``memory_id`` (an id, else a key) or ``key`` (a key only), as the engine
    resolves one (``Engram.named``), with errors naming the tool's own arguments."""
    return engram.named(memory_id, key, field=tool, names=("memory_id", "key"))


def _link(engram: Engram, source: str | None, target: str | None, source_key: str | None, target_key: str | None,
          action: str) -> dict[str, Any]:
    # Resolved here so an error names this tool's arguments; the engine takes the memories as found.
    first = engram.named(source, source_key, field=action, names=("source", "source_key"))
    second = engram.named(target, target_key, field=action, names=("target", "target_key"))
    # "from" and "to" echo each end as the call named it (its memory_id, key or key argument).
    said = {"from": source if source_key is None else source_key, "to": target if target_key is None else target_key}
    if action == "unlink":
        return {"action": "unlink", **said, "changed": engram.unlink(first, second)}
    return {"action": "link", **said, "changed": engram.link(first, second)}


# The engine's TimeReader reads these (as ``engram list --since`` and the HTTP API's ``since`` do).
Since = Annotated[str | None, Field(description=(
    "Only memories created at or after this: ISO 8601 (2026-04-12), epoch seconds, or a phrase "
    "(yesterday, last week: its start)."))]
Until = Annotated[str | None, Field(description=(
    "Only memories created at or before this: as since (a day or a phrase counts whole: yesterday ends at midnight)."))]
KEY_HELP = "The memory's key, always read as a key (memory_id reads an id first): for a key that is also an id."


def _key_instead_of(argument: str) -> str:
    """The description of an end's ``*_key`` argument, given instead of ``argument``."""
    return (f"Instead of {argument}: the memory's key, always read as a key ({argument} reads an id first): "
            "for a key that is also an id.")

CLEAR_HELP = f"Fields to empty, e.g. [\"valid_until\"]: any of {', '.join(CLEARABLE_FIELDS)}."
Tags = Annotated[list[str] | None, Field(description="Short lowercase labels (at most 100), e.g. [\"preferences\", \"python\"].")]
RelatedEntity = Annotated[str | None, Field(
    description="The person or thing the memory is about, e.g. \"Ada\" (up to 200 characters).")]
Source = Annotated[str | None, Field(description="Where it came from, e.g. \"chat\" or a URL.")]
# An object (mem0's filter language), read by the engine, whose errors name the place (where.priority.gte).
# The schema says object, but the SDK does not check it (Any): a list or a number reaches the
# engine, which refuses it as every door does ("where: got [1] (allowed: an object ...)"), and text
# is read as the JSON it holds, as the CLI and HTTP read it, instead of pydantic's "valid dictionary".
Where = Annotated[Any, WithJsonSchema({"anyOf": [{"type": "object"}, {"type": "null"}]}), Field(description=(
    'Only memories whose metadata meets these conditions (mem0\'s filter language, types kept): '
    '{"priority": {"gte": 2}}, {"status": "open"}, {"topic": "*"} (present); operators eq ne gt gte lt lte in nin '
    'contains icontains; {"AND": [...]}, {"OR": [...]}, {"NOT": [...]}.'))]
# Numbers with a range: the schema shows it, the engine checks it (``model.parse_number``), so NaN
# is refused as "not a number" naming the range, in the words of every other door; pydantic's own
# bounds told NaN that it "should be less than or equal to 1", and NaN days reached the engine as
# NaN seconds (``older_than_s``).
FromZeroToOne = Annotated[StrictFloat, WithJsonSchema({"type": "number", "minimum": 0, "maximum": 1})]
ZeroOrMore = Annotated[StrictFloat, WithJsonSchema({"type": "number", "minimum": 0})]
CategoryFilter = Annotated[Category | None, Field(description="Only this category: core, knowledge or conversation.")]
CategoryChange = Annotated[Category | None, Field(description=(
    "core: permanent identity facts; knowledge: things learned; conversation: short-lived notes."))]


def _clawcode_tools(server: MCPServer, resolve: Callable[..., Engram]) -> None:
    @server.tool(title="Remember a fact", annotations=WRITE, description=(
        "Store one fact, preference, decision or event in long-term memory so it can be recalled in later "
        "conversations. Write it self-contained (\"The user prefers Python for scripting\"), one fact per call. "
        "Give a `key` to update that memory later instead of adding a new one. Returns the memory_id."))
    def remember(
        content: Annotated[str, Field(description="The memory itself, as a complete sentence.")],
        tags: Tags = None,
        context: Annotated[dict[str, Any] | None, Field(
            description="Optional, as ClawCode's: session_id stores it in that session (recall finds it with "
                        "filters.session_id), timestamp (ISO 8601 or epoch seconds) is when it was learned; other "
                        "keys (e.g. {\"source\": \"chat\"}) are kept with it and come back in recall's context.")] = None,
        key: Annotated[str | None, Field(description="Stable name; storing the same key again updates it.")] = None,
        category: Annotated[Literal["core", "knowledge", "conversation"], Field(
            description="core: permanent identity facts; knowledge: things learned (default); "
                        "conversation: short-lived notes.")] = "knowledge",
        type: Annotated[str | None, Field(
            description="experience, conversation, learned, social, decision, achievement, or another word.")] = None,
        importance: Annotated[FromZeroToOne, Field(description="0 trivial .. 1 essential.")] = 0.5,
        links: Annotated[list[str] | None, Field(description="Keys or ids of related memories to link to.")] = None,
        scope: Annotated[Literal["agent", "session", "global"] | None, Field(
            description="agent (default): yours across sessions; session: this session only (default when "
                        "context.session_id is given); global: shared with every agent.")] = None,
        valid_from: Annotated[str | None, Field(
            description="When the fact began to hold, ISO 8601 (e.g. 2026-04-12); default: a date the content "
                        "states (\"On 2026-04-12 ...\").")] = None,
        valid_until: Annotated[str | None, Field(description="When the fact stopped holding, ISO 8601.")] = None,
        related_entity: RelatedEntity = None,
        source: Source = None,
    ) -> dict[str, Any]:
        with tool_errors():
            placed = mcp_context.place(resolve(), context, scope)
            result = placed.engram.remember(
                content, key=key, category=category, type=type, tags=tags, importance=importance,
                metadata=placed.metadata, links=links or (), scope=placed.scope, created_at=placed.created_at,
                valid_from=valid_from, valid_until=valid_until, related_entity=related_entity, source=source)
            return present.tool_write(result)

    @server.tool(title="Recall memories", annotations=READ, description=(
        "Search long-term memory for what is relevant to a question. Returns the best matches first, each with "
        "memory_id, content, relevance (0..1), tags, timestamp and context. Ask short, specific questions; "
        "use min_relevance (e.g. 0.3) to drop weak matches. An empty list means nothing relevant is stored."))
    def recall(
        query: Annotated[str, Field(description="What you want to know, in plain words.")],
        limit: Annotated[RecallLimit | None, Field(description=(
            "Most results to return; default: the recall.limit setting (10 unless set)."))] = None,
        min_relevance: Annotated[FromZeroToOne | None, Field(description="Drop results below this.")] = None,
        filters: Annotated[RecallFilters | None, Field(
            description="Optional: {\"tags\": [...] (all must match), \"session_id\": \"...\", "
                        "\"category\": \"knowledge\", \"type\": \"decision\"}.")] = None,
        depth: Annotated[LinkDepth, Field(description=(
            "1 also returns memories linked to the matches (at most `limit` more); 2-3 follow links further, "
            "each hop adding at most `limit`."))] = 0,
        when: Annotated[str | None, Field(
            description="Only what happened then: yesterday, last week, in March, since Monday, two days ago, an hour ago. "
                        "A phrase like that inside the query works too.")] = None,
        as_of: Annotated[str | None, Field(
            description="Only facts that held at this time (ISO 8601), superseded ones included.")] = None,
        known_at: Annotated[str | None, Field(
            description="Memory as it was recorded at this time (ISO 8601), with the contents of then.")] = None,
        since: Since = None,
        until: Until = None,
        where: Where = None,
    ) -> dict[str, Any]:
        with tool_errors():
            return _recall(resolve(reading=True), query, limit, min_relevance, filters or RecallFilters(), depth,
                           when=when, since=since, until=until, as_of=as_of, known_at=known_at, where=where)

    @server.tool(title="Forget memories", annotations=DELETE, description=(
        "Remove memories that are wrong, outdated, or that the user asked you to forget. Give exactly one of: "
        "memory_id (one memory, from recall), key (the memory with this key), query (every memory containing all "
        "of these words), tag, or older_than_days. Always say why in `reason`. Use dry_run to see what would be "
        "removed first. A memory_id from recall reaches that memory whatever its session; to forget by query, tag or "
        "age within a session, give filters.session_id as recall takes it."))
    def forget(
        memory_id: Annotated[str | None, Field(description="Id (or key) of one memory.")] = None,
        key: Annotated[str | None, Field(description=KEY_HELP)] = None,
        query: Annotated[str | None, Field(description=(
            "Forget every memory holding every one of these words (however short or common)."))] = None,
        tag: Annotated[str | None, Field(description="Forget every memory with this tag.")] = None,
        older_than_days: Annotated[ZeroOrMore | None, Field(description="Forget memories older than this.")] = None,
        reason: Annotated[str | None, Field(description="Why, kept in the audit trail.")] = None,
        dry_run: Annotated[bool, Field(description="Only list what would be forgotten.")] = False,
        erase: Annotated[bool, Field(description=(
            "Also erase them: the audit trail keeps only their ids and times, no text. Only when the user asks "
            "to erase personal data."))] = False,
        filters: Annotated[RecallFilters | None, Field(description=FILTERS_HELP)] = None,
    ) -> dict[str, Any]:
        with tool_errors():
            narrow = filters or RecallFilters()
            with present.wire_names(FILTERS_WIRE):
                # A dry run only reads: it makes no database for an agent with none yet (one per agent).
                return tool_calls.forget(
                    resolve(reading=dry_run), memory_id, key, query, tag, older_than_days, reason, dry_run, erase,
                    session=narrow.session_id,
                    filters=None if filters is None else Filters(tags=narrow.tags, category=narrow.category,
                                                                 type=narrow.type))

    @server.tool(title="Link two memories", annotations=LINK, description=(
        "Connect two related memories (both directions), e.g. a preference and the project it applies to, so "
        "recalling one can bring the other (recall with depth=1). action=unlink removes the connection. Name each "
        "end by memory_id or key (source, target) or by key alone (source_key, target_key)."))
    def link(
        source: Annotated[str | None, Field(description="memory_id or key of one memory (or give source_key).")] = None,
        target: Annotated[str | None, Field(description="memory_id or key of the other memory (or give target_key).")] = None,
        action: Annotated[Literal["link", "unlink"], Field(
            description="link (default) connects them; unlink removes the connection.")] = "link",
        source_key: Annotated[str | None, Field(description=_key_instead_of("source"))] = None,
        target_key: Annotated[str | None, Field(description=_key_instead_of("target"))] = None,
    ) -> dict[str, Any]:
        with tool_errors():
            return _link(resolve(), source, target, source_key, target_key, action)

    @server.tool(title="Supersede a memory", annotations=WRITE, description=(
        "A fact changed (the user moved, a decision was reversed): mark the old memory superseded by the new one. "
        "The old one is kept, leaves ordinary recall, and its valid time ends where the new one's begins."))
    def supersede(
        old: Annotated[str | None, Field(description="memory_id or key of the memory that no longer holds (or give "
                                                     "old_key).")] = None,
        new: Annotated[str | None, Field(description="memory_id or key of the memory that replaces it (or give "
                                                     "new_key).")] = None,
        old_key: Annotated[str | None, Field(description=_key_instead_of("old"))] = None,
        new_key: Annotated[str | None, Field(description=_key_instead_of("new"))] = None,
    ) -> dict[str, Any]:
        with tool_errors():
            engram = resolve()
            older = engram.named(old, old_key, field="supersede", names=("old", "old_key"))
            newer = engram.named(new, new_key, field="supersede", names=("new", "new_key"))
            return present.memory_dict(engram.supersede(older, newer))

    @server.tool(title="Read a memory", annotations=READ, description=(
        "Read one memory in full (content, tags, links, importance, times) by memory_id (or key), or by key."))
    def get(
        memory_id: Annotated[str | None, Field(description="memory_id or key.")] = None,
        key: Annotated[str | None, Field(description=KEY_HELP)] = None,
    ) -> dict[str, Any]:
        with tool_errors():
            return present.memory_dict(_one_memory(resolve(reading=True), "get", memory_id, key))

    @server.tool(title="Read a memory's earlier contents", annotations=READ, description=(
        "The earlier contents of one memory, oldest first: each update keeps the content it replaced, with when "
        "(replaced_at, epoch seconds). An empty list: never changed. By memory_id (or key), or by key."))
    def versions(
        memory_id: Annotated[str | None, Field(description="memory_id or key.")] = None,
        key: Annotated[str | None, Field(description=KEY_HELP)] = None,
    ) -> dict[str, Any]:
        with tool_errors():
            return tool_calls.versions(resolve(reading=True), memory_id, key)

    @server.tool(name="list", title="List recent memories", annotations=READ, description=(
        "List stored memories without a question: the most recent first (what was learned lately), or the "
        "oldest, the most important or the most recently used. Filter by tags, category, type or metadata (where); "
        "page with offset. filters.session_id lists one session's memories, as recall's finds them."))
    def list_memories(
        limit: Annotated[ListLimit, Field(description="Most memories to return.")] = 20,
        order: Annotated[Literal["recent", "oldest", "importance", "accessed"], Field(
            description="recent (default): newest first; accessed: most recently recalled first.")] = "recent",
        tags: Annotated[list[str] | None, Field(description="Only memories with all of these tags.")] = None,
        category: CategoryFilter = None,
        type: Annotated[str | None, Field(description="Only this type, e.g. decision.")] = None,
        offset: Annotated[ListOffset, Field(description="Skip this many (for the next page).")] = 0,
        since: Since = None,
        until: Until = None,
        where: Where = None,
        filters: Annotated[RecallFilters | None, Field(description=FILTERS_HELP)] = None,
    ) -> dict[str, Any]:
        with tool_errors():
            items = _list(resolve(reading=True), filters or RecallFilters(), tags, category, type, since=since,
                          until=until, where=where, order=order, limit=limit, offset=offset)
            return {"memories": [present.list_item(m) for m in items], "count": len(items), "offset": offset}

    @server.tool(title="Update a memory", annotations=WRITE, description=(
        "Change an existing memory by memory_id (or key), or by key: give only the fields to change (null or left "
        "out: kept), and name in `clear` the ones to empty. The previous content is kept in the memory's history. "
        "Use it to correct a memory instead of forgetting and re-adding it."))
    def update(
        memory_id: Annotated[str | None, Field(description="memory_id or key of the memory to change.")] = None,
        key: Annotated[str | None, Field(description=KEY_HELP)] = None,
        content: Annotated[str | None, Field(description="The corrected memory, as a complete sentence.")] = None,
        tags: Tags = None,
        importance: Annotated[FromZeroToOne | None, Field(description="0 trivial .. 1 essential.")] = None,
        category: CategoryChange = None,
        type: Annotated[str | None, Field(description="experience, learned, decision, ... or another word.")] = None,
        related_entity: RelatedEntity = None,
        source: Source = None,
        valid_from: Annotated[str | None, Field(description="When the fact began to hold, ISO 8601.")] = None,
        valid_until: Annotated[str | None, Field(description="When the fact stopped holding, ISO 8601.")] = None,
        # A list of names, not null, clears: a model often sends null for what it means to leave alone.
        clear: Annotated[list[str] | None, Field(description=CLEAR_HELP)] = None,
    ) -> dict[str, Any]:
        with tool_errors():
            engram = resolve()
            result = engram.update(_one_memory(engram, "update", memory_id, key), content=content, tags=tags,
                                   importance=importance, category=category, type=type, related_entity=related_entity,
                                   source=source, valid_from=valid_from, valid_until=valid_until, clear=clear or ())
            return present.tool_write(result)


def _resources(server: MCPServer, resolve: Callable[..., Engram]) -> None:
    @server.resource("engram://soul", name="soul", mime_type="text/markdown",
                     description="The agent's identity block (core memories soul:identity, soul:user, soul:philosophy).")
    def soul() -> str:
        with tool_errors():
            return seams.soul_block(resolve(reading=True))

    @server.resource("engram://core", name="core-memories", mime_type="application/json",
                     description="Every core (permanent) memory of this agent.")
    def core() -> str:
        with tool_errors():
            return json.dumps([present.memory_dict(m) for m in seams.core_memories(resolve(reading=True))])

    @server.resource("engram://operator-memory", name="operator-memory", mime_type="text/markdown",
                     description="The operator's notes (MEMORY.md) injected into every prompt.")
    def operator() -> str:
        with tool_errors():
            return seams.operator_memory(resolve(reading=True))
