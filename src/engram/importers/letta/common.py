"""What the Letta reader's modules share: the kind, and reading a JSON list at a named path."""

from __future__ import annotations

from typing import Any

from engram.importers.base import fail

KIND = "letta"


def at(where: str, name: str) -> str:
    """The JSON path of ``name`` inside ``where`` (the document itself when ``where`` is empty)."""
    return f"{where}.{name}" if where else name


def as_list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise fail(where, f"got {type(value).__name__}", "a list")
    return value
