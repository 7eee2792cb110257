"""What a sync pass is handed of the two sides it keeps in agreement: ``FolderSide``, the memory
folder as the pass reads and writes it, and ``DatabaseSide``, the engine as the pass reads and
writes it.

``FileSync`` is the one place that composes a pass: it builds both records at the start of each
pass (under the folder lock, once the layout is read from the folder) and hands them, with the
sync state and the report, to the passes (``mirror``, ``scan``, ``reconcile``). So what a pass may
touch is what it is given; the syncer's lock, its cached state and the views it keeps stay its own.
The records are built per pass rather than kept because the layout is settled only at the first
pass, and building one costs about a microsecond.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engram.errors import EngramError
from engram.events import MemoryEvent
from engram.model import Memory, Scope
from engram.store.base import group_mover

from .document import Document, Format
from .held import HeldIds
from .layout import GroupBy, Layout
from .paths import Folder

if TYPE_CHECKING:
    from engram.engine import Engram
    from engram.store.base import MemoryStore

    from .cross_moves import Arrivals, Departures


def belongs(database_agent: str | None, scope: Scope) -> bool:
    """Whether ``scope``'s folder is synced by the database of ``database_agent`` (None: a
    database of every agent, which syncs the whole folder). An agent's own database
    (``per_agent_databases``) syncs ``global/`` and that agent's folders; other agents' folders
    belong to their own databases."""
    return database_agent is None or scope.agent is None or scope.agent == database_agent


@dataclass(frozen=True, slots=True)
class FolderSide:
    """The memory folder as one pass sees it: where it is and in which format, which folder holds
    which scope (``layout``, as recorded in the folder), which file a new entry goes to
    (``group_by``), and which part of it is this database's (``database_agent``)."""

    folder: Folder
    fmt: Format
    layout: Layout
    group_by: GroupBy
    # The engine's limit: a file entry longer than the engine would store is reported when parsed.
    max_content_chars: int
    database_agent: str | None
    # Which memory file holds which id, read at the first question of the pass (``held``).
    held: HeldIds = field(default_factory=HeldIds, compare=False, repr=False)

    def owns(self, scope: Scope) -> bool:
        """Whether ``scope``'s folder is this database's to sync (``belongs``)."""
        return belongs(self.database_agent, scope)

    def shared(self, scope: Scope) -> bool:
        """Whether other databases sync ``scope``'s folder too: ``global/`` of an agent's own
        database, where two databases' global memories of one key meet (``shared_keys``)."""
        return self.database_agent is not None and scope.agent is None

    def parse(self, text: str, rel: str) -> Document:
        """The text of the file ``rel`` parsed in the folder's format."""
        return self.fmt.parse(text, rel, max_content_chars=self.max_content_chars)

    def file_for(self, memory: Memory) -> str:
        """The file a new entry for ``memory`` goes to: its group's, in its scope's folder."""
        return self.layout.file_for(memory, self.group_by, self.fmt.suffix)


@dataclass(frozen=True, slots=True)
class DatabaseSide:
    """The engine as one pass uses it: reads go to its ``store``, writes through ``view(scope)``,
    the engine as that scope sees it with its writes marked ``origin="sync"`` (so they are not
    reflected back into the folder; ``FileSync.view`` keeps one per scope).
    ``clock`` times what a pass imports; ``guard`` is the engine's backup before a bulk forget
    (None: the backend keeps no database backups, see ``removals.back_up``). ``copied_from_others(
    scope, ids)``: those of ``ids`` another agent's own database holds as a memory of its agent
    whose entry is still in that agent's folder (the operator's run, ``every_database``): an entry
    pasted from there is a copy, never that memory (None: no other database is known)."""

    store: MemoryStore
    view: Callable[[Scope], Engram]
    clock: Callable[[], float]
    guard: Callable[[str], None] | None
    copied_from_others: Callable[[Scope, list[str]], set[str]] | None = None
    # The operator's run too (``cross_moves``): ``moved_from_others(scope, ids)`` takes in those of
    # ``ids`` moved by hand from another agent's own database, or refuses them (``Arrivals``);
    # ``moving_to_others(scope, ids)``: those of ``ids`` whose entries went to another agent's
    # folder (``Departures``), never forgotten here as removed; it only asks: the pass itself
    # finishes a move the other database has made (``cross_moves.finish``, an audited forget).
    moved_from_others: Callable[[Scope, list[str]], Arrivals] | None = None
    moving_to_others: Callable[[Scope, set[str]], Departures] | None = None
    # What this pass forgot, as the store held it (every link): the store drops the links to them,
    # so the syncer rewrites the entries linked to them before the pass ends (``FileSync.sync``).
    forgotten: list[Memory] = field(default_factory=list)

    # The links this pass's moves dropped (``move``), each way: id -> the other ends. The entries that
    # listed them lose them unsaid (``links.dropped``), but for the moved one's, which says why.
    cut: dict[str, set[str]] = field(default_factory=dict)
    moved: set[str] = field(default_factory=set)

    def move(self, moves: Sequence[tuple[Memory, Scope]], reason: str) -> dict[str, Memory | EngramError]:
        """Make each memory of ``moves`` (as the store holds it) one of its scope there in place,
        together (``MemoryStore.move_many``: their ids, versions, vectors and access stats kept; a
        superseded memory moved with its successor is not refused), each announced through its new
        scope's view as one ``moved`` event (the audit trail's row); the links the moves dropped are
        recorded in ``cut``. Returns each memory as stored after, or why it was not moved; one no
        longer stored is absent (nothing changed). Raises ``StorageError`` for a plug-in store that
        cannot move (``group_mover``): the sync reports the entries as not moved and keeps the
        memories where they were, rather than fail the whole pass."""
        results = group_mover(self.store)({memory.id: scope for memory, scope in moves})
        for memory, scope in moves:
            after = results.get(memory.id)
            if not isinstance(after, Memory) or memory.scope == scope:
                continue
            view = self.view(scope)
            self.moved.add(memory.id)
            for end in set(memory.links) - set(after.links):
                self.cut.setdefault(memory.id, set()).add(end)
                self.cut.setdefault(end, set()).add(memory.id)
            view.events.emit(MemoryEvent("moved", (after,), view.scope, view.origin, reason, view.clock(), (memory,)))
        return results

    def forget(self, scope: Scope, memory: Memory, reason: str) -> None:
        """Forget ``memory`` (as the store holds it) through ``scope``'s view; recorded in ``forgotten``.
        Raises what ``Engram.forget`` raises (nothing recorded)."""
        self.view(scope).forget(memory.id, reason=reason)
        self.forgotten.append(memory)
