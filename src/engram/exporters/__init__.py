"""Exporters: engram's memories in other systems' formats, the inverse of ``engram.importers``.

``mem0`` writes the JSON mem0's ``get_all()`` returns; ``basic_memory`` writes a folder of
basic-memory / Obsidian notes. Both read what one agent sees (its memories, its sessions' when it
is opened for one, and global) through the engine, and both import back with ``engram import``.
"""

from __future__ import annotations

from collections.abc import Iterator

from engram.engine import Engram, Filters
from engram.model import Memory

FORMATS = ("mem0", "basic-memory")


def visible(engram: Engram, page: int = 1000) -> Iterator[Memory]:
    """Every memory the engram sees, oldest first, a page at a time."""
    offset = 0
    while True:
        batch = engram.list(Filters(), order="oldest", limit=page, offset=offset)
        yield from batch
        if len(batch) < page:
            return
        offset += page
