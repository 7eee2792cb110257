"""One memory per key in a scope folder several databases sync: ``global/`` with
``per_agent_databases``, where each agent's own database syncs the same files (``sides.belongs``).

A key is unique within its scope, and a global memory is every agent's, so two databases holding
different global memories under one key (alice and bob each remembered ``rule``) hold two
versions of one memory. They meet in ``global/`` as two entries of one key with different ids.
Imported as it stood, the other database's entry clashed with this one's key and was stored as a
new memory under a key made from its content (``alice-s-global-rule``), its bullet given the new
id; the database that wrote it then found its entry gone from the file and forgot its own memory,
importing the other's in its place. So the pass settles the versions instead, the same way in
every database whichever syncs first:

- the earliest stored version (``created_at``, then id) stays the memory, in the folder and, at
  each database's next sync, in every database (under its id, so an edit or a forget of its entry
  reaches them all, as for any global memory);
- each other version leaves the folder: its entry is taken out of its file, and a version held by
  this database is forgotten here (other databases forget theirs at their next sync, as its entry
  is gone from the file); one that differs from the memory is kept as a ``same-key`` conflict
  (``conflicts``), whose ``--take file`` applies it to the memory, in every database through the
  folder (to the memory holding the key since, once the one that stayed was forgotten; with none,
  the version comes back as itself, under its own id). An identical version is simply dropped. A
  version this database edited after another database's sync had taken it out is put back by the
  pass (``deleted-in-file``) and leaves again here: one ``same-key`` conflict for the edit, no note
  for the putting back.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from engram.errors import EngramError
from engram.model import Memory, MemoryFilter, Scope

from . import conflicts
from .entry import Entry, Problem, from_memory
from .report import SyncReport
from .sides import DatabaseSide, FolderSide
from .state import SyncState
from .write import ScopeFiles

Found = tuple[str, Entry]  # an entry with the file it is in


@dataclass(frozen=True, slots=True)
class _Version:
    """One version of a key: an entry of the folder this database does not know (``found``), or
    this database's own memory of the key (``memory``)."""

    entry: Entry
    found: Found | None = None
    memory: Memory | None = None

    @property
    def order(self) -> tuple[float, str]:
        return (self.entry.created_at or 0.0, self.entry.id or "")


def settle(
    side: FolderSide,
    database: DatabaseSide,
    scope: Scope,
    unknown: Sequence[Found],
    st: SyncState,
    files: ScopeFiles,
    report: SyncReport,
) -> list[Found]:
    """Settle the versions of each key among ``unknown`` (entries of ``scope``'s folder this
    database neither holds nor recorded) and this database's memories of ``scope``, as the module
    doc says; returns the entries left to import. ``st``, ``files`` and ``report`` change in place."""
    by_key: dict[str, list[_Version]] = defaultdict(list)
    # Grouped by the key each is stored under (made from its text as stored when it has none): under
    # ``redact``, a key made from the text as written was no key stored, and the conflict note and the
    # report named it, spelling what redaction masks (``admin-contact-ops-example-com``).
    privacy = database.view(scope).privacy
    for found in unknown:
        by_key[found[1].stored_key(privacy)].append(_Version(found[1], found=found))
    for key, versions in by_key.items():
        # The store as it is now: a memory of the key this pass forgot (taken out of its file) is no version.
        held = database.store.list(MemoryFilter(scopes=(scope,), include_superseded=True, key=key), limit=1)
        versions += [_Version(from_memory(memory), memory=memory) for memory in held]
    left: list[Found] = []
    for key, versions in by_key.items():
        kept = min(versions, key=lambda v: v.order)
        if kept.found is not None:
            left.append(kept.found)
        for version in versions:
            if version is not kept:
                _leave(side, database, scope, key, kept, version, st, files, report)
    return left


def _leave(side: FolderSide, database: DatabaseSide, scope: Scope, key: str, kept: _Version, version: _Version,
           st: SyncState, files: ScopeFiles, report: SyncReport) -> None:
    """Take ``version`` out of the folder (and, held here, out of this database), keeping it as a
    ``same-key`` conflict when it differs from ``kept``. One of the two is an entry of the folder
    (this database holds one memory of a key), so the version has a file to be kept beside: its
    own, else the one this database's memory was last synced into, else the memory's."""
    recorded = st.entries.get(version.entry.id or "")
    if version.found is not None:
        rel = version.found[0]
    else:
        rel = recorded.path if recorded is not None else kept.found[0] if kept.found else ""
    put_back = False
    if version.memory is not None:
        try:
            database.forget(scope, version.memory, reason=f"another database's global memory holds key {key}")
        except EngramError as exc:
            report.problems.append(Problem(rel, 0, f"memory {version.memory.id} (key {key}) not settled: {exc}"))
            return
        report.db_forgotten += 1
        st.entries.pop(version.memory.id, None)
        # An edit of a version another database's sync already took out of the folder was put
        # back earlier in this pass as a ``deleted-in-file`` conflict (an empty note); it leaves
        # again now, kept whole by the ``same-key`` conflict below, so that note says nothing.
        put_back = bool(conflicts.withdraw(side.folder, report.conflicts, entry_id=version.memory.id, kind="deleted-in-file"))
    doc = files.docs.get(rel)
    if doc is not None and (doc.set_at(version.found[1].line, None) if version.found else doc.remove(version.entry.id or "")):
        files.dirty.add(rel)
        if put_back:  # added to its file earlier in this pass, never written there: neither added nor removed
            report.files_added -= 1
        else:
            report.files_removed += 1
    if version.entry.digest() == kept.entry.digest():
        return  # the same memory twice: nothing to choose between
    kept_id = kept.entry.id or ""
    path = conflicts.keep(side.folder, side.fmt, entry_id=kept_id, file=rel, kind="same-key", losing=[version.entry],
                          privacy=database.view(scope).privacy, also=key)
    report.conflicts.append(path)
    report.problems.append(Problem(rel, version.found[1].line if version.found else 0, (
        f"key {key} is held by two global memories of different databases; {kept_id} stays the memory and the other"
        f" version ({version.entry.id}) was moved to {path} (engram conflicts resolve {kept_id} --take file applies it,"
        " --take db drops it)")))
