"""Entries moved by hand between two agents' own databases (``per_agent_databases``): cut with their
id marker from ``agents/bob/`` and pasted into ``agents/alice/``. With one database the memory
changes scope in place (``moves``); here it changes database. What counts as a move is
``every_database``'s rule (bob's memory unchanged since his last sync, no file of his folder
holding the id); what happens depends on which run meets it and, in the operator's run, on which
database's pass comes first.

The operator's run (``engram sync`` / ``watch`` as no agent, or ``--all-agents``) has both
databases open (``every_database``). Alice's pass meets an id her database does not hold and
``carry`` takes it in: stored in alice's database as bob's held it (its id, versions, times, recall
count and last access, and its vector when both hold the same embedding identity), its key freed as
a move frees it and only its links to global memories kept (a link to bob's memories would cross
agents, as ``MemoryStore.move`` drops it), then deleted from bob's, and alice's audit trail gets one
``moved`` event (from which scope to which). Bob's pass meets an entry gone from his folder; when
another agent's folder holds its id (``Departures``), it is never taken for a deletion: while only
bob's database holds it, it is left for alice's pass (later in the run, or at the next run), so
either order ends with the memory in alice's database alone. Written into alice's database first,
in one write (``take_in`` of the store), then deleted from bob's: a run stopped between the two
leaves the memory in both, and the next run's pass of bob's database finishes the move
(``finish``).

An agent's own run (``engram --agent alice sync``) does not carry it: it imported the entry under its
id, one id in two databases until the operator's next run finished the move, which ``engram migrate``
refused meanwhile. The entry becomes a new memory of alice's (``reconcile._import_with_ids`` asks the
import's check, ``agent_databases.held_in_other_databases``), as a copy does; bob's next sync finds his entry in no
folder and forgets his memory. ``finish`` still ends a move a run stopped between its two writes left
in both databases.

A memory in a supersession in bob's database (superseded by another of bob's memories, or
superseding one) is never carried (``refusal``): carried, one database would name an id it no
longer holds, a retired fact hidden from recall by a successor its agent cannot read. A supersession
cannot cross databases, so moving its partner with it would not help either. Alice's pass reports the
entry, takes it out of her folder without importing it and puts it back, as found there, in the
file of bob's folder it left (``send_back``; with one database such a move is refused too,
``store.base.refuse_hidden_supersession``); bob's pass leaves the memory as it is. The way out: paste
the entry into alice's folder without its id marker (a new memory of hers), or forget one end of
the supersession first.

A store without ``take_in`` (a JSON file, a plug-in store) keeps the older way: forgotten in one
database, imported into the other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from engram import jsondoc
from engram.errors import EngramError
from engram.events import MemoryEvent
from engram.model import Memory, Scope

from . import layout
from . import state as sync_state
from .entry import Entry, Problem, memory_digest
from .paths import PathRefused
from .report import SyncReport
from .sides import DatabaseSide, FolderSide
from .write import ScopeFiles

if TYPE_CHECKING:
    from engram.engine import Engram
    from engram.store.base import MemoryStore

REASON = "moved by hand to another agent's memory folder"


@dataclass(frozen=True, slots=True)
class Refused:
    """A memory moved by hand that is not carried (``refusal``): ``why``, ``way_out`` (what the
    person can do instead), and ``home``, the file of the old owner's folder its entry was in (its
    sync state's), where ``send_back`` puts it."""

    why: str
    way_out: str
    home: str


@dataclass(slots=True)
class Arrivals:
    """Of the entries in an agent's folder its database does not hold, those moved there by hand
    from another agent's own database (``DatabaseSide.moved_from_others``): ``taken`` in (by id, as
    stored now) and ``refused`` (by id)."""

    taken: dict[str, Memory] = field(default_factory=dict)
    refused: dict[str, Refused] = field(default_factory=dict)


@dataclass(slots=True)
class Departures:
    """Of the memories whose entries left an agent's folder, those whose ids another agent's folder
    holds (``DatabaseSide.moving_to_others``): ``leaving``, for that agent's database's pass to carry
    or refuse (never forgotten here), and ``arrived``, already held by that agent's database (an
    agent's own run imported it, or a run stopped before its delete), by id with that agent, for
    ``finish``."""

    leaving: set[str] = field(default_factory=set)
    arrived: dict[str, str] = field(default_factory=dict)


def can_take_in(store: MemoryStore) -> bool:
    """Whether ``store`` can take in a memory with its versions and vector (``carry``) and say what
    a memory supersedes (``refusal``)."""
    return callable(getattr(store, "take_in", None)) and callable(getattr(store, "superseded_by_it", None))


def refusal(source: MemoryStore, memory: Memory, scope: Scope, home: str) -> Refused | None:
    """Why ``memory`` (as ``source`` holds it, its entry in ``home`` at the last sync) is not carried
    into ``scope``'s database (see the module doc), None when it may be: a successor of it that is
    not global (so in ``source`` alone), or a memory of ``source`` that it supersedes. The same rule
    for both ends of the move, so the old owner's pass leaves it and the new one's sends its entry back."""
    successor = source.get_many([memory.superseded_by]) if memory.superseded_by else []
    finder = getattr(source, "superseded_by_it", None)
    if successor and successor[0].scope.agent is not None:
        tie = f"is superseded by {jsondoc.shown(successor[0].key)}"
    elif older := (finder(memory.id) if finder is not None else []):
        tie = f"supersedes {jsondoc.shown(older[0].key)}"
    else:
        return None
    why = (f"entry {memory.id} not moved to {scope}: {jsondoc.shown(memory.key)} {tie} in {memory.scope}'s"
           " database, and a supersession cannot cross databases (the other memory cannot go with it)")
    way_out = (f"put back in {memory.scope}'s folder. To give it to {scope}, paste it there without its id"
               " marker (a new memory there), or forget one of the two first")
    return Refused(why, way_out, home)


def carry(source: MemoryStore, target: MemoryStore, view: Engram, memory: Memory, scope: Scope) -> Memory | None:
    """Move ``memory`` (as ``source`` holds it) into ``target`` as one of ``scope`` (see the module
    doc): written there, then deleted from ``source``, then announced through ``view`` (``scope``'s,
    of ``target``'s engine, its writes the sync's) as one ``moved`` event. Returns it as stored
    there; None when ``target`` cannot take it in, or holds its id already (nothing changed).
    Raises what the stores raise."""
    taker = getattr(target, "take_in", None)
    if taker is None:
        return None
    identity, held = source.vector_identity(), target.vector_identity()
    vectors = source.vectors_for([memory.id]) if identity is not None and held in (None, identity) else {}
    vector = (identity, vectors[memory.id]) if identity is not None and memory.id in vectors else None
    shared = {m.id for m in source.get_many(list(memory.links)) if m.scope.agent is None}
    after = taker(replace(memory, scope=scope, links=tuple(i for i in memory.links if i in shared)),
                  source.versions(memory.id), vector)
    if after is None:  # ``target`` holds the id already (taken in meanwhile): ``source``'s pass finishes it (``finish``)
        return None
    source.delete([memory.id])
    view.events.emit(MemoryEvent("moved", (after,), view.scope, view.origin, REASON, view.clock(), (memory,)))
    return after


def take_in(
    side: FolderSide,
    database: DatabaseSide,
    scope: Scope,
    in_files: dict[str, tuple[str, Entry]],
    db: Mapping[str, Memory],
    st: sync_state.SyncState,
    files: ScopeFiles,
    report: SyncReport,
    untouchable: set[str],
) -> dict[str, Memory]:
    """The memories whose entries in ``scope``'s folder were moved there by hand from another
    agent's own database (``DatabaseSide.moved_from_others``), taken in: each recorded in the sync
    state as the entry it was, so the entry is then settled as any entry of the folder (an edit
    made on the way applied, its old content kept as a version). An entry whose key the scope held
    gets the key the memory was given (said in a problem). A refused one (``refusal``) is reported
    and its entry sent back to the folder it left (``send_back``), out of ``in_files``, so it is
    neither imported nor settled here. Returns those taken in by id, as stored now."""
    if database.moved_from_others is None:
        return {}
    ids = sorted(i for i in in_files if i not in db and i not in st.entries and i not in untouchable)
    if not ids:
        return {}
    try:
        arrivals = database.moved_from_others(scope, ids)
    except EngramError as exc:
        rel, entry = in_files[ids[0]]
        report.problems.append(Problem(rel, entry.line, f"entries moved from another agent's folder not taken in: {exc}"))
        return {}
    for entry_id, refused in arrivals.refused.items():
        rel, entry = in_files.pop(entry_id)  # never imported here, whether or not it could be sent back
        failed = send_back(side, entry, refused.home)
        if failed is None:
            files.docs[rel].remove(entry_id)
            files.dirty.add(rel)
            report.files_removed += 1
            report.problems.append(Problem(rel, entry.line, f"{refused.why}; {refused.way_out}", names_file=refused.home))
        else:
            report.problems.append(Problem(rel, entry.line, f"{refused.why}; left here (not imported):"
                                           f" {refused.home} could not be written: {failed}"))
    for entry_id, memory in arrivals.taken.items():
        rel, entry = in_files[entry_id]
        report.db_moved += 1
        if entry.key is not None and memory.key != entry.key:
            said = (f"entry {entry_id} moved to {scope}, where another memory holds its key {jsondoc.shown(entry.key)}:"
                    f" its key is now {jsondoc.shown(memory.key)}")
            report.problems.append(Problem(rel, entry.line, said, skipped=False))
            entry = replace(entry, key=memory.key)
            files.docs[rel].replace(entry_id, entry)
            files.dirty.add(rel)
            in_files[entry_id] = (rel, entry)
        st.entries[entry_id] = sync_state.EntryState(rel, memory_digest(memory), memory.importance)
    return arrivals.taken


def send_back(side: FolderSide, entry: Entry, home: str) -> str | None:
    """Add ``entry`` (as found where it was moved to, an edit made on the way kept: the old owner's
    next pass applies it) to the file ``home`` of the folder it left, written now: the old owner's
    database still holds the memory, and its sync state records the entry there, so the entry is
    settled there as if never moved. Written before the entry leaves its new file: a run stopped
    between the two leaves it in both folders, which the next run takes for a copy, never a loss.
    Returns why it could not be written (nothing changed), else None."""
    try:
        if side.folder.exists(home):
            doc = side.parse(side.folder.read_text(home), home)
        else:  # its file was moved away whole (renamed into the other folder): made again
            doc = side.fmt.new(layout.title(home.rsplit("/", 1)[-1].rsplit(".", 1)[0]))
        if doc.parsed.broken:
            return "it cannot be parsed"
        if not any(e.id == entry.id for e in doc.parsed.entries):
            doc.add(entry)
            side.folder.write_text(home, doc.text())
    except (PathRefused, OSError) as exc:
        return str(exc)
    return None


def finish(database: DatabaseSide, scope: Scope, memory: Memory, owner: str) -> None:
    """Finish the move of ``memory`` (of ``scope``, as this database holds it), whose entry went to
    ``owner``'s folder and whose id ``owner``'s own database holds now (``Departures.arrived``):
    forgotten here through the engine (``DatabaseSide.forget``), so this database's audit trail
    has one ``forgotten`` row saying where it went. Raises what ``Engram.forget`` raises."""
    database.forget(scope, memory, reason=f"moved by hand to agent {owner}'s folder; {owner}'s database holds it")
