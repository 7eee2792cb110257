"""A LlamaIndex memory block kept in engram: ``Memory.from_defaults(memory_blocks=[EngramMemoryBlock(engram=mem)])``.

LlamaIndex's ``Memory`` keeps the latest messages (its short-term memory) and, when they pass its
token limit, flushes the oldest to its memory blocks; on every ``get`` it asks each block what to
put before the chat. This block is that long-term memory:

- **put** (messages flushed from short-term memory): each user and assistant message with text
  becomes one memory of the engine's agent, its text byte for byte as sent, category ``conversation`` (``category=`` chooses;
  ``knowledge`` keeps turns past hygiene's seven days, as Google ADK's service does), type ``conversation``,
  tagged with its role. Its key is a digest of the role and the text (its ends' whitespace aside, so
  messages stored before the text was kept whole still match), and a message whose key is
  already stored is left as it is, so the same messages put again (a chat history set once more,
  a second ``Memory`` on the same session) store and change nothing; the same sentence said in
  two sessions is one memory, kept as first stored. The message
  before it in the flush is its ``search_context`` (an answer is found by its question). System
  and tool messages, and messages without text (a bare tool call, a blank one, an image), are not
  stored. A message engram cannot store as it is (longer than ``max_content_chars``, or holding a
  NUL or a lone surrogate) is left out with a warning in the log naming it (``messages[2].content``)
  and the rest is stored, as Google ADK's service leaves out such an event: the flush has already
  left short-term memory inside LlamaIndex's ``Memory.put``, so refusing it would lose every other
  message of the flush and fail the chat's turn, and a cut copy would not be what was said.
- **get**: engram's recall over the latest user message (the ``input`` of ``Memory.get`` when
  given), ``k`` memories at most, as lines of text no longer than ``max_chars`` in all. Recall
  reads all of the agent's memories, not only those this block stored (``filters`` narrows it),
  and by default counts as a use of them (``touch``; ``recall.touch_on_recall``), as every
  adapter's automatic read and engram's own injection do: memories the chat is given are used,
  and the lifecycle jobs purge the unused ones. ``touch=False`` makes it a look.

Agents are kept apart as the engine keeps them: the block reads and writes the scope of the
``Engram`` it is given (``mem.for_agent("support")``). Every engine call runs in a worker thread,
so the event loop is never blocked.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from engram.aio import AsyncEngram
from engram.engine import Engram, Filters
from engram.errors import NotFoundError, ValidationError
from engram.integrations import ENGINE, checked_call, flag_option, missing, refuse_unknown
from engram.model import MAX_RECALL_LIMIT, Category, Hit, parse_content, parse_integer, parse_limit, parse_relevance

try:
    from llama_index.core.base.llms.types import ChatMessage
    from llama_index.core.memory import BaseMemoryBlock
except ImportError as exc:  # pragma: no cover - the extra is installed in development
    raise missing("llamaindex", "llama-index-core") from exc

log = logging.getLogger(__name__)

# The roles whose words are worth remembering: what the user said and what was answered.
_KEPT_ROLES = ("user", "assistant")
# LlamaIndex counts tokens with its own tokenizer, which a block does not see: ``atruncate`` reads a
# token as about four characters of English text (tiktoken's cl100k average).
_CHARS_PER_TOKEN = 4


def message_key(role: str, text: str) -> str:
    """The memory key of a message: the same role and text always give the same key. Whitespace
    at the text's ends is left out of the digest: messages were stored stripped before their text
    was kept whole, and the same message put again must still find its memory. ``text`` must be
    encodable (no lone surrogate: ``parse_content`` refuses one first)."""
    return "llamaindex#" + hashlib.sha256(f"{role}\x00{text.strip()}".encode()).hexdigest()[:40]


def _text(message: ChatMessage) -> str:
    """The message's text (its text blocks) as sent, byte for byte; empty when it has none."""
    content = message.content
    return content if isinstance(content, str) else ""


def _line(hit: Hit) -> str:
    memory = hit.memory
    mine = memory.metadata.get("llamaindex")
    role = mine.get("role") if isinstance(mine, Mapping) else None
    return f"- {role}: {memory.content}" if role else f"- {memory.content}"


class EngramMemoryBlock(BaseMemoryBlock[str]):
    """Long-term memory of a LlamaIndex ``Memory``: flushed messages are stored in engram, and the
    memories relevant to the latest message are recalled into the chat."""

    engram: Engram
    name: str = "engram"
    description: str | None = "Memories recalled from engram that relate to the latest message."
    k: int = 5
    max_chars: int = 2000
    filters: Filters | None = None
    min_relevance: float | None = None
    touch: bool | None = None  # None: the engine's recall.touch_on_recall
    category: Category = Category.CONVERSATION  # of the memories flushed messages become

    @checked_call("{owner}(engram=mem)")
    def __init__(self, *, engram: Engram | AsyncEngram, **fields: Any) -> None:
        """``engram``: the ``Engram`` (or ``AsyncEngram``, whose engine is used) the block remembers
        in and recalls from; ``fields``: the block's (``k``, ``max_chars``, ``priority``, ...).
        Raises ``ValidationError`` naming a field it refuses, or one the block does not have."""
        # The values given are checked before pydantic sees them, as engram's own errors naming the
        # field: pydantic would read True or "5" as a number, and wrap an error raised in a validator.
        if isinstance(engram, AsyncEngram):  # its engine: every call runs in a worker thread anyway
            engram = engram.engram
        if not isinstance(engram, Engram):
            raise ValidationError("engram", f"got {type(engram).__name__}", ENGINE)
        # LlamaIndex's blocks ignore unknown fields: a mistyped ``limit=3`` would leave k at 5, unsaid.
        refuse_unknown("EngramMemoryBlock", fields, type(self).model_fields)
        if "name" in fields and (not isinstance(fields["name"], str) or not fields["name"].strip()):
            raise ValidationError("name", f"got {fields['name']!r}", "a non-empty block name")
        if fields.get("description") is not None and not isinstance(fields["description"], str):
            raise ValidationError("description", f"got {type(fields['description']).__name__}", "text, or None")
        if "priority" in fields:  # LlamaIndex's: 0 never truncates the block, 1 and up truncate it in that order
            fields["priority"] = parse_integer(fields["priority"], "priority", 0, allowed="0 (never truncated) or more")
        for flag in ("touch", "accept_short_term_memory"):
            if flag in fields:
                fields[flag] = flag_option(flag, fields[flag], "the engine's recall.touch_on_recall" if flag == "touch" else None)
        if "k" in fields:
            fields["k"] = parse_limit(fields["k"], MAX_RECALL_LIMIT, "k", paged=False)
        if "max_chars" in fields:
            chars = fields["max_chars"]
            if isinstance(chars, bool) or not isinstance(chars, int) or chars < 1:
                raise ValidationError("max_chars", f"{chars!r} is out of range", "a positive number of characters")
        if fields.get("min_relevance") is not None:
            fields["min_relevance"] = parse_relevance(fields["min_relevance"])
        if "category" in fields:
            try:
                fields["category"] = Category(fields["category"])
            except ValueError:
                raise ValidationError("category", f"got {fields['category']!r}",
                                      ", ".join(c.value for c in Category)) from None
        if fields.get("filters") is not None and not isinstance(fields["filters"], Filters):
            raise ValidationError("filters", f"got {type(fields['filters']).__name__}", "an engram Filters, or None")
        super().__init__(engram=engram, **fields)

    # --- put: flushed messages become memories ---------------------------------------------------
    def _items(self, messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
        """``remember_many``'s items for the messages worth keeping, each checked first so that a
        bad one is named by its place among ``messages``."""
        items: list[dict[str, Any]] = []
        before = ""
        for i, message in enumerate(messages):
            role, text = str(getattr(message.role, "value", message.role)), _text(message)
            if role not in _KEPT_ROLES or not text.strip():
                continue
            try:
                parse_content(text, self.engram.max_content_chars)
            except ValidationError as exc:
                log.warning("llamaindex: messages[%d].content (%s) left out of memory: it %s (allowed: %s%s)", i, role,
                            exc.problem, exc.allowed,
                            "; a longer limit: ENGRAM_MAX_CONTENT_CHARS" if len(text) > self.engram.max_content_chars else "")
                before = ""  # the next message answers this one, not the one before it
                continue
            session = message.additional_kwargs.get("session_id")
            item: dict[str, Any] = {
                "content": text, "key": message_key(role, text), "category": self.category,
                "type": "conversation", "tags": ("llamaindex", role),
                "metadata": {"llamaindex": {"role": role}},
                "source": f"llamaindex:{session}" if isinstance(session, str) and session else "llamaindex",
                "search_context": before or None,
            }
            try:
                self.engram.check_remember(**item)
            except ValidationError as exc:
                raise ValidationError(f"messages[{i}].{exc.field}", exc.problem, exc.allowed) from None
            items.append(item)
            before = text
        return items

    def _put(self, messages: Sequence[ChatMessage]) -> None:
        # A message already stored is left as it is: put again, it may come with other context or
        # another session (the flush's boundaries move), which would otherwise rewrite it.
        fresh: dict[str, dict[str, Any]] = {}
        for item in self._items(messages):
            if item["key"] not in fresh and not self._stored(item["key"]):
                fresh[item["key"]] = item
        if fresh:
            self.engram.remember_many(fresh.values())

    def _stored(self, key: str) -> bool:
        try:
            self.engram.get_by_key(key)
        except NotFoundError:
            return False
        return True

    async def _aput(self, messages: list[ChatMessage]) -> None:
        await asyncio.to_thread(self._put, list(messages))

    # --- get: the memories relevant to the latest message, as text --------------------------------
    def _get(self, query: str) -> str:
        result = self.engram.recall(query, limit=self.k, filters=self.filters,
                                    min_relevance=self.min_relevance, touch=self.touch)
        lines: list[str] = []
        for line in dict.fromkeys(_line(hit) for hit in result):  # best first, each text once
            room = self.max_chars - sum(len(kept) + 1 for kept in lines)  # +1: the newline before it
            if len(line) > room:
                if not lines:  # the best memory alone is too long: its start, rather than nothing
                    lines.append(line[: self.max_chars - 1] + "…")
                break
            lines.append(line)
        return "\n".join(lines)

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        """The recalled memories, one per line (empty when nothing is relevant or there is no text
        to search for). ``block_kwargs`` (``Memory`` passes its ``session_id``) are not used."""
        query = _query(messages or [])
        if not query:
            return ""
        return await asyncio.to_thread(self._get, query)

    async def atruncate(self, content: str, tokens_to_truncate: int) -> str | None:
        """``content`` without its last (least relevant) lines, about ``tokens_to_truncate`` tokens
        shorter; None when nothing is left. ``Memory`` calls it for a block given a ``priority``
        above 0 when the chat does not fit its token limit."""
        lines = content.splitlines()
        cut = tokens_to_truncate * _CHARS_PER_TOKEN
        while lines and cut > 0:
            cut -= len(lines.pop()) + 1
        return "\n".join(lines) or None


def _query(messages: Sequence[ChatMessage]) -> str:
    """The text to recall for: the latest user message with text, else the latest message with text."""
    latest = ""
    for message in reversed(messages):
        text = _text(message).strip()
        if text and str(getattr(message.role, "value", message.role)) == "user":
            return text
        latest = latest or text
    return latest
