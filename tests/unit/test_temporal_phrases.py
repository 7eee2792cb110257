"""Time phrases read as ranges under a fixed clock and zone: each phrase family, week starts,
month ends and DST days (engram.temporal.phrases)."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from engram.errors import ValidationError
from engram.temporal import phrases
from engram.temporal.content import stated_time

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")


def local(text: str, zone: ZoneInfo = BERLIN) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=zone).timestamp()


def span(query: str, now: str, zone: ZoneInfo = BERLIN, week_start: int = 0) -> tuple[str, str]:
    found, _ = phrases.find(query, local(now, zone), zone, week_start)
    assert found is not None, query
    show = [datetime.fromtimestamp(t, zone).strftime("%Y-%m-%d %H:%M") for t in (found.start, found.end)]
    return show[0], show[1]


WEDNESDAY = "2026-04-15T10:00"


@pytest.mark.parametrize(("query", "expected"), [
    ("what happened yesterday", ("2026-04-14 00:00", "2026-04-15 00:00")),
    ("today", ("2026-04-15 00:00", "2026-04-16 00:00")),
    ("the day before yesterday", ("2026-04-13 00:00", "2026-04-14 00:00")),
    ("two days ago", ("2026-04-13 00:00", "2026-04-14 00:00")),
    ("3 days ago", ("2026-04-12 00:00", "2026-04-13 00:00")),
    ("a week ago", ("2026-04-06 00:00", "2026-04-13 00:00")),
    ("what did we decide last week", ("2026-04-06 00:00", "2026-04-13 00:00")),
    ("this week", ("2026-04-13 00:00", "2026-04-20 00:00")),
    ("last month", ("2026-03-01 00:00", "2026-04-01 00:00")),
    ("last year", ("2025-01-01 00:00", "2026-01-01 00:00")),
    ("last weekend", ("2026-04-11 00:00", "2026-04-13 00:00")),
    ("where did we go in March", ("2026-03-01 00:00", "2026-04-01 00:00")),
    ("in May", ("2025-05-01 00:00", "2025-06-01 00:00")),  # the most recent May
    ("during march 2024", ("2024-03-01 00:00", "2024-04-01 00:00")),
    ("in 2025", ("2025-01-01 00:00", "2026-01-01 00:00")),
    ("since Monday", ("2026-04-13 00:00", "2026-04-15 10:00")),
    ("since Wednesday", ("2026-04-15 00:00", "2026-04-15 10:00")),  # today is Wednesday
    ("since last week", ("2026-04-06 00:00", "2026-04-15 10:00")),
    ("since March", ("2026-03-01 00:00", "2026-04-15 10:00")),
    ("since 2026-04-01", ("2026-04-01 00:00", "2026-04-15 10:00")),
    ("the past 3 days", ("2026-04-12 00:00", "2026-04-15 10:00")),
    ("last Friday", ("2026-04-10 00:00", "2026-04-11 00:00")),
    ("last Wednesday", ("2026-04-08 00:00", "2026-04-09 00:00")),
    ("on Monday", ("2026-04-13 00:00", "2026-04-14 00:00")),
    ("on 2026-04-12", ("2026-04-12 00:00", "2026-04-13 00:00")),
    ("12 April 2026", ("2026-04-12 00:00", "2026-04-13 00:00")),
    ("April 12, 2026", ("2026-04-12 00:00", "2026-04-13 00:00")),
])
def test_each_phrase_family(query: str, expected: tuple[str, str]) -> None:
    assert span(query, WEDNESDAY) == expected


def test_the_phrase_leaves_the_rest_of_the_query() -> None:
    found, rest = phrases.find("What did we decide last week?", local(WEDNESDAY), BERLIN)
    assert found is not None and found.phrase == "last week"
    assert rest == "What did we decide ?"


@pytest.mark.parametrize("query", [
    "may we use the tool?", "what is the plan", "chapter May 3", "in 1850 words", "the week was long",
    "before the launch",  # out of scope: needs to know the launch
])
def test_words_that_are_not_a_time_are_left_alone(query: str) -> None:
    assert phrases.find(query, local(WEDNESDAY), BERLIN) == (None, query)


def test_week_start_monday_or_sunday() -> None:
    sunday = "2026-04-19T12:00"
    assert span("this week", sunday) == ("2026-04-13 00:00", "2026-04-20 00:00")
    assert span("last week", sunday) == ("2026-04-06 00:00", "2026-04-13 00:00")
    assert span("this week", sunday, week_start=6) == ("2026-04-19 00:00", "2026-04-26 00:00")
    assert span("last week", sunday, week_start=6) == ("2026-04-12 00:00", "2026-04-19 00:00")
    monday = "2026-04-13T00:30"
    assert span("last week", monday) == ("2026-04-06 00:00", "2026-04-13 00:00")


def test_month_ends() -> None:
    assert span("last month", "2026-03-31T23:59") == ("2026-02-01 00:00", "2026-03-01 00:00")
    assert span("a month ago", "2026-03-31T12:00") == ("2026-02-01 00:00", "2026-03-01 00:00")
    assert span("2 months ago", "2026-03-31T12:00") == ("2026-01-01 00:00", "2026-02-01 00:00")
    assert span("last month", "2026-01-15T12:00") == ("2025-12-01 00:00", "2026-01-01 00:00")
    assert span("in February", "2024-03-01T00:10") == ("2024-02-01 00:00", "2024-03-01 00:00")
    assert span("yesterday", "2024-03-01T00:10") == ("2024-02-29 00:00", "2024-03-01 00:00")
    assert span("a year ago", "2024-02-29T12:00") == ("2023-01-01 00:00", "2024-01-01 00:00")
    assert phrases.find("on 2026-02-30", local(WEDNESDAY), BERLIN)[0] is None  # no such day


def test_dst_days_are_23_and_25_hours() -> None:
    spring = phrases.find("yesterday", local("2026-03-30T09:00"), BERLIN)[0]  # clocks went forward on the 29th
    assert spring is not None and spring.end - spring.start == 23 * 3600
    autumn = phrases.find("yesterday", local("2026-10-26T09:00"), BERLIN)[0]  # back on the 25th
    assert autumn is not None and autumn.end - autumn.start == 25 * 3600
    # The same instant is a different "yesterday" in another zone.
    instant = local("2026-04-15T02:00")  # 20:00 on the 14th in New York
    ny = phrases.find("yesterday", instant, NEW_YORK)[0]
    assert ny is not None and datetime.fromtimestamp(ny.start, NEW_YORK).date().isoformat() == "2026-04-13"
    week = phrases.find("last week", local("2026-04-01T12:00", NEW_YORK), NEW_YORK)[0]  # spans March 8 DST
    assert week is not None and datetime.fromtimestamp(week.start, NEW_YORK).hour == 0


def test_explicit_when_must_be_one_phrase() -> None:
    now = local(WEDNESDAY)
    assert phrases.parse("last week", now, BERLIN).start == local("2026-04-06T00:00")
    for bad in ("whenever", "last week and more", ""):
        with pytest.raises(ValidationError) as err:
            phrases.parse(bad, now, BERLIN)
        assert err.value.field == "when"


def test_a_stated_date_in_content_is_when_it_happened() -> None:
    assert stated_time("On 2026-04-12 the migration failed", BERLIN) == local("2026-04-12T00:00")
    assert stated_time("2026-03-01: moved to Berlin", BERLIN) == local("2026-03-01T00:00")
    assert stated_time("She has lived here since 3 March 2025.", BERLIN) == local("2025-03-03T00:00")
    assert stated_time("Released on April 2, 2024", BERLIN) == local("2024-04-02T00:00")
    assert stated_time("The deadline is 2026-05-01", BERLIN) is None  # a date, but not when it happened
    assert stated_time("on May 3 we shipped", BERLIN) is None  # no year


@pytest.mark.parametrize(("query", "expected"), [
    ("what did I say 2 hours ago", ("2026-04-15 08:00", "2026-04-15 09:00")),  # the clock hour, whole
    ("an hour ago", ("2026-04-15 09:00", "2026-04-15 10:00")),
    ("1 hour ago", ("2026-04-15 09:00", "2026-04-15 10:00")),
    ("90 minutes ago", ("2026-04-15 08:30", "2026-04-15 08:31")),  # the clock minute, whole
    ("half an hour ago", ("2026-04-15 09:30", "2026-04-15 09:31")),
    ("5 mins ago", ("2026-04-15 09:55", "2026-04-15 09:56")),
    ("the past 3 hours", ("2026-04-15 07:00", "2026-04-15 10:00")),
    ("in the last 10 minutes", ("2026-04-15 09:50", "2026-04-15 10:00")),
    ("since 2 hours ago", ("2026-04-15 08:00", "2026-04-15 10:00")),
])
def test_hours_and_minutes_are_clock_hours_and_minutes(query: str, expected: tuple[str, str]) -> None:
    assert span(query, WEDNESDAY) == expected


def test_hours_count_back_in_elapsed_time_and_in_the_zones_clock() -> None:
    # 03:30 CEST on the morning clocks went forward (02:00 CET -> 03:00 CEST): two real hours back is 00:30 CET.
    assert span("2 hours ago", "2026-03-29T03:30") == ("2026-03-29 00:00", "2026-03-29 01:00")
    kolkata = ZoneInfo("Asia/Kolkata")  # +05:30: its clock hours start at half past in UTC
    found = phrases.find("an hour ago", local("2026-04-15T10:10", kolkata), kolkata)[0]
    assert found is not None
    assert (found.start, found.end) == (local("2026-04-15T09:00", kolkata), local("2026-04-15T10:00", kolkata))
    assert datetime.fromtimestamp(found.start, ZoneInfo("UTC")).minute == 30
    assert phrases.parse("3 hours ago", local(WEDNESDAY), BERLIN).start == local("2026-04-15T07:00")
