"""A person's ChatGPT and Claude.ai conversations, from the export each service emails them.

Both exports are a ZIP whose ``conversations.json`` holds every conversation (ChatGPT's also
``chat.html``, ``user.json``, ``message_feedback.json`` and images; Claude.ai's ``users.json`` and
``projects.json``). ``engram import`` takes the ZIP as downloaded, the folder it unzips to, or the
``conversations.json`` alone; over HTTP the file's text, or a folder's files holding it. Only
``conversations.json`` is read (from the ZIP with ``zipfile``, nothing extracted to disk); the
export's other files are named in a warning. Which service wrote it is read from the file's first
conversation (``mapping`` is ChatGPT's, ``chat_messages`` Claude.ai's), else from the files beside
it. ``chatgpt.py`` and ``claude.py`` read the two shapes; ``common.py`` holds what they share.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from engram.errors import SnapshotError
from engram.importers.chat_exports import chatgpt, claude

CONVERSATIONS = "conversations.json"
KINDS = (chatgpt.KIND, claude.KIND)
READERS = {chatgpt.KIND: chatgpt.read, claude.KIND: claude.read}
_EXPECTED = "a ChatGPT or Claude.ai data export: the ZIP as downloaded, its folder, or its conversations.json"
# The files beside conversations.json that say whose export it is when the conversations do not
# (an account without any).
_BESIDE = {"chat.html": chatgpt.KIND, "user.json": chatgpt.KIND, "message_feedback.json": chatgpt.KIND,
           "shared_conversations.json": chatgpt.KIND, "users.json": claude.KIND, "projects.json": claude.KIND}
_KEY = re.compile(r'"(mapping|chat_messages)"\s*:')
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


def _by_files(names: list[str]) -> str | None:
    kinds = {_BESIDE[name] for name in names if name in _BESIDE}
    return kinds.pop() if len(kinds) == 1 else None


def is_zip(path: Path) -> bool:
    return path.is_file() and zipfile.is_zipfile(path)


def detect_path(path: Path) -> str | None:
    """``chatgpt`` or ``claude`` for an export's ZIP, folder or ``conversations.json``; None for
    anything else. Raises ``SnapshotError`` for a ZIP (or ``.zip`` file) that is no such export."""
    if path.is_dir():
        if not (path / CONVERSATIONS).is_file():
            return None
        with (path / CONVERSATIONS).open(encoding="utf-8-sig", errors="replace") as file:
            head = file.read(_HEAD)
        return sniff(head) or _by_files(sorted(p.name for p in path.iterdir()))
    if path.suffix.lower() == ".zip" and path.is_file() and not zipfile.is_zipfile(path):
        raise SnapshotError("path", f"{path} is not a ZIP archive (damaged, or not fully downloaded)", _EXPECTED)
    if is_zip(path):
        with _open(path) as archive:
            info = _conversations_member(archive, path)
            with archive.open(info) as file:
                head = file.read(_HEAD).decode("utf-8", errors="replace")
            found = sniff(head) or _by_files(_beside(archive, info))
        if found is None:
            raise SnapshotError("path", f"cannot tell whose export {path} is: its conversations.json holds no "
                                "conversation and no file beside it names ChatGPT or Claude.ai",
                                "--from chatgpt or --from claude")
        return found
    if path.name.lower() == CONVERSATIONS and path.is_file():
        with path.open(encoding="utf-8-sig", errors="replace") as file:
            return sniff(file.read(_HEAD))
    return None


def detect_files(files: Mapping[str, str]) -> str | None:
    """The kind of a folder sent as ``{relative path: text}`` holding ``conversations.json``."""
    text = files.get(CONVERSATIONS)
    if text is None:
        return None
    return sniff(text[:_HEAD]) or _by_files(sorted(files))


def read_export(path: Path) -> tuple[str, list[str]]:
    """(the text of ``conversations.json``, the export's other files) from the ZIP or folder at
    ``path``; raises ``SnapshotError`` naming what is missing or unreadable."""
    if path.is_dir():
        inside = path / CONVERSATIONS
        if not inside.is_file():
            raise SnapshotError("path", f"{path} holds no {CONVERSATIONS}", _EXPECTED)
        try:
            text = inside.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise SnapshotError(str(inside), f"cannot read: {exc}", "a UTF-8 JSON file") from None
        return text, sorted(p.name for p in path.iterdir() if p.name != CONVERSATIONS and not p.name.startswith("."))
    with _open(path) as archive:
        info = _conversations_member(archive, path)
        try:
            data = archive.read(info)
        except (zipfile.BadZipFile, RuntimeError, NotImplementedError, OSError) as exc:
            raise SnapshotError("path", f"cannot read {info.filename} in {path}: {exc}",
                                "the export's ZIP as downloaded") from None
        others = _beside(archive, info)
    try:
        return data.decode("utf-8-sig"), others
    except UnicodeDecodeError as exc:
        raise SnapshotError(info.filename, f"is not UTF-8 text (byte {exc.start})", "a UTF-8 JSON file") from None


def others_warning(names: list[str]) -> str | None:
    """The warning naming the export's files that are not read (a few, then how many more)."""
    if not names:
        return None
    shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    return (f"only {CONVERSATIONS} is read; the export's other files are not imported: {shown} "
            "(the account, feedback, projects, images and attachments)")


def _open(path: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise SnapshotError("path", f"cannot read {path} as a ZIP archive: {exc}", _EXPECTED) from None


def _conversations_member(archive: zipfile.ZipFile, path: Path) -> zipfile.ZipInfo:
    """The archive's ``conversations.json``: at its top, or in the one folder it was zipped from."""
    found = [info for info in archive.infolist() if not info.is_dir()
             and PurePosixPath(info.filename).name == CONVERSATIONS and not info.filename.startswith("__MACOSX/")]
    if not found:
        raise SnapshotError("path", f"{path} holds no {CONVERSATIONS}", _EXPECTED)
    depth = min(len(PurePosixPath(info.filename).parts) for info in found)
    top = [info for info in found if len(PurePosixPath(info.filename).parts) == depth]
    if len(top) > 1:
        raise SnapshotError("path", f"{path} holds several: {', '.join(info.filename for info in top)}",
                            "one export per ZIP (import each folder on its own)")
    return top[0]


def _beside(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> list[str]:
    """The names of the entries beside ``conversations.json`` in its folder (a folder once)."""
    folder = PurePosixPath(info.filename).parent
    names: set[str] = set()
    for other in archive.infolist():
        rel = PurePosixPath(other.filename)
        if other.filename == info.filename or other.filename.startswith("__MACOSX/"):
            continue
        try:
            parts = rel.relative_to(folder).parts if str(folder) != "." else rel.parts
        except ValueError:
            continue
        if parts:
            names.add(parts[0])
    return sorted(names)
