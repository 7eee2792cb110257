"""The sync state: what each entry and file looked like when files and database last agreed.

Kept in ``.engram-sync.json`` inside the memory folder (a dot-file, so sync never reads it as
memories). Per entry: the file it is in and the hash of its editable fields at the last sync;
per file: the hash of its whole text when it was last fully in sync. Comparing both sides with
this record tells which side changed, so a change on both sides is a conflict rather than a
silent overwrite. Several processes (``engram watch`` and a CLI writing) may sync the same
folder, so every change takes an exclusive lock on ``.engram-sync.lock`` and re-reads the state.
With ``per_agent_databases`` each agent's database keeps a state of its own
(``.engram-sync.<agent>.json``, the agent's name written ``disk_names.portable``, ``files_for``)
beside the others, under the same lock.

A pass that changed a few entries (the quick pass after a store) appends what it changed to
``.engram-sync.journal`` instead of rewriting the state whole (``append``): the state holds a line
per memory, so rewriting it cost every store time in proportion to the memories stored (~1.7 ms
at 10,000). The journal names the state it continues (a token in both), so a journal left behind
by a state written since is ignored, and once it has grown as large as the state it is folded in
(``save`` writes both afresh): each change costs its own line plus, on average, about as much
again of the next full write. Before a quick pass appends entries to a memory file, a line
announcing the append (each file's size and hash before, and its hash after) goes to the journal
and to the disk (``intend_appends``); ``read`` cuts back off an append a crash left part-way
(the pass's own line after it marks it done).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

from engram.disk_names import name_of, portable, settle
from engram.errors import StorageError, ValidationError

from .paths import Folder

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: one process per folder
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger("engram.files")

STATE_FILE = ".engram-sync.json"
JOURNAL_FILE = ".engram-sync.journal"
LOCK_FILE = ".engram-sync.lock"
# Whose sessions ``sessions/<session>/`` holds (``session_owner``).
SESSIONS_FILE = ".engram-sessions.json"
# The journal is folded into the state once it is larger than the state, or than this: below it a
# full write costs little, and a small store would otherwise rewrite its state every few passes.
JOURNAL_MIN_BYTES = 256 * 1024


class StateFiles(NamedTuple):
    """The two files one database's sync state is kept in."""

    state: str
    journal: str


SHARED = StateFiles(STATE_FILE, JOURNAL_FILE)


def files_for(database_agent: str | None) -> StateFiles:
    """Where a database's sync state is kept: ``SHARED`` for a database of every agent; an agent's
    own database (``per_agent_databases``) has its own pair, ``.engram-sync.<agent>.json``, since
    several such databases sync their parts of one folder (one state for all of them would be
    recorded against whichever synced last, and every other one would start afresh each time)."""
    if database_agent is None:
        return SHARED
    name = portable(database_agent)  # one file per agent on every file system, as its folders
    return StateFiles(f".engram-sync.{name}.json", f".engram-sync.{name}.journal")


def _as_is(where: StateFiles) -> StateFiles | None:
    """The files an earlier version kept ``where``'s state in (the agent's name as it is), or None
    when they are the same (``SHARED``, or a name that is its own portable form)."""
    if where == SHARED:
        return None
    name = name_of(where.state[len(".engram-sync."):-len(".json")])
    earlier = StateFiles(f".engram-sync.{name}.json", f".engram-sync.{name}.journal")
    return None if name is None or earlier == where else earlier


class EntryState(NamedTuple):
    """Where an entry is and the hash of its editable fields (a tuple: json writes it as the
    ``[path, digest, importance]`` list the state file holds, with no copy made per entry).
    ``importance`` is the one hashed: with it, a memory whose entry was deleted by hand and whose
    importance alone the engine changed since (a recall) is told from one edited in the database
    (``entry.hashes_as_but_for_importance``); None in a state written before it was kept."""

    path: str
    digest: str
    importance: float | None = None


class Written(NamedTuple):
    """What ``save`` or ``append`` left on disk: the two files' ``stat``, by which a syncer knows
    the state it keeps in memory is still the one on disk (no other process wrote since)."""

    state: os.stat_result
    journal: os.stat_result


class Entries(dict[str, EntryState]):
    """The state's entries by id, with the ids recorded in each file kept in step (``ids_in``,
    ``holds``): the quick pass after every store asks whether a file it changed still holds
    entries, and scanning every entry for that cost each store time in proportion to the memories
    stored (~3 ms of CPU at 50,000). Every way a dict is changed goes through the index; an
    ``EntryState`` is a tuple, so an entry's path never changes in place. A copy (``dict(entries)``,
    ``entries.copy()``) is a plain dict without the index; json writes it as any dict."""

    __slots__ = ("_by_path",)

    def __init__(self, entries: Mapping[str, EntryState] | None = None) -> None:
        super().__init__(entries or {})
        self._by_path: dict[str, set[str]] = {}
        by_path = self._by_path  # built in one loop: a state read holds a line per memory
        for entry_id, entry in super().items():
            ids = by_path.get(entry.path)
            if ids is None:
                by_path[entry.path] = {entry_id}
            else:
                ids.add(entry_id)

    def ids_in(self, rel: str) -> frozenset[str]:
        """The ids of the entries recorded in the file ``rel``."""
        return frozenset(self._by_path.get(rel, ()))

    def holds(self, rel: str) -> bool:
        """Whether any entry is recorded in the file ``rel``."""
        return rel in self._by_path

    def _unindex(self, entry_id: str, entry: EntryState) -> None:
        ids = self._by_path[entry.path]
        ids.discard(entry_id)
        if not ids:
            del self._by_path[entry.path]

    def __setitem__(self, entry_id: str, entry: EntryState) -> None:
        old = super().get(entry_id)
        if old is not None:
            if old.path == entry.path:
                super().__setitem__(entry_id, entry)
                return
            self._unindex(entry_id, old)
        super().__setitem__(entry_id, entry)
        self._by_path.setdefault(entry.path, set()).add(entry_id)

    def __delitem__(self, entry_id: str) -> None:
        entry = self[entry_id]
        super().__delitem__(entry_id)
        self._unindex(entry_id, entry)

    def pop(self, entry_id: str, *default: EntryState | None) -> EntryState | None:  # type: ignore[override]
        if entry_id not in self:
            return super().pop(entry_id, *default)  # the default, or KeyError
        entry = super().pop(entry_id)
        self._unindex(entry_id, entry)
        return entry

    def popitem(self) -> tuple[str, EntryState]:
        entry_id, entry = super().popitem()
        self._unindex(entry_id, entry)
        return entry_id, entry

    def setdefault(self, entry_id: str, default: EntryState) -> EntryState:  # type: ignore[override]
        if entry_id not in self:
            self[entry_id] = default
        return self[entry_id]

    def update(self, *args: object, **kwargs: EntryState) -> None:  # type: ignore[override]
        for entry_id, entry in dict(*args, **kwargs).items():  # type: ignore[call-overload]
            self[entry_id] = entry

    def __ior__(self, other: object) -> Entries:  # type: ignore[override,misc]
        self.update(other)
        return self

    def clear(self) -> None:
        super().clear()
        self._by_path.clear()

    def __reduce__(self) -> tuple[type[Entries], tuple[dict[str, EntryState]]]:
        # copy and pickle rebuild it through __init__, so the copy has an index of its own.
        return Entries, (dict(self),)


class HandedOver(StorageError):
    """The sync state was handed to another database by ``engram migrate`` (``hand_over``) from
    the one now syncing: a process still bound to the migrated store (``engram watch``, a server's
    folder writer) would otherwise start afresh and overwrite the state, and the files, of the store
    that took it over."""

    def __init__(self, state_file: str, source: str, target: str) -> None:
        self.state_file, self.source, self.target = state_file, source, target
        super().__init__(
            f"the memory folder's sync state ({state_file}) was handed over by `engram migrate` from"
            f" {_shown(source)} to {_shown(target)}: this store no longer syncs the folder; use the new store"
            f" (to sync the folder with this one again, delete {state_file} and its journal: the next sync"
            " then compares both sides afresh)")


def _shown(identity: str) -> str:
    """A ``database_identity`` as a person reads it: its location (a file, a redacted URL)."""
    return identity.partition(":")[2].rpartition(":")[0] or identity


@dataclass
class SyncState:
    format: str
    database: str = ""
    entries: Entries = field(default_factory=Entries)
    files: dict[str, str] = field(default_factory=dict)
    journal: str = ""  # the token of the journal that continues this state ("": none)
    where: StateFiles = SHARED  # the files it is kept in
    # Each (source, target) once ``engram migrate`` handed the state from the database ``source`` to
    # ``target`` (``hand_over``); kept by every later save, so ``source`` is refused for good.
    handed_over: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> str:
        # Compact and unsorted (entries keep the order they were recorded in): json's C encoder
        # writes it, and at 10,000 memories an indented, sorted one cost ~45 ms a write (the
        # indent makes json use its pure-Python encoder).
        handed = {"handed_over": [{"from": s, "to": t} for s, t in self.handed_over]} if self.handed_over else {}
        return json.dumps({
            "version": 1, "format": self.format, "database": self.database, "journal": self.journal,
            **handed,
            "entries": self.entries,
            "files": self.files,
        }, separators=(",", ":"))

    def __post_init__(self) -> None:
        if not isinstance(self.entries, Entries):
            self.entries = Entries(self.entries)

    def forget_file(self, rel: str) -> None:
        self.files.pop(rel, None)

    def ids_in(self, rel: str) -> frozenset[str]:
        return self.entries.ids_in(rel)


_STATE_MAX_BYTES = 1 << 31


def database_identity(backend: str, location: str) -> str:
    """What a sync state is recorded against: a store's backend and location (``StoreStats``) and,
    for a file, its inode (``backend:location:inode``), so a new database file in the same place is
    not mistaken for the old one (which would read every entry of the folder as forgotten)."""
    try:
        inode = str(os.stat(location).st_ino)
    except (OSError, ValueError):
        inode = ""
    return f"{backend}:{location}:{inode}"


def same_database(recorded: str, current: str) -> bool:
    """Whether the state recorded against the database ``recorded`` (``database_identity``) is
    about ``current``: the same identity, or the same file moved (same backend and inode, another
    location), as an agent's own database is when its folder is renamed to its portable name
    (``root.settle_agent_folder``), or one PostgreSQL database reached by another spelling of its URL
    (``engram migrate --to postgres://db/x``, then ``ENGRAM_DATABASE_URL=postgresql://db:5432/x``).
    A file replaced in the same place has another inode, so it still starts afresh."""
    if recorded == current:
        return True
    backend, _, rest = recorded.partition(":")
    now_backend, _, now_rest = current.partition(":")
    (location, _, inode), (now_location, _, now_inode) = rest.rpartition(":"), now_rest.rpartition(":")
    if backend == now_backend == "postgres" and not inode and not now_inode:
        from engram.db.postgres import database_identity as reached  # psycopg: on PostgreSQL only

        return reached(location) == reached(now_location)
    return backend == now_backend and inode == now_inode and inode.isdigit()


def hand_over(folder: Folder, fmt: str, source: str, target: str, found_in: Iterable[StateFiles],
              where: StateFiles = SHARED) -> StateFiles | None:
    """Re-record the state kept against the database ``source`` (in the first of ``found_in``
    holding one) against ``target``, kept in ``where``: what ``engram migrate`` does once its copy
    into ``target`` verifies, so the first sync there compares both sides with the state they
    last agreed in rather than afresh (which took every memory strengthened by a recall since its
    file was written for a hand edit in conflict). Several databases copied into one
    (``per_agent_databases``: each agent's file and the shared one) each bring their part: a
    state ``where`` already keeps for ``target`` is merged with (``_merge``), never replaced, so
    what it recorded since stands. Returns where the state was found, or None when nothing
    changed. Takes the folder lock.

    The state is marked handed over from ``source`` (``SyncState.handed_over``), and so is one left
    in place in other files (an agent's own database's): a process still syncing ``source`` (a
    watcher or server started before the migrate) then stops with ``HandedOver`` rather than
    starting afresh and writing its stale view over the folder and the state ``target`` took.
    A ``target`` that handed the state away itself (the SQLite file copied up, now copied back
    into, ``migrate --from URL``) takes it back: it keeps no state of its own there, and its mark
    is dropped, else its first sync would stop with ``HandedOver``."""
    with locked(folder):
        try:
            kept, _ = read(folder, fmt, target, where)
        except HandedOver:  # target handed its state away: ``where`` holds another database's
            kept = SyncState(fmt, target, where=where)
        try:
            for files in found_in:
                state, _ = read(folder, fmt, source, files)
                if state.entries or state.files:
                    break
            else:
                return None
        except HandedOver:  # handed over before (a migrate run again): not handed twice
            return None
        handed = (*(pair for pair in (*kept.handed_over, *state.handed_over) if not same_database(pair[0], target)),
                  (source, target))
        merged = state
        if kept.entries or kept.files:
            if not _merge(kept, state):
                return None
            merged = kept
        save(folder, replace(merged, database=target, where=where, handed_over=handed), durable=True)
        if files != where:
            state.handed_over = (*state.handed_over, (source, target))
            save(folder, state, durable=True)
        return files


def _merge(kept: SyncState, brought: SyncState) -> bool:
    """Add to ``kept`` what ``brought`` (another database's state) records that ``kept`` does not;
    where both record an entry or a file differently, neither is trusted and it is dropped: an
    entry or file the state does not know is compared afresh, which can only add or report
    conflicts, never remove. Whether ``kept`` changed."""
    changed = False
    for entry_id, entry in brought.entries.items():
        had = kept.entries.get(entry_id)
        if had is None:
            kept.entries[entry_id] = entry
            changed = True
        elif had != entry:
            del kept.entries[entry_id]
            changed = True
    for rel, digest in brought.files.items():
        had_digest = kept.files.get(rel)
        if had_digest is None:
            kept.files[rel] = digest
            changed = True
        elif had_digest != digest:
            kept.forget_file(rel)
            changed = True
    return changed


def load(folder: Folder, fmt: str, database: str, where: StateFiles = SHARED) -> SyncState:
    """The stored state; an unreadable state, or one recorded for another format or another
    database (a fresh or replaced database file), starts afresh: every entry then counts as
    unsynced, which can only add or report conflicts, never remove."""
    return read(folder, fmt, database, where)[0]


def read(folder: Folder, fmt: str, database: str,
         where: StateFiles = SHARED) -> tuple[SyncState, Written | None]:
    """``load``, with what the disk holds (the two files' ``stat``) when a change may be appended
    to it: the state and its own journal, whole. Call it under the folder lock. A state an
    earlier version kept under the agent's name as it is is moved to where it is kept now first.
    Raises ``HandedOver`` when ``engram migrate`` handed the state from ``database`` to another."""
    earlier = _as_is(where)
    if earlier is not None:
        # The journal first: a crash between the two leaves the state to move, which a read moves.
        for old, new in zip(earlier[::-1], where[::-1], strict=True):
            settle(folder.resolve(old), folder.resolve(new))
    found = _stats(folder, where)
    fresh = SyncState(fmt, database, where=where)
    try:
        # Not bounded by files.max_file_bytes (a limit for hand-edited files): the state grows with
        # the number of memories, and a refused state would make every sync start afresh.
        data = json.loads(folder.read_text(where.state, max_bytes=_STATE_MAX_BYTES))
    except FileNotFoundError:
        return fresh, None
    except (ValueError, OSError) as exc:
        log.warning("sync state %s unreadable (%s); starting afresh", where.state, exc)
        return fresh, None
    listed = data.get("handed_over")
    handed = tuple((str(one.get("from")), str(one.get("to"))) for one in listed if isinstance(one, dict)) \
        if isinstance(listed, list) else ()
    for handed_from, handed_to in handed:
        if same_database(handed_from, database):
            raise HandedOver(str(folder.resolve(where.state)), handed_from, handed_to)
    if data.get("format") != fmt or not same_database(str(data.get("database")), database):
        return fresh, None
    entries = Entries({i: EntryState(*entry) for i, entry in data.get("entries", {}).items()})
    state = SyncState(fmt, database, entries, dict(data.get("files", {})), str(data.get("journal") or ""), where,
                      handed)
    appending: dict[str, tuple[int, int, str, str]] = {}
    whole = bool(state.journal) and _replay(folder, state, appending)
    for rel, (size, added, before, after) in appending.items():
        if folder.undo_append(rel, size, added, before, after):
            log.warning("%s: cut back to before an append that a crash interrupted; its entries are"
                        " written again by the next sync", rel)
    return (state, found) if whole and found is not None else (state, None)


def _stats(folder: Folder, where: StateFiles) -> Written | None:
    try:
        return Written(*(os.stat(folder.resolve(rel), follow_symlinks=False) for rel in where))
    except (ValueError, OSError):
        return None


def _replay(folder: Folder, state: SyncState, appending: dict[str, tuple[int, int, str, str]]) -> bool:
    """The changes the journal adds to ``state``, when it is ``state``'s journal; whether it is,
    and whole (so more may be appended). A line a crash cut short ends it (what came before
    stands: an older state, which ``save`` explains is safe). ``appending`` gets the appends
    its last pass announced (``intend_appends``) and did not record as done."""
    try:
        text = folder.read_text(state.where.journal, max_bytes=_STATE_MAX_BYTES)
    except FileNotFoundError:
        return False
    except (ValueError, OSError) as exc:
        log.warning("sync journal %s unreadable (%s); the state before it is used", state.where.journal, exc)
        return False
    header, _, body = text.partition("\n")
    try:
        if json.loads(header).get("journal") != state.journal:
            return False  # left by an earlier state: this state already holds what it says
    except (ValueError, AttributeError):
        return False
    lines = body.split("\n")
    for line in lines[:-1]:  # the last is what follows the final newline: empty when whole
        try:
            change = json.loads(line)
            if "a" in change:
                announced = {str(rel): (int(size), int(added), str(before), str(after))
                             for rel, (size, added, before, after) in change["a"].items()}
                appending.clear()
                appending.update(announced)
                continue
            entries, files = change["e"], change["f"]
        except (ValueError, TypeError, KeyError, AttributeError):
            return False  # a line a crash cut short
        appending.clear()  # the pass that announced them recorded its changes: the appends are done
        for entry_id, entry in entries.items():
            if entry is None:
                state.entries.pop(entry_id, None)
            else:
                state.entries[entry_id] = EntryState(*entry)
        for rel, digest in files.items():
            if digest is None:
                state.files.pop(rel, None)
            else:
                state.files[rel] = digest
    return lines[-1] == ""


def save(folder: Folder, state: SyncState, *, durable: bool = False) -> Written:
    """Write the state whole, with an empty journal of its own (a new token); ``durable``: wait for
    the disk, for a state that must be there before what follows it (``folder_names``).

    Without waiting for the disk (no fsync): a sync pass writes the memory files it changed first,
    each on disk before it is renamed into place, then this record, so a power loss can only bring
    back an older record beside newer files, never the reverse. Read against an older record an
    entry that files and database both hold alike is in sync whatever the record says (``reconcile._settle``
    compares the two sides first), so the next pass finds nothing to do, except for an entry the
    database changed again after its file was written: that reads as changed on both sides, the
    database version is kept and the file's (engram's own earlier copy) is set aside as a
    ``.conflict``. A crash of the process alone loses nothing (the rename is done). The database
    itself commits with ``synchronous=NORMAL``, which makes the same promise. The fsync cost a
    quick pass several milliseconds of waiting on this project's disks, with every store through
    the server waiting for that pass."""
    state.journal = secrets.token_hex(8)
    written = folder.write_text(state.where.state, state.to_json(), durable=durable)
    # After the state: a crash between the two leaves the new state beside the old journal, whose
    # token no longer matches, so nothing is replayed twice or onto the wrong state.
    header = folder.write_text(state.where.journal, json.dumps({"journal": state.journal}) + "\n", durable=durable)
    return Written(written, header)


def append(folder: Folder, state: SyncState, last: Written, entry_ids: Iterable[str],
           files: Iterable[str]) -> Written:
    """Record ``state``'s entries ``entry_ids`` and its files ``files`` as they now are (removed
    when absent) at the end of the journal; ``last`` is what this syncer wrote last, still on disk
    (the caller checks, under the folder lock). Folds the journal into a full ``save`` once it
    would outgrow the state. Without waiting for the disk, as ``save``; the lines are ASCII
    (escaped JSON), so a line cut short is never mistaken for a whole one."""
    line = json.dumps({"e": {i: state.entries.get(i) for i in entry_ids},
                       "f": {rel: state.files.get(rel) for rel in files}}, separators=(",", ":")) + "\n"
    if last.journal.st_size + len(line) > max(JOURNAL_MIN_BYTES, last.state.st_size):
        return save(folder, state)
    return Written(last.state, folder.append_text(state.where.journal, line))


def intend_appends(folder: Folder, state: SyncState, last: Written,
                   appends: dict[str, tuple[int, int, str]]) -> Written:
    """Announce, on disk before anything is added, appends about to be made to memory files
    (``appends``: file -> its size now, the bytes to be added, all UTF-8, and the hash its text will
    have; its hash now is the one in ``state.files``). A crash part-way through an append leaves a
    partial entry at the file's end, which the next ``read`` cuts back off (``Folder.undo_append``)
    rather than a sync importing it as an entry added by hand. The pass's own ``append`` line,
    after the files are written, marks them done. ``last`` is what this syncer wrote last, as for
    ``append``; returns what the journal holds now."""
    line = json.dumps({"a": {rel: [size, added, state.files[rel], after] for rel, (size, added, after) in appends.items()}},
                      separators=(",", ":")) + "\n"
    return Written(last.state, folder.append_text(state.where.journal, line, durable=True))


def session_owner(folder: Folder, agent: str) -> str:
    """The agent whose sessions sit in ``sessions/<session>/`` (``files.session_folders =
    "session"``): the one recorded in ``SESSIONS_FILE``, else ``agent``, recorded now. The folder
    is read alike whoever syncs it: taken from each syncer's own agent, ``sessions/s1/`` was
    alice's for a sync run as alice and the default agent's for one run as it, and each moved
    the other's memories to its own agent. Call it under the folder lock."""
    try:
        return _read_session_owner(folder)
    except FileNotFoundError:
        folder.write_text(SESSIONS_FILE, json.dumps({"owner": agent}) + "\n")
        return agent
    except (ValueError, OSError, KeyError, TypeError, ValidationError) as exc:
        log.warning("%s unreadable (%s); this pass reads sessions/<session>/ as %s's", SESSIONS_FILE, exc, agent)
        return agent


def recorded_session_owner(folder: Folder) -> str | None:
    """The agent ``SESSIONS_FILE`` records as the owner of ``sessions/<session>/``, or None when
    the folder records none (or it cannot be read); never writes."""
    try:
        return _read_session_owner(folder)
    except (ValueError, OSError, KeyError, TypeError, ValidationError):
        return None


def _read_session_owner(folder: Folder) -> str:
    from engram.model import make_scope

    owner = json.loads(folder.read_text(SESSIONS_FILE, max_bytes=4096))["owner"]
    make_scope(owner, None)  # a valid agent name
    return str(owner)


@contextlib.contextmanager
def locked(folder: Folder) -> Iterator[None]:
    """Hold the folder's sync lock (between processes; threads use the syncer's own lock)."""
    if fcntl is None:
        yield
        return
    path: Path = folder.resolve(LOCK_FILE)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
