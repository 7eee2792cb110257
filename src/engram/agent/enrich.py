"""PtrClaw's ``memory_enrich``: prepend what memory knows to the user's message.

1. recall the best ``recall_limit`` non-core entries (PtrClaw recalls twice as many and drops core
   entries afterwards - the soul block already puts them in the system prompt - then trims; the
   query here leaves core out itself, so more than half of the hits being core never leaves the
   block short);
2. when ``enrich_depth > 0``, follow links (PtrClaw's ``collect_neighbors``, one hop per depth
   level), de-duplicated, core neighbours left out for the same reason: recall's link expansion,
   so each hop adds at most ``recall_limit`` neighbours, the hits taking turns best first, and
   asks the store once per hop (a densely linked memory cannot flood the prompt);
3. prepend a ``[Memory context]`` block; nothing relevant means no block at all. A recalled entry's
   line ends with the keys it links to (``[links: ...]``); a neighbour's line does not, as in
   PtrClaw's block: its link back to the entry above is what brought it in, and repeating it is
   noise in every prompt.

``strip_memory_context`` removes such blocks again, so synthesis never learns its own context.
A stored memory is data, not structure: a block marker inside an entry (any case or spacing) is
written with parentheses instead of brackets, so no memory can end the block early and have the
text after it read as the user's words. Stripping also only takes the markers as whole lines,
the way ``format_block`` writes them, so a block from before this escaping is still removed whole.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from engram.engine import Engram, Filters
from engram.model import MAX_RECALL_LIMIT, Category, Hit, Memory
from engram.text import MEMORY_CONTEXT_CLOSE as CLOSE
from engram.text import MEMORY_CONTEXT_OPEN as OPEN
from engram.text import strip_memory_context

# A marker look-alike inside an entry, as a model might read it: any case, any spacing.
_MARKER = re.compile(r"\[(\s*/?\s*memory\s+context\s*)\]", re.IGNORECASE)


def neutralise_markers(text: str) -> str:
    """``text`` with every ``[Memory context]`` / ``[/Memory context]`` look-alike written in
    parentheses, so it cannot open or close a context block."""
    return _MARKER.sub(r"(\1)", text)


def _enrichment_hits(engram: Engram, message: str, recall_limit: int, enrich_depth: int) -> list[Hit]:
    if not message.strip() or recall_limit < 1:
        return []
    not_core = Filters(category=[c for c in Category if c is not Category.CORE])
    return list(engram.recall(message, limit=min(recall_limit, MAX_RECALL_LIMIT), depth=enrich_depth,
                              filters=not_core).hits)


def enrichment_entries(engram: Engram, message: str, recall_limit: int, enrich_depth: int = 1) -> list[Memory]:
    """The entries ``memory_enrich`` would show: recalled hits first (rank order), then neighbours
    hop by hop (at most ``recall_limit`` per hop)."""
    return [hit.memory for hit in _enrichment_hits(engram, message, recall_limit, enrich_depth)]


def format_block(engram: Engram, entries: list[Memory], neighbours: Collection[str] = ()) -> str:
    """``[Memory context]`` lines ``- key: content [links: k1, k2]``; empty when no entries. An
    entry whose id is in ``neighbours`` (reached by a link, not recalled) gets no ``[links: ...]``."""
    if not entries:
        return ""
    lines = [OPEN]
    for memory, link_keys in zip(entries, engram.link_keys(entries), strict=True):
        line = f"- {neutralise_markers(memory.key)}: {neutralise_markers(memory.content)}"
        if link_keys and memory.id not in neighbours:
            line += f" [links: {neutralise_markers(', '.join(link_keys))}]"
        lines.append(line)
    lines.append(CLOSE)
    return "\n".join(lines)


def memory_enrich(engram: Engram | None, message: str, recall_limit: int = 5, enrich_depth: int = 1) -> str:
    """The message with a ``[Memory context]`` block prepended, or unchanged when memory is off or
    nothing relevant is stored. Raises ``StorageError`` when the store fails."""
    if engram is None:
        return message
    hits = _enrichment_hits(engram, message, recall_limit, enrich_depth)
    block = format_block(engram, [hit.memory for hit in hits], {hit.memory.id for hit in hits if hit.via})
    return f"{block}\n\n{message}" if block else message


__all__ = ["CLOSE", "OPEN", "enrichment_entries", "format_block", "memory_enrich", "neutralise_markers",
           "strip_memory_context"]
