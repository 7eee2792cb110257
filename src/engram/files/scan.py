"""What a full pass covers: the memory files found in the folder, by scope (``scan``), and the
memories and recorded entries of each scope (``list_scope``, ``state_scopes``). Only the scopes
this database syncs are taken (``FolderSide.owns``); symlinks, and names that hold no scope's
memories, are reported and never read; so are the files of a folder named as an earlier version
named it, left beside its scope's folder as named now (``folder_names``). Each scope is then settled by ``reconcile``.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from engram import jsondoc
from engram.errors import ValidationError
from engram.model import Memory, Scope, make_filter

from . import conflicts, layout
from . import state as sync_state
from .entry import Problem
from .report import SyncReport
from .sides import FolderSide

if TYPE_CHECKING:
    from engram.store.base import MemoryStore


def list_scope(store: MemoryStore, scope: Scope) -> list[Memory]:
    """Every memory of ``scope``, superseded ones too, oldest first (read a page at a time)."""
    filt = make_filter([scope], include_superseded=True)
    out: list[Memory] = []
    while True:
        page = store.list(filt, order="oldest", limit=1000, offset=len(out))
        out.extend(page)
        if len(page) < 1000:
            return out


def state_scopes(side: FolderSide, st: sync_state.SyncState) -> set[Scope]:
    """The scopes this database syncs that ``st`` records entries in: one whose files and memories
    are all gone is still settled."""
    scopes = set()
    for entry in st.entries.values():
        try:
            scope = side.layout.scope_of_dir(entry.path.rsplit("/", 1)[0])
        except ValidationError:
            continue
        if side.owns(scope):
            scopes.add(scope)
    return scopes


def scan(side: FolderSide, report: SyncReport) -> dict[Scope, list[str]]:
    """Memory files by scope; symlinks and misplaced names are reported, never read."""
    found: dict[Scope, list[str]] = defaultdict(list)
    for rel, is_link in side.folder.walk():
        if rel.endswith(conflicts.SUFFIX) or rel.startswith(f"{layout.TYPES_DIR}/"):
            continue
        if is_link:
            if rel.split("/")[0] in ("global", "agents", "sessions"):
                report.problems.append(Problem(rel, 0, "is a symlink; symlinks are never followed, not read"))
            continue
        try:
            where = side.layout.locate(rel, side.fmt.suffixes)
        except ValidationError as exc:
            report.problems.append(Problem(rel, 0, f"not read: {exc}"))
            continue
        if where is not None:
            scope, rel_dir = where
            if not side.owns(scope):
                continue  # another agent's folder is its own database's to sync
            named = side.layout.scope_dir(scope)
            if rel_dir != named:
                # Named as an earlier version named it, beside its folder as named now (else the pass
                # renamed it, ``folder_names``): one scope is settled against one folder.
                both = side.folder.resolve(named).is_dir()
                report.problems.append(Problem(rel, 0, f"not read: {rel_dir}/ is {_whose(scope)} folder as an"
                                               f" earlier version named it; engram names it {named}/ now" + (
                                                   f", which is there too: move this folder's files into {named}/"
                                                   if both else "")))
                continue
            found[scope].append(rel)
        else:
            misplaced = side.layout.misplaced(rel, side.fmt.suffixes)
            if misplaced:
                report.problems.append(Problem(rel, 0, f"not read: {misplaced}"))
    return found


def _whose(scope: Scope) -> str:
    agent = f"agent {jsondoc.shown(scope.agent)}'s"
    return agent if scope.session is None else f"{agent} session {jsondoc.shown(scope.session)}"
