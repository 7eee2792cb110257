"""Entries repeating an id in the memory folder: a person copied an entry (within its file, into
another file, or into another scope's folder) and perhaps edited the copy. The store keeps one
memory per id, so one copy stays the memory's entry and every other copy leaves its file:

- the copy the sync state recorded holds the id: the one whose text is as last synced (in the
  recorded file first), else the first in the recorded file, else the first in file order;
- another copy carrying no edit of its own (the holder's text, the text last synced, or the
  database's) is dropped, counted in the pass summary like any entry removed from a file;
- a copy that differs is kept as a ``repeated-id`` conflict (``conflicts.keep``) and reported
  with both places; ``engram conflicts resolve ID --take file`` applies it to the memory,
  ``--take db`` drops it, ``--take merge`` merges.

A differing copy becomes a conflict rather than a new memory because it carries the memory's id,
key and times: it claims to be that memory, and which of two texts a person meant (an edit of the
memory, or a new one started from a copy) is theirs to say. A new memory would also be made
silently in the copy's scope, which may be ``global/`` (every agent's), and would come back as a
near-duplicate in recall. Nothing in the database changes until the person resolves it; a copy
meant as a new memory is one pasted without its marker (a bullet without a marker is new).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from . import conflicts
from .document import Document, Format
from .entry import Entry, Problem
from .layout import Layout
from .paths import Folder
from .state import EntryState

if TYPE_CHECKING:
    from engram.privacy import PiiPolicy

Found = tuple[str, Entry]  # an entry with the file it is in


@dataclass
class Parted:
    """What parting the copies of one id did: files changed, conflicts kept, what to report."""

    removed: int = 0
    files: set[str] = field(default_factory=set)
    conflicts: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def holder(copies: Sequence[Found], recorded: EntryState | None) -> int:
    """The index of the copy that stays the memory's entry (see the module doc)."""
    if recorded is not None:
        as_synced = [i for i, (_, entry) in enumerate(copies) if entry.digest() == recorded.digest]
        in_file = [i for i, (rel, _) in enumerate(copies) if rel == recorded.path]
        for choice in ([i for i in as_synced if i in in_file], as_synced, in_file):
            if choice:
                return choice[0]
    return 0


def part(
    folder: Folder,
    fmt: Format,
    entry_id: str,
    kept: Found,
    others: Sequence[Found],
    docs: Mapping[str, Document],
    unchanged: set[str],
    layout: Layout,
    privacy: PiiPolicy,
) -> Parted:
    """Take each of ``others`` (copies of ``kept``, the holder, parsed in ``docs``) out of its
    file: silently when its digest is in ``unchanged`` (the digests that carry no edit), else
    into a ``repeated-id`` conflict, reported with both places. The note kept in a copy's folder
    names the holder's place only when that folder's readers read it too (``_told_in``); the
    report names it for the operator (``Problem.names_file``). ``privacy``: the copy is kept as
    the engine would store it (``conflicts.as_stored``)."""
    done = Parted()
    at = f"{kept[0]}:{kept[1].line}"
    for rel, entry in others:
        if not docs[rel].set_at(entry.line, None):
            continue  # cannot happen for a parsed entry; never report a removal that was not made
        done.files.add(rel)
        done.removed += 1
        if entry.digest() in unchanged:
            continue
        path = conflicts.keep(folder, fmt, entry_id=entry_id, file=rel, kind="repeated-id", losing=[entry],
                              privacy=privacy, also=at if _told_in(layout, rel, kept[0]) else "")
        done.conflicts.append(path)
        rest = (f", which stays the memory; this copy differs and was moved to {path}"
                f" (engram conflicts resolve {entry_id} --take file applies it, --take db drops it)")
        done.problems.append(Problem(rel, entry.line, f"id {entry_id} is also at {at}{rest}", names_file=kept[0],
                                     message_unnamed=f"id {entry_id} is also in another agent's folder{rest}"))
    return done


def _told_in(layout: Layout, copy: str, holder: str) -> bool:
    """Whether a note kept beside ``copy`` may name where ``holder`` is: every agent reading the
    copy's folder reads the holder's (``global/``, or the same agent's folders). A copy of bob's
    entry pasted into alice's folder (or into ``global/``) is told only that it is elsewhere."""
    held = layout.scope_holding(holder)
    copied = layout.scope_holding(copy)
    return held is not None and (held.agent is None or (copied is not None and copied.agent == held.agent))
