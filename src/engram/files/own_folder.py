"""The memory folder engram syncs (``files.dir`` while ``files.enabled``) is no source or target
of an import or export: one check for every door that reads or writes a folder by its path.

Its files are the mirror's: ``engram sync`` takes a hand-written entry in place (its id written
beside it) and writes every memory into a file of its choosing. Read by an importer (engram's own
folder importer, or basic-memory's and OpenClaw's, whose notes are markdown files as the mirror's
are), each entry became a second memory that the mirror wrote into its files, and the next sync
removed the user's entry as its duplicate. Written into by an export, a file the export shares a
name with was replaced (a hand-written entry not yet synced lost), and other files stayed as
copies sync reports on every run (YAML or basic-memory notes beside markdown, per-type JSON
folders at the top). So both are refused, naming ``path``, before anything is stored or written.
"""

from __future__ import annotations

from pathlib import Path

from engram.errors import ValidationError


def refuse_import(src: Path, synced: Path | None, kind: str = "folder") -> None:
    """Refuse to import the memory folder engram syncs (``synced``; None while files are off), a
    folder inside it or one holding it, read as ``kind`` (a file: one inside it); raises
    ``ValidationError`` naming ``path``."""
    where = _where(src, synced, holding=not src.is_file())
    if where is None:
        return
    if kind == "folder":
        raise ValidationError("path", f"{src} {where}: `engram sync` takes the memory folder's entries in place, where "
                              "they are; an import would store each a second time and move it into a file engram chooses",
                              "engram sync for the memory folder; engram import for a folder neither inside it nor holding it")
    raise ValidationError("path", f"{src} {where}: the memory folder's markdown files are engram's own, which "
                          f"`engram sync` takes in place; read as {kind} notes, each of their entries would be stored "
                          "a second time and written back into a file engram chooses",
                          f"a folder of {kind} notes neither inside engram's memory folder nor holding it "
                          "(engram sync for the memory folder itself)")


def refuse_export(dest: Path, synced: Path | None) -> None:
    """Refuse to export into the memory folder engram syncs (``synced``; None while files are
    off) or a folder inside it; raises ``ValidationError`` naming ``path``. A folder holding it is
    written beside it (``global/``, ``agents/``, ... next to ``memory/``), which the mirror never reads."""
    where = _where(dest, synced, holding=False)
    if where is None:
        return
    raise ValidationError("path", f"{dest} {where}: it already holds every memory; export to another folder",
                          "a folder outside engram's memory folder")


def _where(given: Path, synced: Path | None, *, holding: bool) -> str | None:
    """How ``given`` stands to the memory folder (the same folder, inside it, holding it), or None
    when apart. Both resolved: a relative path, ``~`` or a symlink naming the same folder is it."""
    if synced is None:
        return None
    path, memory = given.expanduser().resolve(), synced.expanduser().resolve()
    if path == memory:
        return "is engram's memory folder (files.dir)"
    if path.is_relative_to(memory):
        return f"is inside engram's memory folder (files.dir: {memory})"
    if holding and memory.is_relative_to(path):
        return f"holds engram's memory folder (files.dir: {memory})"
    return None
