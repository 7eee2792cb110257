"""One scope folder settled against the database: the full pass's unit of work (``reconcile``).

A scope folder (``global/``, ``agents/<a>/``, ``sessions/<a>/<s>/``) has its files parsed and its
memories listed, and every entry id is settled against the sync state (``state``), which holds
each entry's hash at the last sync:

| database vs file          | what happened           | action                                          |
|---------------------------|-------------------------|-------------------------------------------------|
| equal                     | nothing                 | record                                          |
| file == last              | database changed        | rewrite the entry in its file                   |
| database == last          | file changed            | ``Engram.remember`` (origin ``sync``)           |
| both differ from last     | both changed            | database wins; file text kept in ``.conflict``  |
| both, one only importance | engine and person      | both kept (``_one_side_only_importance``)       |
| only in database, new     | written in the database | add to the file of its group                    |
| only in database, synced  | removed from the file   | ``Engram.forget`` (database changed it too: put back + conflict) |
| only in file, no id       | added by hand           | ``Engram.remember``; the bullet gets its id     |
| only in file, unknown id  | copied/restored folder  | imported with its id, key and times             |
| only in file, synced      | forgotten in database   | removed from the file (or, if edited there too: conflict) |
| only in file, synced in another scope's folder, gone from there | moved by hand | its memory moved here (``moves``) |
| moved by hand, edited, move refused | moved where it may not go | memory stays; edit in ``.conflict`` (``move-refused``) |
| in files twice            | a copied entry          | one copy stays the entry, the others leave their files (``repeats``) |
| a key in two databases    | two agents' globals     | the earliest stays, the others ``same-key`` conflicts (``shared_keys``) |

Entries that are present but invalid, and files that cannot be read, are never taken as
deletions: their ids are left alone until the file is fixed. An imported entry's links are
made by the syncer once the whole pass is settled, and a link typed into a known entry's marker
is reported as the entry is rewritten (``links``). The changed files are then written
(``write``). Which scopes and files a pass covers, and the lock and state around it, are
``FileSync.sync``'s (with ``scan``); it hands each scope the two sides it settles (``sides``): the
folder (``side``) and the engine (``database``).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from engram import jsondoc, snapshot
from engram.errors import EngramError, ValidationError
from engram.model import Memory, Scope

from . import conflicts, cross_moves, layout, moves, removals, repeats, shared_keys
from . import state as sync_state
from .document import Document
from .entry import Entry, Problem, from_memory, hashes_as_but_for_importance, iso, memory_digest, store_entry, utc
from .links import PendingLink, dropped
from .paths import PathRefused
from .report import SyncReport
from .sides import DatabaseSide, FolderSide
from .write import ScopeFiles, doc_for, exists, write_files

if TYPE_CHECKING:
    from engram.privacy import PiiPolicy
    from engram.store.base import MemoryStore


def reconcile(
    side: FolderSide,
    database: DatabaseSide,
    scope: Scope,
    db: dict[str, Memory],
    rels: list[str],
    st: sync_state.SyncState,
    report: SyncReport,
    pending: list[PendingLink],
    *,
    max_forget_share: float,
    passed: moves.PassMoves | None = None,
    progress: Callable[[int, int], None] | None = None,
    count: PassCount | None = None,
) -> None:
    """Settle ``scope``'s folder, its files ``rels`` against its memories ``db``, as the table
    above says; ``st`` and ``report`` are changed in place, and the links of imported entries are
    added to ``pending``, for the syncer to make once every folder of the pass is settled
    (``links``). ``max_forget_share``: see ``removals``. ``passed``: the hand moves of the pass
    (``moves.PassMoves``): the memories an earlier folder took over, which ``db``, listed when the
    pass began, still shows here, and those it moved into this folder; this folder's are added.
    ``progress(done, total)`` follows the embedding of the entries imported with their ids (a
    copied or restored folder: the bulk of a first pass). ``count`` hears of the work as it is
    done: each file read, weighed by the entries the state places in it, then each entry settled
    (``PassCount``, which ``FileSync.sync`` weighs each folder with beforehand: ``weight``)."""
    scope_dir = side.layout.scope_dir(scope)
    passed = moves.PassMoves() if passed is None else passed
    if passed.taken:
        db = {i: m for i, m in db.items() if i not in passed.taken}
    files = ScopeFiles()
    # Whether the last pass left memories in a file is the state's index (``Entries.holds``):
    # counting them over every entry of the state, per scope, made a full pass quadratic.
    for rel in rels:
        _load(side, rel, files, report, st.entries.holds(rel))
        if count is not None:
            count.step(_read_weight(st, rel))
    # Entries the state places in this scope whose file has vanished or cannot be read.
    for entry_state in st.entries.values():
        if layout.directly_in(entry_state.path, scope_dir) and entry_state.path not in files.docs:
            if entry_state.path not in files.unreadable and exists(side.folder, entry_state.path):
                _load(side, entry_state.path, files, report, held=True)

    copies: dict[str, list[tuple[str, Entry]]] = defaultdict(list)
    new: list[tuple[str, Entry]] = []
    untouchable: set[str] = set()
    for rel, doc in files.docs.items():
        untouchable |= doc.parsed.invalid_ids
        for entry in doc.parsed.entries:
            if entry.id is None:
                new.append((rel, entry))
            else:
                copies[entry.id].append((rel, entry))
    for i, entry_state in st.entries.items():
        if entry_state.path in files.unreadable:
            untouchable.add(i)
    in_files, moved = _part_repeats(side, database.store, database.view(scope).privacy, scope, copies, db, st, files,
                                    report, untouchable)
    # Made this scope's before anything is settled: each then settled as an entry of this folder.
    arrived, rekeyed = moves.take_over(side, database, scope, moved, in_files, files.docs, st, passed, report)
    files.dirty |= rekeyed
    # Moved by hand from another agent's own database (the operator's run): taken in with its history.
    db = {**db, **arrived, **cross_moves.take_in(side, database, scope, in_files, db, st, files, report, untouchable)}

    ids = set(db) | set(in_files) | {i for i, e in st.entries.items() if layout.directly_in(e.path, scope_dir)}
    unknown = [(rel, e) for rel, e in in_files.values() if e.id not in db and e.id not in st.entries]
    removed: list[removals.Removal] = []
    for entry_id in sorted(ids - untouchable):
        _settle(side, database, entry_id, scope, db.get(entry_id), in_files.get(entry_id), st, files, report, removed,
                move_refused=passed.turned_away.get(entry_id) == scope)
        if count is not None:
            count.step(1)
    _forget_removed(side, database, scope, removed, st, files, report, max_forget_share)
    if side.shared(scope):
        unknown = shared_keys.settle(side, database, scope, unknown, st, files, report)
    # An id an agent's own database has never seen that another scope's folder still holds: a copy (``moves``).
    copied = moves.held_elsewhere(side, scope, {e.id for _, e in unknown if e.id})
    new.extend((rel, _without_id(entry)) for rel, entry in unknown if entry.id in copied)
    unknown = [(rel, entry) for rel, entry in unknown if entry.id not in copied]
    _import_with_ids(database, scope, unknown, st, files, report, new, pending, progress)
    _add_new(database, scope, new, st, files, report)
    write_files(side.folder, side.fmt, files, st, report, max_content_chars=side.max_content_chars)
    side.held.reread(files.written)  # the later folders' questions of the pass see them as written (``held``)

# Entries settled between two reports of a pass's count (``PassCount``): a report per entry
# would redraw the bar 20,000 times in a 20,000-memory pass.
_REPORT_EVERY = 100


def _read_weight(st: sync_state.SyncState, rel: str) -> int:
    """What reading the file ``rel`` counts: the entries the state places in it (parsing takes
    the longer the more it holds), 1 for a file the state knows nothing in."""
    return max(1, len(st.entries.ids_in(rel)))


def weight(st: sync_state.SyncState, rels: list[str], db: dict[str, Memory]) -> int:
    """The work ``reconcile`` counts for a scope folder, known before it is read: its files ``rels``
    as read (``_read_weight``), and the entries it will settle, as many as its memories ``db`` or
    the entries the state places in those files, whichever is more (the ids it settles are both)."""
    held = sum(len(st.entries.ids_in(rel)) for rel in rels)
    return sum(_read_weight(st, rel) for rel in rels) + max(len(db), held)


class PassCount:
    """How far a full pass is, as ``progress(done, total)``: the scope folders' ``weight``s added
    up, so the count moves as files are read and entries settled (a home's one folder holding
    thousands of memories is most of its pass), not a folder at a time. A folder's count never
    passes its weight (the state or the database may hold fewer than it settles) and is made
    whole as the folder ends (or more than it settles), so the count only rises."""

    def __init__(self, weights: list[int], progress: Callable[[int, int], None]) -> None:
        self.total, self.done, self._end, self._shown = sum(weights), 0, 0, -1
        self._weights, self._progress = iter(weights), progress

    def folder(self) -> None:
        """The next folder begins: the count may rise by its weight."""
        self._report(force=True)
        self._end += next(self._weights)

    def step(self, n: int) -> None:
        """``n`` more of the folder's work done."""
        self.done = min(self.done + n, self._end)
        self._report()

    def folder_done(self) -> None:
        """The folder is settled: its weight counted whole."""
        self.done = self._end
        self._report(force=True)

    def _report(self, force: bool = False) -> None:
        if self.done != self._shown and (force or self.done - self._shown >= _REPORT_EVERY):
            self._progress(self.done, self.total)
            self._shown = self.done


def _part_repeats(
    side: FolderSide,
    store: MemoryStore,
    privacy: PiiPolicy,
    scope: Scope,
    copies: dict[str, list[tuple[str, Entry]]],
    db: dict[str, Memory],
    st: sync_state.SyncState,
    files: ScopeFiles,
    report: SyncReport,
    untouchable: set[str],
) -> tuple[dict[str, tuple[str, Entry]], dict[str, Memory]]:
    """Each id's one entry in this scope's files: of copies of an entry, the others are taken
    out of their files (``repeats``). So is a copy of an entry of another scope's folder
    (where the state records it and its file still holds it), leaving nothing to settle here.
    An entry its old folder no longer holds was moved here: returned with the memory of the
    other scope it is (``moves.moved_here``), for ``moves.take_over``. A copy set in conflict is
    kept as ``privacy`` stores it (``conflicts.as_stored``)."""
    scope_dir = side.layout.scope_dir(scope)
    in_files: dict[str, tuple[str, Entry]] = {}
    moved: dict[str, Memory] = {}
    elsewhere: dict[str, Document | None] = {}  # other scopes' files read for this, parsed
    folders: dict[str, dict[str, set[str]] | None] = {}  # the ids in other scopes' folders (``moves``)
    for entry_id, found in copies.items():
        prev, memory = st.entries.get(entry_id), db.get(entry_id)
        if entry_id in untouchable:
            in_files[entry_id] = found[0]  # a copy is invalid: all are left as they are until it is fixed
            continue
        kept: tuple[str, Entry] | None = None
        others: list[tuple[str, Entry]] = []
        if memory is None and prev is not None and not layout.directly_in(prev.path, scope_dir):
            original = _entry_in(side, prev.path, entry_id, elsewhere)
            stored = store.get_many([entry_id]) if original is not None else []
            if stored:
                kept, others, memory = (prev.path, original), found, stored[0]
            elif original is None and (
                    mover := moves.moved_here(side, store, scope, entry_id, prev, [e for _, e in found], elsewhere, folders)):
                moved[entry_id] = mover
        if kept is None:
            if len(found) == 1:
                in_files[entry_id] = found[0]
                continue
            i = repeats.holder(found, prev)
            kept, others = found[i], found[:i] + found[i + 1:]
            in_files[entry_id] = kept
        unchanged = {kept[1].digest()} | ({prev.digest} if prev else set()) | (
            {memory_digest(memory)} if memory else set())
        parted = repeats.part(side.folder, side.fmt, entry_id, kept, others, files.docs, unchanged, side.layout, privacy)
        files.dirty |= parted.files
        report.files_removed += parted.removed
        report.conflicts += parted.conflicts
        report.problems += parted.problems
    return in_files, moved

def _entry_in(side: FolderSide, rel: str, entry_id: str, read: dict[str, Document | None]) -> Entry | None:
    """The valid entry ``entry_id`` in the file ``rel`` of another scope this database syncs
    (parsed once a pass into ``read``), or None."""
    if rel not in read:
        read[rel] = None
        try:
            if side.owns(side.layout.scope_of_dir(rel.rsplit("/", 1)[0])):
                read[rel] = side.parse(side.folder.read_text(rel), rel)
        except (ValidationError, PathRefused, OSError):
            pass  # no such scope folder, or the file is gone or unreadable: nothing to compare with
    doc = read[rel]
    return None if doc is None else next((e for e in doc.parsed.entries if e.id == entry_id), None)

def _load(side: FolderSide, rel: str, files: ScopeFiles, report: SyncReport, held: bool = False) -> None:
    """Read and parse the file ``rel`` into ``files``; ``held``: the last pass left memories in it."""
    try:
        text = side.folder.read_text(rel)
    except FileNotFoundError:
        return
    except (PathRefused, OSError) as exc:
        report.problems.append(Problem(rel, 0, f"not read: {exc}"))
        files.unreadable.add(rel)
        return
    if held and not text:
        # Zero bytes where memories were: an editor or disk that failed mid-save, far likelier
        # than a deliberate wipe (which leaves the heading). Taken as a vanished file.
        files.emptied.add(rel)
        # Written again from the database as a vanished file is: under its heading (parsing the
        # zero bytes gave a document without one).
        doc = side.fmt.new(layout.title(rel.rsplit("/", 1)[-1].rsplit(".", 1)[0]))
    else:
        doc = side.parse(text, rel)
    report.problems.extend(doc.parsed.problems)
    if doc.parsed.broken:
        files.unreadable.add(rel)
        return
    files.docs[rel] = doc
    files.originals[rel] = text

def _settle(
    side: FolderSide,
    database: DatabaseSide,
    entry_id: str,
    scope: Scope,
    memory: Memory | None,
    found: tuple[str, Entry] | None,
    st: sync_state.SyncState,
    files: ScopeFiles,
    report: SyncReport,
    removed: list[removals.Removal],
    *,
    move_refused: bool = False,
) -> None:
    """One id of ``scope``'s folder settled as the module's table says. ``move_refused``: its entry
    was moved into this folder by hand and the move refused (``moves.take_over``); an edit made on
    the way is kept as a ``move-refused`` conflict, its memory not forgotten nor another scope's."""
    prev = st.entries.get(entry_id)
    if memory is not None and found is not None:
        rel, entry = found
        redated = _date_edited(entry, memory)
        # The store's links: a memory the engine hands back lists only those its view may read.
        stored_links = memory.links
        db_hash, file_hash = memory_digest(memory), entry.digest()
        if db_hash == file_hash:
            if (entry.links, entry.superseded_by, entry.superseded_at) != (
                memory.links, memory.superseded_by, memory.superseded_at
            ):
                files.docs[rel].replace(entry_id, from_memory(memory))
                files.dirty.add(rel)
        elif prev is not None and file_hash == prev.digest:
            files.docs[rel].replace(entry_id, from_memory(memory))
            files.dirty.add(rel)
            report.files_updated += 1
        elif prev is not None and db_hash == prev.digest:
            applied = _apply(database, memory, entry, report)
            if applied is not memory:  # (not when the edit was refused: the file keeps it, reported)
                _show_as_stored(files, rel, entry, applied, report)
            memory = replace(applied, links=stored_links)
            db_hash = memory_digest(memory)
        elif (merged := _one_side_only_importance(memory, entry, prev)) is not None:
            memory = replace(_apply(database, memory, merged, report), links=stored_links)
            db_hash = memory_digest(memory)
            files.docs[rel].replace(entry_id, from_memory(memory))
            files.dirty.add(rel)
            report.files_updated += 1
        else:
            report.conflicts.append(conflicts.keep(side.folder, side.fmt, entry_id=entry_id, file=rel,
                                                   kind="both-changed", losing=[entry],
                                                   privacy=database.view(scope).privacy))
            files.docs[rel].replace(entry_id, from_memory(memory))
            files.dirty.add(rel)
            report.files_updated += 1
            entry = replace(entry, links=stored_links)  # its file text, links and all, is in the .conflict
        if lost := dropped(database, memory, entry.links, rel, entry.line):
            # Links are the database's (see ``links``): the entry is rewritten, and what it loses said.
            report.problems += lost
            files.docs[rel].replace(entry_id, from_memory(memory))
            files.dirty.add(rel)
        if entry.key is not None and entry.key != memory.key and memory.id not in database.moved:
            # A key is the database's too (a memory's key never changes): typed into the entry of a
            # memory it holds, it was left in the file unsaid, the two sides disagreeing at every pass.
            # (An entry moved where its key was taken has a new one, said by the move's own note.)
            report.problems.append(Problem(rel, entry.line, _key_put_back(entry_id, entry.key, memory.key)))
            files.docs[rel].replace(entry_id, from_memory(memory))
            files.dirty.add(rel)
        if redated is not None:
            report.problems.append(Problem(rel, entry.line, redated))
            files.docs[rel].replace(entry_id, from_memory(memory))
            files.dirty.add(rel)
        st.entries[entry_id] = sync_state.EntryState(rel, db_hash, memory.importance)
    elif memory is not None:
        db_hash = memory_digest(memory)
        if prev is not None and (db_hash == prev.digest or _only_importance_changed(memory, prev)
                                 or moves.moved_out_after_importance_changed(side, scope, memory, prev)):
            if prev.path not in files.docs and exists(side.folder, prev.path):
                return  # its file is there but was not read (reported): no deletion seen
            removed.append(removals.Removal(entry_id, prev.path, memory))  # settled with the others
            return
        rel = prev.path if prev is not None and prev.path in files.docs else side.file_for(memory)
        doc = doc_for(side.folder, side.fmt, rel, files)
        if doc is None:
            report.problems.append(Problem(rel, 0, f"cannot write entry {entry_id} until this file is fixed"))
            return
        if prev is not None:
            report.conflicts.append(conflicts.keep(side.folder, side.fmt, entry_id=entry_id, file=rel,
                                                   kind="deleted-in-file", losing=[],
                                                   privacy=database.view(scope).privacy))
        doc.add(from_memory(memory))
        files.dirty.add(rel)
        report.files_added += 1
        st.entries[entry_id] = sync_state.EntryState(rel, db_hash, memory.importance)
    elif found is not None and prev is not None:
        rel, entry = found
        if entry.digest() != prev.digest:
            report.conflicts.append(conflicts.keep(side.folder, side.fmt, entry_id=entry_id, file=rel,
                                                   kind="move-refused" if move_refused else "deleted-in-database",
                                                   losing=[entry],
                                                   privacy=database.view(scope).privacy))
        files.docs[rel].remove(entry_id)
        files.dirty.add(rel)
        report.files_removed += 1
        del st.entries[entry_id]
    elif found is None and prev is not None:
        del st.entries[entry_id]  # gone on both sides

def _forget_removed(side: FolderSide, database: DatabaseSide, scope: Scope, removed: list[removals.Removal],
                    st: sync_state.SyncState, files: ScopeFiles, report: SyncReport, max_forget_share: float) -> None:
    """Forget what was removed from files, except from vanished files (put back as conflicts),
    backing up first when it is a whole file or a large share (see ``removals``)."""
    gone = [r for r in removed if r.file in files.emptied or not exists(side.folder, r.file)]
    for removal in gone:
        doc = doc_for(side.folder, side.fmt, removal.file, files)
        if doc is None:
            continue
        doc.add(from_memory(removal.memory))
        files.dirty.add(removal.file)
        report.files_added += 1
        report.conflicts.append(conflicts.keep(side.folder, side.fmt, entry_id=removal.entry_id,
                                               file=removal.file, kind="file-vanished", losing=[],
                                               privacy=database.view(scope).privacy))
    rest = [r for r in removed if r not in gone]
    # Moved by hand into a folder settled later (or not in this pass): that folder's pass takes them over.
    elsewhere = moves.held_in_other_folders(side, scope, {r.entry_id for r in rest})
    if database.moving_to_others is not None:  # moved to another agent's folder (``cross_moves``)
        departures = database.moving_to_others(scope, {r.entry_id for r in rest} - elsewhere)
        elsewhere |= departures.leaving | set(departures.arrived)
        _finish_moves(database, scope, [r for r in rest if r.entry_id in departures.arrived], departures.arrived,
                      st, report)
    rest = [r for r in rest if r.entry_id not in elsewhere]
    scope_dir = side.layout.scope_dir(scope)
    if rest and report.backup is None and removals.needs_backup(rest, st, scope_dir, max_forget_share):
        try:
            report.backup = removals.back_up(database.guard, side.folder, rest)
        except (EngramError, OSError) as exc:
            report.problems.append(Problem(scope_dir + "/", 0, f"{len(rest)} removed entries not forgotten:"
                                                      f" the backup before forgetting them failed: {exc}"))
            return
    for removal in rest:
        database.forget(scope, removal.memory, reason="removed from its memory file")
        report.db_forgotten += 1
        del st.entries[removal.entry_id]


def _finish_moves(database: DatabaseSide, scope: Scope, arrived: list[removals.Removal], owners: dict[str, str],
                  st: sync_state.SyncState, report: SyncReport) -> None:
    """The memories moved by hand to another agent's folder that its database already holds
    (``owners``: by id, that agent), forgotten here (``cross_moves.finish``): the id then lives in
    that database alone. Never a removal, so no backup is taken for them."""
    for removal in arrived:
        try:
            cross_moves.finish(database, scope, removal.memory, owners[removal.entry_id])
        except EngramError as exc:
            report.problems.append(Problem(removal.file, 0, f"entry {removal.entry_id} moved to agent"
                                           f" {owners[removal.entry_id]}'s folder, still held here: {exc}"))
            continue
        report.db_forgotten += 1
        del st.entries[removal.entry_id]


def _show_as_stored(files: ScopeFiles, rel: str, entry: Entry, memory: Memory, report: SyncReport, *,
                    retimed: bool = False) -> None:
    """Rewrite ``entry`` of the file ``rel`` as ``memory``, the engine stored it, when that is not
    as written: under ``privacy.pii = "redact"`` an address typed into an entry is stored masked.
    Left as written, the folder kept what redaction masked, and every later pass took the
    difference between the file and the database for a new edit and stored it again. So when its
    creation was ``retimed`` (later than its update: the next pass took the file's date for an
    edit, and put it back with a second note). The links stay the entry's: those an import has
    yet to make are made once the pass is settled (``links``)."""
    if retimed or memory_digest(memory) != entry.digest():
        files.docs[rel].replace(memory.id, replace(from_memory(memory), links=entry.links))
        files.dirty.add(rel)
        report.files_updated += 1


def _key_put_back(entry_id: str, written: str, stored: str) -> str:
    return (f"entry {entry_id}: key {jsondoc.shown(written)} is not the database's and is put back as"
            f" {jsondoc.shown(stored)} (a memory's key does not change; to store the text under another key,"
            " add it as a new entry giving that key)")


def _retimed(entry: Entry, report: SyncReport, rel: str) -> bool:
    """Whether ``entry``, brought into the database, was created later than its update in its file,
    and so was stored created at the earlier (``Entry.times``); said in the report as a note on its
    line, as PII found is: the entry is taken all the same."""
    warning = entry.times(0.0)[2]  # (0.0: the clock is not asked when a warning is due, both times given)
    if warning is not None:
        report.problems.append(Problem(rel, entry.line, f"warning: {warning}", skipped=False))
    return warning is not None


def _date_edited(entry: Entry, memory: Memory) -> str | None:
    """Why the entry's date, edited in its file, is put back (None when it shows the memory's).
    The date shown is when the memory was stored: the database's record of when it learned the
    fact (``known_at`` reads it), which no edit changes; a date-only edit resolves to midnight of
    that day (``entry.resolve_date``), a marker without its exact time too, so only another day,
    or another time than midnight (a YAML timestamp), is an edit."""
    if entry.created_at is None or entry.created_at == memory.created_at:
        return None
    shown, stored = utc(entry.created_at), utc(memory.created_at)
    midnight = shown.time() == dt.time(0)
    if shown.date() == stored.date() and midnight:
        return None
    edited = shown.date().isoformat() if midnight else iso(entry.created_at)
    return (f"entry {memory.id}: its date {edited} is put back to {stored.date().isoformat()}, when the memory"
            f" was stored, which a file does not change; to date the fact itself, add valid_from: {edited}")


def _only_importance_changed(memory: Memory, prev: sync_state.EntryState) -> bool:
    """Whether ``memory`` changed only its importance since the last sync (``prev``): a recall
    strengthened it, which does not stand against its entry deleted by hand meanwhile."""
    return prev.importance is not None and hashes_as_but_for_importance(from_memory(memory), prev.importance, prev.digest)


def _one_side_only_importance(memory: Memory, entry: Entry, prev: sync_state.EntryState | None) -> Entry | None:
    """For an entry changed on both sides since the last sync, where one side changed only its
    importance: the entry with both changes, else None (a conflict). The engine changes importance
    on its own (a recall strengthens a memory, decay lowers it, consolidation raises a survivor's),
    so a person's edit of a memory in use would otherwise conflict with every recall of it. Which
    side changed what is read from the state's hash: the database side with the file's importance
    hashing as the last sync did means the database changed only importance (and the file did not
    touch it); the file side with the database's importance, that the file changed only importance."""
    if prev is None:
        return None
    in_database = from_memory(memory)
    if hashes_as_but_for_importance(in_database, entry.importance, prev.digest):
        return replace(entry, importance=memory.importance)
    if hashes_as_but_for_importance(entry, memory.importance, prev.digest):
        return replace(in_database, importance=entry.importance)
    return None


def _apply(database: DatabaseSide, memory: Memory, entry: Entry, report: SyncReport) -> Memory:
    """A file edit of an existing memory, through the engine; scope and key stay the database's.
    A ``valid_from`` the file still shows as the engine read it from the content the edit changed
    is not the person's: it is read again from the new content (``TimeReader.dated_by_content``)."""
    view = database.view(memory.scope)
    valid_from = entry.valid_from
    if valid_from == memory.valid_from and entry.content != memory.content and view.time.dated_by_content(memory):
        valid_from = None
    try:
        result = view.remember(
            entry.content, key=memory.key, category=entry.category, type=entry.type, layer=entry.layer,
            tags=entry.tags, metadata=dict(entry.metadata), importance=entry.importance,
            related_entity=entry.related_entity, source=entry.source, scope=memory.scope,
            search_context=entry.search_context, valid_from=valid_from, valid_until=entry.valid_until,
        )
    except EngramError as exc:
        report.problems.append(Problem("", entry.line, f"entry {memory.id} not updated: {exc}"))
        return memory
    report.db_updated += 1
    return result.memory


def _import_with_ids(
    database: DatabaseSide,
    scope: Scope,
    found: list[tuple[str, Entry]],
    st: sync_state.SyncState,
    files: ScopeFiles,
    report: SyncReport,
    new: list[tuple[str, Entry]],
    pending: list[PendingLink],
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """Entries with ids this scope has never seen (a copied or restored folder): import them
    keeping ids, keys and times; those that clash with an existing key become new entries. So do
    those whose id another scope holds (an entry copied from another agent's folder before that
    agent's entries were written there), or that another agent's own database holds, its entry still
    in that agent's folder (``DatabaseSide.copied_from_others``), or, in an agent's own run, that another agent's
    database holds at all (``agent_databases.held_in_other_databases``): not that memory, so a new one of this scope, the bullet
    given its id as a hand-written one is (the engine's import would give the copy an id of its
    own, which the file would never learn; its id was recorded as this file's instead). Their
    links are added to ``pending`` (``links.make``)."""
    if not found:
        return
    ids = [entry.id for _, entry in found if entry.id]
    elsewhere = {m.id for m in database.store.get_many(ids) if m.scope != scope}
    if database.copied_from_others is not None:
        elsewhere |= database.copied_from_others(scope, ids)
    # With one database per agent, an id another agent's database holds (and a global memory's
    # there, for an agent's folder) would name two memories across the databases, which ``engram
    # migrate`` refuses: the import's one check (``agent_databases.held_in_other_databases``), asked here so the
    # entry becomes a new memory whose id its file learns (the import would re-id it unseen).
    from engram.agent_databases import held_in_other_databases

    view = database.view(scope)
    elsewhere |= {i for i, owner in held_in_other_databases(view, [i for i in ids if i not in elsewhere]).items()
                  if owner != scope.agent}
    new.extend((rel, _without_id(entry)) for rel, entry in found if entry.id in elsewhere)
    found = [(rel, entry) for rel, entry in found if entry.id not in elsewhere]
    if not found:
        return
    now = database.clock()
    memories = [entry.to_memory(scope, now, view.privacy) for _, entry in found]
    # An id (or key) repeated in the folder: the store keeps the first, as it always did here.
    repeated = snapshot.repeats(memories)
    view.import_snapshot(snapshot.dump(m for i, m in enumerate(memories) if i not in repeated), progress=progress)
    present = {m.id: m for m in database.store.get_many([m.id for m in memories]) if m.scope == scope}
    for (rel, entry), memory in zip(found, memories, strict=True):
        stored = present.get(memory.id)
        if stored is None:
            new.append((rel, _without_id(entry)))
            continue
        # Made once every folder of the pass is settled: the other end may be in one settled later.
        pending.extend(PendingLink(scope, stored.id, link, rel, entry.line) for link in entry.links
                       if link not in stored.links)
        # (Not for a memory the store already held under that id, which the import skipped.)
        made = (stored.created_at, stored.updated_at) == (memory.created_at, memory.updated_at)
        retimed = made and _retimed(entry, report, rel)
        _show_as_stored(files, rel, entry, stored, report, retimed=retimed)
        st.entries[stored.id] = sync_state.EntryState(rel, memory_digest(stored), stored.importance)
        report.db_created += 1

def _add_new(
    database: DatabaseSide, scope: Scope, new: list[tuple[str, Entry]], st: sync_state.SyncState, files: ScopeFiles,
    report: SyncReport,
) -> None:
    """Entries added by hand: stored through the engine, then given their id marker."""
    placed = {i for i, e in st.entries.items()}
    for rel, entry in new:
        try:
            result = store_entry(database.view(scope), entry, scope)
        except EngramError as exc:
            report.problems.append(Problem(rel, entry.line, f"entry not imported: {exc}"))
            continue
        memory = result.memory
        if result.action == "created":
            _retimed(entry, report, rel)
        doc = files.docs[rel]
        if result.action == "duplicate" and memory.id in placed:
            doc.set_at(entry.line, None)  # the same text is already an entry of this scope
        else:
            doc.set_at(entry.line, from_memory(memory))
            st.entries[memory.id] = sync_state.EntryState(rel, memory_digest(memory), memory.importance)
            placed.add(memory.id)
            if result.action == "created":
                report.db_created += 1
        files.dirty.add(rel)


def _without_id(entry: Entry) -> Entry:
    from dataclasses import replace

    return replace(entry, id=None, key=None, links=())

