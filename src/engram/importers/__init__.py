"""Importers: other memory systems' data into engram (``engram import PATH --from KIND``).

One small module per source reads its format into a ``Plan`` (``base.py``); ``apply.py`` writes
a plan through the engine. ``KINDS`` names them; ``detect`` guesses the kind of a path from its
shape (a JSON document, JSON lines, a folder, or a SQLite database by its tables), and
``read_plan`` reads a source of a given kind. ChatGPT's and Claude.ai's exports (``chat_exports/``)
are read from their ZIP, its folder or its ``conversations.json``.
engram's own snapshots and memory folders keep their importers (``snapshot.py``, ``files/``): the
kinds ``snapshot`` and ``folder`` name them here so ``--from`` covers every door.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engram import jsondoc
from engram.db.foreign import is_sqlite_file
from engram.errors import SnapshotError, ValidationError
from engram.files import own_folder
from engram.importers import (
    basic_memory,
    chat_exports,
    clawless,
    letta,
    mcp_memory,
    mcp_memory_service,
    mcp_memory_service_sqlite,
    mem0,
    openclaw,
    ptrclaw_sqlite,
    sclaw,
    sqlite_source,
    zep,
)
from engram.importers.apply import ImportSummary, apply_plan
from engram.importers.base import Files, Plan, modified_times, read_folder, without_bom
from engram.model import parse_flag

__all__ = ["KINDS", "ImportSummary", "Plan", "apply_plan", "check_saved_memories", "check_source", "detect",
           "detect_document", "read_plan", "refuse_synced_folder"]

# Readers of one document (text) and of a folder (files by relative path).
_TEXT_READERS = {"mem0": mem0.read, "mcp-memory": mcp_memory.read, "mcp-memory-service": mcp_memory_service.read,
                 letta.KIND: letta.read, zep.KIND: zep.read}
_FOLDER_READERS = {"openclaw": openclaw.read, "basic-memory": basic_memory.read, "clawless": clawless.read}
# The folder readers that take the markdown files engram's memory folder holds as their notes
# (basic-memory reads every .md; OpenClaw every memory/*.md, so a folder holding the memory folder
# as memory/ too). Clawless reads its home's MEMORY.md and conversation-history.jsonl and a chat
# export its conversations*.json, none of which the mirror writes or syncs: an engram home, which
# holds the memory folder, may be imported as a Clawless home (``--from clawless``).
_READS_MEMORY_FILES = ("openclaw", "basic-memory")
# Readers of another system's SQLite database file, opened read-only.
_DATABASE_READERS = {ptrclaw_sqlite.KIND: ptrclaw_sqlite.read, sclaw.KIND: sclaw.read}
# Kinds read from a document or, given a SQLite file, from the system's own database.
_TEXT_OR_DATABASE_READERS = {mcp_memory_service.KIND: mcp_memory_service_sqlite.read}
_DATABASES = "a PtrClaw or sclaw memory.db or mcp-memory-service's sqlite_vec.db"
# What to give instead of a SQLite database piped in: its readers open the file, which a pipe is not.
DATABASE_BY_PATH = f"the database's path instead of standard input: {_DATABASES} is read from its file"
# Readers of a chat service's export: its conversations.json, from the ZIP, its folder or the file.
_EXPORT_READERS = chat_exports.READERS
KINDS = ("snapshot", "folder", *_TEXT_READERS, *_EXPORT_READERS, *_FOLDER_READERS, *_DATABASE_READERS)
_DATABASE_SUFFIXES = (".db", ".sqlite", ".sqlite3", ".db3")


def check_source(source: object, kind: str | None = None) -> None:
    """Raise ``ValidationError`` naming ``source`` unless it is a ``Path``, a document's text or a
    folder's ``{relative path: text}`` (for a SQLite database ``kind``, a ``Path`` alone); a
    ``str`` that is no JSON document but one line naming a file is a path handed over as text,
    refused rather than read as a malformed snapshot."""
    if kind in _DATABASE_READERS and not isinstance(source, Path):
        raise ValidationError("source", f"{kind} is a SQLite database file, read from disk",
                              "a Path to the file (engram import FILE, or Engram.import_from(Path(...)))")
    allowed = "a Path to a file or folder, a document's text (str), or a folder as {relative path: text}"
    if isinstance(source, Mapping):
        bad = next((k for k, v in source.items() if not isinstance(k, str) or not isinstance(v, str)), None)
        if bad is not None:
            raise ValidationError("source", f"the folder entry {jsondoc.shown(bad)} is not text under a relative path", allowed)
        return
    if isinstance(source, Path):
        _must_exist(source)
        return
    if not isinstance(source, str):
        raise ValidationError("source", f"got {type(source).__name__}", allowed)
    line = without_bom(source).strip()
    if line and "\n" not in line and line[0] not in "{[" and len(line) < 4096:
        try:
            jsondoc.loads(line)
        except json.JSONDecodeError:
            raise ValidationError("source", f"{line[:200]!r} is not a document (the text given is read as the document "
                                  "itself, not as a file's name)",
                                  "the document's own text (a file or folder is read by its path: "
                                  f"`engram import {line[:200]}`, or Path({line[:200]!r}) in Python)") from None


def check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise ValidationError("from", f"unknown source kind {jsondoc.shown(kind)}", KINDS)
    return kind


def check_saved_memories(kind: str, saved_memories: object) -> bool:
    """``saved_memories`` as a flag; raises ``ValidationError`` naming it unless it is true or
    false, and when true for a ``kind`` other than ChatGPT's export (the only one holding them)."""
    wanted = parse_flag(saved_memories, "saved_memories")
    if wanted and kind != chat_exports.chatgpt.KIND:
        raise ValidationError("saved_memories", f"{kind} holds no ChatGPT saved memories",
                              "only with ChatGPT's data export (chatgpt)")
    return wanted


def detect_document(text: str) -> str:
    """The kind of a JSON or JSON-lines document: mem0, mcp-memory, mcp-memory-service, letta
    (an Agent File), zep (its users as the SDK dumps them), chatgpt or claude (their
    conversations.json), clawless (its conversation history) or, failing those, ``snapshot``."""
    text = without_bom(text)
    try:
        data: Any = jsondoc.loads(text)
    except json.JSONDecodeError:
        first = next((line for line in jsondoc.lines(text) if line.strip()), "")
        try:
            data = jsondoc.loads(first)
        except json.JSONDecodeError:
            return "snapshot"  # its own reader names the malformed place
        if mcp_memory.looks_like(data):
            return "mcp-memory"
        return "clawless" if clawless.looks_like(data) else "snapshot"
    if mcp_memory.looks_like(data):  # a one-line memory.jsonl is also a JSON document
        return "mcp-memory"
    if clawless.looks_like(data):
        return "clawless"
    if mcp_memory_service.looks_like(data):
        return "mcp-memory-service"
    if letta.looks_like(data):
        return letta.KIND
    if zep.looks_like(data):
        return zep.KIND
    if chat_exports.chatgpt.looks_like(data):
        return chat_exports.chatgpt.KIND
    if chat_exports.claude.looks_like(data):
        return chat_exports.claude.KIND
    return "mem0" if mem0.looks_like(data) else "snapshot"


def detect_files(files: Files) -> str:
    """The kind of a folder: a ChatGPT or Claude.ai export (its conversations.json), Clawless (its
    history file), OpenClaw (MEMORY.md, memory/*.md), basic-memory (notes with front matter,
    observations or wiki-links), else engram's own folder."""
    export = chat_exports.detect_files(files)
    if export is not None:
        return export
    if clawless.looks_like_folder(files):
        return "clawless"
    if openclaw.looks_like(files):
        return "openclaw"
    return "basic-memory" if basic_memory.looks_like(files) else "folder"


def detect(path: Path) -> str:
    export = chat_exports.detect_path(path)  # a ZIP, a folder or a conversations.json, read in part
    if export is not None:
        return export
    if path.is_dir():
        return detect_files(read_folder(path))
    if is_sqlite_file(path):
        found = sqlite_source.detect(path)
        if found is None:
            raise SnapshotError("path", f"{path} is a SQLite database of no system engram imports from (engram's "
                                "own database is copied or exported, not imported)",
                                f"{_DATABASES} ({', '.join([*_DATABASE_READERS, *_TEXT_OR_DATABASE_READERS])})")
        return found
    if path.name == clawless.HISTORY:
        return "clawless"
    if path.suffix.lower() == letta.SUFFIX and path.is_file():
        return letta.KIND  # Letta's Agent File: its reader names what is wrong in one that is malformed
    if path.suffix.lower() in _DATABASE_SUFFIXES and path.is_file():
        # Named as what it claims to be, not read as a malformed JSON snapshot.
        raise SnapshotError("path", f"{path} is not a SQLite database: it does not start with SQLite's header "
                            "(an empty file, an encrypted database or another format)",
                            f"{_DATABASES} ({', '.join([*_DATABASE_READERS, *_TEXT_OR_DATABASE_READERS])}), or --from KIND "
                            "for a document with this name")
    text = read_text(path)
    if path.suffix.lower() == ".json" and _is_type_record(text):
        return "folder"  # one file of a per-type JSON folder (the PHP entity's), read as the folder's files are
    return detect_document(text)


def _is_type_record(text: str) -> bool:
    from engram.files.export import looks_like_type_record

    try:
        return looks_like_type_record(jsondoc.loads(without_bom(text)))
    except json.JSONDecodeError:
        return False


def read_plan(kind: str, source: str | Path | Mapping[str, str], *, saved_memories: bool = False) -> Plan:
    """Read ``source`` (a path, a document's text, or a folder's files) as ``kind``; raises
    ``SnapshotError`` naming the line or record of malformed input and ``ValidationError``.
    ``saved_memories`` (ChatGPT's export only) makes its saved memories memories."""
    check_kind(kind)
    check_saved_memories(kind, saved_memories)
    if kind in ("snapshot", "folder"):
        raise ValidationError("from", f"{kind} is imported by engram's own importer",
                              [*_TEXT_READERS, *_EXPORT_READERS, *_FOLDER_READERS, *_DATABASE_READERS])
    if kind in _DATABASE_READERS:
        check_source(source, kind)
        assert isinstance(source, Path)  # (check_source refuses any other)
        return _DATABASE_READERS[kind](source)
    if kind in _EXPORT_READERS:
        return _read_export(kind, source, saved_memories)
    if kind in _TEXT_OR_DATABASE_READERS and isinstance(source, Path) and source.is_file() and is_sqlite_file(source):
        return _TEXT_OR_DATABASE_READERS[kind](source)
    if kind in _TEXT_READERS:
        if isinstance(source, Mapping):
            raise ValidationError("source", f"{kind} is one document, not a folder", "a file or its text")
        text = read_text(source) if isinstance(source, Path) else without_bom(source)
        return _TEXT_READERS[kind](text)
    if isinstance(source, Path):
        if source.is_dir():
            files = read_folder(source)
            if kind == "basic-memory":  # notes without dates are dated by their files, as basic-memory does
                return basic_memory.read(files, modified_times(source, files))
        elif kind == "clawless":  # its history file on its own
            files = {clawless.HISTORY: read_text(source)}
        else:
            raise ValidationError("path", f"{source} is not a folder", f"the {kind} folder")
    elif isinstance(source, Mapping):
        files = {rel: without_bom(text) for rel, text in source.items()}
    elif kind == "clawless":
        files = {clawless.HISTORY: without_bom(source)}
    else:
        raise ValidationError("source", f"{kind} is a folder", "a path, or {relative path: text} of its files")
    return _FOLDER_READERS[kind](files)


def refuse_synced_folder(kind: str, source: object, synced: Path | None) -> None:
    """Refuse, naming ``path``, a folder read as ``kind`` when it is the memory folder engram
    syncs (``synced``: ``files.dir`` while ``files.enabled``), a folder inside it or one holding
    it, and ``kind`` reads its markdown files as notes (``own_folder.refuse_import``)."""
    if kind in _READS_MEMORY_FILES and isinstance(source, Path) and source.is_dir():
        own_folder.refuse_import(source, synced, kind)


def _read_export(kind: str, source: str | Path | Mapping[str, str], saved_memories: bool) -> Plan:
    """A chat service's export: its ZIP or folder (``conversations.json``, or ChatGPT's shards of
    it, inside; the other files named in a warning), one such file, its text, or a folder's files
    holding them."""
    others: list[str] = []
    documents: list[tuple[str, str]]
    if isinstance(source, Mapping):
        inside = chat_exports.conversation_files(source)
        if not inside:
            raise ValidationError("source", f"the folder holds no {chat_exports.CONVERSATIONS} "
                                  "(nor conversations-000.json, ...)",
                                  f"the {kind} export's files, {chat_exports.CONVERSATIONS} among them")
        documents = [(name, without_bom(source[name])) for name in inside]
        others = sorted(name for name in source if name not in inside)
    elif isinstance(source, Path) and (source.is_dir() or chat_exports.is_zip(source)):
        documents, others = chat_exports.read_export(source)
    elif isinstance(source, Path):
        documents = [("", read_text(source))]
    else:
        documents = [("", without_bom(source))]
    memories = None
    if kind == chat_exports.claude.KIND:
        # Claude.ai's memory of the person, beside the conversations (the file alone: in its folder).
        memories = _beside_export(source, chat_exports.claude.MEMORIES)
        others = [name for name in others if not (memories is not None and name == chat_exports.claude.MEMORIES)]
        plan = chat_exports.claude.read_documents(documents, memories)
    else:  # (check_saved_memories refused the option for any export but ChatGPT's.)
        plan = (chat_exports.chatgpt.read_documents(documents, saved_memories=True) if saved_memories
                else _EXPORT_READERS[kind](documents))
    note = chat_exports.others_warning(others, [name for name, _ in documents if name],
                                       chat_exports.claude.MEMORIES if memories is not None else None)
    if note:
        plan.warnings.append(note)
    return plan


def _beside_export(source: str | Path | Mapping[str, str], name: str) -> str | None:
    """The text of the export's file ``name`` beside its conversations: in the folder's files, the
    ZIP or folder, or the folder of a conversations file given alone; None without one."""
    if isinstance(source, Mapping):
        return without_bom(source[name]) if name in source else None
    if isinstance(source, Path) and (source.is_dir() or chat_exports.is_zip(source)):
        return chat_exports.read_beside(source, name)
    if isinstance(source, Path) and (source.parent / name).is_file():
        return read_text(source.parent / name)
    return None


def _must_exist(path: Path) -> None:
    """Raises ``SnapshotError`` naming ``path`` unless something is there; a name the file system
    refuses (too long: a document's text handed over as a ``Path``) is named, shown cut, rather
    than escaping as ``OSError``."""
    try:
        there = path.exists()
    except OSError as exc:
        raise SnapshotError("path", f"{jsondoc.shown(str(path), 60)} cannot be read: {exc.strerror or type(exc).__name__}",
                            "an existing file or folder to import (a document's own text is given as a str, "
                            "not a Path)") from None
    if not there:
        raise SnapshotError("path", f"{path} does not exist", "an existing file or folder to import")


def read_text(path: Path) -> str:
    """A source file's text as its bytes say (``\r\n`` kept; a leading byte-order mark, as Windows
    tools write, dropped); raises ``SnapshotError`` naming the path when it cannot be read."""
    _must_exist(path)  # (a folder is read elsewhere: it would exist)
    if is_sqlite_file(path):  # named rather than failing to decode it as text
        raise SnapshotError("path", f"{path} is a SQLite database, not a document",
                            f"--from {' or '.join([*_DATABASE_READERS, *_TEXT_OR_DATABASE_READERS])} for {_DATABASES}")
    try:
        return path.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise SnapshotError("path", f"cannot read {path}: {exc}", "a readable UTF-8 file") from None
