"""Dates as engines print them: a result's published date, and the start of a relative time range.

``parse_published`` reads English and ISO dates by hand (the most common ones, in microseconds), then numeric
dates whose order the digits themselves settle, then hands what is left to ``dateparser`` restricted to the
languages serpfuse is checked in (``DATE_LANGUAGES``): "3. März 2024", "il y a 2 jours", "hace 2 días",
"2024年3月5日", "3日前". What that last step finds is only kept when it has a day, a month and a year (or is
relative to now) and does not lie in the future: a bare "15" or "morgen" is no publication date.
"""

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
    """An aware UTC datetime from a date as engines print it, read relative to ``now`` when it says "... ago";
    None when it is no date, names no day, or lies in the future (see the module)."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    now = now or dt.datetime.now(dt.UTC)
    found = _english_or_iso(text, now)
    if found is not None:
        return found
    text = text.translate(
        _BIDI_MARKS
    )  # "11\u200f/06\u200f/2015": marks an Arabic page puts between the parts
    if _NUMERIC.match(text):
        found = _numeric(text)
    else:
        found = _other_language(text, now)
    return found if found is not None and found <= now + FUTURE_SLACK else None


def _english_or_iso(text: str, now: dt.datetime) -> dt.datetime | None:
    """ISO date/time, RFC 2822, "3 days ago", "yesterday", "May 12, 2023", "12 May 2023"; else None."""
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


# Numeric dates, read by hand: dateparser would read "01/02/2022" by the first language's order (month first),
# but only the page's country knows, so a date the digits cannot settle stays unread.
# \d is any script's digit, so "١٥/٠٦/٢٠٠٩" reads as 15/06/2009.
_NUMERIC = re.compile(r"^[\d\s./-]+$")
_BIDI_MARKS = dict.fromkeys(map(ord, "\u200e\u200f\u061c"))
# 2020-8-29, 2020/08/28, 2012. 12. 12.: the year first is always year-month-day.
_YEAR_FIRST = re.compile(r"^(\d{4})\s*[-/.]\s*(\d{1,2})\s*[-/.]\s*(\d{1,2})\.?$")
# 12.09.2021: dotted dates put the day first.
_DAY_DOT_MONTH = re.compile(r"^(\d{1,2})\.\s*(\d{1,2})\.\s*(\d{4})$")
# 13/12/2021 or 12/13/2021: whichever number exceeds 12 is the day.
_SLASHED = re.compile(r"^(\d{1,2})[/-](\d{1,2})[/-](\d{4})$")


def _numeric(text: str) -> dt.datetime | None:
    if match := _YEAR_FIRST.match(text):
        year, month, day = map(int, match.groups())
    elif match := _DAY_DOT_MONTH.match(text):
        day, month, year = map(int, match.groups())
    elif match := _SLASHED.match(text):
        first, second, year = map(int, match.groups())
        if first > 12 >= second:
            day, month = first, second
        elif second > 12 >= first or first == second:
            month, day = first, second
        else:
            return None  # 01/02/2022: January 2 or 1 February
    else:
        return None
    try:
        return dt.datetime(year, month, day, tzinfo=dt.UTC)
    except ValueError:
        return None


# The languages of the doctor's query set; a short list also keeps dateparser's language detection cheap.
DATE_LANGUAGES = ("en", "de", "fr", "es", "zh", "ja")
# Today's date where the clocks are furthest ahead (UTC+14), read as midnight UTC; later is a misreading
# ("morgen" is tomorrow, not a publication date).
FUTURE_SLACK = dt.timedelta(hours=14)
MAX_DATE_CHARS = 40  # a printed date is short; longer text is a sentence, not worth dateparser's time
# What may be a date in another language: a digit, a CJK character ("昨天"), or one short word ("gestern",
# "aujourd'hui"); other text costs dateparser ~2 ms to turn down.
_MAY_BE_DATE = re.compile(r"\d|[\u3040-\u30ff\u4e00-\u9fff]|^[\w']{3,12}$")
_DATEPARSER_SETTINGS = {
    "PREFER_DATES_FROM": "past",
    "REQUIRE_PARTS": ["day", "month", "year"],  # "March 2024" or a bare "15" is no publication date
    "PARSERS": ["relative-time", "absolute-time"],  # not "timestamp": "1700000000" is a number, not a date
    "TIMEZONE": "UTC",
    "TO_TIMEZONE": "UTC",
    "RETURN_AS_TIMEZONE_AWARE": True,
}


def _other_language(text: str, now: dt.datetime) -> dt.datetime | None:
    if len(text) > MAX_DATE_CHARS or not _MAY_BE_DATE.search(text):
        return None
    # Imported here: importing dateparser costs ~0.2 s, which a command that reads no dates should not pay.
    from dateparser.date import DateDataParser

    base = now.astimezone(dt.UTC).replace(tzinfo=None)  # dateparser reads a naive base in its TIMEZONE
    parser = DateDataParser(
        languages=list(DATE_LANGUAGES),
        try_previous_locales=False,  # each string read on its own, whatever was read before it
        settings={**_DATEPARSER_SETTINGS, "RELATIVE_BASE": base},
    )
    found = parser.get_date_data(text).date_obj
    return found.astimezone(dt.UTC) if found is not None else None


_RANGE_DAYS = {"day": 1, "week": 7, "month": 31, "year": 366}


def range_start(time_range: str | None, today: dt.date) -> dt.date | None:
    """The first day a relative time range covers (an engine that only takes dates gets this)."""
    days = _RANGE_DAYS.get(time_range or "")
    return today - dt.timedelta(days=days) if days else None


def leading_date(text: str, prefix: re.Pattern[str]) -> tuple[str, dt.datetime | None]:
    """(the snippet without its leading date, the date) when ``prefix`` (groups ``date`` and ``rest``) finds a
    date the parser reads at its start, else (text, None): the engines that stamp a snippet with its date."""
    match = prefix.match(text)
    published = parse_published(match.group("date")) if match else None
    if match is None or published is None:
        return text, None
    return match.group("rest").strip(), published
