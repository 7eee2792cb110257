"""Which memory file of the folder holds which entry id, walked and parsed once a sync pass.

The file sync asks it of entries that left a folder or arrived in one (``moves``): is the id held
in another scope's folder? It asked by walking and parsing the whole folder on each question, once
per memory changed in the database whose entry left its folder and once per agent folder holding
ids its database had never seen: a pass over a folder of thousands of files read it again and again.
``HeldIds`` reads the folder at the first question of a pass and answers the rest from what it
read. The pass's own writes are what changes the folder meanwhile: each scope folder settled tells
it which files it wrote (``reread``), and those alone are read again at the next question, so every
answer is the one a walk of the folder at that moment gave.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from engram.errors import ValidationError
from engram.model import Scope

from .document import Document
from .paths import PathRefused

if TYPE_CHECKING:
    from .sides import FolderSide


class HeldIds:
    """The memory files of one pass's folder (``FolderSide.held``): each readable one's scope,
    scope folder and parsed document, and the files holding each id (an invalid entry's too). A
    file that cannot be read or parsed holds nothing here."""

    def __init__(self) -> None:
        self._files: dict[str, tuple[Scope, str, Document]] = {}
        self._ids: dict[str, set[str]] = {}  # each file's ids
        self._where: defaultdict[str, set[str]] = defaultdict(set)  # each id's files
        self._read = False
        self._stale: set[str] = set()

    def holders(self, side: FolderSide, entry_id: str) -> list[tuple[Scope, str, Document]]:
        """``(scope, scope folder, document)`` of each memory file holding ``entry_id``, in path order."""
        self._refresh(side)
        return [self._files[rel] for rel in sorted(self._where.get(entry_id, ()))]

    def held_outside(self, side: FolderSide, own_dir: str, ids: Iterable[str], syncs: Callable[[Scope], bool]) -> set[str]:
        """Those of ``ids`` held by a memory file outside ``own_dir``, in the folder of a scope ``syncs`` accepts."""
        return {i for i in ids if any(where != own_dir and syncs(scope) for scope, where, _ in self.holders(side, i))}

    def reread(self, rels: Iterable[str]) -> None:
        """The files ``rels`` were written by the pass: read again at the next question."""
        if self._read:
            self._stale |= set(rels)

    def _refresh(self, side: FolderSide) -> None:
        if not self._read:
            try:
                rels = [rel for rel, is_link in side.folder.walk() if not is_link]
            except (PathRefused, OSError):
                return  # nothing held this time; the next question walks again
            self._read = True
            self._stale = set(rels)
        for rel in sorted(self._stale):
            self._drop(rel)
            self._add(side, rel)
        self._stale.clear()

    def _drop(self, rel: str) -> None:
        self._files.pop(rel, None)
        for entry_id in self._ids.pop(rel, ()):
            self._where[entry_id].discard(rel)

    def _add(self, side: FolderSide, rel: str) -> None:
        try:
            where = side.layout.locate(rel, side.fmt.suffixes)
        except ValidationError:
            return
        if where is None:
            return
        try:
            doc = side.parse(side.folder.read_text(rel), rel)
        except (PathRefused, OSError):
            return  # gone, or cannot be read: holds nothing
        if doc.parsed.broken:
            return
        self._files[rel] = (where[0], where[1], doc)
        self._ids[rel] = {e.id for e in doc.parsed.entries if e.id} | doc.parsed.invalid_ids
        for entry_id in self._ids[rel]:
            self._where[entry_id].add(rel)
