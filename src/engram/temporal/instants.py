"""Instants as users give them (epoch seconds or ISO 8601 text), validated into epoch seconds.

Kept apart from ``model`` so every door (library, CLI, HTTP, MCP, memory files) reads a time the
same way and names the field when it cannot.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from engram.errors import ValidationError

_ALLOWED = "epoch seconds or an ISO 8601 date/time (2026-04-12, 2026-04-12T09:30+02:00)"


def parse_time(value: Any, field_name: str) -> float | None:
    """An instant as epoch seconds: a number, or ISO 8601 text (a date alone is its midnight UTC;
    a time without an offset is UTC). Interfaces resolve dates in the user's zone before this."""
    if value is None or isinstance(value, bool):
        if value is None:
            return None
        raise ValidationError(field_name, f"{value!r} is not a time", _ALLOWED)
    if isinstance(value, int | float):
        number = float(value)
        if math.isnan(number) or math.isinf(number):
            raise ValidationError(field_name, f"{value!r} is not a time", _ALLOWED)
        return number
    if isinstance(value, str):
        text = value.strip()
        try:
            return float(text)
        except ValueError:
            pass
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            raise ValidationError(field_name, f"cannot read {value!r}",
                                  _ALLOWED) from None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return parsed.timestamp()
    raise ValidationError(field_name, f"got {type(value).__name__}", _ALLOWED)


def parse_validity(valid_from: Any, valid_until: Any) -> dict[str, float | None]:
    """``valid_from`` / ``valid_until`` checked together: the end may not come before the start."""
    start, end = parse_time(valid_from, "valid_from"), parse_time(valid_until, "valid_until")
    if start is not None and end is not None and end < start:
        raise ValidationError("valid_until", "is before valid_from", "a time at or after valid_from")
    return {"valid_from": start, "valid_until": end}
