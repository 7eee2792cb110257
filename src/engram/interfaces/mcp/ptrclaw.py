"""PtrClaw's agent-tool names over MCP (``memory_store`` / ``memory_recall`` / ``memory_forget`` /
``memory_link``), offered when ``server.mcp_tools`` is ``ptrclaw`` or ``both``. They call the same
engine as the default family; only names, arguments and result shapes follow PtrClaw.

PtrClaw's ``memory_forget`` and ``memory_link`` take keys, so their arguments are read as keys
first, even one equal to another memory's id; only a value no memory of the agent has as its key
is read as an id (``Engram.named``'s ``or_id``), since ``memory_store`` and ``memory_recall``
give ids too. Where PtrClaw would find the key, engram finds the same memory."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from engram.agent.tools import store_entry
from engram.engine import Engram, Filters
from engram.interfaces import present
from engram.interfaces.bounds import LinkDepth, RecallLimit
from engram.interfaces.mcp.annotations import DELETE, LINK, READ, WRITE
from engram.interfaces.mcp.errors import tool_errors
from engram.model import Memory

# How memory_forget and memory_link read their arguments, said in their descriptions.
KEY_RULE = ("A value is read as a key first, even one that looks like an id; only a value that is no entry's key "
            "is read as an entry's id.")


def register(server: MCPServer, resolve: Callable[..., Engram]) -> None:
    @server.tool(title="Store a memory entry", annotations=WRITE, description=(
        "Store or update (by key) a memory entry. Use a short, stable, human-readable key such as "
        "\"python-version\"; storing the same key again replaces its content."))
    def memory_store(
        key: Annotated[str, Field(description="Unique, upsertable name of the entry.")],
        content: Annotated[str, Field(description="The entry text.")],
        category: Annotated[Literal["core", "knowledge", "conversation"], Field(
            description="core: permanent identity facts; knowledge: things learned (default); "
                        "conversation: short-lived notes.")] = "knowledge",
        links: Annotated[list[str] | None, Field(description=(
            "Keys to link to after storing; a key no entry has is left out and named in `unlinked`."))] = None,
    ) -> dict[str, Any]:
        with tool_errors():
            result, unlinked = store_entry(resolve(), key, content, category, links or ())
            answer = present.tool_write(result)
            if unlinked:
                answer["unlinked"] = unlinked
            return answer

    @server.tool(title="Search memory entries", annotations=READ, description=(
        "Search memory entries by query, best first. depth=1 also includes entries linked to the matches "
        "(at most `limit` more; each further hop adds at most `limit` too)."))
    def memory_recall(
        query: Annotated[str, Field(description="What to look for, in plain words.")],
        limit: Annotated[RecallLimit, Field(description="Most entries to return (default 5).")] = 5,
        category: Annotated[Literal["core", "knowledge", "conversation"] | None, Field(
            description="Only entries of this category.")] = None,
        depth: Annotated[LinkDepth, Field(description=(
            "0: the matches only; 1 also their linked entries; 2-3 follow links further."))] = 0,
    ) -> dict[str, Any]:
        with tool_errors():
            engram = resolve(reading=True)
            result = engram.recall(query, limit=limit, depth=depth, filters=Filters(category=category))
            links = engram.link_keys([h.memory for h in result.hits])
            return {"entries": [{"key": h.memory.key, "content": h.memory.content,
                                 "category": h.memory.category.value, "score": round(h.score, 4),
                                 "links": keys, "id": h.memory.id} for h, keys in zip(result.hits, links, strict=True)]}

    @server.tool(title="Delete a memory entry", annotations=DELETE, description=(
        "Delete the memory entry with this key. " + KEY_RULE))
    def memory_forget(key: Annotated[str, Field(description="Key of the entry (or its id).")]) -> dict[str, Any]:
        with tool_errors():
            engram = resolve()
            removed = engram.forget(_entry(engram, key, "key", "forget"))
            return {"forgotten": [m.key for m in removed], "count": len(removed)}

    def memory_link(
        action: Annotated[Literal["link", "unlink"], Field(description="link creates the link; unlink removes it.")],
        from_: Annotated[str, Field(alias="from", description="Key of one entry (or its id).")],
        to: Annotated[str, Field(description="Key of the other entry (or its id).")],
    ) -> dict[str, Any]:
        with tool_errors():
            engram = resolve()
            first, second = _entry(engram, from_, "from", action), _entry(engram, to, "to", action)
            if action == "unlink":
                return {"action": "unlink", "from": from_, "to": to, "changed": engram.unlink(first, second)}
            return {"action": "link", "from": from_, "to": to, "changed": engram.link(first, second)}

    server.add_tool(_keyword_alias(memory_link, "from", "from_"), name="memory_link", title="Link two entries",
                    annotations=LINK,
                    description="Create (action=link) or remove (action=unlink) a bidirectional link between two "
                                "keys. " + KEY_RULE)


def _entry(engram: Engram, value: str, argument: str, field: str) -> Memory:
    """The entry a PtrClaw argument names: its key first, else its id (errors name ``argument``)."""
    return engram.named(key=value, field=field, names=("ref", argument), or_id=True)


def _keyword_alias(fn: Callable[..., Any], wire: str, param: str) -> Callable[..., Any]:
    """PtrClaw names an argument ``from`` (a Python keyword): the SDK calls tools with the wire
    name, so rename it to the parameter on the way in; the schema still comes from ``fn``."""

    def call(**kwargs: Any) -> Any:
        kwargs[param] = kwargs.pop(wire)
        return fn(**kwargs)

    call.__signature__ = inspect.signature(fn, eval_str=True)  # type: ignore[attr-defined]
    call.__annotations__ = typing.get_type_hints(fn, include_extras=True)
    call.__name__ = fn.__name__
    call.__doc__ = fn.__doc__
    return call
