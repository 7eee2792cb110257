"""Where memories live in the memory folder (ClawCode's layout)::

    memory/
      MEMORY.md                       operator memory (never read or written by sync)
      global/facts.md                 global scope
      agents/<agent>/preferences.md   an agent's scope
      sessions/<agent>/<session>/notes.md
      types/<type>/…json              per-type JSON copies (optional, PHP entity)

A session folder is nested under its agent because session names are only unique within an
agent. A new memory goes to the file of its group (first tag, category or type as configured);
the sync state remembers where each entry is, so an entry a person moved stays where it was put.
"""

from __future__ import annotations

import re
from typing import Literal

from engram.errors import ValidationError
from engram.model import Memory, Scope, make_scope

GroupBy = Literal["tag", "category", "type"]

OPERATOR_FILE = "MEMORY.md"
TYPES_DIR = "types"
_SLUG = re.compile(r"[^a-z0-9_-]+")


def scope_dir(scope: Scope) -> str:
    if scope.agent is None:
        return "global"
    if scope.session is None:
        return f"agents/{scope.agent}"
    return f"sessions/{scope.agent}/{scope.session}"


def locate(rel: str, suffix: str) -> tuple[Scope, str] | None:
    """``(scope, scope folder)`` of a memory file at ``rel``, or None when ``rel`` is not one
    (another suffix, ``MEMORY.md``, a ``.conflict`` file, or outside the scope folders).
    Raises ``ValidationError`` for a folder whose name is not a valid agent or session."""
    parts = rel.split("/")
    name = parts[-1]
    if not name.endswith(suffix) or name.upper() == OPERATOR_FILE.upper() or name.startswith("."):
        return None
    if len(parts) == 2 and parts[0] == "global":
        return Scope(), "global"
    if len(parts) == 3 and parts[0] == "agents":
        return make_scope(parts[1], None), "/".join(parts[:2])
    if len(parts) == 4 and parts[0] == "sessions":
        return make_scope(parts[1], parts[2]), "/".join(parts[:3])
    return None


_MEMORY_SUFFIXES = (".md", ".yaml", ".yml")


def misplaced(rel: str, suffix: str) -> str | None:
    """Why a file that looks like a memory file is not one (``locate`` gave None), or None for
    files that are not meant to be (the operator's ``MEMORY.md``, other kinds of files), so a
    file put one level too deep or in the wrong format is reported instead of silently skipped."""
    parts = rel.split("/")
    name = parts[-1]
    if not name.lower().endswith(_MEMORY_SUFFIXES) or name.startswith(".") or rel.upper() == OPERATOR_FILE.upper():
        return None
    if not name.endswith(suffix):
        return f"files.format reads {suffix} files; this one is not in that format"
    return ("memory files go directly in global/, agents/<agent>/ or sessions/<agent>/<session>/;"
            " this one is at another level or in another folder")


def scope_of_dir(rel_dir: str) -> Scope:
    """Inverse of ``scope_dir``; raises ``ValidationError``."""
    parts = rel_dir.split("/")
    if parts == ["global"]:
        return Scope()
    if len(parts) == 2 and parts[0] == "agents":
        return make_scope(parts[1], None)
    if len(parts) == 3 and parts[0] == "sessions":
        return make_scope(parts[1], parts[2])
    raise ValidationError("path", f"{rel_dir!r} is not a scope folder", "global, agents/<agent>, sessions/<agent>/<session>")


def group(memory: Memory, group_by: GroupBy) -> str:
    """The file stem a new memory goes to."""
    if group_by == "tag" and memory.tags:
        return slug(memory.tags[0])
    if group_by == "type":
        return slug(memory.type)
    return slug(memory.category.value)


def file_for(memory: Memory, group_by: GroupBy, suffix: str) -> str:
    return f"{scope_dir(memory.scope)}/{group(memory, group_by)}{suffix}"


def slug(text: str) -> str:
    """A safe file stem for a tag or word: lowercase letters, digits, ``-`` and ``_``."""
    stem = _SLUG.sub("-", text.lower()).strip("-")[:60] or "memories"
    return f"{stem}-tag" if stem == "memory" else stem  # never MEMORY.md on a case-blind disk


def title(stem: str) -> str:
    """``programming-languages`` -> ``Programming Languages`` (a new file's heading)."""
    return " ".join(word.capitalize() for word in re.split(r"[-_]+", stem) if word) or "Memories"
