"""The memory tools for any function-calling model: schemas and a dispatcher.

PtrClaw's four, with its arguments: ``memory_store {key, content, category?, links?}``,
``memory_recall {query, limit?, category?, depth?}``, ``memory_forget {key}``,
``memory_link {action, from, to}``; and engram's read-only ``memory_versions {key}``, a memory's
earlier contents oldest first (JSON, as ``present.versions_dict`` gives them at every door), its
key read as ``memory_forget`` reads one. ``MemoryTools.call`` raises engram errors; ``dispatch``
turns them into an error result for the model to read, so a bad call never ends the turn.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engram import jsondoc
from engram.engine import Engram, Filters
from engram.errors import EngramError, NotFoundError, ValidationError
from engram.interfaces.present import versions_dict
from engram.llm.base import ToolSpec, decode_arguments
from engram.model import MAX_LINK_DEPTH, MAX_RECALL_LIMIT, Category, Memory, ToolCall, WriteResult, given_arguments

_CATEGORIES = [c.value for c in Category]

MEMORY_STORE = ToolSpec(
    "memory_store",
    "Store or update (by key) a memory entry.",
    {
        "type": "object",
        "properties": {
            "key": {"type": "string", "description": "Unique, human-readable identifier; storing the same key updates it."},
            "content": {"type": "string", "description": "The text to remember."},
            "category": {"type": "string", "enum": _CATEGORIES, "description": "Default: knowledge."},
            "links": {"type": "array", "items": {"type": "string"}, "description": "Keys to link to after storing."},
        },
        "required": ["key", "content"],
    },
)
MEMORY_RECALL = ToolSpec(
    "memory_recall",
    "Search memories by query.",
    {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Search text."},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_RECALL_LIMIT, "description": "Max results. Default: 5."},
            "category": {"type": "string", "enum": _CATEGORIES, "description": "Only this category."},
            "depth": {"type": "integer", "minimum": 0, "maximum": MAX_LINK_DEPTH,
                      "description": "0 = flat results, 1 = also linked neighbours (at most limit more); "
                                     "2-3 follow links further. Default: 0."},
        },
        "required": ["query"],
    },
)
MEMORY_FORGET = ToolSpec(
    "memory_forget",
    "Delete a memory entry by key.",
    {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]},
)
MEMORY_LINK = ToolSpec(
    "memory_link",
    "Create or remove a bidirectional link between two memory entries.",
    {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["link", "unlink"]},
            "from": {"type": "string", "description": "Key of one entry."},
            "to": {"type": "string", "description": "Key of the other entry."},
        },
        "required": ["action", "from", "to"],
    },
)
MEMORY_VERSIONS = ToolSpec(
    "memory_versions",
    "Read the earlier contents of a memory entry, oldest first (each update keeps what it replaced, with "
    "replaced_at in epoch seconds); an empty list means it was never changed. Changes nothing.",
    {"type": "object", "properties": {"key": {"type": "string", "description": "Key of the entry (or its id)."}},
     "required": ["key"]},
)
MEMORY_TOOLS: tuple[ToolSpec, ...] = (MEMORY_STORE, MEMORY_RECALL, MEMORY_FORGET, MEMORY_LINK, MEMORY_VERSIONS)


@dataclass(frozen=True, slots=True)
class ToolResult:
    content: str
    is_error: bool = False


def require_string(args: Mapping[str, Any], name: str, allowed: str = "a string") -> str:
    value = args.get(name)
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(name, "is required and must be a non-empty string", allowed)
    return value


# What an argument naming an entry takes (``_entry`` reads a key first, else an id): both said, as the docs say.
_KEY_OR_ID = "an entry's key or its id (a string)"


def _optional_int(args: Mapping[str, Any], name: str, default: int, low: int, high: int) -> int:
    value = args.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value or not low <= value <= high:
        raise ValidationError(name, f"{jsondoc.shown(value)} is not an integer from {low} to {high}", f"{low}..{high}")
    return int(value)


def _category(args: Mapping[str, Any]) -> str | None:
    """The ``category`` argument as the schema's enum spells it, or None when not given: the MCP tools of
    the same names take these three words exactly, so a model's ``"Core"`` or ``""`` is refused at
    both doors alike (the library reads any case, but a tool call is held to the schema it was given)."""
    if "category" not in args:
        return None
    value = args["category"]
    if value not in _CATEGORIES:
        raise ValidationError("category", f"unknown category {jsondoc.shown(value)}", _CATEGORIES)
    return str(value)


def format_entries(engram: Engram, memories: list[Memory]) -> str:
    lines = []
    for m, linked in zip(memories, engram.link_keys(memories), strict=True):
        line = f"- {m.key} ({m.category.value}): {m.content}"
        if linked:
            line += f" [links: {', '.join(linked)}]"
        lines.append(line)
    return "\n".join(lines)


def store_entry(engram: Engram, key: str, content: str, category: str, links: Sequence[str], *,
                source: str | None = None) -> tuple[WriteResult, list[str]]:
    """PtrClaw's ``memory_store``: upsert the entry, then link it to each of ``links`` (keys, else
    ids) that exists, and return the ones that could not be linked. PtrClaw's ``link`` answers
    false for a missing entry, so a link to a key not stored yet never costs the entry itself (the
    agent tool and the MCP tool of this name both store this way). Raises what ``remember`` raises."""
    result = engram.remember(content, key=key, category=category, source=source)
    failed = []
    for target in links:
        try:
            engram.link(result.memory.id, target)
        except (NotFoundError, ValidationError):
            failed.append(target)
    return result, failed


class MemoryTools:
    specs = MEMORY_TOOLS

    def __init__(self, engram: Engram) -> None:
        self.engram = engram

    def dispatch(self, call: ToolCall) -> ToolResult:
        """Run a tool call; every engram error becomes an error result for the model."""
        try:
            return ToolResult(self.call(call.name, decode_arguments(call.arguments)))
        except EngramError as exc:
            return ToolResult(f"error: {exc}", is_error=True)

    def call(self, name: str, arguments: Mapping[str, Any] | str) -> str:
        """Run one tool; raises ``ValidationError`` (bad arguments, unknown tool) or ``NotFoundError``."""
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments or "{}")
            except ValueError:
                raise ValidationError("arguments", "not valid JSON", "a JSON object") from None
        if not isinstance(arguments, Mapping) or "_raw" in arguments:
            raise ValidationError("arguments", "not a JSON object", "a JSON object")
        handler = {
            "memory_store": self._store,
            "memory_recall": self._recall,
            "memory_forget": self._forget,
            "memory_link": self._link,
            "memory_versions": self._versions,
        }.get(name)
        if handler is None:
            raise ValidationError("tool", f"unknown tool {jsondoc.shown(name)}", [s.name for s in self.specs])
        spec = next(s for s in self.specs if s.name == name)
        # An argument the tool does not take is refused, as the MCP tools of the same names refuse
        # it: read past, a misspelt "catgory": "core" stored in knowledge and the call said "Stored".
        taken = spec.parameters.get("properties", {})
        unknown = next((argument for argument in arguments if argument not in taken), None)
        if unknown is not None:
            raise ValidationError(str(unknown), f"is not an argument of {name}", ", ".join(taken))
        # null for an optional argument is its default, as at the MCP tools of the same names.
        return handler(given_arguments(arguments, spec.parameters.get("required", ())))

    def _store(self, args: Mapping[str, Any]) -> str:
        key, content = require_string(args, "key"), require_string(args, "content")
        links = args.get("links", [])
        if not isinstance(links, list) or not all(isinstance(x, str) for x in links):
            raise ValidationError("links", "must be a list of keys", "an array of strings")
        result, failed = store_entry(self.engram, key, content, _category(args) or "knowledge", links,
                                     source="agent-tool")
        text = f"{'Stored' if result.action == 'created' else result.action.capitalize()}: {result.memory.key}"
        # An entry never links to itself: naming it is not naming a missing entry.
        itself = [t for t in failed if t in (result.memory.key, result.memory.id)]
        missing = [t for t in failed if t not in itself]
        if missing:
            text += f" (could not link to missing: {', '.join(missing)})"
        if itself:
            text += f" (not linked to itself: {', '.join(itself)})"
        # What the store said of the write (memory disabled, PII found), as the MCP tool returns it:
        # "Unchanged: k" alone tells the model its fact is kept when nothing was.
        for warning in result.warnings:
            text += f" (warning: {warning})"
        return text

    def _recall(self, args: Mapping[str, Any]) -> str:
        query = require_string(args, "query")
        limit = _optional_int(args, "limit", 5, 1, MAX_RECALL_LIMIT)
        depth = _optional_int(args, "depth", 0, 0, MAX_LINK_DEPTH)
        category = _category(args)
        result = self.engram.recall(query, limit=limit, depth=depth, filters=Filters(category=category) if category else None)
        if not result.hits:
            return "No matching memories."
        return format_entries(self.engram, result.memories)

    def _forget(self, args: Mapping[str, Any]) -> str:
        removed = self.engram.forget(self._entry(args, "key", "forget"), reason="agent tool memory_forget")
        return f"Forgot: {removed[0].key}"

    def _versions(self, args: Mapping[str, Any]) -> str:
        memory = self._entry(args, "key", "versions")
        return json.dumps(versions_dict(self.engram.versions(memory)), ensure_ascii=False)

    def _link(self, args: Mapping[str, Any]) -> str:
        action = require_string(args, "action")
        if action not in ("link", "unlink"):
            raise ValidationError("action", f"unknown action {jsondoc.shown(action)}", ["link", "unlink"])
        a, b = require_string(args, "from", _KEY_OR_ID), require_string(args, "to", _KEY_OR_ID)
        first, second = self._entry(args, "from", action), self._entry(args, "to", action)
        if action == "link":
            return f"Linked {a} <-> {b}" if self.engram.link(first, second) else f"{a} and {b} were already linked"
        return f"Unlinked {a} <-> {b}" if self.engram.unlink(first, second) else f"{a} and {b} were not linked"

    def _entry(self, args: Mapping[str, Any], argument: str, field: str) -> Memory:
        """The entry a PtrClaw argument names, read as the MCP tools of the same names read it: its
        key first, else its id (``Engram.named``'s ``or_id``)."""
        return self.engram.named(key=require_string(args, argument, _KEY_OR_ID), field=field, names=("ref", argument),
                                 or_id=True)
