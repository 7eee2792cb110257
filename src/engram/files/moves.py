"""Entries moved by hand into another scope's folder: cut with their id marker from one folder
(``agents/bob/``) and pasted into another (``agents/alice/``). The memory becomes the new folder's
scope's in place (``MemoryStore.move``): its id, versions, vector, access stats and the links it
may keep stay, and the audit trail records one ``moved`` event (from which scope to which), never
a forget and an import. Whichever way the two folders sort, the new folder's pass moves it.

A full pass settles scope folders one after the other (``agent:* < global < session:*``), so a move
is met in either order. The new folder's pass meets the entry as an id its scope does not hold,
while the memory is still the old scope's: ``moved_here`` tells that move from a copy (the old
folder still holds the entry, ``repeats``) and ``take_over`` moves the memory there, where the entry
is then settled as any entry of the folder (an edit made on the way is applied, its old content kept
as a version). The memories whose entries moved into one folder are moved together
(``MemoryStore.move_many``): a superseded memory moved with its successor is checked against the
scope its successor has once both moved, where one moved alone is refused. Into a folder settled
earlier, the old folder's pass, later in the same pass, is told which ids were taken over and leaves
them alone (it reads the memories listed when the pass began, where the memory is still the old
scope's). Into a folder settled later, the old folder's pass finds the entry gone from its file,
which would forget it: ``held_in_other_folders`` tells it another folder it syncs holds the id (the
folder read once a pass, ``held``), so the memory is left for that folder's pass to take over (later
in the same pass, or at that folder's next pass for a watcher's pass over one folder).

Only a move that nothing else explains is taken for one: the memory unchanged in the database since
the last sync but for its importance (which the engine changes on its own, as a recall does; a
change of its text means the pasted entry is a stale copy), its old file there and read
(a vanished or emptied file is put back, never taken as a deletion), and no memory file of its old
folder holding the id any more (an entry moved to another file of its folder, then copied out, is a
copy). Whatever cannot be read is taken as still holding it. A database syncing only its part of
the folder (``per_agent_databases``) takes over only what it syncs: ``global/`` and its agent's
folders.

Such a database does not know the memories of the folders it does not sync, nor a global memory
another database wrote since it last read ``global/``: an entry pasted from there into its agent's
folder is an id it has never seen. ``held_elsewhere`` tells it the entry is a copy (the folder it
came from still holds the id), so it becomes a memory of its own under a new id. Imported with its
id, it was the same id in two databases (bob's memory and alice's), and a global memory pasted so
became the agent's, its entry then taken out of ``global/`` as a copy of hers and the global memory
forgotten in every other database. A move between two agents' own databases is carried whole by
the operator's run, which has both open (``cross_moves``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from engram import jsondoc
from engram.errors import EngramError, ValidationError
from engram.model import Memory, Scope

from . import layout
from . import state as sync_state
from .document import Document
from .entry import Entry, Problem, from_memory, hashes_as_but_for_importance, memory_digest
from .paths import PathRefused
from .report import SyncReport
from .sides import DatabaseSide, FolderSide

if TYPE_CHECKING:
    from engram.store.base import MemoryStore


def moved_here(
    side: FolderSide,
    store: MemoryStore,
    scope: Scope,
    entry_id: str,
    prev: sync_state.EntryState,
    pasted: list[Entry],
    read: dict[str, Document | None],
    folders: dict[str, dict[str, set[str]] | None],
) -> Memory | None:
    """The memory of another scope whose entry ``entry_id``, recorded at ``prev`` (outside
    ``scope``'s folder), was moved into ``scope``'s folder (see the module doc), else None.
    ``pasted``: the entry as found in ``scope``'s folder (each copy), whose importance is taken as
    the one last synced, so a memory changed since in importance alone (a recall) is still moved.
    ``read``: the other folders' files parsed this pass (None: not readable); ``folders``: the ids
    in each of those folders' files (``_held``), so a folder is read once however many left it."""
    stored = store.get_many([entry_id])
    if not stored:
        return None
    memory = stored[0]
    old_dir = side.layout.scope_dir(memory.scope)
    if memory.scope == scope or not side.owns(memory.scope) or not layout.directly_in(prev.path, old_dir):
        return None
    if memory_digest(memory) != prev.digest and not any(
            hashes_as_but_for_importance(from_memory(memory), e.importance, prev.digest) for e in pasted):
        return None  # changed in the database since (not just its importance): the pasted entry is a stale copy
    if old_dir not in folders:
        folders[old_dir] = _held(side, old_dir, read)
    held = folders[old_dir]
    if held is None or prev.path not in held:
        return None  # a file there unreadable (so cannot tell), or its file vanished (put back there, never a deletion)
    doc = read[prev.path]
    if doc is None or not doc.text():
        return None  # emptied where its entry was: taken as vanished (``removals``)
    return None if any(entry_id in ids for ids in held.values()) else memory


def _held(side: FolderSide, rel_dir: str, read: dict[str, Document | None]) -> dict[str, set[str]] | None:
    """The ids held in each memory file directly in the folder ``rel_dir`` (invalid entries' too),
    the files parsed into ``read``; None when one of them cannot be read or parsed."""
    try:
        files = [rel for rel, is_link in side.folder.walk(rel_dir)
                 if not is_link and layout.directly_in(rel, rel_dir) and side.layout.locate(rel, side.fmt.suffix)]
    except (ValidationError, PathRefused, OSError):
        return None
    held: dict[str, set[str]] = {}
    for rel in files:
        doc = _parsed(side, rel, read)
        if doc is None:
            return None
        held[rel] = {e.id for e in doc.parsed.entries if e.id} | doc.parsed.invalid_ids
    return held


def _parsed(side: FolderSide, rel: str, read: dict[str, Document | None]) -> Document | None:
    """The file ``rel`` parsed (once a pass, kept in ``read``); None when it cannot be read or parsed."""
    if rel not in read:
        read[rel] = None
        try:
            read[rel] = side.parse(side.folder.read_text(rel), rel)
        except (PathRefused, OSError):
            return None
    doc = read[rel]
    return None if doc is None or doc.parsed.broken else doc


def held_elsewhere(side: FolderSide, scope: Scope, ids: set[str]) -> set[str]:
    """Those of ``ids`` (entries in ``scope``'s folder this database has never seen) that a memory
    file of another scope's folder holds, as parsed: copies, not moves (see the module doc). Only
    for an agent's own database (``side.database_agent``), whose store cannot say it; a file that
    cannot be read or parsed holds nothing here (its entries are then not taken as moved from it
    either: its database never forgets what an unreadable file held)."""
    if side.database_agent is None or scope.agent is None:
        return set()
    return side.held.held_outside(side, side.layout.scope_dir(scope), ids, lambda _: True)


def moved_out_after_importance_changed(side: FolderSide, scope: Scope, memory: Memory, prev: sync_state.EntryState) -> bool:
    """Whether the memory of ``scope``, whose entry left its folder and which changed in the
    database since the last sync (``prev``), changed in importance alone (a recall) and its entry
    is in another folder this database syncs: moved by hand, for that folder's pass to take over
    (``moved_here``), not a removal to put back."""
    in_database, own_dir = from_memory(memory), side.layout.scope_dir(scope)
    return any(hashes_as_but_for_importance(in_database, e.importance, prev.digest)
               for held_in, where, doc in side.held.holders(side, memory.id) if where != own_dir and side.owns(held_in)
               for e in doc.parsed.entries if e.id == memory.id)


def take_over(
    database: DatabaseSide,
    scope: Scope,
    moved: Mapping[str, Memory],
    in_files: Mapping[str, tuple[str, Entry]],
    docs: Mapping[str, Document],
    report: SyncReport,
) -> tuple[dict[str, Memory], set[str]]:
    """Make each memory of ``moved`` (its entry, ``in_files``, moved by hand into ``scope``'s folder)
    one of ``scope`` in place (``DatabaseSide.move``), for the entry to be settled in its new folder
    as any other. An entry whose key the new scope held gets the key the memory was given (said in
    a problem), in its document of ``docs``. Returns the memories moved, as stored now, and the files
    changed; one that could not be moved is reported and left to the old folder's pass."""
    arrived: dict[str, Memory] = {}
    changed: set[str] = set()
    if not moved:
        return arrived, changed
    try:
        # All of them at once: a superseded memory moved here with its successor stays visible to it.
        results = database.move(list(moved.values()), scope, reason="moved by hand to another scope's memory folder")
    except EngramError as exc:
        results = {entry_id: exc for entry_id in moved}
    for entry_id, memory in moved.items():
        rel, entry = in_files[entry_id]
        after = results.get(entry_id)
        if isinstance(after, EngramError):
            report.problems.append(Problem(rel, entry.line, f"entry {entry_id} not moved: {after}"))
            continue
        if after is None:
            continue  # forgotten since it was read: its entry is settled as one forgotten in the database
        report.db_moved += 1
        arrived[entry_id] = after
        if after.key != memory.key:
            said = (f"entry {entry_id} moved to {scope}, where another memory holds its key {jsondoc.shown(memory.key)}:"
                    f" its key is now {jsondoc.shown(after.key)}")
            report.problems.append(Problem(rel, entry.line, said, skipped=False))
            docs[rel].replace(entry_id, replace(entry, key=after.key))
            changed.add(rel)
    return arrived, changed


def held_in_other_folders(side: FolderSide, scope: Scope, ids: set[str]) -> set[str]:
    """Those of ``ids`` (memories of ``scope`` whose entries left its folder) that a memory file of
    another scope's folder this database syncs holds, valid or not: moved there by hand, so not
    forgotten here; that folder's pass takes them over (see the module doc)."""
    return side.held.held_outside(side, side.layout.scope_dir(scope), ids, side.owns)
