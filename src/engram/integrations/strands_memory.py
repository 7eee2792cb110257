"""Strands' own memory over engram: ``Agent(memory_manager=MemoryManager(stores=[EngramMemoryStore(mem)]))``.

``EngramMemoryStore`` is a Strands ``MemoryStore`` (``strands.memory``) over one engram agent's
memory: the agent of the engine (view) it is given, ``mem.for_agent("alice")`` for another, which
never sees this one's memories. Strands' ``MemoryManager`` does the rest with it: the
``search_memory`` tool, the ``add_memory`` tool (``add_tool_config=True``), folding what a search
finds into the model's input before a user turn (injection), and extraction (``extraction=True``:
Strands' ``ModelExtractor`` distils facts from the conversation and stores each one through
``add``).

- ``search``: engram's recall (hybrid, or full text without an embedder), best first, at most
  ``max_search_results`` (the call's, else the store's, 10 by default; a call asking for more than
  engram's 100 gets 100, which is still "at most"). Each hit is a ``MemoryEntry`` whose content is
  the memory's, byte for byte, with ``metadata`` holding its ``id``, ``key``, ``score``, ``tags``,
  ``created_at`` (ISO 8601, UTC) and, when it has any, the ``metadata`` it was added with. A blank
  query finds nothing. By default a search is a use of the memories it finds (``touch``;
  ``recall.touch_on_recall``), as every adapter's automatic read and engram's own injection: what
  the manager injects is what the agent uses, and the lifecycle jobs purge memories that stay
  unused. ``touch=False`` makes it a look.
- ``add``: engram's ``remember`` (source ``strands``), content kept byte for byte, ``metadata``
  kept with it (a JSON object, else ``ValidationError`` naming ``metadata``). Extraction writes
  are at-least-once (a failed batch is extracted and added again), so a second ``add`` of content
  already stored for the agent stores nothing: engram's own rule, identical text up to whitespace
  is one memory (``WriteResult.action == "duplicate"``, the first one's metadata kept).
- No ``add_messages``. Strands documents it as the sink for raw message batches and hands each
  message a sequence number for an idempotency key, but the numbers restart for every agent and
  the store is told no run id to join them with, so a store shared by two agents could not tell
  their turns apart; and a store that has ``add_messages`` switches ``extraction=True`` from
  distilled facts to the raw transcript, every turn kept as a memory. Conversation history has its
  own place in engram; long-term memory gets facts.

Errors. Input engram refuses raises engram's ``ValidationError`` naming the field (``content``,
``metadata``, ``max_search_results``); Strands' manager logs a failed store write and raises
``AggregateMemoryError`` holding it, which the ``add_memory`` tool shows the model as an error
result; a failed store search is logged and the manager answers with the other stores' entries.

Given an ``Engram``, each call runs in a worker thread (``asyncio.to_thread``); given an
``AsyncEngram``, its own awaitable methods are used (its writer and reader threads).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from engram.aio import AsyncEngram
from engram.engine import Engram
from engram.errors import ValidationError
from engram.integrations import checked_call, flag_option, keywords, missing, refuse_unknown
from engram.model import MAX_RECALL_LIMIT, Hit, RecallResult, WriteResult, parse_limit
from engram.temporal.instants import iso

try:
    from strands.memory import ExtractionConfig, MemoryEntry, MemoryStore, SearchOptions
except ImportError as exc:  # pragma: no cover - the extra is installed in development
    raise missing("strands", "strands-agents") from exc

DEFAULT_MAX_SEARCH_RESULTS = 10
SOURCE = "strands"


def _entry(hit: Hit) -> MemoryEntry:
    memory = hit.memory
    metadata: dict[str, Any] = {"id": memory.id, "key": memory.key, "score": hit.score, "tags": list(memory.tags),
                                "created_at": iso(memory.created_at)}
    if memory.metadata:
        metadata["metadata"] = dict(memory.metadata)
    return MemoryEntry(content=memory.content, metadata=metadata)


class EngramMemoryStore(MemoryStore):
    """A Strands ``MemoryStore`` over one engram agent's memory: search is engram's recall, add is
    ``remember``."""

    @checked_call("{owner}(mem)")
    def __init__(self, engram: Engram | AsyncEngram, *, name: str = "engram", description: str | None = None,
                 max_search_results: int = DEFAULT_MAX_SEARCH_RESULTS, writable: bool = True,
                 extraction: ExtractionConfig | bool | None = None, touch: bool | None = None, **unknown: Any) -> None:
        """``engram``: the ``Engram`` or ``AsyncEngram`` whose agent the store reads and writes.
        ``name`` targets the store in Strands' tools; ``description`` is shown in them;
        ``max_search_results`` (1 to 100) caps a search that names no cap; ``writable`` lets
        Strands write (``add``); ``extraction`` is Strands' own setting (``True``, an
        ``ExtractionConfig``, or None/False for off); ``touch`` False makes a search a look, not a use
        of the memories it finds (None: the engine's ``recall.touch_on_recall``). Raises
        ``ValidationError`` naming the argument, or any other keyword (a mistyped ``max_results=3``
        would otherwise be Python's ``TypeError``, which does not say what the store takes)."""
        refuse_unknown("EngramMemoryStore", unknown, keywords(EngramMemoryStore.__init__))
        if not isinstance(engram, Engram | AsyncEngram):
            raise ValidationError("engram", f"got {type(engram).__name__}", "an Engram or AsyncEngram")
        if not isinstance(name, str) or not name.strip():
            raise ValidationError("name", f"got {name!r}", "a non-empty store name")
        if description is not None and not isinstance(description, str):
            raise ValidationError("description", f"got {type(description).__name__}", "text, or None")
        writable = bool(flag_option("writable", writable))
        touch = flag_option("touch", touch, "the engine's recall.touch_on_recall")
        if extraction is not None and not isinstance(extraction, bool | Mapping):
            raise ValidationError("extraction", f"got {type(extraction).__name__}",
                                  "True, False, None, or a strands.memory.ExtractionConfig")
        if isinstance(extraction, Mapping):  # a mistyped key ("triger") would leave Strands' default, unsaid
            refuse_unknown("ExtractionConfig", extraction, ExtractionConfig.__annotations__, within="extraction")
        self.engram = engram
        self.name = name
        self.description = description
        self.max_search_results: int | None = parse_limit(max_search_results, MAX_RECALL_LIMIT,
                                                          "max_search_results", paged=False)
        self.writable = writable
        self.extraction: ExtractionConfig | bool | None = extraction
        self.touch = touch

    async def search(self, query: str, options: SearchOptions | None = None) -> list[MemoryEntry]:
        """The memories most relevant to ``query``, best first; none for a blank query. Raises
        ``ValidationError`` for a ``max_search_results`` below 1 or not a whole number."""
        asked = (options or {}).get("max_search_results")
        limit = self.max_search_results if asked is None else asked
        # A cap above engram's page is still met by a full page: only a cap that cannot be is refused.
        if isinstance(limit, int) and not isinstance(limit, bool) and limit > MAX_RECALL_LIMIT:
            limit = MAX_RECALL_LIMIT
        limit = parse_limit(limit, MAX_RECALL_LIMIT, "max_search_results", paged=False)
        if isinstance(query, str) and not query.strip():
            return []
        result: RecallResult
        if isinstance(self.engram, AsyncEngram):
            result = await self.engram.recall(query, limit=limit, touch=self.touch)
        else:
            result = await asyncio.to_thread(self.engram.recall, query, limit=limit, touch=self.touch)
        return [_entry(hit) for hit in result.hits]

    async def add(self, content: str, metadata: Mapping[str, Any] | None = None) -> WriteResult:
        """Remember ``content`` with ``metadata`` (a JSON object); content already stored for the
        agent is not stored again (``action == "duplicate"``). Raises ``ValidationError`` naming
        ``content`` or ``metadata``, or ``writable`` for a read-only store; nothing is stored then."""
        if not self.writable:  # the manager never calls it then; a direct call is refused as Strands' own stores do
            raise ValidationError("writable", f"store {self.name!r} is read-only", "a store made with writable=True")
        # engram's remember also takes metadata as JSON text; Strands' is a dict, so text is a mistake.
        if metadata is not None and not isinstance(metadata, Mapping):
            raise ValidationError("metadata", f"got {type(metadata).__name__}", "a JSON object (a dict), or None")
        if isinstance(self.engram, AsyncEngram):
            return await self.engram.remember(content, metadata=metadata, source=SOURCE)
        return await asyncio.to_thread(self.engram.remember, content, metadata=metadata, source=SOURCE)
