"""A scope folder's files as a sync pass holds them (``ScopeFiles``), and their writing back.

Both passes, the full one (``reconcile``) and the quick one (``mirror``), collect the files they
read and change in a ``ScopeFiles``; ``write_files`` then writes them. Only files whose text
changed are written, each atomically; a file about to outgrow ``files.max_file_bytes`` continues
in ``<name>-2.md``, ``-3``… (``split``); no file is made only to be left empty; and the hash of
each file's text is recorded in the sync state. For the quick pass, a file whose new text only
adds to the end of what it held is appended to (announced in the state's journal first, see
``_append_where_possible``), not rewritten.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from . import layout, split
from . import state as sync_state
from .document import Document, Format
from .paths import Folder, PathRefused, RunningHash
from .report import SyncReport


@dataclass
class ScopeFiles:
    """One scope folder's files, parsed."""

    docs: dict[str, Document] = field(default_factory=dict)
    originals: dict[str, str] = field(default_factory=dict)
    unreadable: set[str] = field(default_factory=set)
    emptied: set[str] = field(default_factory=set)  # files left with zero bytes where memories were
    dirty: set[str] = field(default_factory=set)
    # ``stat_of`` each file as read (before reading) or as written: what the quick pass keeps.
    seen: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    written: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    # Bytes each file may have reached with the entries this pass added (``mirror``'s ``_add_where_it_fits``).
    sizes: dict[str, int] = field(default_factory=dict)
    # The hash of each file's text in ``originals``, where the quick pass has it (``write_files``).
    hashes: dict[str, RunningHash] = field(default_factory=dict)


@dataclass
class Journal:
    """What the sync state's files held when this pass last wrote them (``sync_state.Written``),
    None when there is no journal to add to: the quick pass announces appends there."""

    written: sync_state.Written | None


def identity(info: os.stat_result) -> tuple[int, int, int]:
    return info.st_ino, info.st_size, info.st_mtime_ns


def stat_of(folder: Folder, rel: str) -> tuple[int, int, int] | None:
    """What tells a file we parsed from a changed one: inode, size and modification time."""
    try:
        return identity(os.stat(folder.resolve(rel), follow_symlinks=False))
    except (OSError, PathRefused):
        return None


def exists(folder: Folder, rel: str) -> bool:
    try:
        return folder.exists(rel)
    except PathRefused:
        return False


def doc_for(folder: Folder, fmt: Format, rel: str, files: ScopeFiles) -> Document | None:
    """The parsed file ``rel``, or a new one; None when it exists but cannot be written safely."""
    if rel in files.unreadable:
        return None
    if rel not in files.docs:
        if exists(folder, rel):
            return None  # a file of another format or unparsed: leave it
        files.docs[rel] = fmt.new(layout.title(rel.rsplit("/", 1)[-1].rsplit(".", 1)[0]))
        files.originals[rel] = ""
    return files.docs[rel]


def write_files(folder: Folder, fmt: Format, files: ScopeFiles, st: sync_state.SyncState, report: SyncReport, *,
                max_content_chars: int, journal: Journal | None = None) -> None:
    """The changed files written, and the hash of each file's text recorded in ``st``. Given the
    ``journal`` (the quick pass), a file not changed here is as the last pass left it
    (``mirror``'s ``_unchanged_doc`` checked), so its recorded hash stands: hashing it again cost
    ~2.5 ms a pass for a full 5 MB file beside the continuation file a new entry went to. And a
    file whose new text only adds to the end of what it holds gets just that added
    (``_append_where_possible``)."""
    for rel in sorted(files.dirty):  # nothing is written that reading would refuse
        if rel in files.docs:
            files.dirty |= split.fit(rel, files.docs, lambda target: doc_for(folder, fmt, target, files), fmt,
                                     limit=folder.max_file_bytes, max_content_chars=max_content_chars,
                                     st=st, problems=report.problems)
    texts: dict[str, str] = {}
    for rel, doc in files.docs.items():
        if journal is not None and rel not in files.dirty and rel in st.files:
            continue
        text = texts[rel] = doc.text()
        if rel in files.dirty and text != files.originals.get(rel):
            has_entries = bool(doc.parsed.entries) or st.entries.holds(rel)
            if not has_entries and not files.originals.get(rel):
                del texts[rel]  # never create a file only to leave it empty
                continue
    tails = {rel: text[len(old):] for rel, text in texts.items()
             if (old := files.originals.get(rel)) and len(text) > len(old) and text.startswith(old)}
    hashes = {rel: files.hashes[rel].grown(tails[rel]) if rel in tails and rel in files.hashes
              else RunningHash(text) for rel, text in texts.items()}
    appended = {} if journal is None else _append_where_possible(folder, files, st, tails, hashes, journal)
    for rel, text in texts.items():
        if rel in appended:
            files.written[rel] = identity(appended[rel])
            report.files_written.append(rel)
        elif rel in files.dirty and text != files.originals.get(rel):
            files.written[rel] = identity(folder.write_text(rel, text))
            report.files_written.append(rel)
        st.files[rel] = hashes[rel].digest
        files.originals[rel] = text  # what the file now holds
        files.hashes[rel] = hashes[rel]


def _append_where_possible(folder: Folder, files: ScopeFiles, st: sync_state.SyncState, tails: dict[str, str],
                           hashes: dict[str, RunningHash], journal: Journal) -> dict[str, os.stat_result]:
    """Of the quick pass's changed files, those whose new text is their old text with more at
    the end (``tails``: a new entry at the end of its file, the usual store), written by adding
    just that: rewriting the whole file cost every store time in proportion to the entries
    already in it (~2.5 ms of 4.7 for one of 5,000 entries). Returns each one's ``stat`` after
    it. The file ends up byte for byte as the whole rewrite leaves it. The appends are announced
    in the sync state's journal first (``sync_state.intend_appends``), so one that a crash cuts
    short is cut back off rather than read as a hand-written entry; that needs a journal to
    write in, so a pass without one (the first after loading a state) rewrites whole. A file
    not as this pass read it, or starting with a byte order mark (which a rewrite drops), is
    rewritten whole."""
    plan: dict[str, tuple[int, str]] = {}
    for rel, tail in tails.items():
        old, seen = files.originals[rel], files.seen.get(rel)
        if rel not in files.dirty or seen is None or rel not in st.files:
            continue
        size = len(old) if old.isascii() else len(old.encode("utf-8"))
        if size == seen[1]:  # the bytes on disk are the text read (no byte order mark before it)
            plan[rel] = (size, tail)
    if not plan or journal.written is None:
        return {}
    journal.written = sync_state.intend_appends(
        folder, st, journal.written,
        {rel: (size, len(tail.encode("utf-8")), hashes[rel].digest) for rel, (size, tail) in plan.items()})
    done: dict[str, os.stat_result] = {}
    for rel, (_, tail) in plan.items():
        found = folder.append_to(rel, tail, files.seen[rel])
        if found is not None:
            done[rel] = found
    return done
