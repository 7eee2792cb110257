"""Conflicts: an entry changed on both sides since the last sync. The database wins (ClawCode),
and the losing file text is kept beside its file as ``<file>.<id>.conflict`` until a person
resolves it: take the database side (drop the kept text), take the file side (apply it), or merge.

A conflict file is a small memory file of the same format whose first comment line records what
happened (``engram-conflict id=… file=… kind=… at=…``), so it stays readable by hand and by ``parse``.
The entries it keeps are as the engine would store them (``as_stored``: under ``privacy.pii =
"redact"``, with what redaction masks masked), as the folder engram writes holds no more than the store.
Kinds: ``both-changed``; ``deleted-in-file`` (the file removed an entry the database changed:
the entry is put back); ``deleted-in-database`` (the file changed an entry that is not, or no
longer, a memory of its folder's scope: forgotten, or never one; the note says so in the same
words either way, never whether another scope holds the id);
``file-vanished`` (the entry's whole file disappeared, as after an editor crash or a checkout: the
file is written again from the database; taking the file side forgets the entry);
``repeated-id`` (a copy of an entry, with the same id but other fields, elsewhere in the folder:
the copy is taken out of its file, ``file=`` names it, and the note names the entry that stays
the memory; taking the file side applies the copy to the memory, see ``repeats``);
``move-refused`` (an entry moved by hand into the folder and edited on the way, whose move the sync
refused, as ``moves`` says: the entry is taken out of the folder, its memory stays where it was, and
taking the file side applies the edit to that memory);
``same-key`` (with ``per_agent_databases``, two agents' databases held different global memories
under one key: ``id=`` is the one that stays the memory, the entry kept is the other version, taken
out of the folder and its database; taking the file side applies it to the memory, see ``shared_keys``).

Whose a conflict is: run as one agent (``viewer``), a command sees and settles only the conflicts
kept in folders that agent reads (``global/``, its own, its sessions'), and never applies a file
version to another agent's memory: a person can paste bob's id into alice's file, and the
``repeated-id`` copy it makes competes with bob's memory, which only the operator's run (no agent
chosen) may change. Such a conflict can still be dropped (``--take db``) from alice's view: that
removes only the text kept in her own folder.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from engram import snapshot
from engram.errors import NotFoundError, ValidationError
from engram.model import Memory, MemoryFilter

from .document import Format
from .entry import Entry, from_memory
from .layout import Layout
from .paths import Folder, PathRefused
from .report import memory_off

if TYPE_CHECKING:
    from engram.engine import Engram
    from engram.privacy import PiiPolicy

Kind = Literal["both-changed", "deleted-in-file", "deleted-in-database", "file-vanished", "move-refused", "repeated-id",
               "same-key"]
SUFFIX = ".conflict"
# The kinds whose note keeps no entry: the file's side is the memory's absence.
_DELETIONS = ("deleted-in-file", "file-vanished")
# The kinds kept about a memory of the folder's own scope (the entry was its memory's when the note
# was written): the memory under the id is the one the note is about wherever it is now, as its
# entry may be moved by hand to another scope's folder since (``moves``), the memory with it.
_OWN_WHEN_KEPT = ("both-changed", "deleted-in-file", "file-vanished")
# The kinds about the memory under the id wherever it is: those above, and a refused move's edit,
# whose memory stayed in the folder the entry was moved from.
_ABOUT_ITS_MEMORY = (*_OWN_WHEN_KEPT, "move-refused")
_HEADER = re.compile(r"engram-conflict id=(\S+) file=(\S+) kind=(\S+) at=(\S+)")


@dataclass(frozen=True, slots=True)
class Conflict:
    path: str  # the .conflict file, relative to the memory folder
    entry_id: str
    file: str  # the memory file the entry is in (the one the .conflict file is kept beside)
    kind: str
    at: str
    entries: tuple[Entry, ...]  # the losing file version (empty when the file had deleted it)
    # Why the file version kept cannot be read (each problem the parse met), when none could be:
    # longer than max_content_chars once redacted, or broken by a hand edit. Empty otherwise.
    unreadable: tuple[str, ...] = ()


def keep(folder: Folder, fmt: Format, *, entry_id: str, file: str, kind: Kind, losing: Sequence[Entry],
         privacy: PiiPolicy, also: str = "") -> str:
    """Write the losing side beside ``file``, as ``privacy`` stores it (``as_stored``); returns the
    ``.conflict`` path (never overwrites one). ``also``: for ``repeated-id``, where the entry that
    stays the memory is (``file:line``), or empty when it is in another agent's folder, which this
    folder's readers are not told; for ``same-key``, the key."""
    at = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    held = f"at {also}" if also else "in another agent's folder"  # empty: a folder this one's readers do not read (``repeats``)
    explain = {
        "both-changed": "changed in both the database and the file; the database version was kept",
        "deleted-in-file": "deleted from the file but changed in the database; the database version was put back",
        # The same words whether the id is another scope's memory or nobody's: a note in one
        # agent's folder never tells that another agent holds the id.
        "deleted-in-database": f"changed in the file, but it is not a memory of {_scope_dir(file)}/ in the"
                               " database (forgotten, or never one of its memories); it was taken out of the file",
        "file-vanished": "in a file that vanished; the file was written again from the database",
        "move-refused": f"moved by hand into {_scope_dir(file)}/ and changed on the way, but the sync refused the move"
                        " (its report says why): the memory stays where it was, unchanged, and the entry was taken out"
                        " of the file",
        "repeated-id": f"a copy, with other fields, of the entry {held}, which stays the memory;"
                       " the copy was taken out of its file",
        "same-key": f"one of two versions of the global memory with key {also}, held by two agents' databases under"
                    f" different ids; the earliest stored, {entry_id}, stays the memory and this one was taken out of"
                    " the folder and its database",
    }[kind]
    note = (f"engram-conflict id={entry_id} file={file} kind={kind} at={at}\n"
            f"This entry was {explain}. Below is the file's version. Resolve with: engram conflicts resolve {entry_id}")
    rel = _free_name(folder, file, entry_id)
    folder.write_text(rel, fmt.fragment([as_stored(entry, privacy) for entry in losing], note))
    return rel


def _free_name(folder: Folder, file: str, entry_id: str) -> str:
    """The first ``<file>.<id>[.n].conflict`` the folder does not hold: one is never overwritten."""
    base = f"{file}.{entry_id}"
    rel, n = f"{base}{SUFFIX}", 1
    while folder.exists(rel):
        n += 1
        rel = f"{base}.{n}{SUFFIX}"
    return rel


def carry(folder: Folder, *, entry_id: str, from_dir: str, to_file: str) -> list[tuple[str, str]]:
    """Move the conflicts kept in the scope folder ``from_dir`` on its own memory ``entry_id``
    (``_OWN_WHEN_KEPT``) beside ``to_file``, the memory file its entry was moved into by hand
    (``moves.take_over``), named as ``keep`` names them (never overwriting one), their note's
    ``file=`` made that file: the person looking at the entry finds its conflict beside it, and
    the old folder keeps no note about an entry it no longer holds. Returns (old path, new path)
    of each. The caller decides whether the new folder's readers may read it (``moves``)."""
    carried = []
    kept = [rel for rel, is_link in folder.walk(from_dir) if not is_link and rel.endswith(SUFFIX) and _scope_dir(rel) == from_dir]
    for rel in kept:
        try:
            text = folder.read_text(rel)
        except (OSError, PathRefused):
            continue  # unreadable (too large, gone meanwhile): left where it is, as listing it would be
        header = _HEADER.search(text)
        if header is None or header.group(1) != entry_id or header.group(3) not in _OWN_WHEN_KEPT:
            continue
        to = _free_name(folder, to_file, entry_id)
        folder.write_text(to, text[:header.start(2)] + to_file + text[header.end(2):])
        folder.remove(rel)
        carried.append((rel, to))
    return carried


def as_stored(entry: Entry, privacy: PiiPolicy) -> Entry:
    """``entry`` with its texts as the engine would store them (``PiiPolicy.screen_copy``), for the
    ``.conflict`` file engram writes into the folder: under ``privacy.pii = "redact"`` the file's
    version, taken out of its file, kept the address or card number typed into it, on disk in the
    folder the person asked to hold none (the memory file itself is rewritten as stored). Taking the
    file side stores the same text. Rendered afresh when screening changed it: its source text
    holds what was masked."""
    content, context, metadata = privacy.screen_copy(entry.content, entry.search_context, entry.metadata)
    if (content, context, metadata) == (entry.content, entry.search_context, entry.metadata):
        return entry
    return replace(entry, content=content, search_context=context, metadata=metadata, text="")


def withdraw(folder: Folder, written: list[str], *, entry_id: str, kind: Kind) -> list[str]:
    """Delete those of ``written`` (the ``.conflict`` files a pass kept) that keep ``kind`` for
    ``entry_id``, taking them out of ``written``; returns them. For a conflict a later step of the
    same pass made moot, which a person would otherwise be asked to resolve for nothing."""
    gone = []
    for rel in list(written):
        header = _HEADER.search(folder.read_text(rel)) if folder.exists(rel) else None
        if header is not None and (header.group(1), header.group(3)) == (entry_id, kind):
            folder.remove(rel)
            written.remove(rel)
            gone.append(rel)
    return gone


def list_conflicts(folder: Folder, fmt: Format, *, max_content_chars: int, viewer: str | None = None,
                   layout: Layout | None = None) -> list[Conflict]:
    """Every kept conflict in the folder, oldest first; with ``viewer`` (an agent), those in its
    view alone (``in_view``)."""
    found: list[Conflict] = []
    for rel, is_link in folder.walk():
        if is_link or not rel.endswith(SUFFIX):
            continue
        try:
            text = folder.read_text(rel)
        except FileNotFoundError:
            continue  # resolved or carried away since the walk
        except PathRefused as exc:
            # Not UTF-8, or too large (a hand edit): listed as unreadable, not the end of the listing,
            # so every other conflict still shows and this one can be dropped (--take db).
            found.append(_unreadable(rel, exc.problem))
            continue
        header = _HEADER.search(text)
        if header is None:
            continue
        doc = fmt.parse(text, rel, max_content_chars=max_content_chars)
        entry_id, kind = header.group(1), header.group(3)
        unreadable = () if doc.parsed.entries or kind in _DELETIONS else (
            tuple(str(problem) for problem in doc.parsed.problems) or (f"{rel}: no entry left in it",))
        found.append(Conflict(rel, entry_id, _kept_beside(rel, entry_id, header.group(2)), kind, header.group(4),
                              tuple(doc.parsed.entries), unreadable))
    return sorted((c for c in found if in_view(c, viewer, layout)), key=lambda c: (c.at, c.path))


def _unreadable(rel: str, problem: str) -> Conflict:
    """A ``.conflict`` file that cannot be read, as a conflict known by its name alone
    (``<file>.<id>[.n].conflict``, as ``keep`` names it): no kind, time or file version."""
    named = re.fullmatch(rf"(.+)\.([^./]+?)(?:\.\d+)?{re.escape(SUFFIX)}", rel)
    file, entry_id = (named.group(1), named.group(2)) if named else (rel[: -len(SUFFIX)], "")
    return Conflict(rel, entry_id, file, "", "", (), (problem,))


def _kept_beside(rel: str, entry_id: str, noted: str) -> str:
    """The memory file the ``.conflict`` file ``rel`` is kept beside (``keep`` names it
    ``<file>.<id>[.n].conflict``): the note's ``file=`` as it is now, after its scope folder was
    renamed (``folder_names``: ``agents/Claude/`` to its portable name), which the note written
    before still names as it was. The note's own for a ``.conflict`` file named otherwise (by hand)."""
    named = re.fullmatch(rf"(.+)\.{re.escape(entry_id)}(?:\.\d+)?{re.escape(SUFFIX)}", rel)
    return named.group(1) if named else noted


def now_in(memory: Memory | None, conflict: Conflict, layout: Layout | None = None, *, viewer: str | None = None) -> str | None:
    """The scope folder the conflict's memory (its database side, ``database_side``) is in now,
    when that is not the folder the conflict is kept in: its entry was moved there by hand since
    the note was kept, the memory with it (``moves``); else None. Another agent's than ``viewer``'s
    is not named (``others_memory``)."""
    if memory is None:
        return None
    lay = layout or Layout()
    where = "another agent's folder" if others_memory(memory, viewer) else lay.scope_dir(memory.scope)
    try:
        return None if lay.scope_of_dir(_scope_dir(conflict.file)) == memory.scope else where
    except ValidationError:
        return where


def where_now(conflict: Conflict, now: str) -> str:
    """How a listing says that the conflict's memory is in the scope folder ``now`` (``now_in``)."""
    if conflict.kind == "move-refused":
        return f"stays in: {now} (its move into this folder was refused)"
    return f"moved to: {now} (by hand, since the conflict was kept)"


def find(conflicts: Sequence[Conflict], ref: str, *, viewer: str | None = None, layout: Layout | None = None) -> Conflict:
    """The conflict whose entry id, path or id prefix is ``ref``, of those in ``viewer``'s view
    (``in_view``) first, so another agent's conflict on the same id is never taken for the view's
    own; raises ``NotFoundError`` (``may_settle`` refuses one only another agent's folder holds)."""
    matches = [c for c in conflicts if ref in (c.entry_id, c.path) or c.entry_id.startswith(ref)]
    if not matches:
        raise NotFoundError("conflict", ref)
    return next((c for c in matches if in_view(c, viewer, layout)), matches[0])


def in_view(conflict: Conflict, viewer: str | None, layout: Layout | None = None) -> bool:
    """Whether ``viewer``'s view (an agent; None: the operator's run, the whole folder) holds the
    conflict: both the ``.conflict`` file and the memory file its note names are in ``global/`` or
    in that agent's own or session folders. Both, as the note can be written by hand."""
    return all((layout or Layout()).read_by(rel, viewer) for rel in (conflict.path, conflict.file))


def others_memory(memory: Memory | None, viewer: str | None) -> bool:
    """Whether ``memory`` (a conflict's database side) is another agent's than ``viewer``'s
    (None: the operator's run, to whom no memory is another's)."""
    return viewer is not None and memory is not None and memory.scope.agent not in (None, viewer)


def may_settle(engram: Engram, folder: Folder, conflict: Conflict, take: Literal["db", "file", "merge"], *,
               viewer: str | None, layout: Layout | None = None) -> Memory | None:
    """The conflict's database side (``database_side``) once ``viewer`` (an agent; None: the
    operator's run) is found to be allowed to settle it by ``take``. Raises ``ValidationError``,
    naming the conflict and why, for a conflict kept in another agent's folder, for a file
    version (``file``, ``merge``) that would change another agent's memory (see the module doc),
    and for one whose entry was moved by hand into another agent's database since (``folder``:
    the memory folder, read for where it went). Asked before a merge's text is written
    (``--edit``), so nobody writes one to have it refused."""
    if not in_view(conflict, viewer, layout):
        raise ValidationError("conflict", f"{conflict.path} is kept in another agent's folder, which agent"
                                          f" {viewer} does not settle", "resolve it as the operator (no --agent)")
    memory = database_side(engram, conflict, layout)
    if take != "db" and memory is None and conflict.kind == "same-key" and (held := _key_holder(engram, conflict, layout)):
        if held.id == conflict.entries[0].id:
            # This database still holds the version kept here (it has not synced since another
            # database's pass kept this conflict): applying the file version now would be lost when it does.
            raise ValidationError("conflict", f"{conflict.entry_id} ({conflict.path}) is not in this database yet, which"
                                              f" still holds its own version of key {held.key} until it syncs",
                                  "engram sync, then resolve it")
        # The memory that stayed was forgotten and another has the key since: the file version is
        # applied to the memory of the key, as it would have been to the one that stayed.
        memory = held
    if take != "db" and others_memory(memory, viewer):
        whose = ("was moved by hand to another agent's folder since, and its memory with it" if conflict.kind in
                 _OWN_WHEN_KEPT else "is an edit of another agent's memory, whose move into this folder was refused"
                 if conflict.kind == "move-refused" else "competes with another agent's memory")
        raise ValidationError("conflict", f"{conflict.entry_id} ({conflict.path}) {whose}, which agent {viewer} never changes",
                              "--take db (drop the copy kept in this folder), or --take file/merge as the operator"
                              " (no --agent)")
    if take != "db" and memory is None and conflict.kind in _OWN_WHEN_KEPT and (
            now_in := _moved_from_its_folder(folder, conflict, layout)):
        # Another agent's database holds its memory now (``per_agent_databases``): restored here,
        # the id was in two databases, the file version beside the memory it was written against.
        where = now_in if (layout or Layout()).read_by(now_in, viewer) else "another agent's folder"
        raise ValidationError("conflict", f"{conflict.entry_id} ({conflict.path}) was moved by hand to {where} since"
                              " the conflict was kept, and its memory with it", "edit the entry where it is now, then --take db")
    return memory


def resolve(engram: Engram, folder: Folder, conflict: Conflict, take: Literal["db", "file", "merge"],
            merged_content: str | None = None, layout: Layout | None = None, *, viewer: str | None = None) -> str:
    """Settle a conflict through the engine; returns what was done. ``merge`` applies the file
    version's fields with ``merged_content``. ``viewer``: the agent whose view settles it (None:
    the operator's run). Raises ``ValidationError`` for a merge without text, and when ``viewer``
    may not settle it (``may_settle``). With memory off (a store that keeps nothing) nothing is
    done and the note says why: the file version applied there was lost with its ``.conflict`` file."""
    if off := memory_off(engram):
        return f"nothing resolved: {off}"
    memory = may_settle(engram, folder, conflict, take, viewer=viewer, layout=layout)
    engram = database_of(engram, conflict, layout)
    if take == "db":
        folder.remove(conflict.path)
        return "kept the database version"
    if take == "merge" and not (merged_content or "").strip():
        raise ValidationError("content", "a merge needs the merged text", "the content to keep")
    entry = conflict.entries[0] if conflict.entries else None
    if take == "file" and entry is None and conflict.kind not in _DELETIONS:
        # Its version is there but unreadable (longer than max_content_chars once redacted, or
        # edited by hand into an entry the parser refuses): taking it as a deletion forgot the memory.
        raise ValidationError("conflict", f"{conflict.path} holds no file version engram can read (an entry longer than"
                                          " max_content_chars, or one a hand edit broke)",
                              "mend it, --take merge --content TEXT, or --take db")
    if take == "file" and entry is None:
        if memory is not None:
            engram.for_agent(memory.scope.agent or engram.scope.agent or "default", memory.scope.session).forget(
                memory.id, reason="conflict resolved: the file had deleted it")
        folder.remove(conflict.path)
        return "forgot it, as the file had"
    content = merged_content if take == "merge" else entry.content  # type: ignore[union-attr]
    source = entry or _entry_of(memory, conflict)
    scope = memory.scope if memory else (layout or Layout()).scope_of_dir(conflict.file.rsplit("/", 1)[0])
    view = engram.for_agent(scope.agent or engram.scope.agent or "default", scope.session)
    if memory is None:
        restored = source.to_memory(scope, engram.clock(), engram.privacy)
        view.import_snapshot(snapshot.dump([replace(restored, id=_restored_id(conflict), content=content or "")]))
    else:
        view.remember(
            content or "", key=memory.key, category=source.category, type=source.type, layer=source.layer,
            tags=source.tags, metadata=dict(source.metadata), importance=source.importance,
            related_entity=source.related_entity, source=source.source, scope=scope,
            search_context=source.search_context,
        )
    folder.remove(conflict.path)
    return "applied the file version" if take == "file" else "applied the merge"


def database_side(engram: Engram, conflict: Conflict, layout: Layout | None = None) -> Memory | None:
    """The memory a conflict's file version competes with: the one stored under its id in the
    scope of the folder its file is in, or None. A ``repeated-id`` copy competes with the memory
    wherever it is (the note names its place; taking the file side applies the copy to it); so does
    a kind about the memory under its id (``_ABOUT_ITS_MEMORY``: a conflict on the folder's own memory,
    its entry maybe moved by hand since, or a refused move's edit, its memory where it stayed). Any
    other kind is about that folder's own memory: an id another scope holds is not it (a
    ``deleted-in-database`` entry in one agent's folder carrying another agent's id, or a
    ``.conflict`` written by hand), so taking the file side restores the entry in the folder's
    scope, never changing or forgetting the other scope's memory. Looked for in the database of
    the conflict's folder (``database_of``)."""
    current = database_of(engram, conflict, layout).store.get_many([conflict.entry_id])
    memory = current[0] if current else None
    if memory is None or conflict.kind in ("repeated-id", *_ABOUT_ITS_MEMORY):
        return memory
    try:
        scope = (layout or Layout()).scope_of_dir(_scope_dir(conflict.file))
    except ValidationError:
        return None  # not in a scope folder: no memory of its own
    return memory if memory.scope == scope else None


def database_of(engram: Engram, conflict: Conflict, layout: Layout | None = None) -> Engram:
    """The engine whose database holds the memories of the conflict's folder: with one database
    per agent (``per_agent_databases``), the agent's whose folder the note's memory file is in, so
    the operator's run settles a conflict of ``agents/bob/`` in bob's database, not in the one it
    opened (which does not hold bob's memories: his memory was not found, and ``--take file``
    dropped the file version saying it was applied); else ``engram``'s."""
    if engram.agent_databases is None:
        return engram
    try:
        scope = (layout or Layout()).scope_of_dir(_scope_dir(conflict.file))
    except ValidationError:
        return engram
    if scope.agent is None or scope.agent == engram.scope.agent:
        return engram
    return engram.for_agent(scope.agent)


def _key_holder(engram: Engram, conflict: Conflict, layout: Layout | None) -> Memory | None:
    """The memory of its folder's scope holding the key of a ``same-key`` conflict's kept version, if any."""
    key = conflict.entries[0].key if conflict.entries else None
    try:
        scope = (layout or Layout()).scope_of_dir(_scope_dir(conflict.file))
    except ValidationError:
        return None
    found = MemoryFilter(scopes=(scope,), include_superseded=True, key=key)
    held = [] if key is None else database_of(engram, conflict, layout).store.list(found, limit=1)
    return held[0] if held else None


def _restored_id(conflict: Conflict) -> str:
    """The id a conflict's file version comes back under when no memory competes with it any more:
    the entry's own. A ``same-key`` note's id is the version that stayed the memory, and the entry
    it keeps is another memory (its own id, time and fields); once that memory was forgotten,
    taking the file side brings the kept version back as itself, not under the forgotten id."""
    entry = conflict.entries[0] if conflict.entries else None
    if conflict.kind == "same-key" and entry is not None and entry.id:
        return entry.id
    return conflict.entry_id


def _moved_from_its_folder(folder: Folder, conflict: Conflict, layout: Layout | None) -> str | None:
    """The memory file of another scope's folder that holds the conflict's id, if any: its entry
    moved there by hand since the note was kept (``moves``). Read as text: an id mentioned there
    otherwise (a link to it) is taken as held, which refuses rather than writes."""
    lay, own = layout or Layout(), _scope_dir(conflict.file)
    for rel, is_link in folder.walk():
        if is_link or rel.endswith(SUFFIX) or lay.dir_of(rel) in (None, own):
            continue
        try:
            if conflict.entry_id in folder.read_text(rel):
                return rel
        except (OSError, PathRefused):
            continue  # unreadable: holds nothing that can be taken as moved
    return None


def _scope_dir(file: str) -> str:
    """The scope folder (``agents/alice``) a memory file (``agents/alice/notes.md``) is in."""
    return file.rsplit("/", 1)[0] if "/" in file else ""


def _entry_of(memory: Memory | None, conflict: Conflict) -> Entry:
    """The database side's fields, for a merge whose file side had deleted the entry; raises
    ``NotFoundError`` naming the conflict's memory by its id when the database no longer holds it
    either (forgotten since): nothing is left to merge into."""
    if memory is None:
        raise NotFoundError("memory", conflict.entry_id)
    return from_memory(memory)


