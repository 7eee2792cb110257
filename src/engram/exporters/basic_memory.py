"""engram -> basic-memory / Obsidian: one markdown note per memory in a folder.

A note is named and permalinked by the memory's key, with front matter (``title``, ``type``,
``tags``, ``permalink``, ``created``, ``modified`` and engram's ``engram_id``, ``category``,
``importance``), the content as its body, and each link as a ``- links_to [[other-key]]``
relation, so basic-memory builds the same graph and ``engram import --from basic-memory`` reads
it back. Keys become file names with anything unsafe replaced; the folder is created when missing
and notes already there are overwritten, other files left alone.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from engram.engine import Engram
from engram.errors import StorageError
from engram.exporters import visible
from engram.model import Memory

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def write(engram: Engram, folder: Path) -> int:
    """Write every visible memory as a note under ``folder``; returns how many were written."""
    memories = list(visible(engram))
    names = {m.id: _name(m) for m in memories}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for memory in memories:
            (folder / f"{names[memory.id]}.md").write_text(_note(memory, names), encoding="utf-8")
    except OSError as exc:
        raise StorageError(f"cannot write notes into {folder}: {exc}") from exc
    return len(memories)


def _name(memory: Memory) -> str:
    scope = "" if memory.scope.session is None else f"{_UNSAFE.sub('-', memory.scope.session)}--"
    return scope + (_UNSAFE.sub("-", memory.key).strip("-.") or memory.id)


def _note(memory: Memory, names: dict[str, str]) -> str:
    name = names[memory.id]
    front = [
        "---",
        f"title: {_quote(name)}",
        f"type: {memory.type}",
        f"tags: [{', '.join(_quote(t) for t in memory.tags)}]",
        f"permalink: {name}",
        f"created: {_iso(memory.created_at)}",
        f"modified: {_iso(memory.updated_at)}",
        f"engram_id: {memory.id}",
        f"category: {memory.category.value}",
        f"importance: {memory.importance}",
        "---",
        "",
        memory.content,
    ]
    linked = [names[i] for i in memory.links if i in names]
    if linked:
        front += ["", "## Relations", *(f"- links_to [[{other}]]" for other in linked)]
    return "\n".join(front) + "\n"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
