"""An OpenAI Agents SDK session kept in engram's conversation history:
``Runner.run(agent, text, session=EngramSession("user-42", engram))``.

The SDK's session protocol (``get_items``, ``add_items``, ``pop_item``, ``clear_session``) maps
onto the history of the engine's agent, conversation ``openai-agents:<session_id>``. Each item is
kept whole in its message's metadata (so it comes back exactly as given); the message text is the
item's text when it has one, else the item as JSON, so the history reads naturally in
``engram history`` and on the page (cut at the history's message limit, so an item of any size,
an image's base64 included, is kept). ``add_items`` is all or nothing: the items are validated
together and appended in one write, so an item engram refuses (``ValidationError`` naming it,
``messages[2].content``) or a failed write adds none of them. History settings apply:
``history.max_history_len`` trims the oldest items. Every call runs in a worker thread, never blocking the event loop.

A message another door appended to the conversation (``engram history append``, HTTP's
``POST /api/v1/history/{conversation}``) holds no item: it is given to the SDK as an input
message of its role and text (``{"role", "content"}``; a tool message, which names no call the
SDK knows, as the assistant's), by ``get_items`` and by ``pop_item`` alike (a pop answering None would
tell the SDK the session is empty while it is not).

The trim counts items, blind to the SDK's pairs of a tool call and its output (both are stored as
assistant messages, so the history's own rule, no tool result without its call, does not see
them): it can keep a ``function_call_output`` whose ``function_call`` it cut, and so can
``get_items(limit)``. The OpenAI API refuses such an output, so ``get_items`` leaves out every
output whose call is not before it in what it returns (the stored history is unchanged). The
pairing is the SDK's, so it is done here rather than in ``engram.history``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any

from engram.aio import AsyncEngram
from engram.engine import Engram
from engram.errors import ValidationError
from engram.history.keys import PART_ALLOWED, conversation_key
from engram.integrations import checked_call, history_text, keywords, missing, refuse_unknown
from engram.model import Message, usable_json, usable_text

try:
    from agents.memory.session import SessionABC
    from agents.memory.session_settings import SessionSettings
except ImportError as exc:  # pragma: no cover - the extra is installed in development
    raise missing("openai-agents", "openai-agents") from exc

CHANNEL = "openai-agents"
_ROLES = ("user", "assistant", "system")
# The Responses API's tool call item types and their outputs' (paired by call_id).
_OUTPUT_OF = {"function_call": "function_call_output", "custom_tool_call": "custom_tool_call_output",
              "computer_call": "computer_call_output", "local_shell_call": "local_shell_call_output",
              "shell_call": "shell_call_output", "apply_patch_call": "apply_patch_call_output"}
_OUTPUTS = frozenset(_OUTPUT_OF.values())


def without_orphaned_outputs(items: list[Any]) -> list[Any]:
    """``items`` minus each tool output whose call is not among the items before it."""
    called: set[tuple[str, Any]] = set()
    kept = []
    for item in items:
        kind = item.get("type") if isinstance(item, dict) else None
        if kind in _OUTPUT_OF:
            called.add((_OUTPUT_OF[kind], item.get("call_id")))
        elif kind in _OUTPUTS and (kind, item.get("call_id")) not in called:
            continue
        kept.append(item)
    return kept


def _message(item: Any) -> tuple[str, str]:
    """(role, text) for an item: its own role, and its text (a string, or the text parts of a
    content list) when it has one, else the item as JSON; cut at the history's message limit
    (``history_text``: an image's base64 makes an item's JSON long), the item being kept whole."""
    role = item.get("role") if isinstance(item, dict) else None
    content = item.get("content") if isinstance(item, dict) else None
    if isinstance(content, list):
        content = "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    text = content if isinstance(content, str) and content.strip() else json.dumps(item, ensure_ascii=False, default=str)
    return (role if role in _ROLES else "assistant"), history_text(text)


def _item(message: Message) -> Any:
    """The SDK item a history message holds: the one ``add_items`` kept whole, or for a message
    another door appended, an input message of its role and text (a tool's as the assistant's)."""
    if "item" in message.metadata:
        return message.metadata["item"]
    role = message.role.value if message.role.value in _ROLES else "assistant"
    return {"role": role, "content": message.content}


def _check_limit(limit: Any, field: str) -> None:
    """A count of the latest items to read, or None (or a negative count) for all; raises
    ``ValidationError`` naming ``field``."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
        raise ValidationError(field, f"got {type(limit).__name__}", "a count, or None (or a negative count) for all")


class EngramSession(SessionABC):
    """A conversation of the Agents SDK, stored in engram's history."""

    @checked_call("{owner}(session_id, mem)", session_id="the session's id, text")
    def __init__(self, session_id: str, engram: Engram | AsyncEngram, *,
                 session_settings: SessionSettings | dict[str, Any] | None = None, **unknown: Any) -> None:
        """``engram``: the ``Engram`` (or ``AsyncEngram``, whose engine is used: every call runs in a
        worker thread anyway) whose agent's history holds the session. ``session_settings`` as the
        SDK's own sessions take it: its ``limit`` is how many of the latest items ``get_items()``
        returns when called without one (None: all). Raises ``ValidationError`` naming the argument,
        or any other keyword."""
        refuse_unknown("EngramSession", unknown, keywords(EngramSession.__init__))
        # An AsyncEngram's history answers coroutines: add_items stored nothing, get_items raised.
        if isinstance(engram, AsyncEngram):
            engram = engram.engram
        if not isinstance(engram, Engram):
            raise ValidationError("engram", f"got {type(engram).__name__}", "an Engram or AsyncEngram")
        try:
            self.key = conversation_key(CHANNEL, session_id)
        except ValidationError as exc:
            raise ValidationError("session_id", exc.problem, PART_ALLOWED) from None
        if isinstance(session_settings, dict):
            # As the SDK's own sessions take one: an unknown key is refused (pydantic's dataclass
            # dropped it, unsaid), and ``limit`` by the rule ``get_items`` applies ("5" was read as 5).
            refuse_unknown("SessionSettings", session_settings, [f.name for f in dataclasses.fields(SessionSettings)],
                           within="session_settings")
            _check_limit(session_settings.get("limit"), "session_settings.limit")
            session_settings = SessionSettings(**session_settings)
        elif session_settings is not None and not isinstance(session_settings, SessionSettings):
            raise ValidationError("session_settings", f"got {type(session_settings).__name__}",
                                  "SessionSettings, a dict of its fields, or None")
        self.session_id = session_id
        self.engram = engram
        self.session_settings = session_settings

    def _get(self, limit: int | None) -> list[Any]:
        history = self.engram.history
        messages = history.all(self.key) if limit is None else history.recent(self.key, limit)
        return without_orphaned_outputs([_item(m) for m in messages])

    def _add(self, items: list[Any]) -> None:
        batch = []
        for item in items:
            role, text = _message(item)
            batch.append({"role": role, "content": text, "metadata": {"item": item}})
        if batch:  # the SDK may add no items; the history refuses an empty batch
            self.engram.history.append_many(self.key, batch)

    def _pop(self) -> Any | None:
        # One step of the store, so pops awaited together (or made by another process) each take
        # their own item, and a pop beside add_items removes the item it returns.
        last = self.engram.history.pop_newest(self.key)
        return None if last is None else _item(last)

    def _clear(self) -> None:
        self.engram.history.purge(self.key)

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The session's items, oldest first (the latest ``limit`` when given, else the latest
        ``session_settings.limit``; all of them when that is None or negative, as ``SQLiteSession``
        reads it), without a tool output whose call was trimmed or is older than the latest
        ``limit`` (fewer items then)."""
        if limit is None and self.session_settings is not None:
            limit = self.session_settings.limit
        _check_limit(limit, "limit")
        if limit == 0:
            return []
        # The SDK's SQLiteSession passes the limit to SQLite's LIMIT, where a negative one is no limit.
        return await asyncio.to_thread(self._get, None if limit is None or limit < 0 else limit)

    async def add_items(self, items: list[Any]) -> None:
        """Append ``items`` (the SDK's input items, dicts), all or none; raises ``ValidationError``
        naming ``items``, the item (``items[1]``) that is not one or holds a NUL or a lone surrogate
        (``items[1].content`` when its text does), or the message engram refuses."""
        # A string was stored one item per character, and a number as an item the Runner cannot send.
        if isinstance(items, str | bytes | dict) or not isinstance(items, list | tuple):
            raise ValidationError("items", f"got {type(items).__name__}", "a list of the SDK's items (dicts)")
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise ValidationError(f"items[{i}]", f"got {type(item).__name__}", "an SDK item (a dict)")
            # Named as the caller's argument: the history named the message it would have made
            # (``messages[2].content``, or ``.metadata`` for the item kept whole).
            if isinstance(item.get("content"), str):
                usable_text(f"items[{i}].content", item["content"])
            usable_json(f"items[{i}]", item)
        await asyncio.to_thread(self._add, list(items))

    async def pop_item(self) -> Any | None:
        """Remove and return the newest item (None only when the session is empty)."""
        return await asyncio.to_thread(self._pop)

    async def clear_session(self) -> None:
        await asyncio.to_thread(self._clear)
