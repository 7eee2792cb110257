"""What one sync pass did (``SyncReport``): counted in each direction, with the files it wrote,
the ``.conflict`` files it kept and the problems it met. Every pass returns one (``FileSync.sync``,
``sync_dirs``), the watcher hands each to its ``on_report``, and ``engram sync`` prints it."""

from __future__ import annotations

from dataclasses import dataclass, field

from .entry import Problem


@dataclass
class SyncReport:
    """What one sync pass did, in each direction."""

    db_created: int = 0
    db_updated: int = 0
    db_forgotten: int = 0
    files_added: int = 0  # entries written into files
    files_updated: int = 0
    files_removed: int = 0
    files_written: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)  # .conflict files written
    problems: list[Problem] = field(default_factory=list)
    backup: str | None = None  # the backup taken before forgetting many memories, said in a sentence

    @property
    def changed(self) -> bool:
        return bool(self.db_created or self.db_updated or self.db_forgotten or self.files_written or self.conflicts)

    def merge(self, other: SyncReport) -> None:
        for name in ("db_created", "db_updated", "db_forgotten", "files_added", "files_updated", "files_removed"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.files_written += other.files_written
        self.conflicts += other.conflicts
        self.problems += other.problems
        self.backup = self.backup or other.backup
