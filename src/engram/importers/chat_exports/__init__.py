"""A person's ChatGPT and Claude.ai conversations, from the export each service emails them.

Both exports are a ZIP whose ``conversations.json`` holds every conversation (ChatGPT's also
``chat.html``, ``user.json``, ``message_feedback.json`` and images; Claude.ai's ``users.json`` and
``projects.json``). ChatGPT's exports since early 2026 split it into numbered shards,
``conversations-000.json``, ``conversations-001.json``, ... (beside ``export_manifest.json``), each
a JSON array of conversations: they are read in their numbers' order, as one export.
``engram import`` takes the ZIP as downloaded, the folder it unzips to, or a conversations file
alone; over HTTP the file's text, or a folder's files holding them. Only the conversations files
are read (from the ZIP with ``zipfile``, nothing extracted to disk); the export's other files are
named in a warning. Which service wrote it is read from the file's first
conversation (``mapping`` is ChatGPT's, ``chat_messages`` Claude.ai's), else from the files beside
it. ``chatgpt.py`` and ``claude.py`` read the two shapes; ``common.py`` holds what they share.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath

from engram.errors import SnapshotError
from engram.importers.chat_exports import chatgpt, claude

CONVERSATIONS = "conversations.json"
KINDS = (chatgpt.KIND, claude.KIND)
# Each reads the export's conversation files, ``(name, text)`` in order.
READERS = {chatgpt.KIND: chatgpt.read_documents, claude.KIND: claude.read_documents}
_EXPECTED = "a ChatGPT or Claude.ai data export: the ZIP as downloaded, its folder, or its conversations.json"
# The files beside conversations.json that say whose export it is when the conversations do not
# (an account without any).
_BESIDE = {"chat.html": chatgpt.KIND, "user.json": chatgpt.KIND, "message_feedback.json": chatgpt.KIND,
           "shared_conversations.json": chatgpt.KIND, "users.json": claude.KIND, "projects.json": claude.KIND}
_KEY = re.compile(r'"(mapping|chat_messages)"\s*:')
# ChatGPT's shards of a larger export: conversations-000.json, conversations-001.json, ...
_SHARD = re.compile(r"^conversations-(\d+)\.json$")
_HEAD = 1 << 20  # how much of conversations.json detection reads


def sniff(head: str) -> str | None:
    """The kind of a ``conversations.json`` from its beginning: the first conversation's own key
    (``mapping`` or ``chat_messages``) shows whose it is, without reading a file of hundreds of
    megabytes twice. A quote inside a JSON string is escaped, so the pattern matches keys only."""
    if not head.lstrip("\ufeff \t\r\n").startswith("["):
        return None
    found = _KEY.search(head)
    if found is None:
        return None
    return chatgpt.KIND if found.group(1) == "mapping" else claude.KIND


def conversation_files(names: Iterable[str]) -> list[str]:
    """Which of a folder's file ``names`` hold the conversations: ``conversations.json``, else the
    shards ``conversations-NNN.json`` in their numbers' order; empty for neither."""
    names = list(names)
    if CONVERSATIONS in names:
        return [CONVERSATIONS]
    shards = [(int(found.group(1)), name) for name in names if (found := _SHARD.match(name))]
    return [name for _, name in sorted(shards)]


def _by_files(names: list[str]) -> str | None:
    kinds = {_BESIDE[name] for name in names if name in _BESIDE}
    return kinds.pop() if len(kinds) == 1 else None


def is_zip(path: Path) -> bool:
    return path.is_file() and zipfile.is_zipfile(path)


def detect_path(path: Path) -> str | None:
    """``chatgpt`` or ``claude`` for an export's ZIP, folder or ``conversations.json``; None for
    anything else. Raises ``SnapshotError`` for a ZIP (or ``.zip`` file) that is no such export."""
    if path.is_dir():
        names = sorted(p.name for p in path.iterdir() if p.is_file())
        inside = conversation_files(names)
        if not inside:
            return None
        with (path / inside[0]).open(encoding="utf-8-sig", errors="replace") as file:
            head = file.read(_HEAD)
        return sniff(head) or _by_files(names)
    if path.suffix.lower() == ".zip" and path.is_file() and not zipfile.is_zipfile(path):
        raise SnapshotError("path", f"{path} is not a ZIP archive (damaged, or not fully downloaded)", _EXPECTED)
    if is_zip(path):
        with _open(path) as archive:
            infos = _conversations_members(archive, path)
            with archive.open(infos[0]) as file:
                head = file.read(_HEAD).decode("utf-8", errors="replace")
            found = sniff(head) or _by_files(_beside(archive, infos))
        if found is None:
            raise SnapshotError("path", f"cannot tell whose export {path} is: its {_file_name(infos[0])} holds no "
                                "conversation and no file beside it names ChatGPT or Claude.ai",
                                "--from chatgpt or --from claude")
        return found
    if (path.name.lower() == CONVERSATIONS or _SHARD.match(path.name)) and path.is_file():
        with path.open(encoding="utf-8-sig", errors="replace") as file:
            return sniff(file.read(_HEAD))
    return None


def detect_files(files: Mapping[str, str]) -> str | None:
    """The kind of a folder sent as ``{relative path: text}`` holding ``conversations.json`` (or
    ChatGPT's shards of it)."""
    inside = conversation_files(files)
    if not inside:
        return None
    return sniff(files[inside[0]][:_HEAD]) or _by_files(sorted(files))


def read_export(path: Path) -> tuple[list[tuple[str, str]], list[str]]:
    """(the export's conversation files as ``(name, text)`` in order, its other files) from the ZIP
    or folder at ``path``; raises ``SnapshotError`` naming what is missing or unreadable."""
    if path.is_dir():
        names = sorted(p.name for p in path.iterdir() if not p.name.startswith("."))
        inside = conversation_files(name for name in names if (path / name).is_file())
        if not inside:
            raise SnapshotError("path", f"{path} holds no {CONVERSATIONS} (nor conversations-000.json, ...)",
                                _EXPECTED)
        documents = []
        for name in inside:
            try:
                documents.append((name, (path / name).read_text(encoding="utf-8-sig")))
            except (OSError, UnicodeDecodeError) as exc:
                raise SnapshotError(str(path / name), f"cannot read: {exc}", "a UTF-8 JSON file") from None
        return documents, [name for name in names if name not in inside]
    with _open(path) as archive:
        infos = _conversations_members(archive, path)
        read: list[tuple[zipfile.ZipInfo, bytes]] = []
        for info in infos:
            try:
                read.append((info, archive.read(info)))
            except (zipfile.BadZipFile, RuntimeError, NotImplementedError, OSError) as exc:
                raise SnapshotError("path", f"cannot read {info.filename} in {path}: {exc}",
                                    "the export's ZIP as downloaded") from None
        others = _beside(archive, infos)
    documents = []
    for info, data in read:
        try:
            documents.append((_file_name(info), data.decode("utf-8-sig")))
        except UnicodeDecodeError as exc:
            raise SnapshotError(info.filename, f"is not UTF-8 text (byte {exc.start})", "a UTF-8 JSON file") from None
    return documents, others


def read_beside(path: Path, name: str) -> str | None:
    """The text of the file ``name`` beside the conversation files of the export's ZIP or folder at
    ``path`` (Claude.ai's ``memories.json``), or None when it holds none; raises ``SnapshotError``
    naming it when it cannot be read."""
    if path.is_dir():
        found = path / name
        if not found.is_file():
            return None
        try:
            return found.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise SnapshotError(str(found), f"cannot read: {exc}", "a UTF-8 JSON file") from None
    with _open(path) as archive:
        infos = _conversations_members(archive, path)
        wanted = str(PurePosixPath(infos[0].filename).parent / name).removeprefix("./")
        member = next((info for info in archive.infolist() if info.filename == wanted), None)
        if member is None:
            return None
        try:
            return archive.read(member).decode("utf-8-sig")
        except (zipfile.BadZipFile, RuntimeError, NotImplementedError, OSError, UnicodeDecodeError) as exc:
            raise SnapshotError(member.filename, f"cannot read in {path}: {exc}", "a UTF-8 JSON file") from None


def others_warning(names: list[str], read: list[str] | None = None, also: str | None = None) -> str | None:
    """The warning naming the export's files that are not read (a few, then how many more) beside
    the conversation files ``read`` (``conversations.json`` unless named) and the file ``also`` read
    (Claude.ai's ``memories.json``)."""
    if not names:
        return None
    read = read or [CONVERSATIONS]
    files = read[0] if len(read) == 1 else f"{read[0]} to {read[-1]} ({len(read)} files)"
    several = len(read) > 1 or also is not None
    files += f" and {also}" if also else ""
    shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    return (f"only {files} {'are' if several else 'is'} read; the export's other files are not imported: "
            f"{shown} (the account, feedback, projects, images and attachments)")


def _open(path: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise SnapshotError("path", f"cannot read {path} as a ZIP archive: {exc}", _EXPECTED) from None


def _file_name(info: zipfile.ZipInfo) -> str:
    return PurePosixPath(info.filename).name


def _conversations_members(archive: zipfile.ZipFile, path: Path) -> list[zipfile.ZipInfo]:
    """The archive's conversation files: ``conversations.json`` (else ChatGPT's shards of it) at
    its top, or in the one folder it was zipped from."""
    found = [info for info in archive.infolist() if not info.is_dir() and not info.filename.startswith("__MACOSX/")
             and conversation_files([_file_name(info)])]
    if not found:
        raise SnapshotError("path", f"{path} holds no {CONVERSATIONS} (nor conversations-000.json, ...)", _EXPECTED)
    depth = min(len(PurePosixPath(info.filename).parts) for info in found)
    top = [info for info in found if len(PurePosixPath(info.filename).parts) == depth]
    folders = sorted({str(PurePosixPath(info.filename).parent) for info in top})
    if len(folders) > 1:
        raise SnapshotError("path", f"{path} holds several: {', '.join(info.filename for info in top)}",
                            "one export per ZIP (import each folder on its own)")
    by_name = {_file_name(info): info for info in top}
    return [by_name[name] for name in conversation_files(by_name)]


def _beside(archive: zipfile.ZipFile, infos: list[zipfile.ZipInfo]) -> list[str]:
    """The names of the entries beside the conversation files in their folder (a folder once)."""
    folder = PurePosixPath(infos[0].filename).parent
    read = {info.filename for info in infos}
    names: set[str] = set()
    for other in archive.infolist():
        rel = PurePosixPath(other.filename)
        if other.filename in read or other.filename.startswith("__MACOSX/"):
            continue
        try:
            parts = rel.relative_to(folder).parts if str(folder) != "." else rel.parts
        except ValueError:
            continue
        if parts:
            names.add(parts[0])
    return sorted(names)
