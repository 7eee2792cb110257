"""What one sync pass did (``SyncReport``): counted in each direction, with the files it wrote,
the ``.conflict`` files it kept and the problems it met. Every pass returns one (``FileSync.sync``,
``sync_dirs``), the watcher hands each to its ``on_report``, and ``engram sync`` prints it.

A pass over a database of every agent settles the whole folder, whoever runs it (the folder is the
operator's copy of the database; see ``FileSync``), so its report holds what every agent's folders
met. ``seen_by`` is the report one agent's view is shown: only its folders' share, counted and
named, as ``engram conflicts`` lists only the conflicts in its folders."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from engram.model import Scope

from .entry import Problem
from .layout import Layout

if TYPE_CHECKING:
    from engram.engine import Engram

# Memory turned off (``backend = "disabled"``) keeps no memory: a pass would take the folder's entries
# into nothing and write them back without their ids (a later sync, memory on again, then stored
# each one a second time), so the folder is left as it is.
MEMORY_OFF = "memory is off (backend = disabled): the memory folder is left as it is"


def memory_off(engram: Engram) -> str | None:
    """``MEMORY_OFF`` when ``engram``'s store keeps nothing because memory is off, else None: every
    command over the folder (a pass, the conflicts' listing and resolving) asks it before reading
    the folder, so all say the same and change nothing. An agent's engine with no database yet
    (``agent_databases.not_made_yet``, a read's) keeps nothing too, but its memory is on: the
    folder is there to read, and its first write makes the database."""
    from engram.agent_databases import not_made_yet
    from engram.store.base import keeps_nothing

    return MEMORY_OFF if keeps_nothing(engram.store) and not not_made_yet(engram) else None


@dataclass
class SyncReport:
    """What one sync pass did, in each direction."""

    db_created: int = 0
    db_updated: int = 0
    db_forgotten: int = 0
    db_moved: int = 0  # entries moved by hand to another scope's folder: their memories given that scope
    files_added: int = 0  # entries written into files
    files_updated: int = 0
    files_removed: int = 0
    files_written: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)  # .conflict files written
    problems: list[Problem] = field(default_factory=list)
    backup: str | None = None  # the backup taken before forgetting many memories, said in a sentence
    # Why the pass did nothing at all, the folder untouched (``MEMORY_OFF``), for each door to say.
    off: str | None = None
    # Each scope folder's own share of the above (``add_scope``); what the pass met outside any
    # one scope's settling (a file scan, a folder rename, a link) is in the fields above alone.
    by_scope: dict[Scope, SyncReport] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return bool(self.db_created or self.db_updated or self.db_forgotten or self.db_moved or self.files_written
                    or self.conflicts)

    def merge(self, other: SyncReport) -> None:
        for name in ("db_created", "db_updated", "db_forgotten", "db_moved", "files_added", "files_updated", "files_removed"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.files_written += other.files_written
        self.conflicts += other.conflicts
        self.problems += other.problems
        self.backup = self.backup or other.backup
        self.off = self.off or other.off
        for scope, part in other.by_scope.items():
            self.by_scope.setdefault(scope, SyncReport()).merge(part)

    def add_scope(self, scope: Scope, part: SyncReport) -> None:
        """Count ``part``, what settling ``scope``'s folder did, in the pass, and keep it as that scope's."""
        self.merge(part)
        self.by_scope.setdefault(scope, SyncReport()).merge(part)

    def seen_by(self, agent: str | None, layout: Layout) -> SyncReport:
        """The report as ``agent``'s view is shown it (None: the operator's run, shown all of it):
        the counts and backup of the scope folders that agent reads (``global/``, its own, its
        sessions'), the files, conflicts and problems in them (``Layout.read_by``; a problem naming
        no file, by the scope it is about), and no problem naming a file of another agent's folder
        (``Problem.message_unnamed``)."""
        if agent is None:
            return self
        seen = SyncReport()
        about = {id(problem): scope for scope, part in self.by_scope.items() for problem in part.problems}
        for scope, part in self.by_scope.items():
            if scope.agent in (None, agent):
                counts = replace(part, files_written=[], conflicts=[], problems=[], by_scope={})
                seen.add_scope(scope, counts)

        def shown(problem: Problem) -> bool:
            if layout.scope_holding(problem.path) is not None:
                return layout.read_by(problem.path, agent)
            scope = about.get(id(problem))
            return scope is not None and scope.agent in (None, agent)

        seen.files_written = [rel for rel in self.files_written if layout.read_by(rel, agent)]
        seen.conflicts = [rel for rel in self.conflicts if layout.read_by(rel, agent)]
        seen.problems = [replace(problem, message=problem.message_unnamed, names_file="", message_unnamed="")
                         if problem.names_file and not layout.read_by(problem.names_file, agent) else problem
                         for problem in self.problems if shown(problem)]
        return seen
