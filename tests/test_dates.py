"""Published dates as engines print them (``engines.dates``): English and ISO by hand, numeric dates only where
the digits settle the order, the doctor's other languages through dateparser, and never a future date."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from serpfuse.engines import get_engine
from serpfuse.engines.base import EngineQuery
from serpfuse.engines.dates import parse_published

NOW = dt.datetime(2024, 6, 15, 12, tzinfo=dt.UTC)
DATA = Path(os.environ.get("SERPFUSE_DATA", "/work/shared/data"))


def day(year: int, month: int, date: int) -> dt.datetime:
    return dt.datetime(year, month, date, tzinfo=dt.UTC)


def ago(**delta: float) -> dt.datetime:
    return NOW - dt.timedelta(**delta)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3. März 2024", day(2024, 3, 3)),
        ("12. Januar 2023", day(2023, 1, 12)),
        ("vor 3 Tagen", ago(days=3)),
        ("vor 2 Stunden", ago(hours=2)),
        ("gestern", ago(days=1)),
        ("12 janv. 2023", day(2023, 1, 12)),
        ("15 août 2023", day(2023, 8, 15)),
        ("il y a 2 jours", ago(days=2)),
        ("hier", ago(days=1)),
        ("hace 2 días", ago(days=2)),
        ("3 de marzo de 2024", day(2024, 3, 3)),
        ("12 ene 2023", day(2023, 1, 12)),
        ("ayer", ago(days=1)),
        ("2024年3月5日", day(2024, 3, 5)),
        ("3天前", ago(days=3)),
        ("5小时前", ago(hours=5)),
        ("昨天", ago(days=1)),
        ("3日前", ago(days=3)),
        ("2 時間前", ago(hours=2)),
        ("昨日", ago(days=1)),
    ],
)
def test_reads_the_doctors_other_languages(text: str, expected: dt.datetime) -> None:
    assert parse_published(text, NOW) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2020-8-29", day(2020, 8, 29)),  # year first: always year-month-day
        ("2021/08/19", day(2021, 8, 19)),
        ("2012. 12. 12.", day(2012, 12, 12)),
        ("12.09.2021", day(2021, 9, 12)),  # dotted: day first (dateparser's English order would say December)
        ("13/12/2021", day(2021, 12, 13)),  # the number over 12 is the day
        ("12/13/2021", day(2021, 12, 13)),
        ("04/04/2016", day(2016, 4, 4)),
        ("١٥\u200f/٠٦\u200f/٢٠٠٩", day(2009, 6, 15)),  # Arabic-Indic digits and bidi marks, as an Arabic page
    ],
)
def test_numeric_dates_whose_order_the_digits_settle(text: str, expected: dt.datetime) -> None:
    assert parse_published(text, NOW) == expected


@pytest.mark.parametrize(
    "text",
    [
        "01/02/2022",  # January 2 or 1 February: only the page's country knows
        "11\u200f/06\u200f/2015",
        "15",  # a bare number is no date: never the 15th of some month
        "2024",
        "1700000000",  # nor a Unix timestamp
        "März 2024",  # no day
        "2024年3月",
        "morgen",  # tomorrow, in any language, is no publication date
        "demain",
        "mañana",
        "明天",
        "in 3 days",
        "next week",
        "Items 1 - 15 of 60",
        "Rating 4.9(750)",
        "Python",
        "31.02.2024",  # no such day
    ],
)
def test_what_is_no_publication_date_stays_unread(text: str) -> None:
    assert parse_published(text, NOW) is None


def test_english_and_iso_keep_their_hand_reading() -> None:
    # Read before dateparser is asked, as before it was: "1 month ago" is 30 days (dateparser: a calendar month).
    assert parse_published("1 month ago", NOW) == ago(days=30)
    assert parse_published("Sept 9, 2023", NOW) == day(2023, 9, 9)
    assert parse_published("Tue, 12 Mar 2024 10:00:00 GMT", NOW) == dt.datetime(
        2024, 3, 12, 10, tzinfo=dt.UTC
    )


@pytest.mark.skipif(not (DATA / "api-json").is_dir(), reason="captured API answers not available")
def test_every_date_in_the_captured_api_answers_reads() -> None:
    dates = []
    for name, fields in (
        ("brave.json", ("age", "page_age")),
        ("bing.json", ("datePublished", "dateLastCrawled")),
    ):

        def walk(node: object) -> None:
            if isinstance(node, dict):
                dates.extend(v for k, v in node.items() if k in fields and isinstance(v, str))  # noqa: B023
                for v in node.values():
                    walk(v)
            elif isinstance(node, list):
                for v in node:
                    walk(v)

        walk(json.loads((DATA / "api-json" / name).read_text()))
    assert len(dates) >= 50
    assert all(parse_published(d, NOW) is not None for d in dates), [
        d for d in dates if parse_published(d, NOW) is None
    ]


def test_bing_reads_a_german_date_stamp() -> None:
    body = (
        b'<html><body><ol id="b_results"><li class="b_algo"><h2><a href="https://www.bahn.de/fahrgastrechte">'
        b'Fahrgastrechte</a></h2><div class="b_caption"><p><span class="news_dt">3. M\xc3\xa4rz 2024</span>'
        b"&nbsp;&#0183; Entsch\xc3\xa4digung bei Versp\xc3\xa4tung.</p></div></li></ol></body></html>"
    )
    q = EngineQuery(text="deutsche bahn fahrgastrechte", language="de")
    [row] = get_engine("bing").parse(200, {"content-type": "text/html; charset=utf-8"}, body, q)
    assert row.published == day(2024, 3, 3)
    assert row.snippet == "Entschädigung bei Verspätung."


def test_dateparser_is_imported_only_for_a_date_english_cannot_read() -> None:
    # Importing it costs ~0.2 s: not for the CLI's start, nor for the English and ISO dates most engines print.
    probe = (
        "import sys\n"
        "import serpfuse.cli, serpfuse.engines.bing\n"
        "from serpfuse.engines.dates import parse_published\n"
        "parse_published('3 days ago'); parse_published('2024-03-05T10:00:00Z'); parse_published('12/13/2021')\n"
        "assert 'dateparser' not in sys.modules\n"
        "parse_published('vor 3 Tagen')\n"
        "assert 'dateparser' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True, env={**os.environ})
