"""The time a memory's own words say it happened: "On 2026-04-12 the migration failed".

Only a full date (with its year) read as *when* counts: one opening the content, or one after
"on", "since", "as of", "from" or "effective". "The deadline is 2026-05-01" names a date without
saying the fact began then, so it sets nothing. The date's midnight in the user's zone becomes the
memory's ``valid_from`` when none was given; an explicit value always wins (the engine decides).
"""

from __future__ import annotations

import re
from zoneinfo import ZoneInfo

from engram.temporal.phrases import DATE, midnight, read_date

_STATED = re.compile(r"(?:^\W*|\b(?:on|since|as of|from|effective)\s+)(?:" + DATE + r")\b", re.IGNORECASE)


def stated_time(content: str, zone: ZoneInfo) -> float | None:
    """Epoch seconds of the first date the content gives as when it happened, or None."""
    for match in _STATED.finditer(content.lower()):
        day = read_date(match)
        if day is not None:
            return midnight(day, zone)
    return None
