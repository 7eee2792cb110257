"""Scope folders named as earlier versions named them, moved to the names engram writes now.

Earlier versions named ``agents/<agent>/`` and ``sessions/<agent>/<session>/`` with the names as
they are (``agents/Claude``, ``agents/adk:app:u1``), and a person may make one so (ClawCode's
``agents/[agent_id]/``). ``Layout.scope_dir`` now writes ``disk_names.portable`` names, and a pass
settles each scope against one folder (``reconcile``), so at the start of a full pass, under the
folder lock, each such folder of this database's scopes is renamed to its portable name
(``settle_folders``). The sync state's recorded paths are rewritten first and saved whole (its
journal folded in) and on the disk, then the folders renamed: a crash between the two leaves a
state naming the new folders beside the old ones, which the next pass renames (finding no path
left to rewrite), and a pass in between reads no file of an old folder (``scan`` reads a scope's
files only in its portable folder) nor writes one into the new (the quick pass sends the scope
to the full pass, ``named_as_is``). A folder that cannot be renamed is put back in the state and
its scope left out of the pass; one whose portable folder is there too is left as it is and its
files reported, never read (``scan``): a person moves them over. Folders are found by listing
(``Folder.walk``), so a folder is renamed only under its exact name: on a case-insensitive file
system ``agents/Claude`` also finds ``agents/claude``, which is another agent's.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from engram.disk_names import name_of, portable
from engram.errors import ValidationError
from engram.model import Scope

from . import state as sync_state
from .entry import Problem
from .report import SyncReport
from .sides import FolderSide

# The folders whose names are agent and session names.
_NAMED = ("agents", "sessions")


@dataclass(frozen=True, slots=True)
class _Move:
    old: str  # the scope folder as found, relative to the memory folder
    new: str  # its portable name (``Layout.scope_dir``)
    scope: Scope


def settle_folders(side: FolderSide, st: sync_state.SyncState, report: SyncReport,
                   save: Callable[[sync_state.SyncState], None]) -> tuple[bool, set[Scope]]:
    """Rename this database's scope folders named otherwise than ``side.layout`` names them, with
    ``st``'s paths (see the module docstring); ``save(st)`` writes the state whole and on the disk.
    Returns whether anything was renamed, and the scopes whose folder could not be (reported in
    ``report``; the pass leaves them out). Call it under the folder lock."""
    moves = _planned(side)
    if not moves:
        return False, set()
    for move in moves:
        _rewrite(st, move.old, move.new)
    save(st)
    held: set[Scope] = set()
    failed: list[_Move] = []
    for move in moves:
        try:
            _rename(side, move)
        except (OSError, ValidationError) as exc:
            report.problems.append(Problem(f"{move.old}/", 0, f"not renamed to {move.new}/ ({exc}); not synced"
                                           " until it is (engram names folders so on every file system)"))
            failed.append(move)
    for move in reversed(failed):  # the state names the folder where it still is
        _rewrite(st, move.new, move.old)
        held.add(move.scope)
    if failed:
        save(st)
    return len(failed) < len(moves), held


def unnamable(side: FolderSide, scopes: Iterable[Scope]) -> dict[Scope, str]:
    """Of ``scopes``, those whose folder cannot be named, with why: a valid name longer than a file
    name may be once written ``portable`` (more than 126 capitals). Passes leave them out and say
    so; their memories stay in the database, and every other scope is synced as usual."""
    why: dict[Scope, str] = {}
    for scope in scopes:
        try:
            side.layout.scope_dir(scope)
        except ValidationError as exc:
            why[scope] = f"{scope} is not mirrored in the memory folder: {exc}"
    return why


def named_as_is(side: FolderSide, scope: Scope) -> bool:
    """Whether ``scope``'s folder as an earlier version named it is there under that exact name
    (to be renamed by a full pass before anything is written for ``scope``): a stat, and a
    listing only when the stat finds something."""
    old = side.layout.scope_dir(scope, as_is=True)
    if old == side.layout.scope_dir(scope):
        return False
    try:
        if not os.path.lexists(side.folder.resolve(old)):
            return False
    except ValidationError:
        return False
    return _listed(side, old)


def _planned(side: FolderSide) -> list[_Move]:
    """The renames to make, shallowest first, each from where the ones before it leave it."""
    if not _any_as_is(side):
        return []  # the common case: a couple of listings, no walk
    found: dict[str, Scope] = {}
    for top in _NAMED:
        for rel, is_link in side.folder.walk(top):
            rel_dir = side.layout.dir_of(rel)
            if is_link or rel_dir is None or rel_dir in found:
                continue
            try:
                found[rel_dir] = side.layout.scope_of_dir(rel_dir)
            except ValidationError:
                continue  # no scope's folder: scan reports its files
    moves: list[_Move] = []
    # Shallowest first: with ClawCode's session folders, ``sessions/Bob/`` (a session of the
    # owner) may hold ``sessions/Bob/s1/`` (agent Bob's session s1), which its rename moves along.
    for rel_dir in sorted(found, key=lambda d: (d.count("/"), d)):
        scope = found[rel_dir]
        old = rel_dir
        for done in moves:
            if old.startswith(done.old + "/"):
                old = done.new + old[len(done.old):]
        new = side.layout.scope_dir(scope)
        if old == new or not side.owns(scope):
            continue
        try:
            if os.path.lexists(side.folder.resolve(new)):
                continue  # both there: scan reports the old one's files, unread
        except ValidationError:
            continue
        moves.append(_Move(old, new, scope))
    return moves


def _any_as_is(side: FolderSide) -> bool:
    """Whether a folder under ``agents/`` or ``sessions/`` (two levels) stands for a name it does
    not write ``portable``."""
    def listing(rel: str) -> list[str]:
        try:
            with os.scandir(side.folder.resolve(rel)) as found:
                return [e.name for e in found if e.is_dir(follow_symlinks=False)]
        except (OSError, ValidationError):
            return []

    for top in _NAMED:
        for name in listing(top):
            read = name_of(name)
            if read is None:
                continue
            if portable(read) != name:
                return True
            if top == "sessions" and any(
                    (inner_read := name_of(inner)) is not None and portable(inner_read) != inner
                    for inner in listing(f"{top}/{name}")):
                return True
    return False


def _rewrite(st: sync_state.SyncState, old: str, new: str) -> None:
    """Every path ``st`` records in the folder ``old`` (and below it) moved to ``new``."""
    prefix = old + "/"
    for entry_id, entry in list(st.entries.items()):
        if entry.path.startswith(prefix):
            st.entries[entry_id] = entry._replace(path=new + entry.path[len(old):])
    for rel in [rel for rel in st.files if rel.startswith(prefix)]:
        st.files[new + rel[len(old):]] = st.files.pop(rel)


def _rename(side: FolderSide, move: _Move) -> None:
    """Rename the folder ``move.old`` to ``move.new`` (its parent made when missing), and remove
    the old parent when that leaves it empty (``sessions/Claude/`` after its sessions moved)."""
    old, new = side.folder.resolve(move.old), side.folder.resolve(move.new)
    new.parent.mkdir(parents=True, exist_ok=True)
    side.folder.resolve(move.new)  # the folders just made, or already there, must not be symlinks
    os.rename(old, new)
    if old.parent != side.folder.root and old.parent.name not in _NAMED:
        with contextlib.suppress(OSError):
            old.parent.rmdir()  # only when empty


def _listed(side: FolderSide, rel: str) -> bool:
    """Whether every part of ``rel`` is listed under its exact name."""
    parent = side.folder.root
    for part in rel.split("/"):
        try:
            if part not in os.listdir(parent):
                return False
        except OSError:
            return False
        parent = parent / part
    return True
