"""Time-range post-filter: drop rows whose date lies outside the requested window.

Engines apply a time range themselves (or are skipped when they cannot); this catches what slips through.
A row's date is the engines' date, else a date stamp at the start of its snippet ("Mar 15, 2024 · ...",
"3 days ago — ..."), as Google and Bing print them. A row with neither is kept (absence of a date is not
evidence of age) and the response marks it as undated (``undated``), so an answer never passes off an
unchecked row as checked.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import TYPE_CHECKING

from serpfuse.engines.dates import parse_published
from serpfuse.ranking.context import FilterContext
from serpfuse.ranking.words import DATE_STAMP

if TYPE_CHECKING:
    from serpfuse.ranking.types import Candidate

# A "month" or "year" at an engine means the last calendar month or year; the longest one is the fair bound.
TIME_RANGE_SPAN = {
    "day": dt.timedelta(days=1),
    "week": dt.timedelta(days=7),
    "month": dt.timedelta(days=31),
    "year": dt.timedelta(days=366),
}


def snippet_date(snippet: str, now: dt.datetime) -> dt.datetime | None:
    """The date stamped at the start of a snippet, read relative to ``now`` when it says "... ago"."""
    match = DATE_STAMP.match(snippet)
    return parse_published(match["date"], now) if match else None


def row_date(candidate: Candidate, now: dt.datetime) -> dt.datetime | None:
    """The engines' date when they agree on one, else the first snippet's date stamp; None when undated."""
    if candidate.date_status == "known" and candidate.published is not None:
        return candidate.published
    if candidate.date_status == "conflicting":
        return None  # engines disagree: a snippet stamp would only pick a side
    for obs in candidate.observations:
        if (when := snippet_date(obs.snippet, now)) is not None:
            return when
    return None


def asks_for_dates(ctx: FilterContext) -> bool:
    req = ctx.request
    return bool(req.time_range or req.date_from or req.date_to)


def undated(candidates: Iterable[Candidate], ctx: FilterContext) -> list[Candidate]:
    """The candidates a date window could not be checked on (none when no window was asked for)."""
    if not asks_for_dates(ctx):
        return []
    return [c for c in candidates if row_date(c, ctx.now) is None]


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

    def idle(self, ctx: FilterContext) -> bool:
        return not asks_for_dates(ctx)

    def check(self, candidate: Candidate, ctx: FilterContext) -> str | None:
        if not asks_for_dates(ctx):
            return None
        when = row_date(candidate, ctx.now)
        return outside_window(when, ctx) if when is not None else None


TIMERANGE = TimeRangeFilter()
