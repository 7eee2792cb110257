"""The operator's ``MEMORY.md`` (Clawless): notes a person keeps for the agent, in ENGRAM_HOME.

It is created with a short template when missing, and read (up to ``max_chars``) into the
system prompt on every turn, so an edit takes effect on the next message. An import appends
another system's operator notes to it (``add_notes``), which ``append_problem`` checks can be
done before that import writes anything else.
"""

from __future__ import annotations

import os
from pathlib import Path

from engram.errors import StorageError

FILENAME = "MEMORY.md"
TEMPLATE = """# MEMORY.md

Notes for your agent. Everything below the line is added to its system prompt on every
message (up to the configured size). Write facts, standing instructions, preferences.

---
"""


def memory_md_path(home: Path) -> Path:
    return home / FILENAME


def ensure_memory_md(home: Path) -> Path:
    """The file's path, creating it (and ``home``) with the template when missing.
    Raises ``StorageError`` when it cannot be created."""
    path = memory_md_path(home)
    try:
        if not path.exists():
            home.mkdir(parents=True, exist_ok=True)
            with path.open("x", encoding="utf-8") as handle:  # "x": never overwrite a concurrent creation
                handle.write(TEMPLATE)
    except FileExistsError:
        pass
    except OSError as exc:
        raise StorageError(f"cannot create {path}: {exc}") from exc
    return path


def append_problem(home: Path) -> str | None:
    """Why ``add_notes`` could not append to ``home``'s ``MEMORY.md`` (not a file, not UTF-8 text,
    not writable, or missing where it cannot be created), as words following the file's name; None
    when it could. Creates and changes nothing: an import refused after this check leaves no file."""
    path = memory_md_path(home)
    if not path.exists() and not path.is_symlink():
        return _creation_problem(home)
    if not path.is_file():  # (a directory; a link to nothing; a pipe, which an open to write would wait on)
        return "is a directory, not a file" if path.is_dir() else "is not a regular file"
    try:
        # Opened as the append opens it (write, append), without O_CREAT: the check creates nothing.
        os.close(os.open(path, os.O_WRONLY | os.O_APPEND))
        data = path.read_bytes()
    except OSError as exc:
        return f"cannot be appended to ({exc.strerror or exc})"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _not_utf8(data, exc)
    return None


def _creation_problem(home: Path) -> str | None:
    """Why ``MEMORY.md`` could not be created in ``home`` (made with its parents when missing)."""
    folder = home
    while not folder.exists() and folder.parent != folder:
        folder = folder.parent
    if not folder.is_dir():
        return f"cannot be created: {folder} is not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):  # (a read-only file system answers no here too)
        return f"cannot be created: {folder} is not writable"
    return None


def _not_utf8(data: bytes, exc: UnicodeDecodeError) -> str:
    line = data.count(b"\n", 0, exc.start) + 1
    return f"is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}, line {line})"


def add_notes(home: Path, heading: str, notes: str) -> bool:
    """Append ``notes`` under a ``## heading`` to ``home``'s ``MEMORY.md`` (created with the template
    when missing) unless the file holds them already; True when appended. Raises ``StorageError``
    naming the file and what is wrong (``append_problem``'s words) when it cannot be read or written."""
    path = ensure_memory_md(home)
    try:
        data = path.read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise StorageError(f"{path} {_not_utf8(data, exc)}") from exc
        # Line ends read as text reads them (a file saved on Windows holds the notes with \r\n).
        if notes in text.replace("\r\n", "\n").replace("\r", "\n"):
            return False
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"\n\n## {heading}\n\n{notes}\n")
    except OSError as exc:
        raise StorageError(f"cannot append to {path}: {exc.strerror or exc}") from exc
    return True


def operator_notes(text: str) -> str:
    """What the operator wrote: the part after the template's ``---`` line when the template is
    still there, else the whole file."""
    if text.startswith("# MEMORY.md") and "\n---\n" in text:
        return text.split("\n---\n", 1)[1].strip()
    return text.strip()


def read_memory_md(home: Path, max_chars: int) -> str:
    """The operator notes, at most ``max_chars`` characters (cut at a line end when possible);
    ``""`` when the file is missing or empty. Raises ``StorageError`` when it cannot be read."""
    path = memory_md_path(home)
    if max_chars <= 0 or not path.exists():
        return ""
    try:
        # "utf-8-sig": a byte order mark (Windows editors' "UTF-8 with BOM") is read past, else
        # the template was not recognised and went into the prompt with the notes.
        notes = operator_notes(path.read_text(encoding="utf-8-sig", errors="replace"))
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc}") from exc
    if len(notes) <= max_chars:
        return notes
    cut = notes[:max_chars]
    newline = cut.rfind("\n")
    return cut[:newline] if newline > max_chars // 2 else cut
