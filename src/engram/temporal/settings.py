"""``[time]``: the zone and week that time phrases are read in."""

from __future__ import annotations

from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import field_validator

from engram import jsondoc
from engram.settings_section import SettingsSection


class TimeSettings(SettingsSection):
    # IANA zone name ("Europe/Berlin"); None reads phrases in the machine's local zone.
    zone: str | None = None
    week_start: Literal["monday", "sunday"] = "monday"
    # Read a time phrase in a recall query ("what did we decide last week") as a filter.
    read_queries: bool = True

    @field_validator("zone")
    @classmethod
    def _known_zone(cls, value: str | None) -> str | None:
        # Checked as the settings are read, so the refusal names where the zone was set (the
        # variable or the config file) as every other setting's does; the time reader, built
        # later, could only name the setting.
        if value is not None:
            try:
                ZoneInfo(value)
            except (ZoneInfoNotFoundError, ValueError):
                raise ValueError(f"unknown time zone {jsondoc.shown(value)} (allowed: an IANA name such as "
                                 "Europe/Berlin)") from None
        return value
