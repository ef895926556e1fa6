"""Evidence for search results: the shown rows' pages read at once, and the passages of each that answer the query.

``add_passages`` reads every shown row's page concurrently through the reader (its guard, robots.txt, size caps,
extraction and cache) within one time limit, and gives each row either its passages (``serpfuse.passages``: in
page order, with their offsets in the page's text, under the row's character budget) or ``passages: None`` with
the reason (``passagesStatus``) while the row keeps its engine snippet. A bot check or an empty JavaScript
shell is a reason, never content (``reader.blockers``). A page read also gives the row the page's own date
(htmldate, through the extraction): ``dateSource`` says whether the row's date is the page's or the engines',
``dateConflict`` that the two differ by more than ``DATE_SLACK``; a page dated outside the request's time range
is said in a warning.

``context`` is the same reading with one budget across the pages (``passages.across``): the query's best
passages over the shown pages, each with its URL.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from serpfuse.models import (
    DEFAULT_PASSAGE_CHARS,
    MIN_PASSAGE_CHARS,
    FusedResult,
    Passage,
    PassagesStatus,
    SearchRequest,
    SearchResponse,
)
from serpfuse.passages import PageText, across, markdown_headings, passages
from serpfuse.reader.fetch import FetchTooLarge, HttpStatusError
from serpfuse.reader.guard import Refused
from serpfuse.reader.models import (
    Challenge,
    JsShell,
    Page,
    PageOverBudget,
    ReadError,
    RobotsDisallowed,
    Unsupported,
)

if TYPE_CHECKING:
    from serpfuse.reader.service import Reader

BLOCKING_STATUSES = frozenset({401, 403, 407, 429, 451})
DATE_SLACK = dt.timedelta(days=2)  # a page's date and an engine's this far apart disagree
MAX_TEXT = 400_000  # characters of a page's text that are scored (a book's worth; the rest is not read)


class NotReadInTime(ReadError):
    def __init__(self) -> None:
        super().__init__("the page was not read before the deadline")


def status_of(exc: ReadError) -> PassagesStatus:
    """Why a page gave no passages, in one word."""
    from serpfuse.reader.extract import ExtractionError

    if isinstance(exc, Challenge):
        return "challenge"
    if isinstance(exc, JsShell):
        return "js_shell"
    if isinstance(exc, RobotsDisallowed):
        return "robots"
    if isinstance(exc, Refused) or (
        isinstance(exc, HttpStatusError) and exc.page_status in BLOCKING_STATUSES
    ):
        return "blocked"
    if isinstance(exc, FetchTooLarge | PageOverBudget):
        return "too_large"
    if isinstance(exc, Unsupported | ExtractionError):
        return "not_text"
    message = str(exc)
    if isinstance(exc, NotReadInTime) or "timed out" in message or "took longer" in message:
        return "timeout"
    return "error"


async def read_pages(
    reader: Reader,
    urls: Sequence[str],
    timeout_s: float,
    *,
    use_cache: bool = True,
    then: Callable[[Page], Any] | None = None,
) -> list[tuple[Page, Any] | ReadError]:
    """Every URL read at once; each answer is its page (with ``then(page)`` worked out in a thread as soon as
    that page is read, while the others are still on their way) or its error. A page not read (and worked on)
    within ``timeout_s`` is ``NotReadInTime``, never a hang."""

    async def one(url: str) -> tuple[Page, Any] | ReadError:
        try:
            page = await reader.read(url, use_cache=use_cache)
        except ReadError as exc:
            return exc
        return page, (await asyncio.to_thread(then, page) if then is not None else None)

    tasks = [asyncio.ensure_future(one(u)) for u in urls]
    if not tasks:
        return []
    done, pending = await asyncio.wait(tasks, timeout=max(0.0, timeout_s))
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    return [t.result() if t in done else NotReadInTime() for t in tasks]


def page_passages(page: Page, query: str, max_chars: int, *, explain: bool = False) -> list[Passage]:
    """The passages of a read page that answer ``query`` within ``max_chars``, in page order."""
    found = passages(page.text[:MAX_TEXT], query, max_chars, headings=markdown_headings(page.markdown))
    return [
        Passage(
            text=p.text,
            start=p.start,
            end=p.end,
            why=p.why if explain else None,
            heading=p.heading if explain else None,
        )
        for p in found
    ]


def page_date(page: Page) -> dt.datetime | None:
    if not page.date:
        return None
    try:
        day = dt.date.fromisoformat(page.date[:10])
    except ValueError:
        return None
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)


def _dated(row: FusedResult, page: Page | None) -> dict[str, Any]:
    """The row's date fields once its page is read (or not)."""
    own = page_date(page) if page is not None else None
    if own is None:
        return {"date_source": "engine" if row.published is not None else None}
    update: dict[str, Any] = {"published": own, "date_source": "page", "date_status": "known"}
    if row.published is not None:
        engine = row.published if row.published.tzinfo else row.published.replace(tzinfo=dt.UTC)
        update["date_conflict"] = abs(engine - own) > DATE_SLACK
    return update


def _outside(request: SearchRequest, when: dt.datetime) -> str | None:
    from serpfuse.ranking.filters.timerange import outside_window

    if not (request.time_range or request.date_from or request.date_to):
        return None
    return outside_window(when, SimpleNamespace(request=request, now=dt.datetime.now(dt.UTC)))  # type: ignore[arg-type]


async def add_passages(
    reader: Reader,
    response: SearchResponse,
    request: SearchRequest,
    timeout_s: float,
    *,
    explain: bool = False,
    use_cache: bool = True,
) -> SearchResponse:
    """``response`` with each shown row's passages (or why none), its page's date, and a warning for pages
    dated outside the request's time range. The response given is not changed."""
    rows = response.results
    budget = request.max_chars or DEFAULT_PASSAGE_CHARS

    def select(page: Page) -> list[Passage]:
        return page_passages(page, request.query, budget, explain=explain)

    pages = await read_pages(reader, [r.url for r in rows], timeout_s, use_cache=use_cache, then=select)
    out: list[FusedResult] = []
    outside: list[str] = []
    for row, got in zip(rows, pages, strict=True):
        if isinstance(got, ReadError):
            update: dict[str, Any] = {
                "passages": None,
                "passages_status": status_of(got),
                **_dated(row, None),
            }
        else:
            page, found = got
            update = {"passages": found, "passages_status": None, **_dated(row, page)}
            if update.get("date_source") == "page" and (why := _outside(request, update["published"])):
                outside.append(f"{row.url} ({why})")
        out.append(row.model_copy(update=update))
    warnings = list(response.warnings)
    if outside:
        warnings.append(
            f"{len(outside)} rows' pages carry their own date outside the time range: " + "; ".join(outside)
        )
    unread = sum(1 for r in out if r.passages is None)
    if unread:
        warnings.append(f"{unread} of {len(out)} pages gave no passages (each row's passagesStatus says why)")
    return response.model_copy(update={"results": out, "warnings": warnings})


async def context(
    reader: Reader,
    response: SearchResponse,
    max_chars: int,
    timeout_s: float,
    *,
    per_page: int | None = None,
    use_cache: bool = True,
) -> dict[str, Any]:
    """The query's best passages across the shown pages under one budget of ``max_chars``, at most ``per_page``
    from one page (default: twice its even share): the pages that gave some, in the list's order, each with its
    URL, title and passages (in page order); the pages that could not be read, with why."""
    rows = response.results
    pages = await read_pages(reader, [r.url for r in rows], timeout_s, use_cache=use_cache)
    texts, unread = [], []
    for row, got in zip(rows, pages, strict=True):
        if isinstance(got, ReadError):
            unread.append({"url": row.url, "status": status_of(got), "error": str(got)})
        else:
            page = got[0]
            texts.append(PageText(row.url, page.text[:MAX_TEXT], tuple(markdown_headings(page.markdown))))
    if per_page is None and texts:  # no one page takes the whole budget: twice its even share at most
        per_page = max(MIN_PASSAGE_CHARS, min(max_chars, 2 * max_chars // len(texts)))
    picked = await asyncio.to_thread(across, texts, response.query, max_chars, per_page=per_page)
    titles = {r.url: r.title for r in rows}
    grouped: dict[str, list[dict[str, Any]]] = {}
    for url, p in picked:
        grouped.setdefault(url, []).append({"text": p.text, "start": p.start, "end": p.end})
    return {
        "query": response.query,
        "maxChars": max_chars,
        "chars": sum(p.end - p.start for _, p in picked),
        "results": [
            {"url": url, "title": titles.get(url, ""), "passages": ps} for url, ps in grouped.items()
        ],
        "unread": unread,
    }
