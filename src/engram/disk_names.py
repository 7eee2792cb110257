"""Agent and session names as file and folder names that mean one name on every file system.

A name is ASCII letters, digits and ``. _ : @ -`` (``model.make_scope``). Used as it is, two names
that differ only in case (``Alice``, ``alice``) are one folder on the file systems macOS and Windows
use by default, so one agent's folder would hold the other's files; and ``:``, which the adapters'
agent names hold (``adk:app:u1``, ``lg:graph``), cannot be in a Windows name at all. ``portable``
writes a name so that neither happens, one name to one file name, readable where it can be:

- lowercase letters, digits and ``. _ @ -`` stay as they are (``default``, ``alice``, ``my-bot``);
- a capital is ``!`` and its lowercase letter (``Alice`` is ``!alice``), as Go's module cache
  writes module paths for the same reason;
- ``:`` is ``+`` (``adk:app:u1`` is ``adk+app+u1``);
- a name whose part before its first ``.`` Windows keeps for a device (``con``, ``nul``,
  ``com1``, ...), or that ends in ``.`` (which Windows drops), has a ``!`` put after that part or
  at its end (``con`` is ``con!``, ``con.x`` is ``con!.x``, ``a.`` is ``a.!``).

No portable name holds a capital, so no two of them are one name on a case-insensitive file
system. ``name_of`` reads one back. It also reads a name written as it is, as earlier versions
wrote folders and as a person may make one (``agents/Claude/``): no name holds ``!`` or ``+``, so
the two readings never disagree. ``settle`` moves such a folder or file to its portable name.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

from engram import jsondoc
from engram.errors import ValidationError
from engram.model import make_scope

# The longest file name the common file systems take (bytes; portable names are ASCII).
MAX_FILE_NAME = 255
# Windows device names: a file or folder of one of these names, whatever its extension, is the device.
DEVICES = frozenset({"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))})
_PORTABLE = re.compile(r"^(?:[a-z0-9._@+-]|![a-z.]|!$)+$")


def portable(name: str, field: str = "agent") -> str:
    """``name`` (an agent or session name) as a file or folder name (see the module docstring).

    Raises:
        ValidationError: ``name`` is not a valid name, or its portable form is longer than a file
            name may be (a name of more than 126 capitals), naming ``field``.
    """
    if field == "session":
        make_scope("a", name)
    else:
        make_scope(name, None)
    text = "".join(f"!{c.lower()}" if "A" <= c <= "Z" else "+" if c == ":" else c for c in name)
    stem, dot, rest = text.partition(".")
    if stem in DEVICES:
        text = f"{stem}!{dot}{rest}"
    if text.endswith("."):
        text += "!"
    if len(text) > MAX_FILE_NAME:
        raise ValidationError(field, f"{jsondoc.shown(name, 200)} is too long to name a folder once each capital is "
                              "written as !x",
                              f"at most {MAX_FILE_NAME} characters so written")
    return text


def windows_refuses(file_name: str) -> bool:
    """Whether Windows refuses ``file_name`` for a device's, whatever its case and extension
    (``con``, ``NUL.x.md``), or drops its last character (a ``.`` or a space). For names made
    otherwise than by ``portable`` (which never makes such a name), e.g. transcripts' files."""
    return file_name.partition(".")[0].lower() in DEVICES or file_name.endswith((".", " "))


def name_of(text: str) -> str | None:
    """The agent or session name the file or folder name ``text`` stands for: its ``portable``
    form, or the name as it is; None when it is neither."""
    try:
        make_scope(text, None)
        return text  # a name as it is (``alice``, or an earlier version's ``Claude``)
    except ValidationError:
        pass
    if not _PORTABLE.match(text):
        return None
    name = re.sub(r"!([a-z])", lambda m: m.group(1).upper(), text).replace("!", "").replace("+", ":")
    try:
        return name if portable(name) == text else None
    except ValidationError:
        return None


def settle(written_as_is: Path, portable_path: Path) -> Path:
    """``portable_path``, after moving ``written_as_is`` there: the same folder or file as an earlier
    version named it, with the name as it is. It is moved only when a file or folder of exactly
    that name is there (on a case-insensitive file system ``Claude`` also finds ``claude``, which
    is another agent's) and nothing is at ``portable_path`` yet; a process moving it at the same
    time is no failure. On Windows a name holding ``:`` cannot have been written (and ``a:b`` would
    name a drive), so none is looked for."""
    if os.name == "nt" and ":" in written_as_is.name:
        return portable_path
    if written_as_is == portable_path or portable_path.exists():
        return portable_path
    try:
        listed = os.listdir(written_as_is.parent)
    except OSError:
        return portable_path
    if written_as_is.name in listed:
        with contextlib.suppress(FileNotFoundError):
            os.rename(written_as_is, portable_path)
    return portable_path


def left_beside(written_as_is: Path, portable_path: Path) -> bool:
    """Whether ``settle`` left ``written_as_is`` beside ``portable_path``: both are there, the first
    listed under exactly its name (``Claude`` found as ``claude`` on a case-insensitive file system
    is another agent's) and holding something (an empty folder holds nothing to lose)."""
    if written_as_is == portable_path or not portable_path.exists():
        return False
    try:
        if written_as_is.name not in os.listdir(written_as_is.parent):
            return False
        return not written_as_is.is_dir() or any(written_as_is.iterdir())
    except OSError:
        return False
