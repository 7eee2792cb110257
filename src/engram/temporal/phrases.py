"""Time phrases of a query read as ranges: "yesterday", "last week", "in March", "since Monday",
"two days ago", "2 hours ago", "on 2026-04-12". Offline and deterministic given ``now`` and a time zone.

A small grammar rather than a library: dateparser (measured) answers a point, not a range ("last
week" is "now minus 7 days", "in March" is March 15), reads "we" and "may we" in a question as
dates, does not read "since Monday", and its first search in a sentence takes seconds to load its
language data. Periods here are calendar periods in the user's zone: a day runs midnight to
midnight (23 or 25 hours across a DST change), weeks start on ``week_start`` (0 = Monday), months
and years are calendar months and years. Hours and minutes are clock hours and minutes in the zone
("2 hours ago" at 14:37 is 12:00 to 13:00), counted back in elapsed time, so across a DST change
"2 hours ago" is two real hours back, not two steps of the wall clock. Ranges are half-open
``[start, end)``; "since X" ends now.
"before X" is not read here: it needs a memory that names X (``TimeReader`` and the engine).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from engram import jsondoc
from engram.errors import ValidationError

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december")
_MONTH_ABBR = {m[:3]: i + 1 for i, m in enumerate(_MONTHS)} | {"sept": 9}
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3}
_UNITS = {"day": "day", "days": "day", "week": "week", "weeks": "week", "month": "month", "months": "month",
          "year": "year", "years": "year", "hour": "hour", "hours": "hour", "minute": "minute", "minutes": "minute",
          "min": "minute", "mins": "minute"}
# Units shorter than a day: clock periods of this many seconds, counted back from ``now`` in elapsed time.
_CLOCK_SECONDS = {"hour": 3600, "minute": 60}

_MONTH = r"(?P<month>" + "|".join([*_MONTHS, "sept", *(m[:3] for m in _MONTHS)]) + r")\.?"
_DAY = r"(?P<weekday>" + "|".join(_DAYS) + r")"
_NUM = r"(?P<n>\d{1,3}|" + "|".join(sorted(_NUMBERS, key=len, reverse=True)) + ")"
_UNIT = r"(?P<unit>days?|weeks?|months?|years?|hours?|minutes?|mins?)"
_ISO = r"(?P<iso>\d{4}-\d{2}-\d{2})"
_DMY = r"(?P<d1>\d{1,2})(?:st|nd|rd|th)? " + _MONTH.replace("month>", "month1>") + r",? (?P<y1>\d{4})"
_MDY = _MONTH.replace("month>", "month2>") + r" (?P<d2>\d{1,2})(?:st|nd|rd|th)?(?:,? (?P<y2>\d{4}))?"

# One alternative per phrase family; the first match in the query wins (longest at a position).
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [(name, re.compile(r"\b" + rx + r"\b")) for name, rx in (
    ("since", r"since (?P<rest>.+)"),
    ("ago", r"(?:" + _NUM + " " + _UNIT + r"|(?P<half>half an hour)) ago"),
    ("past", r"(?:in )?the (?:past|last) " + _NUM + " " + _UNIT),
    ("day_word", r"(?P<word>the day before yesterday|yesterday|today|tonight|this morning)"),
    ("period", r"(?P<which>last|this|next) (?P<unit>week|month|year|weekend)"),
    ("weekday", r"(?:(?P<last>last) |on )" + _DAY),
    ("date", r"(?:on )?(?:" + _ISO + "|" + _DMY + "|" + _MDY + ")"),
    ("month", r"(?:in|during) " + _MONTH + r"(?: (?P<year>\d{4}))?"),
    ("year", r"(?:in|during) (?P<year>(?:19|20)\d{2})"),
)]


@dataclass(frozen=True, slots=True)
class TimeRange:
    """A half-open range ``[start, end)`` in epoch seconds (``None``: unbounded) and the words read."""

    start: float | None
    end: float | None
    phrase: str

    def describe(self, zone: ZoneInfo) -> str:
        """The range as the user's zone sees it, for a result's notes."""
        def show(t: float | None) -> str:
            return "…" if t is None else datetime.fromtimestamp(t, zone).strftime("%Y-%m-%d %H:%M")
        return f"{self.phrase!r} read as {show(self.start)} to {show(self.end)} ({zone.key})"


def find(query: str, now: float, zone: ZoneInfo, week_start: int = 0) -> tuple[TimeRange | None, str]:
    """The first time phrase in ``query`` as a range, and the query without it (or None and the query)."""
    lowered = query.lower()
    best: tuple[int, int, TimeRange] | None = None
    for name, pattern in _PATTERNS:
        for match in pattern.finditer(lowered):
            try:
                found = _read(name, match, now, zone, week_start)
            except (ValueError, OverflowError):  # a day past the calendar's end (9999-12-31 + 1 day)
                found = None
            if found is None:
                continue
            end, time_range = found
            if best is None or match.start() < best[0] or (match.start() == best[0] and end > best[1]):
                best = (match.start(), end, time_range)
            break
    if best is None:
        return None, query
    at, end, found_range = best
    rest = " ".join((query[:at] + " " + query[end:]).split())
    return replace(found_range, phrase=query[at:end]), rest


def parse(phrase: str, now: float, zone: ZoneInfo, week_start: int = 0, field: str = "when") -> TimeRange:
    """An explicit ``when`` argument: the whole text must be one time phrase; raises ``ValidationError``."""
    text = " ".join(str(phrase).split())
    found, rest = find(text, now, zone, week_start)
    if found is None or rest:
        raise ValidationError(
            field, f"cannot read {jsondoc.shown(phrase)} as a time",
            "yesterday, today, N days/weeks/hours/minutes ago, an hour ago, last/this week|month|year, "
            "in March [2026], since Monday, on 2026-04-12, the past N days; before/after/since words a memory contains",
        )
    return found


def _read(name: str, m: re.Match[str], now: float, zone: ZoneInfo, week_start: int) -> tuple[int, TimeRange] | None:
    """The range a match means and where its phrase ends, or None when the words are no time."""
    today = datetime.fromtimestamp(now, zone).date()
    span: tuple[float | None, float | None] | None
    end_at = m.end()
    if name == "since":
        rest = m.group("rest")
        bare_day = re.match(_DAY + r"\b", rest)
        bare_month = re.match(_MONTH + r"(?: (?P<year>\d{4}))?\b", rest)
        if bare_month:  # "since March": from the start of the most recent March
            month = _month_number(bare_month.group("month"))
            year = int(bare_month.group("year") or (today.year if month <= today.month else today.year - 1))
            span, end_at = (_midnight(date(year, month, 1), zone), now), m.start("rest") + bare_month.end()
        elif bare_day:  # "since Monday": the most recent Monday, today included
            start_day = _previous_weekday(today, _DAYS.index(bare_day.group("weekday")), include_today=True)
            span, end_at = (_midnight(start_day, zone), now), m.start("rest") + bare_day.end()
        else:  # "since last week", "since 2026-04-12", "since March": from the start of that period
            inner = _longest_at_start(rest, now, zone, week_start)
            if inner is None or inner[1].start is None:
                return None
            span, end_at = (inner[1].start, now), m.start("rest") + inner[0]
    elif name == "ago":
        n, unit = (30, "minute") if m.group("half") else (_number(m.group("n")), _UNITS[m.group("unit")])
        if unit in _CLOCK_SECONDS:
            span = _clock_period(now - n * _CLOCK_SECONDS[unit], unit, zone)
        else:
            span = _period(_shift(today, unit, -n), unit, zone, week_start)
    elif name == "past":
        n, unit = _number(m.group("n")), _UNITS[m.group("unit")]
        if unit in _CLOCK_SECONDS:  # "the past 2 hours": from the start of the clock hour 2 hours back
            span = (_clock_period(now - n * _CLOCK_SECONDS[unit], unit, zone)[0], now)
        else:
            span = (_midnight(_shift(today, unit, -n), zone), now)
    elif name == "day_word":
        back = {"the day before yesterday": 2, "yesterday": 1}.get(m.group("word"), 0)
        span = _period(today - timedelta(days=back), "day", zone, week_start)
    elif name == "period":
        step = {"last": -1, "this": 0, "next": 1}[m.group("which")]
        unit = m.group("unit")
        if unit == "weekend":  # Saturday and Sunday of that (Monday-first) week
            day = _shift(today, "week", step)
            saturday = day - timedelta(days=day.weekday()) + timedelta(days=5)
            span = (_midnight(saturday, zone), _midnight(saturday + timedelta(days=2), zone))
        else:
            span = _period(_shift(today, unit, step), unit, zone, week_start)
    elif name == "weekday":
        day = _previous_weekday(today, _DAYS.index(m.group("weekday")), include_today=not m.group("last"))
        span = _period(day, "day", zone, week_start)
    elif name == "date":
        day = _date(m)
        if day is None:
            return None
        span = _period(day, "day", zone, week_start)
    elif name == "month":
        month = _month_number(m.group("month"))
        year = int(m.group("year")) if m.group("year") else (today.year if month <= today.month else today.year - 1)
        span = _period(date(year, month, 1), "month", zone, week_start)
    else:
        span = _period(date(int(m.group("year")), 1, 1), "year", zone, week_start)
    phrase = m.string[m.start():end_at]
    return end_at, TimeRange(span[0], span[1], phrase)


def _longest_at_start(text: str, now: float, zone: ZoneInfo, week_start: int) -> tuple[int, TimeRange] | None:
    """The longest phrase starting ``text`` (where it ends, its range), or None."""
    found = [read for name, pattern in _PATTERNS
             if (match := pattern.match(text)) and (read := _read(name, match, now, zone, week_start))]
    return max(found, key=lambda item: item[0]) if found else None


def _number(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBERS[word]


def _month_number(word: str) -> int:
    word = word.rstrip(".")
    return _MONTHS.index(word) + 1 if word in _MONTHS else _MONTH_ABBR[word[:4] if word == "sept" else word[:3]]


# A full date (with its year) anywhere in a text: what ``read_date`` reads.
DATE = _ISO + "|" + _DMY + "|" + _MDY


def read_date(m: re.Match[str]) -> date | None:
    """The calendar date a match of ``DATE`` names, or None (no year, or no such day)."""
    return _date(m)


def midnight(day: date, zone: ZoneInfo) -> float:
    """The first instant of ``day`` in ``zone``."""
    return _midnight(day, zone)


def _date(m: re.Match[str]) -> date | None:
    try:
        if m.group("iso"):
            return date.fromisoformat(m.group("iso"))
        if m.group("d1"):
            return date(int(m.group("y1")), _month_number(m.group("month1")), int(m.group("d1")))
        year = int(m.group("y2")) if m.group("y2") else None
        if year is None:
            return None  # "May 3" without a year is too often not a date ("chapter may 3")
        return date(year, _month_number(m.group("month2")), int(m.group("d2")))
    except ValueError:
        return None  # 2026-02-30


def _midnight(day: date, zone: ZoneInfo) -> float:
    """The first instant of ``day`` in ``zone`` (a DST change at midnight moves it, never skips it)."""
    return datetime(day.year, day.month, day.day, tzinfo=zone).timestamp()


def _shift(day: date, unit: str, n: int) -> date:
    """``day`` moved by ``n`` units, clamped to the month's end (March 31 - 1 month = February 28)."""
    if unit == "day":
        return day + timedelta(days=n)
    if unit == "week":
        return day + timedelta(weeks=n)
    months = n * (12 if unit == "year" else 1)
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    first_next = date(year + (month + 1) // 12, (month + 1) % 12 + 1, 1)
    return date(year, month + 1, min(day.day, (first_next - timedelta(days=1)).day))


def _period(day: date, unit: str, zone: ZoneInfo, week_start: int) -> tuple[float, float]:
    """The calendar day, week, month or year holding ``day``."""
    if unit == "day":
        first, after = day, day + timedelta(days=1)
    elif unit == "week":
        first = day - timedelta(days=(day.weekday() - week_start) % 7)
        after = first + timedelta(days=7)
    elif unit == "month":
        first = day.replace(day=1)
        after = _shift(first, "month", 1)
    else:
        first, after = date(day.year, 1, 1), date(day.year + 1, 1, 1)
    return _midnight(first, zone), _midnight(after, zone)


def _clock_period(at: float, unit: str, zone: ZoneInfo) -> tuple[float, float]:
    """The clock hour or minute holding instant ``at`` as ``zone`` shows it (a +05:30 zone's hours
    start at :30 UTC)."""
    shown = datetime.fromtimestamp(at, zone)
    into = shown.second + shown.microsecond / 1e6 + (shown.minute * 60 if unit == "hour" else 0)
    start = at - into
    return start, start + _CLOCK_SECONDS[unit]


def _previous_weekday(today: date, weekday: int, *, include_today: bool) -> date:
    back = (today.weekday() - weekday) % 7
    if back == 0 and not include_today:
        back = 7
    return today - timedelta(days=back)
