"""Times the tests expect, read by the standard library rather than by engram's own parser (which
is what they check)."""

from __future__ import annotations

from datetime import datetime


def at(text: str) -> float:
    """Epoch seconds of an ISO 8601 text with its offset (``2024-06-02T12:00:00+00:00``)."""
    return datetime.fromisoformat(text).timestamp()
