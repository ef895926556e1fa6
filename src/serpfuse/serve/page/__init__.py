"""The web page: serpfuse's answer for a person to read, at ``/`` and SearXNG's ``/search?q=...``.

Server-rendered (Jinja2 templates and one stylesheet, all shipped in this package: no JavaScript, no CDN).
Two views of one search: the fused results (a page of them; ``pageno`` the next rows of the same fused list),
each with its domain, date, engine badges, score and one-line reason, and the explain view, every candidate with
its score parts (and a legend saying what each means) and the step that cut it. Both show each engine's status,
latency and rows; the form offers the time range and the engines (a recording's: the ones it holds), folded
away. ``/opensearch.xml`` lets a browser add the page as a search engine. The API's guard (token, rate limit) sits in
front of the page as in front of every route; bad input is the same one-line message the API gives, shown
on the page with the API's status code.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, select_autoescape
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.staticfiles import StaticFiles

from serpfuse.errors import InputError, SerpfuseError
from serpfuse.models import ANSWERED, MAX_LIMIT, FusedResult, SearchResponse
from serpfuse.ranking.filters.timerange import snippet_date
from serpfuse.ranking.rankers.parts import legend, meaning
from serpfuse.service import SearchService, no_answer_hint
from serpfuse.settings import validation_message
from serpfuse.sources.replay import ReplayError

TIME_RANGES = ("day", "week", "month", "year")
VIEWS = ("results", "explain")
# No script, no third party: the page loads its stylesheet and icon from this server, and nothing else.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
        "base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
OPENSEARCH_TYPE = "application/opensearchdescription+xml"

_templates = Environment(
    loader=PackageLoader("serpfuse.serve.page", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)


def _many(values: list[str]) -> list[str]:
    """Repeated fields and comma lists alike: a form's ``engines=a&engines=b`` and SearXNG's ``engines=a,b``."""
    return [part.strip() for v in values for part in v.split(",") if part.strip()]


class BadPage(InputError):
    """A ``pageno`` the page cannot show: the one-line message, shown as a 400."""


@dataclass
class Ask:
    """What the form asked for, as the page reads it from the URL (or a SearXNG-style POST form)."""

    query: str = ""
    time_range: str = ""
    engines: list[str] = field(default_factory=list)
    view: str = "results"
    pageno: int = 1

    @classmethod
    def read(cls, params: Any) -> Ask:
        view = params.get("view") or "results"
        return cls(
            query=" ".join((params.get("q") or "").split()),
            time_range=(params.get("time_range") or "").strip().lower(),
            engines=_many(params.getlist("engines")),
            view=view if view in VIEWS else "results",
            pageno=_pageno(params.get("pageno")),
        )

    def href(self, **change: Any) -> str:
        """This search's URL with ``change`` applied (view=..., engines=[...], pageno=...), for links."""
        state: dict[str, Any] = {
            "q": self.query, "time_range": self.time_range, "engines": self.engines, "view": self.view,
            "pageno": self.pageno,
        }  # fmt: skip
        state.update(change)
        pairs = [("q", state["q"])]
        if state["time_range"]:
            pairs.append(("time_range", state["time_range"]))
        pairs += [("engines", e) for e in state["engines"]]
        if state["view"] != "results":
            pairs.append(("view", state["view"]))
        if state["pageno"] != 1:
            pairs.append(("pageno", str(state["pageno"])))
        return "/search?" + urlencode(pairs)

    def filters_text(self) -> str:
        """The folded filters' summary: what is chosen, so a closed fold still says it."""
        chosen = [f"past {self.time_range}" if self.time_range else "any time"]
        chosen.append(", ".join(self.engines) if self.engines else "every engine")
        return " · ".join(chosen)


def _pageno(raw: str | None) -> int:
    if raw is None or raw.strip() in ("", "1"):
        return 1
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise BadPage(f"pageno must be a whole number from 1, got {raw[:40]!r}")
    return value


@dataclass(frozen=True)
class Paging:
    """Which rows of the fused list one page shows: ``size`` a page, the list at most ``most`` long."""

    pageno: int
    size: int
    most: int

    @property
    def pages(self) -> int:
        return -(-self.most // self.size)

    @property
    def limit(self) -> int:  # the fused list is asked this long; the page shows its last ``size`` rows
        return min(self.most, self.pageno * self.size)

    @property
    def first(self) -> int:  # zero-based index of the page's first row
        return (self.pageno - 1) * self.size

    def check(self) -> None:
        if self.pageno > self.pages:
            raise BadPage(
                f"pageno {self.pageno} is past the fused list: it is at most {self.most} rows, "
                f"{self.size} a page, so pageno 1 to {self.pages}"
            )

    def has_next(self, rows: int) -> bool:
        """The list filled this page and may go on."""
        return self.pageno < self.pages and rows >= self.limit


def cut_summary(resp: SearchResponse) -> list[tuple[str | None, int]]:
    """How many candidates each step cut, most first: the explain view's one-line overview."""
    counts = Counter(c.cut_by for c in resp.candidates or [] if not c.selected)
    return sorted(counts.items(), key=lambda t: (-t[1], t[0] or ""))


def ranks_text(ranks: Mapping[str, int]) -> list[tuple[str, int]]:
    return sorted(ranks.items(), key=lambda t: (t[1], t[0]))


def row_date(row: FusedResult, now: dt.datetime) -> tuple[dt.date, str] | None:
    """A row's date and where it comes from: the engines' date, else the date stamped in its snippet."""
    if row.published is not None:
        return row.published.date(), "the engines' date"
    stamped = snippet_date(row.snippet, now)
    return (stamped.date(), "the date in the snippet") if stamped is not None else None


def parts_legend(resp: SearchResponse) -> list[tuple[str, str]]:
    """What each part the explain view shows means (it shows the parts that are not zero)."""
    return legend(part for c in resp.candidates or [] for part, value in c.score_parts.items() if value)


class PageHandlers:
    """The page's handlers, bound to the service every interface shares."""

    def __init__(self, service: SearchService) -> None:
        self.service = service
        self.static = StaticFiles(packages=[("serpfuse.serve.page", "static")])

    async def engine_choices(self, query: str = "") -> list[tuple[str, str | None]]:
        """(engine, why it cannot run now or None): every engine this search could ask (a recording: the ones
        it holds for the query); one without a key says so."""
        health = await self.service.engine_status()
        offered = set(self.service.engine_names(query or None))
        return sorted(
            (e.engine, None if e.available else e.reason or e.state) for e in health if e.engine in offered
        )

    async def render(self, template: str, status: int = 200, *, ask: Ask, **context: Any) -> HTMLResponse:
        html = _templates.get_template(template).render(
            time_ranges=TIME_RANGES,
            engine_choices=await self.engine_choices(ask.query),
            answered=ANSWERED,
            ranks_text=ranks_text,
            meaning=meaning,
            ask=ask,
            **context,
        )
        return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)

    async def home(self, request: Request) -> Response:
        # SearXNG answers its root with a query by sending the client on to /search: clients given the root
        # URL (LangChain's SearxSearchWrapper, Open WebUI) follow the redirect and get the JSON they asked for.
        # A form POSTed to the root goes on the same way: 308 keeps the method and the body.
        form = await request.form() if request.method == "POST" else {}
        if request.query_params.get("q") or form.get("q"):
            query = "?" + request.url.query if request.url.query else ""
            return RedirectResponse("/search" + query, status_code=308)
        return await self.render("home.html", ask=Ask())

    async def opensearch(self, request: Request) -> Response:
        """The OpenSearch description a browser reads to add serpfuse as a search engine, at this server's URL."""
        base = str(request.base_url).rstrip("/")
        xml = _templates.get_template("opensearch.xml").render(base=base)
        return Response(xml, media_type=OPENSEARCH_TYPE, headers={"X-Content-Type-Options": "nosniff"})

    async def search(self, request: Request, params: Any) -> Response:
        try:
            ask = Ask.read(params)
        except BadPage as exc:
            ask = Ask(query=" ".join((params.get("q") or "").split()))
            return await self.render("search.html", 400, ask=ask, error=str(exc))
        if not ask.query:
            return await self.render("home.html", ask=ask)
        paging = Paging(ask.pageno, self.service.settings.limit, MAX_LIMIT)
        try:
            paging.check()
            search_request = self.service.make_request(
                query=ask.query,
                time_range=ask.time_range or None,
                engines=ask.engines or None,
                limit=paging.limit,
            )
            resp = await self.service.search(search_request, explain=ask.view == "explain", interface="page")
        except ValidationError as exc:
            return await self.render("search.html", 400, ask=ask, error=validation_message(exc))
        except ReplayError as exc:  # the page lists the queries the recording holds
            recorded = self.service.recorded_queries()
            return await self.render(
                "search.html", exc.http_status, ask=ask, error=" ".join(str(exc).split()), recorded=recorded
            )
        except SerpfuseError as exc:  # the status is the error class's (serpfuse.errors)
            return await self.render(
                "search.html", exc.http_status, ask=ask, error=" ".join(str(exc).split())
            )
        now = dt.datetime.now(dt.UTC)
        rows = resp.results[paging.first :]
        return await self.render(
            "search.html",
            ask=ask,
            resp=resp,
            rows=[(paging.first + i + 1, r, row_date(r, now)) for i, r in enumerate(rows)],
            paging=paging,
            has_next=paging.has_next(len(resp.results)),
            hint=no_answer_hint(resp),
            cuts=cut_summary(resp),
            legend=parts_legend(resp),
            json_href=ask.href(view="results", pageno=1) + "&format=json",
        )
