"""Where memories live in the memory folder (ClawCode's layout)::

    memory/
      global/facts.md                 global scope
      agents/<agent>/preferences.md   an agent's scope
      sessions/<agent>/<session>/notes.md   a session's scope (or ClawCode's sessions/<session>/:
                                            ``files.session_folders``)
      types/<type>/…json              per-type JSON copies (optional, PHP entity)

An operator's export of a home with one database per agent (``per_agent_databases``) writes the
global memories held in another agent's own database under ``databases/<agent>/`` (its
``global/`` files, or its per-type JSON files): global memories live in each agent's database, two
of them may share a key, and an import puts each back in the database it came from. The memory
folder that sync keeps never holds that folder (``global/`` there is every database's).

The operator's ``MEMORY.md`` (``memory_md``) is not in it: it is ``ENGRAM_HOME/MEMORY.md``, in the
home folder that holds the memory folder (``home/memory`` by default), as Clawless keeps it in its
home folder and OpenClaw keeps its curated ``MEMORY.md`` beside its ``memory/`` folder. A file of
that name in the memory folder, at its top or in a scope folder, is neither memories nor the
operator's notes: sync and import report it (``misplaced``) and never read or write it.

A session folder is nested under its agent because session names are only unique within an
agent. Agent and session names are written as ``disk_names.portable`` file names (``Claude`` is
``agents/!claude``, ``adk:app:u1`` is ``agents/adk+app+u1``), so two agents whose names differ only
in case never share a folder on a case-insensitive file system and Windows can hold every name;
a folder name is read back with ``disk_names.name_of``, which also reads a name as it is (as
earlier versions wrote folders, and as a person may make one: ``agents/Claude``).
``folder_names`` renames such folders to their portable names.

A new memory goes to the file of its group (first tag, category or type as configured); the sync
state remembers where each entry is, so an entry a person moved stays where it was put.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from engram import jsondoc
from engram.disk_names import DEVICES, name_of, portable
from engram.errors import ValidationError
from engram.model import Memory, Scope, make_scope

GroupBy = Literal["tag", "category", "type"]

OPERATOR_FILE = "MEMORY.md"
TYPES_DIR = "types"
_SLUG = re.compile(r"[^a-z0-9_-]+")


SessionFolders = Literal["agent/session", "session"]


@dataclass(frozen=True)
class Layout:
    """Which folder holds which scope. ``sessions``: ``"agent/session"`` nests every session under
    its agent (``sessions/<agent>/<session>/``, the default: session names are unique only within
    an agent); ``"session"`` is ClawCode's ``sessions/[session_id]/`` for the sessions of
    ``owner`` (recorded in the folder: ``state.session_owner``), other agents' sessions staying nested. The
    two cannot be confused: a session folder of ``owner`` holds files, an agent's holds folders."""

    sessions: SessionFolders = "agent/session"
    owner: str = "default"

    def scope_dir(self, scope: Scope, *, as_is: bool = False) -> str:
        """The folder of ``scope``'s memories, its names written ``portable``; ``as_is``: with the
        names as they are, as earlier versions named it (``folder_names`` looks for it)."""
        if scope.agent is None:
            return "global"
        agent = scope.agent if as_is else portable(scope.agent)
        if scope.session is None:
            return f"agents/{agent}"
        session = scope.session if as_is else portable(scope.session, "session")
        if self.sessions == "session" and scope.agent == self.owner:
            return f"sessions/{session}"
        return f"sessions/{agent}/{session}"

    def scope_of_dir(self, rel_dir: str) -> Scope:
        """The scope whose folder ``rel_dir`` is, its names read with ``name_of`` (written
        ``portable`` or as they are: ``agents/!claude`` and ``agents/Claude`` are both Claude's);
        raises ``ValidationError`` for a path that is no scope folder or a name that is neither."""
        parts = rel_dir.split("/")
        if parts == ["global"]:
            return Scope()
        if len(parts) == 2 and parts[0] == "agents":
            return make_scope(_name(parts[1]), None)
        if len(parts) == 3 and parts[0] == "sessions" and not self._owner_nested(parts):
            return make_scope(_name(parts[1]), _name(parts[2]))
        if len(parts) == 2 and parts[0] == "sessions" and self.sessions == "session":
            return make_scope(self.owner, _name(parts[1]))
        raise ValidationError("path", f"{jsondoc.shown(rel_dir)} is not a scope folder", self._folders())

    def dir_of(self, rel: str) -> str | None:
        """The scope folder a path in the memory folder belongs to, or None."""
        parts = rel.split("/")[:-1]
        if parts == ["global"] or (len(parts) == 2 and parts[0] == "agents"):
            return "/".join(parts)
        if parts and parts[0] == "sessions" and not self._owner_nested(parts) and (
                len(parts) == 3 or (len(parts) == 2 and self.sessions == "session")):
            return "/".join(parts)
        return None

    def scope_holding(self, rel: str) -> Scope | None:
        """The scope of the innermost scope folder holding the file or folder ``rel`` (a folder
        may end in ``/``), however deep (``agents/bob/sub/x.md`` is bob's); None for a path in no
        scope folder (the folder's top, ``types/``, a folder whose name is no agent's)."""
        folder = rel[:-1] if rel.endswith("/") else rel.rsplit("/", 1)[0] if "/" in rel else ""
        parts = folder.split("/") if folder else []
        for end in range(len(parts), 0, -1):
            try:
                return self.scope_of_dir("/".join(parts[:end]))
            except ValidationError:
                continue
        return None

    def read_by(self, rel: str, agent: str | None) -> bool:
        """Whether ``agent``'s view reads the file or folder ``rel``: it is in ``global/`` or in that
        agent's own or session folders. None (the operator's run) reads the whole folder; a path in
        no scope folder is the operator's alone."""
        if agent is None:
            return True
        scope = self.scope_holding(rel)
        return scope is not None and scope.agent in (None, agent)

    def _owner_nested(self, parts: list[str]) -> bool:
        """``sessions/<owner>/<session>``, which the ``"session"`` layout keeps at ``sessions/<session>``."""
        # By the name the folder stands for: ``sessions/!claude/`` and ``sessions/Claude/`` are both Claude's.
        return self.sessions == "session" and len(parts) == 3 and parts[0] == "sessions" and name_of(parts[1]) == self.owner

    def locate(self, rel: str, suffix: str | tuple[str, ...]) -> tuple[Scope, str] | None:
        """``(scope, scope folder)`` of a memory file at ``rel``, or None when ``rel`` is not one
        (not ending in ``suffix``, or one of them, ``MEMORY.md``, a ``.conflict`` file, or outside the scope folders).
        Raises ``ValidationError`` for a folder whose name is not a valid agent or session."""
        name = rel.rsplit("/", 1)[-1]
        if not name.endswith(suffix) or name.upper() == OPERATOR_FILE.upper() or name.startswith("."):
            return None
        rel_dir = self.dir_of(rel)
        return None if rel_dir is None else (self.scope_of_dir(rel_dir), rel_dir)

    def misplaced(self, rel: str, suffix: str | tuple[str, ...]) -> str | None:
        """Why a file that looks like a memory file is not one (``locate`` gave None), or None for
        files that are not meant to be (other kinds of files), so a file put one level too deep, in
        the wrong format or named ``MEMORY.md`` is reported instead of silently skipped."""
        name = rel.rsplit("/", 1)[-1]
        if not name.lower().endswith(_MEMORY_SUFFIXES) or name.startswith("."):
            return None
        if name.upper() == OPERATOR_FILE.upper():
            return _operator_file_here(rel)
        if not name.endswith(suffix):
            read = " and ".join((suffix,) if isinstance(suffix, str) else suffix)
            return f"files.format reads {read} files; this one is not in that format"
        if self._owner_nested(rel.split("/")[:-1]):
            return (f"with files.session_folders = \"session\" the sessions of {self.owner} sit in"
                    " sessions/<session>/; move this folder's files there")
        hint = ("" if self.sessions == "session" or not rel.startswith("sessions/") else
                "; for ClawCode's sessions/<session>/ folders set files.session_folders = \"session\"")
        return f"memory files go directly in {self._folders()}; this one is at another level or in another folder{hint}"

    def file_for(self, memory: Memory, group_by: GroupBy, suffix: str) -> str:
        return f"{self.scope_dir(memory.scope)}/{group(memory, group_by)}{suffix}"

    def _folders(self) -> str:
        own = "sessions/<session>/ (this agent's), " if self.sessions == "session" else ""
        return f"global/, agents/<agent>/, {own}sessions/<agent>/<session>/"


DATABASES_DIR = "databases"


def database_dir(agent: str) -> str:
    """The folder of an export holding the global memories of ``agent``'s own database."""
    return f"{DATABASES_DIR}/{portable(agent)}"


def in_database_dir(rel: str) -> tuple[str, str] | None:
    """``(agent, path inside)`` of a file under ``databases/<agent>/``, or None for any other path
    (the agent's folder name read with ``name_of``; one that stands for no name, as it is, for the
    import to refuse naming what is allowed)."""
    parts = rel.split("/", 2)
    if len(parts) < 3 or parts[0] != DATABASES_DIR:
        return None
    return _name(parts[1]), parts[2]


def _operator_file_here(rel: str) -> str:
    """Why a ``MEMORY.md`` in the memory folder is not read: the operator's notes engram puts into
    the prompt are ``ENGRAM_HOME/MEMORY.md``, in the home folder (where Clawless keeps its own, and
    where OpenClaw's curated ``MEMORY.md`` sits beside its ``memory/`` folder), and the name is kept
    for them (engram never writes a memory file of that name: ``slug``)."""
    home = (f"ENGRAM_HOME/{OPERATOR_FILE}, in the home folder (which holds the memory folder by default),"
            " not this file")
    if "/" not in rel:
        # Where the docs of earlier versions put the operator's notes, or an OpenClaw workspace's
        # MEMORY.md copied in whole: read by nothing, so said.
        return (f"the operator's notes engram puts into the agent's prompt are {home}, and it is no memory"
                " file either; move it there for the prompt, or into a scope folder under another name"
                " (global/notes.md) to read its bullets as memories")
    # A curated MEMORY.md (OpenClaw's, Clawless's) dropped into a scope folder: at the right level,
    # but the name ``locate`` keeps for the operator's notes, never read as memories.
    return (f"{OPERATOR_FILE} is the name kept for the operator's notes, which engram puts into the agent's"
            f" prompt from {home}; never read as memories: rename it (notes.md) to read its bullets as"
            f" memories, or import OpenClaw's free-form {OPERATOR_FILE} with"
            " engram -a AGENT import --from openclaw FOLDER")


def _name(text: str) -> str:
    """The name a folder name ``text`` stands for (``name_of``); a text that stands for none is
    returned as it is, for ``make_scope`` to refuse naming what is allowed."""
    return name_of(text) or text


def directly_in(path: str, rel_dir: str) -> bool:
    """Whether the file at ``path`` sits directly in the folder ``rel_dir`` (not deeper)."""
    return path.rsplit("/", 1)[0] == rel_dir if "/" in path else False


_MEMORY_SUFFIXES = (".md", ".yaml", ".yml")


def group(memory: Memory, group_by: GroupBy) -> str:
    """The file stem a new memory goes to."""
    if group_by == "tag" and memory.tags:
        return slug(memory.tags[0])
    if group_by == "type":
        return slug(memory.type)
    return slug(memory.category.value)


def slug(text: str) -> str:
    """A safe file stem for a tag or word: lowercase letters, digits, ``-`` and ``_``."""
    stem = _SLUG.sub("-", text.lower()).strip("-")[:60] or "memories"
    # Never MEMORY.md on a case-blind disk, nor a Windows device name: nul.md there is the NUL
    # device whatever its extension, which takes every write and keeps nothing.
    return f"{stem}-tag" if stem == "memory" or stem in DEVICES else stem


def title(stem: str) -> str:
    """``programming-languages`` -> ``Programming Languages`` (a new file's heading)."""
    return " ".join(word.capitalize() for word in re.split(r"[-_]+", stem) if word) or "Memories"
