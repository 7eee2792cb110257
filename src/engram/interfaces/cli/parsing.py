"""Turning command-line text into engine arguments (durations, key=value pairs, ``-`` for what
standard input holds); times are the engine's to read (``TimeReader``), so every door reads them
alike."""

from __future__ import annotations

import re
import sys

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


def stdin_text(field: str, allowed: str) -> str:
    """Everything on standard input, as the UTF-8 text it is: read as bytes, so line endings
    (``\r\n``) and every other character come through as sent, which text-mode reading does not
    promise. Not UTF-8: ``ValidationError`` naming ``field``."""
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValidationError(field, f"standard input is not UTF-8 text (byte {exc.start})", allowed) from None
