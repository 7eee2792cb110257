"""Instants as users give them (epoch seconds or ISO 8601 text), validated into epoch seconds.

Kept apart from ``model`` so every door (library, CLI, HTTP, MCP, memory files) reads a time the
same way and names the field when it cannot.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any, overload

from engram import jsondoc
from engram.errors import ValidationError

# Every door turns a stored instant back into a date, in UTC or in the user's zone, and Python's
# dates stop at the years 1 and 9999: a year inside either end keeps any zone's offset within them.
EARLIEST = datetime(2, 1, 1, tzinfo=UTC).timestamp()
LATEST = datetime(9999, 1, 1, tzinfo=UTC).timestamp()  # (excluded)
IN_RANGE = "a time from 0002-01-01 to 9998-12-31 (UTC)"
_ALLOWED = f"epoch seconds or an ISO 8601 date/time (2026-04-12, 2026-04-12T09:30+02:00), {IN_RANGE}"


def instant(number: float, value: Any, field_name: str) -> float:
    """``number`` (read from ``value``) if it is an instant every door can show as a date; raises
    ``ValidationError`` for NaN, infinities and times beyond the years 2-9998."""
    if math.isnan(number) or not EARLIEST <= number < LATEST:
        raise ValidationError(field_name, f"{jsondoc.shown(value)} is not a time engram can show as a date", IN_RANGE)
    return number


def parse_time(value: Any, field_name: str) -> float | None:
    """An instant as epoch seconds: a number, or ISO 8601 text (a date alone is its midnight UTC;
    a time without an offset is UTC). Interfaces resolve dates in the user's zone before this."""
    if value is None or isinstance(value, bool):
        if value is None:
            return None
        raise ValidationError(field_name, f"{jsondoc.shown(value)} is not a time", _ALLOWED)
    if isinstance(value, int | float):
        try:
            return instant(float(value), value, field_name)
        except OverflowError:  # an int beyond any float
            raise ValidationError(field_name, f"{value!r} is not a time engram can show as a date", IN_RANGE) from None
    if isinstance(value, str):
        text = value.strip()
        try:
            number = float(text)
        except ValueError:
            number = None
        if number is not None:
            return instant(number, value, field_name)
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            raise ValidationError(field_name, f"cannot read {jsondoc.shown(value)}",
                                  _ALLOWED) from None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return instant(parsed.timestamp(), value, field_name)
    raise ValidationError(field_name, f"got {type(value).__name__}", _ALLOWED)


def parse_validity(valid_from: Any, valid_until: Any) -> dict[str, float | None]:
    """``valid_from`` / ``valid_until`` checked together: the end may not come before the start."""
    start, end = parse_time(valid_from, "valid_from"), parse_time(valid_until, "valid_until")
    if start is not None and end is not None and end < start:
        raise ValidationError("valid_until", "is before valid_from", "a time at or after valid_from")
    return {"valid_from": start, "valid_until": end}


def record_times(created: float | None, updated: float | None, now: float,
                 names: tuple[str, str] = ("created_at", "updated_at")) -> tuple[float, float, str | None]:
    """The creation and update times a memory brought in from elsewhere (another system's export,
    engram's own snapshot or memory file) gets, and a warning when its source contradicts itself.
    A memory is never created after its own last change: a source that gives only a change time (a
    mem0 item with ``updated_at`` alone) had the thing by then, so that is its creation too (not
    ``now``, the import's clock, which would put the creation after the change); one that gives a
    creation later than its change (a bad export, a date edited by hand) is created at the earlier,
    its change time kept as given, and the warning names both fields (``names``, as the source
    calls them) and both times. Neither given: both are ``now``. Both given in order (what engram
    itself writes): both kept exactly."""
    if created is None:
        created = updated if updated is not None else now
    if updated is None:
        updated = created
    if created <= updated:
        return created, updated, None
    return updated, updated, (f"{names[0]} {shown_time(created)} is later than {names[1]} {shown_time(updated)}: "
                              "imported as created at the earlier")


def shown_time(at: float) -> str:
    """An instant as a warning names it: ISO 8601 in UTC."""
    return python_isoformat(at)


def python_isoformat(at: float) -> str:
    """Epoch seconds as Python's ``datetime.isoformat`` writes them in UTC: microseconds when there
    are any, ``+00:00`` (``2026-02-09T10:30:00.318000+00:00``). mem0 writes its times so, and
    engram's mem0 export gives them back in mem0's own form; ADK's memory services give
    ``MemoryEntry.timestamp`` as ``isoformat`` text. Not ``iso``: those readers expect this form."""
    return datetime.fromtimestamp(at, UTC).isoformat()


@overload
def iso(ts: float, *, timespec: str = "seconds") -> str: ...
@overload
def iso(ts: None, *, timespec: str = "seconds") -> None: ...
def iso(ts: float | None, *, timespec: str = "seconds") -> str | None:
    """Epoch seconds as ISO 8601 UTC, as the doors show a stored instant (``2026-02-09T10:30:00Z``);
    ``timespec="milliseconds"`` keeps three digits of the second (``2026-02-09T10:30:00.318Z``,
    JavaScript's ``toISOString``, as Clawless writes its times)."""
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec=timespec).replace("+00:00", "Z")
