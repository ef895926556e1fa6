"""Dates as engines print them: a result's published date, and the start of a relative time range."""

from __future__ import annotations

import datetime as dt
import email.utils
import re
from typing import Any

_RELATIVE = re.compile(
    r"^(?:(an?|\d+)\s+(second|minute|hour|day|week|month|year)s?\s+ago"
    r"|(today|just now)|(yesterday))$",
    re.IGNORECASE,
)
_UNIT_DAYS = {
    "second": 1 / 86400,
    "minute": 1 / 1440,
    "hour": 1 / 24,
    "day": 1,
    "week": 7,
    "month": 30,
    "year": 365,
}
_DATE_FORMATS = ("%B %d, %Y", "%b %d, %Y", "%d %B %Y", "%d %b %Y", "%b. %d, %Y")


def parse_published(value: Any, now: dt.datetime | None = None) -> dt.datetime | None:
    """An aware UTC datetime from an ISO date/time, "3 days ago", "yesterday" or "May 12, 2023"; else None."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    now = now or dt.datetime.now(dt.UTC)
    match = _RELATIVE.match(text)
    if match:
        count, unit, today, yesterday = match.groups()
        if today:
            return now
        if yesterday:
            return now - dt.timedelta(days=1)
        n = 1 if count.lower() in ("a", "an") else int(count)
        return now - dt.timedelta(days=n * _UNIT_DAYS[unit.lower()])
    try:
        parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        parsed = None
        for fmt in _DATE_FORMATS:
            try:
                parsed = dt.datetime.strptime(text, fmt)
                break
            except ValueError:
                continue
    if parsed is None:
        try:  # RFC 2822, as in "Tue, 12 Mar 2024 10:00:00 GMT"
            parsed = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=dt.UTC)
    return parsed.astimezone(dt.UTC)


_RANGE_DAYS = {"day": 1, "week": 7, "month": 31, "year": 366}


def range_start(time_range: str | None, today: dt.date) -> dt.date | None:
    """The first day a relative time range covers (an engine that only takes dates gets this)."""
    days = _RANGE_DAYS.get(time_range or "")
    return today - dt.timedelta(days=days) if days else None
