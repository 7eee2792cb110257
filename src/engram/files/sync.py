"""Two-way sync between the database and the memory folder: ``FileSync`` and how its passes run.

Database→files runs on every engine event (except the sync's own, ``origin == "sync"``),
files→database on demand (``sync``) or from the watcher. Events that arrive while a pass runs
(concurrent stores of a server) are reflected together by the next pass, one pass for all of them
(``engram.drain``), and each caller returns after a pass that began after its change. That pass is
a quick one when the files it touches are as the last pass left them; otherwise, and for
``sync``, a full pass reads the scope whole. ``FileSync`` holds what every pass shares (the folder
and its format, the layout, the folder lock, the sync state as last saved, the engine's views)
and decides which pass runs. It is the one composition point: each pass is handed what it uses,
the folder and the engine as two frozen records (``sides``), with the sync state and its report,
and none reads the syncer itself. The passes live beside it:

- ``mirror``: the quick pass, only the changed entries written, into files kept parsed.
- ``folder_names``: folders named as earlier versions named them, renamed first by a full pass.
- ``scan``: what a full pass covers (memory files by scope, each scope's memories).
- ``reconcile``: one scope folder settled entry by entry against the sync state (``state``); its
  docstring has the table of what each difference means.
- ``moves``: an entry moved by hand into a folder settled before its old one, taken over there.
- ``links``: the links of entries a pass imported, made once all its folders are settled.
- ``write``: a pass's changed files written back (atomically, split, or appended to).
- ``sides``: ``FolderSide`` and ``DatabaseSide``, what a pass is handed of each side.
- ``report``: ``SyncReport``, what a pass did; ``wiring``: ``attach_from_settings`` at start-up.
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING

from engram.drain import Drain
from engram.errors import ValidationError
from engram.events import MemoryEvent
from engram.model import Memory, Scope
from engram.store.base import keeps_nothing

from . import folder_names, layout, links, moves
from . import state as sync_state
from .document import get_format
from .entry import Problem
from .links import PendingLink
from .mirror import QuickPass
from .paths import Folder
from .reconcile import PassCount, reconcile, weight
from .report import SyncReport, memory_off
from .scan import list_scope, scan, state_scopes
from .settings import FilesSettings
from .sides import DatabaseSide, FolderSide, belongs
from .wiring import attach_from_settings, database_agent, wait_for
from .write import Journal, identity, stat_of

if TYPE_CHECKING:
    from engram.config import Settings
    from engram.engine import Engram

    from .cross_moves import Arrivals, Departures

log = logging.getLogger("engram.files")
# Engine events one database→files pass reflects at most (a bulk event counts as one; a write
# batch's events, announced together, are never split).
MAX_EVENTS_PER_PASS = 256
# Said once a pass, not per file: the per-type JSON files (``files.type_json``) are write-only copies.
TYPE_JSON_NOT_READ = ("{} file(s) changed or added by hand are not read back: the per-type JSON files "
                      "(files.type_json) are write-only copies of the database; an edited copy is rewritten from "
                      "the database, a new file left as it is. Edit memories in the markdown or YAML files, or "
                      "import JSON files with `engram import DIR` from a folder outside the memory folder")


class FileSync:
    """Keeps one memory folder and one engine's store in agreement."""

    def __init__(
        self,
        engram: Engram,
        root: Path,
        *,
        format: str = "markdown",
        group_by: layout.GroupBy = "tag",
        type_json: bool = False,
        max_file_bytes: int = 5_000_000,
        max_forget_share: float = 0.5,
        session_folders: layout.SessionFolders = "agent/session",
        database_agent: str | None = None,
        create_folder: bool = True,
    ) -> None:
        """``create_folder``: make the folder when it is missing; False for a syncer that only
        reads (the conflicts listing), which must leave a new home as it found it.
        ``database_agent``: the agent whose own database the engine's is
        (``per_agent_databases``), None for a database of every agent. Each such database syncs
        only its part of the folder, ``global/`` and that agent's folders, with a sync state of its
        own (``state.files_for``): other agents' folders belong to their databases."""
        self.engram = engram
        self.database_agent = database_agent
        # Each pass's problems go to the log for a server or mirror, where no one reads its report;
        # False when the caller shows every report itself (the CLI), which printed each one twice.
        self.log_problems = True
        # With ClawCode's session folders, whose sessions sit in sessions/<session>/ is the
        # folder's to say (``sync_state.session_owner``), read at the first pass.
        self._layout = layout.Layout(session_folders, engram.scope.agent or "default")
        self._layout_read = session_folders != "session"
        self.folder = Folder(root, max_file_bytes=max_file_bytes, create=create_folder)
        self.fmt = get_format(format)
        self.group_by = group_by
        self.type_json = type_json
        self.max_forget_share = max_forget_share
        self.max_content_chars = engram.max_content_chars
        self._lock = threading.RLock()
        self._views: dict[Scope, Engram] = {}
        self._unsubscribe: Callable[[], None] | None = None
        self._identity: str | None = None
        # Event batches announced at once (by concurrent callers) reflected in one pass.
        self._events: Drain[list[MemoryEvent], None] = Drain(self._reflect, MAX_EVENTS_PER_PASS, len)
        # The quick pass, with the files it keeps parsed (``mirror``); the state as this syncer
        # last saved it, with what that left on disk (its two files' ``stat``).
        self._quick = QuickPass(self.folder.max_file_bytes)
        self._state: tuple[sync_state.Written, sync_state.SyncState] | None = None
        self._state_files = sync_state.files_for(database_agent)
        # Set by the operator's run over every agent's database (``every_database``): see ``DatabaseSide``.
        self.copied_from_others: Callable[[Scope, list[str]], set[str]] | None = None
        self.moved_from_others: Callable[[Scope, list[str]], Arrivals] | None = None
        self.moving_to_others: Callable[[Scope, set[str]], Departures] | None = None

    @classmethod
    def from_settings(cls, engram: Engram, settings: Settings, *, reading: bool = False) -> FileSync:
        """``reading``: the syncer only reads the folder (``create_folder`` off), as one over a store
        that keeps nothing (memory off), whose passes leave the folder alone (``sync``)."""
        files: FilesSettings = settings.files
        return cls(engram, files.folder(settings.home), format=files.format, group_by=files.group_by,
                   type_json=files.type_json, max_file_bytes=files.max_file_bytes,
                   max_forget_share=files.max_forget_share, session_folders=files.session_folders,
                   database_agent=database_agent(engram, settings),
                   create_folder=not reading and not keeps_nothing(engram.store))

    # --- wiring ----------------------------------------------------------------------------
    def attach(self) -> Callable[[], None]:
        """Reflect every change the engine reports in the folder; returns the detach function."""
        if self._unsubscribe is None:
            self._unsubscribe = self.engram.events.subscribe_batches(self._on_events)
        return self.detach

    def detach(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    @property
    def layout(self) -> layout.Layout:
        """Which folder holds which scope, as recorded in the folder."""
        if not self._layout_read:
            with self._lock, sync_state.locked(self.folder):
                self._read_layout()
        return self._layout

    def _read_layout(self) -> None:
        """Settle the layout (under the folder lock, before a pass looks at any path)."""
        if not self._layout_read:
            owner = sync_state.session_owner(self.folder, self._layout.owner)
            self._layout = layout.Layout(self._layout.sessions, owner)
            self._layout_read = True

    @property
    def off(self) -> str | None:
        """Why this syncer leaves the folder alone (``report.memory_off``: memory is off), or None."""
        return memory_off(self.engram)

    def owns(self, scope: Scope) -> bool:
        """Whether ``scope``'s folder is this database's to sync (see ``database_agent``)."""
        return belongs(self.database_agent, scope)

    def _folder_side(self) -> FolderSide:
        """The folder as a pass is handed it (``sides``): built per pass, from the layout as read."""
        return FolderSide(self.folder, self.fmt, self.layout, self.group_by, self.max_content_chars,
                          self.database_agent)

    def _database_side(self) -> DatabaseSide:
        """The engine as a pass is handed it (``sides``): its store, clock and backup guard, with
        this syncer's views (``view``) for the writes."""
        return DatabaseSide(self.engram.store, self.view, self.engram.clock, self.engram.guard, self.copied_from_others,
                            moved_from_others=self.moved_from_others, moving_to_others=self.moving_to_others)

    def _on_events(self, events: Sequence[MemoryEvent]) -> None:
        # The sync's own writes are already in the files.
        outside = [event for event in events if event.origin != "sync"]
        if outside:
            try:
                self._events.submit(outside)
            except sync_state.HandedOver as exc:
                # Said once, not at every write: the store's writes went on; its folder is another store's now.
                # A warning: the write succeeded, so a command exits 0, and says so as `warning: ...` (an
                # `error: ...` line there read as a failure that did not happen).
                self.detach()
                log.warning("%s; this process stops writing the memory folder", exc)

    def _reflect(self, batches: list[list[MemoryEvent]]) -> list[None]:
        """The changes of the ``batches`` of events written into the folder (the leader's share of
        the event drain): by the quick pass where it can, else by a full pass over their scopes."""
        memories = [m for events in batches for event in events for m in event.memories]
        memories += self._linked_to_forgotten(batches)
        ids_by_scope: dict[Scope, set[str]] = defaultdict(set)
        for memory in memories:
            if self.owns(memory.scope):
                ids_by_scope[memory.scope].add(memory.id)
        with self._lock:
            with sync_state.locked(self.folder):
                self._read_layout()
                st, written = self._load_state()
                journal = Journal(written)
                full: set[Scope] = set()
                changed_files: set[str] = set()
                side = self._folder_side()
                for scope, why in folder_names.unnamable(side, ids_by_scope).items():
                    log.warning("%s", why)  # (the mirror's pass: no report for anyone to show)
                    del ids_by_scope[scope]
                for scope, ids in ids_by_scope.items():
                    # A folder of an earlier version's name is renamed by the full pass first: a
                    # file written for its scope now would make a second folder of the scope.
                    touched = None if folder_names.named_as_is(side, scope) else self._reflect_quickly(
                        scope, ids, st, journal)
                    if touched is None:
                        full.add(scope)
                    else:
                        changed_files |= touched
                if len(full) < len(ids_by_scope):
                    changed = [i for scope, ids in ids_by_scope.items() if scope not in full for i in ids]
                    self._save_state(st, journal.written, changed, changed_files)
            if full:
                report = self.sync(full)
                if not self.log_problems:  # left to a caller showing reports; this pass's has none
                    for problem in report.problems:
                        log.warning("%s", problem)
                # Nobody shows this pass's report: a change that met a hand edit of the same entry
                # would otherwise leave its conflict unsaid until someone ran `engram conflicts`.
                for path in report.conflicts:
                    log.warning("memory folder: an entry this change touched is in conflict; the memory kept is the "
                                "database's and the other version is saved in %s (engram conflicts)", path)
        if self.type_json:
            from . import export

            memories = [m for m in memories if self.owns(m.scope)]
            live = self.engram.store.get_many(list(dict.fromkeys(m.id for m in memories)))
            alive = {m.id for m in live}
            export.write_type_files(self.folder, live)
            export.remove_type_files(self.folder, [m for m in memories if m.id not in alive])
        return [None] * len(batches)

    def _linked_to_forgotten(self, batches: list[list[MemoryEvent]]) -> list[Memory]:
        """The memories still stored that were linked to one forgotten in ``batches``: the store
        dropped those links with it, so their entries are rewritten too, in whichever scope's file
        they are (``global/``, another agent's folder), or a file would keep a dead link until the
        next full pass took it out and reported it. Only the link changes in such an entry. They
        are read here, by the syncer (the operator's copy of the database), never through the
        forgetting view: nothing of them reaches its answer or its event."""
        forgotten = [m for events in batches for event in events if event.kind == "forgotten" for m in event.memories]
        linked = {link for memory in forgotten for link in memory.links} - {memory.id for memory in forgotten}
        return self.engram.store.get_many(sorted(linked)) if linked else []

    def _linked_to_forgotten_here(self, database: DatabaseSide, skip: set[Scope]) -> Iterator[Scope]:
        """The scopes to settle again, one at a time, because this pass forgot memories linked to
        entries in them: an entry removed from its file by hand is forgotten after the scopes
        before it were settled, and the store drops the links to it, so without this the entries
        linked to it (in any scope's file, its own included) kept the dead link until the next
        pass took it out and reported it. Scopes outside the pass's own (a watcher's pass over one
        folder) are settled too; ``skip`` are those the pass could not settle (a folder being
        renamed, or one it cannot name). A scope settled again may forget more (never in practice:
        its files are as this pass wrote them), whose links are followed too. So are, once, the
        scopes of the memories whose links to a moved one the move dropped (``DatabaseSide.cut``):
        another agent's, whose folder may have been settled before the move."""
        ends = sorted({end for mover in database.moved for end in database.cut.get(mover, ())} - database.moved)
        if ends:
            yield from sorted({m.scope for m in self.engram.store.get_many(ends) if self.owns(m.scope)} - skip, key=str)
        done = 0
        while done < len(database.forgotten):
            forgotten, done = database.forgotten[done:], len(database.forgotten)
            gone = {m.id for m in database.forgotten}
            linked = sorted({link for memory in forgotten for link in memory.links} - gone)
            scopes = {m.scope for m in self.engram.store.get_many(linked) if self.owns(m.scope)} if linked else set()
            yield from sorted(scopes - skip, key=str)

    def _reflect_quickly(
        self, scope: Scope, ids: set[str], st: sync_state.SyncState, journal: Journal | None = None
    ) -> set[str] | None:
        """The quick pass over ``ids`` of ``scope`` (``mirror.QuickPass.run``); None sends the scope to the
        full pass."""
        return self._quick.run(self._folder_side(), self.engram.store, scope, ids, st, journal)

    def _load_state(self) -> tuple[sync_state.SyncState, sync_state.Written | None]:
        """The sync state (under the folder lock): the one this syncer saved last while its files
        are unchanged since (reading it back costs a pass ~4 us per memory), else read; with what
        the disk holds when changes may be appended to it (``sync_state.read``). Taken out of the
        cache while a pass changes it: a pass that fails leaves no half-changed copy."""
        kept, self._state = self._state, None
        if kept is not None and (identity(kept[0].state), identity(kept[0].journal)) == (
                stat_of(self.folder, self._state_files.state), stat_of(self.folder, self._state_files.journal)):
            return kept[1], kept[0]
        return sync_state.read(self.folder, self.fmt.name, self._database_identity(), self._state_files)

    def recorded_state(self) -> sync_state.SyncState | None:
        """The sync state this database last saved, read as it is (the cache left alone), for
        another database's pass of the operator's run (``every_database``) under the folder lock it
        holds; None when it cannot be read (a state handed over by ``engram migrate``)."""
        try:
            return sync_state.read(self.folder, self.fmt.name, self._database_identity(), self._state_files)[0]
        except sync_state.HandedOver:
            return None

    def _save_state(self, st: sync_state.SyncState, last: sync_state.Written | None = None,
                    entry_ids: Iterable[str] = (), files: Iterable[str] = ()) -> None:
        """Write ``st`` whole, or, given what this syncer wrote ``last`` (still on disk), only its
        entries ``entry_ids`` and files ``files`` at the end of the journal."""
        if last is None:
            written = sync_state.save(self.folder, st)
        else:
            written = sync_state.append(self.folder, st, last, entry_ids, files)
        self._state = (written, st)

    def _save_durably(self, st: sync_state.SyncState) -> None:
        """Write ``st`` whole and wait for the disk (before folders are renamed, ``folder_names``)."""
        self._state = (sync_state.save(self.folder, st, durable=True), st)

    def _database_identity(self) -> str:
        """Which database the state was recorded against (``sync_state.database_identity``)."""
        if self._identity is None:
            stats = self.engram.store.stats()
            self._identity = sync_state.database_identity(stats.backend, stats.location)
        return self._identity

    def view(self, scope: Scope) -> Engram:
        """The engine as ``scope`` sees it, its writes marked ``origin="sync"`` (not reflected back)."""
        if scope not in self._views:
            agent = scope.agent or self.engram.scope.agent or "default"
            self._views[scope] = self.engram.for_agent(agent, scope.session, origin="sync")
        return self._views[scope]

    # --- passes ----------------------------------------------------------------------------
    def sync(self, scopes: Iterable[Scope] | None = None,
             progress: Callable[[str, int, int], None] | None = None) -> SyncReport:
        """One two-way pass over ``scopes`` (default: every scope in the database or the folder).
        ``progress(phase, done, total)`` counts the files read and the entries settled, weighed
        before the first folder is read (``syncing``: ``reconcile.PassCount``), and the
        entries a folder brings that the database lacks as they are embedded (``embedding``). With
        memory off (a store that keeps nothing) the folder is not touched, and ``off`` says why."""
        if self.off:  # before the lock, which makes the folder's state files
            return SyncReport(off=self.off)
        report = SyncReport()
        with self._lock, sync_state.locked(self.folder):
            self._read_layout()
            st, _ = self._load_state()
            side, database = self._folder_side(), self._database_side()
            renamed, held = folder_names.settle_folders(side, st, report, self._save_durably)
            if renamed:
                self._quick.parsed.clear()  # kept by the paths the files had
            files_by_scope = scan(side, report)
            wanted = None if scopes is None else {scope for scope in scopes if self.owns(scope)}
            db_by_scope: dict[Scope, dict[str, Memory]] = defaultdict(dict)
            if wanted is None:
                for memory in self.engram.store.iter_all():
                    if self.owns(memory.scope):
                        db_by_scope[memory.scope][memory.id] = memory
                all_scopes = set(db_by_scope) | set(files_by_scope) | state_scopes(side, st)
            else:
                for scope in wanted:
                    db_by_scope[scope] = {m.id: m for m in list_scope(self.engram.store, scope)}
                all_scopes = wanted
            unnamed = folder_names.unnamable(side, all_scopes - held)
            for scope, why in unnamed.items():
                report.add_scope(scope, SyncReport(problems=[Problem("sessions/" if scope.session else "agents/", 0, why)]))
            ordered = sorted(all_scopes - held - set(unnamed), key=str)
            pending: list[PendingLink] = []  # imported entries' links, made once every folder is settled
            passed = moves.PassMoves(tuple(ordered))  # the pass's hand moves, shared by its folders
            # The count of the pass (``PassCount``): its files read and entries settled, weighed
            # folder by folder before any is read, so the bar's total is known as it starts.
            count = None if progress is None else PassCount(
                [weight(st, files_by_scope.get(scope, []), db_by_scope.get(scope, {})) for scope in ordered],
                lambda done, total: progress("syncing", done, total))
            for scope in ordered:
                if count is not None:
                    count.folder()
                # Each folder's share kept apart (``SyncReport.seen_by``); one backup a pass at most,
                # which reconcile takes only while the report holds none.
                part = SyncReport(backup=report.backup)
                reconcile(side, database, scope, db_by_scope.get(scope, {}), files_by_scope.get(scope, []), st, part,
                          pending, max_forget_share=self.max_forget_share, passed=passed,
                          progress=None if progress is None else lambda done, total: progress("embedding", done, total),
                          count=count)
                if count is not None:
                    count.folder_done()
                if part.backup is report.backup:
                    part.backup = None  # taken for an earlier folder of the pass, not this one's
                report.add_scope(scope, part)
            report.problems += links.make(database, pending)
            # The old folders of refused hand moves settled before the folders refusing them: the
            # entries are written back there now, not at the next pass (``moves.PassMoves.refused``).
            put_back = sorted(passed.put_back, key=str)
            for scope in chain(put_back, self._linked_to_forgotten_here(database, skip=held | set(unnamed))):
                # Settled again from the store as it is now: only the links the forget dropped differ,
                # or the entries of refused moves missing from their old folder.
                db_by_scope[scope] = {m.id: m for m in list_scope(self.engram.store, scope)}
                part = SyncReport(backup=report.backup)
                reconcile(side, database, scope, db_by_scope[scope], files_by_scope.get(scope, []), st, part, pending,
                          max_forget_share=self.max_forget_share)
                if part.backup is report.backup:
                    part.backup = None
                report.add_scope(scope, part)
            if progress is not None and count is not None:
                progress("syncing", count.total, count.total)
            self._save_state(st)
            if wanted is None and self.type_json:
                from . import export

                # ``db_by_scope`` is the database before this pass took in the files' edits: when the
                # pass changed the database (an entry edited, added, deleted or moved by hand, a link
                # made), it is read again, or those JSON files were one pass late; else it is as read.
                took_edits = (report.db_created or report.db_updated or report.db_forgotten or report.db_moved
                              or pending)
                memories = ([m for m in self.engram.store.iter_all() if self.owns(m.scope)] if took_edits
                            else [m for mems in db_by_scope.values() for m in mems.values()])
                by_hand = export.sync_type_dir(self.folder, memories,
                                               owns=None if self.database_agent is None else self.owns)
                if by_hand:
                    report.problems.append(Problem(f"{layout.TYPES_DIR}/", 0, TYPE_JSON_NOT_READ.format(by_hand),
                                                   skipped=False))
        if self.log_problems:
            for problem in report.problems:
                log.warning("%s", problem)
        return report

    def sync_dirs(self, rel_dirs: Iterable[str]) -> SyncReport:
        """A pass over the scope folders named (the watcher's unit); unknown folders are reported."""
        return pass_over_dirs(self.layout, rel_dirs, self.sync)


def pass_over_dirs(folders: layout.Layout, rel_dirs: Iterable[str], sync: Callable[[set[Scope]], SyncReport]) -> SyncReport:
    """``sync`` over the scopes of the folders ``rel_dirs`` names (the watcher's unit), with a
    problem for each folder that is no scope's: one syncer's or every database's (``every_database``)."""
    scopes: set[Scope] = set()
    report = SyncReport()
    for rel in rel_dirs:
        try:
            scopes.add(folders.scope_of_dir(rel))
        except ValidationError as exc:
            report.problems.append(Problem(rel, 0, str(exc)))
    if scopes:
        report.merge(sync(scopes))
    return report


# What other modules import from here: the syncer, its report, and the start-up wiring.
__all__ = ["MAX_EVENTS_PER_PASS", "FileSync", "SyncReport", "attach_from_settings", "database_agent", "wait_for"]
