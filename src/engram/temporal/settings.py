"""``[time]``: the zone and week that time phrases are read in."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class TimeSettings(BaseModel):
    # IANA zone name ("Europe/Berlin"); None reads phrases in the machine's local zone.
    zone: str | None = None
    week_start: Literal["monday", "sunday"] = "monday"
    # Read a time phrase in a recall query ("what did we decide last week") as a filter.
    read_queries: bool = True
