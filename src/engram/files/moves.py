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
scope its successor has once both moved, where one moved alone is refused. A supersession may
span scopes (a session's memory superseded by its agent's): a superseded memory and its successor
pasted into two different folders are moved together by the first of the two folders' passes
(``PassMoves``), which moves the other into its folder too when its own move is refused for hiding
the supersession (``HiddenSupersession``); each folder's pass checked alone, both were refused at
every pass (each against the other's old scope), however the pair was pasted. So are two linked
memories pasted into two folders whose scopes keep the link (one agent's folder and its session's):
moved apart, the first move judged the link by the other's old agent and cut it. Into a folder settled
earlier, the old folder's pass, later in the same pass, is told which ids were taken over and leaves
them alone (it reads the memories listed when the pass began, where the memory is still the old
scope's). Into a folder settled later, the old folder's pass finds the entry gone from its file,
which would forget it: ``held_in_other_folders`` tells it another folder it syncs holds the id (the
folder read once a pass, ``held``), so the memory is left for that folder's pass to take over (later
in the same pass, or at that folder's next pass for a watcher's pass over one folder). A move that
folder's pass refuses takes the entry out of it, as a memory the folder does not hold: the old
folder, already settled, is settled again once the pass is done (``PassMoves.refused``), which
writes the entry back there, as its own pass does when settled after the refusing one.

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
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from engram import jsondoc
from engram.errors import EngramError, ValidationError
from engram.model import Memory, Scope
from engram.store.base import HiddenSupersession, crosses_agents

from . import conflicts, layout
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
                 if not is_link and layout.directly_in(rel, rel_dir) and side.layout.locate(rel, side.fmt.suffixes)]
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


@dataclass
class PassMoves:
    """The hand moves of one full pass, shared by its folders, settled in ``order``: ``taken``, the
    memories moved so far, which their old folder's pass (listing memories as they were when the
    pass began) leaves alone; ``ahead``, those moved into a folder settled later in the pass with a
    memory of an earlier folder (a superseded memory and its successor pasted into two folders), as
    they were before and after the move, for that folder's pass to settle as its own; ``put_back``,
    the folders settled earlier in the pass that a refused move's entry left, to settle again once
    every folder is (``FileSync.sync``), so the entry is back there after the pass that refused it."""

    order: tuple[Scope, ...] = ()
    taken: set[str] = field(default_factory=set)
    ahead: dict[str, tuple[Memory, Memory]] = field(default_factory=dict)
    put_back: set[Scope] = field(default_factory=set)
    # The memories whose move into a folder was refused, by id, with that folder's scope: an edit made
    # on the way is kept there as a ``move-refused`` conflict, not as a memory the folder does not hold.
    turned_away: dict[str, Scope] = field(default_factory=dict)

    def later(self, scope: Scope) -> set[Scope]:
        """The folders the pass settles after ``scope``'s."""
        return set(self.order[self.order.index(scope) + 1:]) if scope in self.order else set()

    def refused(self, scope: Scope, memory: Memory) -> None:
        """The move of ``memory`` into ``scope``'s folder was refused: its entry leaves that folder
        (settled as a memory that folder does not hold) for its old one. An old folder settled later
        in the pass writes it back as a memory missing from its files; one settled earlier left the
        entry to this folder's pass (``held_in_other_folders``), so it is settled again (``put_back``)
        rather than the entry being in neither folder until the next pass."""
        self.turned_away[memory.id] = scope
        if memory.scope in self.order and memory.scope != scope and memory.scope not in self.later(scope):
            self.put_back.add(memory.scope)


def take_over(
    side: FolderSide,
    database: DatabaseSide,
    scope: Scope,
    moved: Mapping[str, Memory],
    in_files: Mapping[str, tuple[str, Entry]],
    docs: Mapping[str, Document],
    st: sync_state.SyncState,
    passed: PassMoves,
    report: SyncReport,
) -> tuple[dict[str, Memory], set[str]]:
    """Make each memory of ``moved`` (its entry, ``in_files``, moved by hand into ``scope``'s folder)
    one of ``scope`` in place (``DatabaseSide.move``), for the entry to be settled in its new folder
    as any other; so is each an earlier folder of the pass moved here (``passed.ahead``). An entry
    whose key the new scope held gets the key the memory was given (said in a problem), in its
    document of ``docs``. Returns the memories moved here, as stored now, and the files changed;
    one that could not be moved is reported and left to the old folder's pass (``PassMoves.refused``)."""
    arrived: dict[str, Memory] = {}
    changed: set[str] = set()
    ahead = {i: pair for i, pair in passed.ahead.items() if pair[1].scope == scope and i in in_files}
    results: dict[str, Memory | EngramError] = {i: after for i, (_, after) in ahead.items()}
    if moved:
        try:
            # All of them at once: a superseded memory moved here with its successor stays visible to it.
            results |= _move_with_partners(side, database, scope, moved, st, passed)
        except EngramError as exc:
            results |= {entry_id: exc for entry_id in moved}
    for entry_id, memory in {**moved, **{i: before for i, (before, _) in ahead.items()}}.items():
        rel, entry = in_files[entry_id]
        after = results.get(entry_id)
        if isinstance(after, EngramError):
            report.problems.append(Problem(rel, entry.line, f"entry {entry_id} not moved: {after}"))
            passed.refused(scope, memory)
            continue
        if after is None:
            continue  # forgotten since it was read: its entry is settled as one forgotten in the database
        report.db_moved += 1
        arrived[entry_id] = after
        report.problems += _carry_conflicts(side, entry_id, memory.scope, scope, rel, entry.line)
        if after.key != memory.key:
            said = (f"entry {entry_id} moved to {scope}, where another memory holds its key {jsondoc.shown(memory.key)}:"
                    f" its key is now {jsondoc.shown(after.key)}")
            report.problems.append(Problem(rel, entry.line, said, skipped=False))
            docs[rel].replace(entry_id, replace(entry, key=after.key))
            changed.add(rel)
    passed.taken |= set(arrived)
    return arrived, changed


def _carry_conflicts(side: FolderSide, entry_id: str, old: Scope, new: Scope, rel: str, line: int) -> list[Problem]:
    """The conflicts kept on the memory ``entry_id`` in its old scope's folder, moved beside ``rel``, the
    file of ``new``'s folder its entry was moved into (``conflicts.carry``), each said in a note. Only
    into a folder no other agent reads than the old one's (from ``global/`` anywhere, from an agent's
    folder into its own or its sessions'): a file version kept in alice's folder is never put where
    bob reads it; it stays, and ``engram conflicts`` says where its memory is now (``conflicts.now_in``)."""
    if old.agent is not None and new.agent != old.agent:
        return []
    carried = conflicts.carry(side.folder, entry_id=entry_id, from_dir=side.layout.scope_dir(old), to_file=rel)
    return [Problem(rel, line, f"entry {entry_id} moved with the conflict kept on it: {was} is now {now}", skipped=False)
            for was, now in carried]


def _move_with_partners(side: FolderSide, database: DatabaseSide, scope: Scope, moved: Mapping[str, Memory],
                        st: sync_state.SyncState, passed: PassMoves) -> dict[str, Memory | EngramError]:
    """``moved`` made ``scope``'s together (``DatabaseSide.move``), each with the answer for it. A
    move refused for hiding a supersession whose other end (``HiddenSupersession.partners``) was
    pasted into a folder the pass settles later is tried again with that memory moved into that
    folder's scope in the same group; moved, it is recorded in ``passed.ahead`` for that folder's
    pass to settle and report (refused, that pass meets it as moved there, and says so). Followed
    again from the memories so added (a chain of supersessions pasted into three folders), each
    memory at most once. So is, from the start, a memory linked to one of ``moved`` pasted into a
    later folder whose scope keeps the link where its old one would cut it (``_linked_ahead``)."""
    reason = "moved by hand to another scope's memory folder"
    linked = _linked_ahead(side, database, scope, moved, st, passed)
    group = [*((memory, scope) for memory in moved.values()), *linked]
    results: dict[str, Memory | EngramError] = {}
    partners: dict[str, Memory] = {memory.id: memory for memory, _ in linked}  # the other ends added, as they were before
    while True:
        results |= database.move(group, reason)
        refused = [(m, s) for m, s in group if isinstance(results.get(m.id), HiddenSupersession)]
        hidden = {p for m, _ in refused for p in results[m.id].partners}  # type: ignore[union-attr]
        found = [hit for p in sorted(hidden - set(moved) - set(partners))
                 if (hit := _pasted_into_later_folder(side, database, scope, p, st, passed))]
        if not found:
            break
        partners |= {memory.id: memory for memory, _ in found}
        group = [*refused, *found]
    passed.ahead |= {i: (before, after) for i, before in partners.items() if isinstance(after := results.get(i), Memory)}
    passed.taken |= set(passed.ahead)  # their old folder's pass, settled before theirs, leaves them alone too
    return {i: results[i] for i in moved if i in results}


def _linked_ahead(side: FolderSide, database: DatabaseSide, scope: Scope, moved: Mapping[str, Memory],
                  st: sync_state.SyncState, passed: PassMoves) -> list[tuple[Memory, Scope]]:
    """The memories linked to one of ``moved`` and pasted into a folder the pass settles later, each
    with that folder's scope, whose link to a memory moved into ``scope`` that scope keeps but their old
    one would cut (``crosses_agents``): bob's two linked facts pasted into ``agents/alice/`` and
    ``sessions/alice/s1/``. Moved apart, the first move judged the link by the other end's old agent
    (bob's) and cut it; moved in one group, by the agent it moves to."""
    ends = sorted({end for memory in moved.values() for end in memory.links} - set(moved))
    found = [hit for end in ends if (hit := _pasted_into_later_folder(side, database, scope, end, st, passed))]
    return [(memory, into) for memory, into in found
            if crosses_agents(scope.agent, memory.scope.agent) and not crosses_agents(scope.agent, into.agent)]


def _pasted_into_later_folder(side: FolderSide, database: DatabaseSide, scope: Scope, memory_id: str,
                              st: sync_state.SyncState, passed: PassMoves) -> tuple[Memory, Scope] | None:
    """The memory ``memory_id`` and the scope of the folder it was moved into by hand, when that is
    one folder the pass settles after ``scope``'s (``moved_here`` tells the move from a copy), else None."""
    prev = st.entries.get(memory_id)
    holders = [(held_in, doc) for held_in, _, doc in side.held.holders(side, memory_id)]
    into = {held_in for held_in, _ in holders}
    if prev is None or len(into) != 1 or not into <= passed.later(scope):
        return None
    target = next(iter(into))
    pasted = [e for _, doc in holders for e in doc.parsed.entries if e.id == memory_id]
    memory = moved_here(side, database.store, target, memory_id, prev, pasted, {}, {})
    return None if memory is None else (memory, target)


def held_in_other_folders(side: FolderSide, scope: Scope, ids: set[str]) -> set[str]:
    """Those of ``ids`` (memories of ``scope`` whose entries left its folder) that a memory file of
    another scope's folder this database syncs holds, valid or not: moved there by hand, so not
    forgotten here; that folder's pass takes them over (see the module doc)."""
    return side.held.held_outside(side, side.layout.scope_dir(scope), ids, side.owns)
