"""The operator's ``MEMORY.md`` (Clawless): notes a person keeps for the agent, in ENGRAM_HOME.

It is created with a short template when missing, and read (up to ``max_chars``) into the
system prompt on every turn, so an edit takes effect on the next message.
"""

from __future__ import annotations

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
