"""Turning command-line text into engine arguments (durations, key=value pairs, ``-`` for what
standard input holds); times are the engine's to read (``TimeReader``), so every door reads them
alike."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from engram import jsondoc
from engram.errors import ValidationError

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def duration(text: str | None, field: str) -> float | None:
    """``90``, ``30m``, ``12h``, ``7d``, ``2w`` as seconds."""
    if text is None:
        return None
    match = _DURATION.match(text)
    if not match:
        raise ValidationError(field, f"{jsondoc.shown(text)} is not a duration", "a number with s, m, h, d or w, e.g. 7d")
    return float(match.group(1)) * _UNITS[match.group(2)]


def pairs(items: list[str] | None, field: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValidationError(field, f"{jsondoc.shown(item)} is not key=value", "key=value")
        out[key.strip()] = value
    return out


STDIN = "-"


def stdin_text(field: str, allowed: str, *, database: str | None = None) -> str:
    """Everything on standard input, as the UTF-8 text it is: read as bytes, so line endings
    (``\r\n``) and every other character come through as sent, which text-mode reading does not
    promise. Not UTF-8: ``ValidationError`` naming ``field``; ``database``, when given, is what is
    allowed instead of a SQLite database (named as one, not as "byte 0x..": ``engram import - < memory.db``)."""
    from engram.db.foreign import starts_as_sqlite

    data = sys.stdin.buffer.read()
    if database is not None and starts_as_sqlite(data):
        raise ValidationError(field, "standard input is a SQLite database, not a document", database)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValidationError(field, f"standard input is not UTF-8 text (byte {exc.start})", allowed) from None


# How much of a path argument an error shows back: the JSON itself given where its file goes can be
# long (a glimpse tells it); a path is shown whole up to a length real ones rarely pass, to spot a typo.
_SHOWN_JSON_CHARS = 60
_SHOWN_PATH_CHARS = 200


# What the global ``--config`` (and ``engram mcp --config``) takes instead of an empty one.
CONFIG_ALLOWED = ("a config file path; leave --config out for $ENGRAM_CONFIG, else config.toml (.yaml, .yml, .json)"
                  " in the data folder")


def path_option(text: str | None, option: str, allowed: str) -> Path | None:
    """A path option's text as a ``Path`` (None when left out). Read as text because typer made an
    empty one the Path of ``.``: ``--home ''`` kept memory.db in the current folder, ``--config ''``
    ended as "config file . does not exist". Empty or blank is a usage error naming ``option``;
    ``allowed`` says what to give instead."""
    if text is None:
        return None
    if not text.strip():
        raise ValidationError(option, "must not be empty", allowed)
    return Path(text)


def unreadable_path(field: str, given: str, exc: OSError | None, holding: str, what: str = "file", *,
                    stdin: bool = True) -> ValidationError:
    """The error for a path argument ``field`` (which also takes ``-`` for standard input) naming
    nothing readable: ``exc`` is what reading it raised, ``None`` when it is not there. The JSON
    itself passed where its path goes (the common mistake) is named as such; the value is shown cut
    and OSError's own text, which repeats the whole path, is left out. ``holding`` says what the
    path should name, e.g. ``"a file holding a JSON list of messages"``; ``what`` what sort of
    path it is (``"file"``, ``"file or folder"``); ``stdin`` False: the argument takes no ``-``."""
    if stdin and given.lstrip().startswith(("[", "{")):
        shown = jsondoc.shown(given, _SHOWN_JSON_CHARS)
        return ValidationError(field, f"takes a {what} path, not the JSON itself: no {what} {shown}",
                               f"a path to {holding}, or - to read the document from standard input")
    shown = jsondoc.shown(given, _SHOWN_PATH_CHARS)
    problem = ("does not exist" if exc is None or isinstance(exc, FileNotFoundError)
               else f"cannot be read: {exc.strerror or type(exc).__name__}")
    return ValidationError(field, f"{shown} {problem}", f"a path to {holding}{', or - for standard input' if stdin else ''}")


def existing_path(field: str, path: Path, holding: str, what: str = "file", *, stdin: bool = True) -> Path:
    """``path`` when something is there; else ``unreadable_path``'s error (a name too long for a
    file system, as JSON text given for the path often is, included)."""
    try:
        if path.exists():
            return path
        problem: OSError | None = None
    except OSError as exc:
        problem = exc
    raise unreadable_path(field, str(path), problem, holding, what, stdin=stdin)
