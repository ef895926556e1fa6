"""Time-range post-filter: drop rows whose KNOWN date lies outside the requested window.

Engines apply a time range themselves (or are skipped when they cannot); this catches what slips through.
A row with an unknown or conflicting date is kept: absence of a date is not evidence of age.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from .base import FilterContext

if TYPE_CHECKING:
    from ..rankers.base import Candidate

# A "month" or "year" at an engine means the last calendar month or year; the longest one is the fair bound.
TIME_RANGE_SPAN = {
    "day": dt.timedelta(days=1),
    "week": dt.timedelta(days=7),
    "month": dt.timedelta(days=31),
    "year": dt.timedelta(days=366),
}


def _as_utc(value: dt.datetime) -> dt.datetime:
    # A naive timestamp from an engine carries no zone; UTC is the least surprising reading.
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


def outside_window(published: dt.datetime, ctx: FilterContext) -> str | None:
    req = ctx.request
    when = _as_utc(published)
    if req.time_range:
        oldest = _as_utc(ctx.now) - TIME_RANGE_SPAN[req.time_range]
        # Only the old side is enforced: a date in the future is a bad date, not an old page.
        if when < oldest:
            return f"published {when.date().isoformat()}, before the last {req.time_range}"
    day = when.date()
    if req.date_from and day < req.date_from:
        return f"published {day.isoformat()}, before {req.date_from.isoformat()}"
    if req.date_to and day > req.date_to:
        return f"published {day.isoformat()}, after {req.date_to.isoformat()}"
    return None


class TimeRangeFilter:
    name = "timerange"

    def check(self, candidate: Candidate, ctx: FilterContext) -> str | None:
        if candidate.published is None or candidate.date_status != "known":
            return None
        return outside_window(candidate.published, ctx)


TIMERANGE = TimeRangeFilter()
