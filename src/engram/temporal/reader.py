"""``TimeReader``: the engine's one place for time in recall and in stored content.

It holds the zone and week start the user lives in, reads an explicit ``when`` or a phrase in the
query into a range (``phrases``), finds the date a memory's content states (``content``), and
shows a memory as it was known at a record time (``as_known``). Deterministic given ``now``.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from engram import jsondoc, text
from engram.errors import ConfigError, ValidationError
from engram.model import Memory, MemoryVersion
from engram.temporal import phrases
from engram.temporal.content import stated_time
from engram.temporal.instants import instant as in_range
from engram.temporal.instants import parse_time
from engram.temporal.settings import TimeSettings


@dataclass(frozen=True, slots=True)
class QueryTime:
    """What a recall's time reading found: the range, the query left to search, where it came from."""

    range: phrases.TimeRange | None
    query: str
    from_query: bool
    # ``when="before the launch"``: the range is bounded by the time of the memory these words find
    # ("before", "after" or "since", and the words); the engine looks the memory up.
    anchor: tuple[str, str] | None = None


_BOUND_FORMS = ("epoch seconds, an ISO 8601 date/time (2026-04-12, 2026-04-12T09:30+02:00) or a time phrase: "
                "yesterday, today, N days/weeks/hours/minutes ago, last/this week|month|year, in March [2026], since Monday, "
                "the past N days")
_ANCHOR = re.compile(r"^(before|after|since)\s+(.*\w.*)$", re.IGNORECASE)


def anchored_range(direction: str, words: str, at: float) -> phrases.TimeRange:
    """The range "before/after/since <words>" means once the memory they name is known to be at ``at``."""
    phrase = f"{direction} {words}"
    if direction == "before":
        return phrases.TimeRange(None, at, phrase)
    # "after the launch" leaves the launch itself out; "since the launch" keeps it.
    return phrases.TimeRange(math.nextafter(at, math.inf) if direction == "after" else at, None, phrase)


class TimeReader:
    def __init__(self, zone: str | ZoneInfo | None = None, *, week_start: int = 0, read_queries: bool = True) -> None:
        if isinstance(zone, str):
            try:
                zone = ZoneInfo(zone)
            except (ZoneInfoNotFoundError, ValueError):
                raise ConfigError(f"time.zone: unknown time zone {jsondoc.shown(zone)}"
                                  " (an IANA name such as Europe/Berlin)") from None
        self.zone = zone if zone is not None else _local_zone()
        self.week_start = week_start
        self.read_queries = read_queries

    @classmethod
    def from_settings(cls, settings: TimeSettings) -> TimeReader:
        return cls(settings.zone, week_start=0 if settings.week_start == "monday" else 6,
                   read_queries=settings.read_queries)

    def read(self, query: str, when: str | None, now: float) -> QueryTime:
        """An explicit ``when`` (``ValidationError`` if unreadable), else a phrase in the query."""
        if when is not None:
            spoken = " ".join(str(when).split())
            anchored = _ANCHOR.match(spoken)
            # "since Monday" and "since March" are phrases whole, though "Monday" alone is not one.
            if (anchored and not self._is_phrase(spoken, now)
                    and phrases.find(anchored.group(2), now, self.zone, self.week_start)[0] is None):
                return QueryTime(None, query, False, (anchored.group(1).lower(), anchored.group(2)))
            return QueryTime(phrases.parse(when, now, self.zone, self.week_start), query, False)
        if not self.read_queries:
            return QueryTime(None, query, False)
        found, rest = phrases.find(query, now, self.zone, self.week_start)
        if found is None:
            return QueryTime(None, query, False)
        # Searching the phrase's own words ("last", "week") would only add noise.
        return QueryTime(found, rest if text.query_terms(rest) else "", True)

    def _is_phrase(self, words: str, now: float) -> bool:
        found, rest = phrases.find(words, now, self.zone, self.week_start)
        return found is not None and not text.query_terms(rest)

    def instant(self, value: Any, field: str) -> float | None:
        """A time a user gave (epoch seconds or ISO 8601), a date or time without an offset read
        in this zone; raises ``ValidationError`` naming ``field``."""
        if isinstance(value, str):
            try:
                parsed = datetime.fromisoformat(value.strip())
            except ValueError:
                return parse_time(value, field)  # epoch seconds as text, or a clear error
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=self.zone)
            # Checked here, not only by the draft later, so the error names this field.
            return in_range(parsed.timestamp(), value, field)
        return parse_time(value, field)

    def bound(self, value: Any, field: str, *, now: float, end: bool = False) -> float | None:
        """One end of a time window a user gave: epoch seconds, ISO 8601 (as ``instant``), or a
        phrase as ``when`` reads it ("yesterday", "last week", "2 days ago", "since Monday", a bare
        date), which stands for its range: its start, or with ``end`` the last instant inside it
        (so "until yesterday" keeps all of yesterday, and a window's ends both count as inside;
        "since Monday" ends now). Raises ``ValidationError`` naming ``field`` when the value is
        none of these, or a time no door can show as a date."""
        if not isinstance(value, str) or _is_number(value):
            return parse_time(value, field)  # epoch seconds, with their own range error
        try:
            found = phrases.parse(value, now, self.zone, self.week_start, field=field)
        except ValidationError:
            try:
                return self.instant(value, field)
            except ValidationError:
                raise ValidationError(field, f"cannot read {jsondoc.shown(value)} as a time", _BOUND_FORMS) from None
        at = found.start if not end else None if found.end is None else math.nextafter(found.end, -math.inf)
        return None if at is None else in_range(at, value, field)

    def window(self, since: Any, until: Any, *, now: float) -> tuple[float | None, float | None]:
        """A ``since``/``until`` pair read as ``bound`` reads each end (``until`` as an end);
        raises ``ValidationError`` naming the field, or ``until`` when it is before ``since``."""
        start = self.bound(since, "since", now=now)
        end = self.bound(until, "until", now=now, end=True)
        if start is not None and end is not None and end < start:
            raise ValidationError("until", f"{jsondoc.shown(until)} is before since ({jsondoc.shown(since)})",
                                  "a time at or after since")
        return start, end

    def stated(self, content: str) -> float | None:
        return stated_time(content, self.zone)

    def dated_by_content(self, memory: Memory) -> bool:
        """Whether ``memory``'s ``valid_from`` is the date its content states: read from there (or
        given as that same date, which cannot be told apart), so it follows the content when the
        content changes, rather than keep dating the old words. A ``valid_from`` given otherwise
        is the user's and stays."""
        return memory.valid_from is not None and memory.valid_from == self.stated(memory.content)

    def describe(self, instant: float) -> str:
        return datetime.fromtimestamp(instant, self.zone).strftime("%Y-%m-%d %H:%M %Z")


def as_known(memory: Memory, versions: Sequence[MemoryVersion], known_at: float) -> Memory:
    """``memory`` with the content it had at record time ``known_at`` (from its versions): the
    first version replaced after then held the content; none means the current content did."""
    for version in sorted(versions, key=lambda v: v.replaced_at):
        if version.replaced_at > known_at:
            return replace(memory, content=version.content)
    return memory


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _local_zone() -> ZoneInfo:
    """The machine's zone with its DST rules ($TZ, else /etc/localtime), UTC when it has none."""
    name = os.environ.get("TZ", "").lstrip(":")
    if name:
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            pass
    try:
        with open("/etc/localtime", "rb") as handle:
            return ZoneInfo.from_file(handle, key="localtime")
    except (OSError, ValueError):
        return ZoneInfo("UTC")
