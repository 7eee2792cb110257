"""Entries moved by hand between two agents' own databases (``per_agent_databases``): cut with their
id marker from ``agents/bob/`` and pasted into ``agents/alice/``. With one database the memory
changes scope in place (``moves``); here it changes database, and the operator's run, which has
both open (``every_database``), carries it whole: ``carry`` stores it in alice's database as bob's
held it (its id, versions, times, recall count and last access, and its vector when both hold the
same embedding identity), with its key freed as a move frees it and only its links to global
memories kept (a link to bob's memories would cross agents, as ``MemoryStore.move`` drops it), then
deletes it from bob's, and alice's audit trail gets one ``moved`` event (from which scope to which).
Before, it was forgotten in bob's database and imported into alice's: its versions gone, its
vector embedded again, its recall stats reset, and bob's audit trail said "forgotten".

Written into alice's database first, in one write (``take_in`` of the store), then deleted from
bob's: a crash between the two leaves the memory in both, and the next run finds it already in
alice's and finishes the delete; nothing is lost. What counts as a move is ``every_database``'s
rule (bob's memory unchanged since his last sync, no file of his folder holding the id); bob's
pass leaves such a memory alone (``moving_to_others``) for alice's pass to take in, whichever
database passes first. A store without ``take_in`` (a JSON file, a plug-in store) keeps the older
way: forgotten in one database, imported into the other. An agent's own run (``engram --agent
alice sync``) cannot read bob's database, so it still imports the entry with its id; the operator's
next run finds bob's copy unchanged and in no file of his, and finishes the move.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from engram import jsondoc
from engram.errors import EngramError
from engram.events import MemoryEvent
from engram.model import Memory, Scope

from . import state as sync_state
from .entry import Entry, Problem, memory_digest
from .report import SyncReport
from .sides import DatabaseSide
from .write import ScopeFiles

if TYPE_CHECKING:
    from engram.engine import Engram
    from engram.store.base import MemoryStore

REASON = "moved by hand to another agent's memory folder"


def can_take_in(store: MemoryStore) -> bool:
    """Whether ``store`` can take in a memory with its versions and vector (``carry``)."""
    return callable(getattr(store, "take_in", None))


def carry(source: MemoryStore, target: MemoryStore, view: Engram, memory: Memory, scope: Scope) -> Memory | None:
    """Move ``memory`` (as ``source`` holds it) into ``target`` as one of ``scope`` (see the module
    doc): written there, then deleted from ``source``, then announced through ``view`` (``scope``'s,
    of ``target``'s engine, its writes the sync's) as one ``moved`` event. Returns it as stored
    there; None when ``target`` cannot take it in, or holds its id as another scope's (nothing changed).
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
    if after is None:  # already taken in by a run that stopped before deleting it from ``source``
        stored = target.get_many([memory.id])
        if not stored or stored[0].scope != scope:
            return None
        source.delete([memory.id])
        return stored[0]
    source.delete([memory.id])
    view.events.emit(MemoryEvent("moved", (after,), view.scope, view.origin, REASON, view.clock(), (memory,)))
    return after


def take_in(
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
    gets the key the memory was given (said in a problem). Returns them by id, as stored now."""
    if database.moved_from_others is None:
        return {}
    ids = sorted(i for i in in_files if i not in db and i not in st.entries and i not in untouchable)
    if not ids:
        return {}
    try:
        arrived = database.moved_from_others(scope, ids)
    except EngramError as exc:
        rel, entry = in_files[ids[0]]
        report.problems.append(Problem(rel, entry.line, f"entries moved from another agent's folder not taken in: {exc}"))
        return {}
    for entry_id, memory in arrived.items():
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
        st.entries[entry_id] = sync_state.EntryState(rel, memory_digest(memory))
    return arrived
