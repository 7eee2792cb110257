"""PtrClaw's ``memory_enrich``: prepend what memory knows to the user's message.

1. recall ``recall_limit * 2`` entries (over-fetch: core entries are about to be dropped);
2. drop core entries - the soul block already puts them in the system prompt;
3. trim to ``recall_limit``;
4. when ``enrich_depth > 0``, follow links (1 hop per depth level), de-duplicated;
5. prepend a ``[Memory context]`` block; nothing relevant means no block at all.

``strip_memory_context`` removes such blocks again, so synthesis never learns its own context.
"""

from __future__ import annotations

import re

from engram.engine import Engram
from engram.model import MAX_RECALL_LIMIT, Category, Memory

OPEN, CLOSE = "[Memory context]", "[/Memory context]"
_BLOCK = re.compile(re.escape(OPEN) + r".*?" + re.escape(CLOSE) + r"\n*", re.DOTALL)


def enrichment_entries(engram: Engram, message: str, recall_limit: int, enrich_depth: int = 1) -> list[Memory]:
    """The entries ``memory_enrich`` would show: recalled hits first (rank order), then neighbours."""
    if not message.strip() or recall_limit < 1:
        return []
    hits = engram.recall(message, limit=min(recall_limit * 2, MAX_RECALL_LIMIT)).memories
    entries = [m for m in hits if m.category is not Category.CORE][:recall_limit]
    seen = {m.id for m in entries}
    frontier = list(entries)
    for _ in range(enrich_depth):
        found: list[Memory] = []
        for memory in frontier:
            for neighbour in engram.neighbours(memory.id):
                # Core neighbours are skipped for the same reason core hits are.
                if neighbour.id not in seen and neighbour.category is not Category.CORE:
                    seen.add(neighbour.id)
                    found.append(neighbour)
        entries += found
        frontier = found
    return entries


def format_block(engram: Engram, entries: list[Memory]) -> str:
    """``[Memory context]`` lines ``- key: content [links: k1, k2]``; empty when no entries."""
    if not entries:
        return ""
    linked_ids = {i for m in entries for i in m.links}
    keys = {m.id: m.key for m in engram.store.get_many(sorted(linked_ids))}
    lines = [OPEN]
    for memory in entries:
        line = f"- {memory.key}: {memory.content}"
        link_keys = [keys[i] for i in memory.links if i in keys]
        if link_keys:
            line += f" [links: {', '.join(link_keys)}]"
        lines.append(line)
    lines.append(CLOSE)
    return "\n".join(lines)


def memory_enrich(engram: Engram | None, message: str, recall_limit: int = 5, enrich_depth: int = 1) -> str:
    """The message with a ``[Memory context]`` block prepended, or unchanged when memory is off or
    nothing relevant is stored. Raises ``StorageError`` when the store fails."""
    if engram is None:
        return message
    block = format_block(engram, enrichment_entries(engram, message, recall_limit, enrich_depth))
    return f"{block}\n\n{message}" if block else message


def strip_memory_context(text: str) -> str:
    """``text`` without any ``[Memory context]…[/Memory context]`` block."""
    return _BLOCK.sub("", text).strip()
