"""The operator's sync of a home with one database per agent (``per_agent_databases``): one memory
folder, several databases, each syncing its own part of it (``global/`` and its agent's folders,
under a sync state of its own; ``sides.belongs``). ``EveryDatabaseSync`` runs each database's
``FileSync`` in turn and reports them as one pass, so ``engram sync`` / ``watch`` run as the
operator settle ``agents/bob/`` in bob's database. Before, they synced only the database the run
opened (the default agent's, or the one in ``ENGRAM_AGENT``): a hand edit of bob's file reached no
database and the report said nothing had changed.

``global/`` is every database's: what one pass writes there (a global memory one database holds)
reaches a database that passed before it by a second pass over ``global/`` alone, so one run leaves
the folder and every database agreeing, as each database's next sync would (``shared_keys``).

An agent's folder with memory files whose agent has no database yet (``agents/carol/`` written by
hand, or copied in) gets one, opened through ``open_syncer`` at the pass that finds it: no
database synced that folder, so its entries were silently left out of every database and never
given ids, where a home with one database stores them as carol's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from engram.errors import ValidationError
from engram.model import Memory, Scope

from . import cross_moves, layout
from . import state as sync_state
from .entry import memory_digest
from .paths import PathRefused
from .report import SyncReport
from .sync import pass_over_dirs

if TYPE_CHECKING:
    from .document import Format
    from .layout import Layout
    from .paths import Folder
    from .sync import FileSync

GLOBAL = Scope()


class EveryDatabaseSync:
    """Several databases' syncers of one folder (the first: the database the run opened), with the
    surface the CLI and the watcher use of one ``FileSync``."""

    def __init__(self, syncers: Sequence[FileSync], open_syncer: Callable[[str], FileSync] | None = None) -> None:
        """``open_syncer(agent)``: the syncer of ``agent``'s own database, opened (so created) for a
        folder of an agent that has none yet; None: such folders stay unsynced."""
        if not syncers:
            raise ValueError("EveryDatabaseSync needs at least one syncer")
        self.syncers = list(syncers)
        self._open_syncer = open_syncer
        self._attached = False
        for syncer in self.syncers:
            self._hook(syncer)
        first = self.syncers[0]
        self.folder: Folder = first.folder
        self.fmt: Format = first.fmt
        self.max_content_chars = first.max_content_chars

    @property
    def layout(self) -> Layout:
        """Which folder holds which scope, as recorded in the folder (the same for each syncer)."""
        return self.syncers[0].layout

    @property
    def log_problems(self) -> bool:
        return self.syncers[0].log_problems

    @log_problems.setter
    def log_problems(self, value: bool) -> None:
        for syncer in self.syncers:
            syncer.log_problems = value

    def attach(self) -> Callable[[], None]:
        """Reflect every change each database's engine reports in the folder; returns the detach function."""
        self._attached = True
        for syncer in self.syncers:
            syncer.attach()
        return self.detach

    def detach(self) -> None:
        self._attached = False
        for syncer in self.syncers:
            syncer.detach()

    def _open_unsynced(self, scopes: set[Scope] | None) -> None:
        """A syncer for each agent with memory files in the folder (of ``scopes``, else anywhere)
        that no database syncs yet (see the module doc)."""
        if self._open_syncer is None:
            return
        known = {syncer.database_agent for syncer in self.syncers}
        agents = {scope.agent for scope in scopes} if scopes is not None else self._agents_in_folder()
        for agent in sorted(agent for agent in agents if agent is not None and agent not in known):
            syncer = self._open_syncer(agent)
            syncer.log_problems = self.log_problems
            self._hook(syncer)
            if self._attached:
                syncer.attach()
            self.syncers.append(syncer)

    def _hook(self, syncer: FileSync) -> None:
        """Tell ``syncer``'s passes of the other databases of the run (``DatabaseSide``)."""
        syncer.copied_from_others = functools.partial(self._copied_from_others, syncer)
        if cross_moves.can_take_in(syncer.engram.store):
            syncer.moved_from_others = functools.partial(self._moved_from_others, syncer)
            syncer.moving_to_others = functools.partial(self._moving_to_others, syncer)

    def _moved_from_others(self, syncer: FileSync, scope: Scope, ids: list[str]) -> cross_moves.Arrivals:
        """Those of ``ids`` (entries in ``scope``'s folder that ``syncer``'s database does not know)
        moved there by hand from another agent's own database (``_moved_or_copied``): carried into
        ``syncer``'s (``cross_moves.carry``), as stored there now, or refused (``cross_moves.refusal``),
        each with the file of the folder it left."""
        arrivals = cross_moves.Arrivals()
        if scope.agent is None or not ids:
            return arrivals
        for other, memory, home in self._moved_or_copied(syncer, scope, ids)[1]:
            if (refused := cross_moves.refusal(other.engram.store, memory, scope, home)) is not None:
                arrivals.refused[memory.id] = refused
                continue
            after = cross_moves.carry(other.engram.store, syncer.engram.store, syncer.view(scope), memory, scope)
            if after is not None:
                arrivals.taken[after.id] = after
        return arrivals

    def _moving_to_others(self, syncer: FileSync, scope: Scope, ids: set[str]) -> cross_moves.Departures:
        """Of ``ids`` (memories of ``scope`` whose entries left its folder), those that a memory file
        of another agent's folder holds (not when a file there cannot be read): moved there by hand,
        never forgotten here as removed. Each is ``arrived`` when that agent's database holds it as
        its agent's memory (for the pass to ``finish``), else ``leaving``: for that database's pass
        to carry, or to refuse and send its entry back (``cross_moves.refusal``). Only asks."""
        departures = cross_moves.Departures()
        if not ids:
            return departures
        held: dict[str, str] = {}  # id -> the agent whose folder holds it
        for other_scope in self._scopes_in_folder():
            if other_scope.agent is None or other_scope.agent == syncer.database_agent:
                continue
            for found in ids & (self._ids_in_folder_of(other_scope) or set()):
                held[found] = other_scope.agent
        for other in self.syncers:
            if other is not syncer:
                departures.arrived |= {m.id: other.database_agent for m in other.engram.store.get_many(sorted(held))
                                       if m.scope.agent == other.database_agent == held[m.id]}
        departures.leaving = set(held) - set(departures.arrived)
        return departures

    def _copied_from_others(self, syncer: FileSync, scope: Scope, ids: list[str]) -> set[str]:
        """See ``_moved_or_copied``: the ids copied."""
        return self._moved_or_copied(syncer, scope, ids)[0]

    def _moved_or_copied(self, syncer: FileSync, scope: Scope,
                         ids: list[str]) -> tuple[set[str], list[tuple[FileSync, Memory, str]]]:
        """Those of ``ids`` (entries in ``scope``'s folder that ``syncer``'s database does not know)
        another database holds as a memory of its own agent that were not moved from there: an
        entry copied from alice's folder into bob's. Imported with its id, bob's database held a
        memory under alice's memory's id (one id, two databases, two agents), where a home with one
        database takes a copy out. So bob's gets a memory of its own with a new id. An entry moved
        keeps its id, as it does with one database, and a move is what ``moves`` takes for one:
        no memory file of alice's folder holds the id any more, and her memory is unchanged since
        her database's last sync (changed since, her pass keeps it and puts its entry back, so
        taking the id too would leave it in two databases). ``global/`` is left to
        ``shared_keys``: every database holds its memories under their ids. Returns the ids copied,
        and each memory moved with the syncer of the database holding it and the file its entry
        was in there (``cross_moves``)."""
        if scope.agent is None or not ids:
            return set(), []
        copied: set[str] = set()
        moved: dict[str, tuple[FileSync, Memory, str]] = {}
        held: dict[Scope, set[str] | None] = {}
        for other in self.syncers:
            if other is syncer:
                continue
            recorded: sync_state.SyncState | None = None
            for memory in other.engram.store.get_many([i for i in ids if i not in copied]):
                if memory.scope.agent is None:
                    continue
                if memory.scope not in held:
                    held[memory.scope] = self._ids_in_folder_of(memory.scope)
                ids_there = held[memory.scope]
                if recorded is None:
                    recorded = other.recorded_state()
                was = recorded.entries.get(memory.id) if recorded is not None else None
                if ids_there is None or memory.id in ids_there or was is None or was.digest != memory_digest(memory):
                    copied.add(memory.id)
                else:
                    moved[memory.id] = (other, memory, was.path)
        return copied, [found for i, found in moved.items() if i not in copied]

    def _ids_in_folder_of(self, scope: Scope) -> set[str] | None:
        """The ids the memory files of ``scope``'s folder hold, as parsed (an id another entry
        links to is no entry); None when one of them cannot be read (so nothing is taken over)."""
        rel_dir = self.layout.scope_dir(scope)
        ids: set[str] = set()
        try:
            files = [rel for rel, is_link in self.folder.walk(rel_dir)
                     if not is_link and layout.directly_in(rel, rel_dir) and rel.endswith(self.fmt.suffixes)]
            for rel in files:
                parsed = self.fmt.parse(self.folder.read_text(rel), rel, max_content_chars=self.max_content_chars).parsed
                if parsed.broken:
                    return None
                ids |= {e.id for e in parsed.entries if e.id} | parsed.invalid_ids
        except (PathRefused, OSError, ValidationError):
            return None
        return ids

    def _agents_in_folder(self) -> set[str]:
        """The agents whose folders (their own or their sessions') hold memory files."""
        return {scope.agent for scope in self._scopes_in_folder() if scope.agent}

    def _scopes_in_folder(self) -> set[Scope]:
        """The scopes of agents' folders (their own or their sessions') that hold memory files."""
        scopes: set[Scope] = set()
        for rel, is_link in self.folder.walk():
            if is_link or not rel.startswith(("agents/", "sessions/")):
                continue
            try:
                where = self.layout.locate(rel, self.fmt.suffixes)
            except ValidationError:
                continue  # a name that is no agent's: the pass reports it
            if where is not None:
                scopes.add(where[0])
        return scopes

    def sync(self, scopes: Iterable[Scope] | None = None,
             progress: Callable[[str, int, int], None] | None = None) -> SyncReport:
        """One pass of each database over its part of ``scopes`` (default: all of it), then
        ``global/`` again for each database that passed before the last one that wrote there."""
        wanted = None if scopes is None else set(scopes)
        self._open_unsynced(wanted)
        report = SyncReport()
        backups: list[str] = []  # each database may take one, each said with its agent

        def run(syncer: FileSync, scopes: set[Scope] | None, again: bool = False) -> SyncReport:
            # Each database's pass counts its own folders: the phase names its agent (and the
            # second pass over global/), so a count starting again from 0 is read as the next
            # database's, not as the run going back.
            where = f"{'global/ again in ' if again else ''}agent {syncer.database_agent}'s database"
            own = None if progress is None else (lambda phase, done, total: progress(f"{phase} {where}", done, total))
            part = syncer.sync(scopes, own)
            if part.backup:
                backups.append(f"agent {syncer.database_agent}'s database: {part.backup}")
            report.merge(part)
            return part

        last_writer = -1
        for n, syncer in enumerate(self.syncers):
            if wanted is not None and not any(syncer.owns(scope) for scope in wanted):
                continue  # none of its folders: a pass would only read the folder and rewrite its state
            if _wrote_global(run(syncer, wanted)):
                last_writer = n
        if wanted is None or GLOBAL in wanted:
            for syncer in self.syncers[:last_writer]:
                run(syncer, {GLOBAL}, again=True)
        report.backup = "; ".join(backups) or None
        return _once_each(report)

    def sync_dirs(self, rel_dirs: Iterable[str]) -> SyncReport:
        """A pass over the scope folders named (the watcher's unit), each in the databases it is
        synced by; unknown folders are reported (``sync.pass_over_dirs``)."""
        return pass_over_dirs(self.layout, rel_dirs, self.sync)


def _wrote_global(report: SyncReport) -> bool:
    """Whether a pass changed ``global/`` (a file written, a conflict kept), which the databases
    that passed before it have not read."""
    part = report.by_scope.get(GLOBAL)
    return part is not None and bool(part.files_written or part.conflicts)


def _once_each(report: SyncReport) -> SyncReport:
    """``report`` with each file, conflict and problem named once: every database's pass reads
    ``global/`` and the whole folder's names, so a file both wrote, or a misplaced file both met,
    would be listed once per database."""
    report.files_written = list(dict.fromkeys(report.files_written))
    report.conflicts = list(dict.fromkeys(report.conflicts))
    report.problems = list(dict.fromkeys(report.problems))
    return report
