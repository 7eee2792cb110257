"""The quick pass: engine events written into the memory folder without reading the scope whole.

A change made through engram (``FileSync._reflect``, on every engine event but the sync's own)
rewrites, adds or removes only the changed entries, in files kept parsed from the last pass while
their inode, size and time are unchanged; a file that only grew at its end is appended to
(announced in the state's journal first, see ``write``), not rewritten. When a file it touches is
not as the last pass left it (edited by hand, gone), an entry is not where the state puts it, or a
file would outgrow ``files.max_file_bytes``, it gives up with nothing written and the scope gets
the full pass (``reconcile``); on every event that full pass made each store cost time in
proportion to the memories already in its scope (~0.06 ms each here). The quick pass does not
pick up hand edits of other files or writes of processes without the mirror: the watcher's passes
and ``engram sync`` do.

The files kept parsed are bounded (``KeptFiles``): kept whole, every file a pass had touched
stayed, ~1 KB per memory (a server over a million memories held over a gigabyte). The least
recently used are let go; one is read and parsed again when a pass next needs it.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from engram.model import Scope

from . import layout, split
from . import state as sync_state
from .document import Document
from .entry import Entry, from_memory, memory_digest
from .paths import Folder, PathRefused, RunningHash
from .report import SyncReport
from .sides import FolderSide
from .write import Journal, ScopeFiles, doc_for, stat_of, write_files

if TYPE_CHECKING:
    from engram.store.base import MemoryStore


@dataclass
class _Parsed:
    """A file as the quick pass left it: its ``stat_of`` then, and the document it holds."""

    stat: tuple[int, int, int]
    text: str
    doc: Document
    hash: RunningHash | None


class _Size(NamedTuple):
    """A file let go by ``KeptFiles``: its ``stat_of`` and its size (``split.size``) then."""

    stat: tuple[int, int, int]
    size: int


# How many files at their largest (``files.max_file_bytes`` each) the quick pass keeps parsed.
# A file kept costs ~3.8 bytes of memory per byte of its text (the text, its lines and a block per
# entry; bench/files_memory.py), so the bound is in text: 4 files of the default 5 MB, ~75 MB.
# Files are let go least recently used first, and a store goes to the last file of its memory's
# group: the last files of the four groups stored into most recently stay kept at their largest.
# Reading one again costs its parse, ~0.1 s a megabyte here (a full 5 MB file ~0.5 s).
KEPT_FILES = 4


class KeptFiles:
    """The files the quick pass keeps parsed between passes, by path, at most ``max_chars``
    characters of their text (``KEPT_FILES``), the least recently used let go first. Of a file let
    go that was at least half full (``max_file_bytes``) its ``stat_of`` and size stay (``full``):
    a store into a group of many full files walks past each to the one with room, and parsing each
    again to learn it is still full would cost every store a parse of every full file once there
    are more of them than are kept. The sizes stay one per half a full file, a few hundred bytes
    each."""

    def __init__(self, max_file_bytes: int, files: int = KEPT_FILES) -> None:
        self.max_file_bytes = max_file_bytes
        self.max_chars = files * max_file_bytes
        self.chars = 0  # the text held, in characters
        self._parsed: OrderedDict[str, _Parsed] = OrderedDict()  # least recently used first
        self._sizes: dict[str, _Size] = {}

    def __len__(self) -> int:
        return len(self._parsed)

    def __contains__(self, rel: object) -> bool:
        return rel in self._parsed

    def take(self, rel: str) -> _Parsed | None:
        """The file ``rel`` as kept, taken out (a pass that fails with it leaves no stale copy)."""
        kept = self._parsed.pop(rel, None)
        if kept is not None:
            self.chars -= len(kept.text)
        return kept

    def keep(self, rel: str, parsed: _Parsed) -> None:
        """Keep ``rel`` as the most recently used, letting go of the least recently used files
        while the text kept is over the bound (this one too, when it alone is)."""
        self.take(rel)
        self._sizes.pop(rel, None)
        self._parsed[rel] = parsed
        self.chars += len(parsed.text)
        while self.chars > self.max_chars and self._parsed:
            gone, let_go = self._parsed.popitem(last=False)
            self.chars -= len(let_go.text)
            size = split.size(let_go.doc)
            if 2 * size >= self.max_file_bytes:
                self._sizes[gone] = _Size(let_go.stat, size)

    def full(self, folder: Folder, rel: str, needs: int) -> bool:
        """Whether ``rel``, let go, is as it was then (its ``stat_of``) and too full to take
        ``needs`` more bytes under ``folder.max_file_bytes``, as its document, kept, would say."""
        known = self._sizes.get(rel)
        return (known is not None and known.size + needs > folder.max_file_bytes
                and known.stat == stat_of(folder, rel))

    def clear(self) -> None:
        self._parsed.clear()
        self._sizes.clear()
        self.chars = 0


class QuickPass:
    """One syncer's quick pass, with the files it keeps parsed between passes. The folder and the
    store come with each ``run`` (``FileSync`` builds them per pass); only the parsed files are
    kept here."""

    def __init__(self, max_file_bytes: int) -> None:
        # Files the quick pass wrote or read, parsed, by path (see ``run``), the text of
        # ``KEPT_FILES`` files of ``max_file_bytes`` at most.
        self.parsed = KeptFiles(max_file_bytes)

    def run(
        self, side: FolderSide, store: MemoryStore, scope: Scope, ids: set[str], st: sync_state.SyncState,
        journal: Journal | None = None,
    ) -> set[str] | None:
        """The quick pass: ``ids``' entries rewritten, added or removed in their files, when every
        file they touch is as the last pass left it (so the database is the side that changed, and
        only at these ids). A full pass reads the scope whole, files and database; this one reads
        only the changed memories and the files they touch, kept parsed from the last pass while
        their size, inode and time are unchanged. Returns the files whose record changed; None
        (nothing written, ``st`` as it was) sends the scope to the full pass: a file edited by hand
        or gone, an entry not where the state puts it, a file that would outgrow
        ``files.max_file_bytes``. ``st`` is changed in place and put back on the way out (a copy
        of it would cost every pass time in proportion to the memories stored)."""
        memories = {m.id: m for m in store.get_many(sorted(ids)) if m.scope == scope}
        before: dict[str, sync_state.EntryState | None] = {}  # what the entries changed here were
        files = ScopeFiles()
        scope_dir = side.layout.scope_dir(scope)
        for entry_id in sorted(ids):
            memory, prev = memories.get(entry_id), st.entries.get(entry_id)
            if prev is not None:
                if not layout.directly_in(prev.path, scope_dir):
                    return _put_back(st, before)  # recorded outside its scope's folder: the full pass sorts it out
                rel = prev.path
            elif memory is not None:
                found = self._add_where_it_fits(side, side.file_for(memory), from_memory(memory), st, files)
                if found is None:
                    return _put_back(st, before)
                before.setdefault(entry_id, prev)
                st.entries[entry_id] = sync_state.EntryState(found, memory_digest(memory), memory.importance)
                files.dirty.add(found)
                continue
            else:
                continue  # in neither the database nor the files
            doc = self._unchanged_doc(side, rel, st, files)
            if doc is None:
                return _put_back(st, before)
            before.setdefault(entry_id, prev)
            if memory is None:
                if not doc.remove(entry_id):  # type: ignore[union-attr]
                    return _put_back(st, before)
                del st.entries[entry_id]
            elif not doc.replace(entry_id, from_memory(memory)):
                return _put_back(st, before)
            if memory is not None:
                st.entries[entry_id] = sync_state.EntryState(rel, memory_digest(memory), memory.importance)
            files.dirty.add(rel)
        if any(split.size(files.docs[rel]) > side.folder.max_file_bytes for rel in files.dirty):
            return _put_back(st, before)  # splitting into continuation files needs the scope's other files
        report = SyncReport()
        write_files(side.folder, side.fmt, files, st, report,
                    max_content_chars=side.max_content_chars, journal=journal or Journal(None))
        for rel, doc in files.docs.items():
            found = files.written.get(rel, files.seen.get(rel))
            if found is not None:
                self.parsed.keep(rel, _Parsed(found, files.originals[rel], doc, files.hashes.get(rel)))
        return set(files.docs)

    def _add_where_it_fits(
        self, side: FolderSide, rel: str, entry: Entry, st: sync_state.SyncState, files: ScopeFiles
    ) -> str | None:
        """Add a new entry to ``rel``, or, when that file is full (``files.max_file_bytes``), to the
        first of its continuation files with room (``notes-2.md``, ``notes-3.md``…, one made when
        none has room), where a full pass's split puts an entry added at a file's end; returns the
        file it went to. None (nothing added) when a file on the way is not as the last pass left
        it, or the entry is too large for any file (the full pass decides and reports). Once
        a file is full, every store used to take the full pass: at 21,000 memories in one file,
        ~0.18 s of CPU a store."""
        # What the entry adds to a file: measured in an empty one (in a file that has its section
        # already, a few bytes less), so a file it does not fit in is passed over unchanged. A
        # file's size is measured once a pass and grown by that much per entry added: measuring
        # it again would render its text whole per entry. The pass checks the real sizes before
        # it writes (and gives up past the limit).
        probe = side.fmt.new("")
        empty = split.size(probe)
        probe.add(entry)
        needs = split.size(probe) - empty
        if split.size(probe) > side.folder.max_file_bytes:
            return None  # too large for a file of its own: the full pass reports it
        for part in range(1, split.MAX_PARTS + 1):
            target = split.part_path(rel, part)
            if target not in files.docs and self.parsed.full(side.folder, target, needs):
                continue  # let go of while full, and unchanged since
            doc = self._unchanged_doc(side, target, st, files)
            if doc is None:
                return None
            size = files.sizes[target] if target in files.sizes else split.size(doc)
            files.sizes[target] = size
            if size + needs > side.folder.max_file_bytes:
                continue
            doc.add(entry)
            files.sizes[target] = size + needs
            return target
        return None

    def _unchanged_doc(
        self, side: FolderSide, rel: str, st: sync_state.SyncState, files: ScopeFiles
    ) -> Document | None:
        """The file ``rel`` parsed (or a new one when it never existed), or None when it is not as
        the last pass left it (edited, gone, unreadable, holding invalid entries)."""
        if rel in files.docs:
            return files.docs[rel]
        found = stat_of(side.folder, rel)
        kept = self.parsed.take(rel)  # taken out while it changes: a failed pass leaves no stale copy
        if found is None:
            return None if rel in st.files else doc_for(side.folder, side.fmt, rel, files)
        if kept is not None and kept.stat == found:
            doc, text, hashed = kept.doc, kept.text, kept.hash
        else:
            try:
                text = side.folder.read_text(rel)
            except (PathRefused, OSError):
                return None
            hashed = RunningHash(text)
            if hashed.digest != st.files.get(rel):
                return None
            doc = side.parse(text, rel)
            if doc.parsed.broken or doc.parsed.problems or doc.parsed.invalid_ids:
                return None
        files.docs[rel] = doc
        files.originals[rel] = text
        files.seen[rel] = found
        if hashed is not None:
            files.hashes[rel] = hashed
        return doc


def _put_back(st: sync_state.SyncState, before: dict[str, sync_state.EntryState | None]) -> None:
    """``st``'s entries as they were ``before`` a quick pass that gives up (returns its None)."""
    for entry_id, entry in before.items():
        if entry is None:
            st.entries.pop(entry_id, None)
        else:
            st.entries[entry_id] = entry
