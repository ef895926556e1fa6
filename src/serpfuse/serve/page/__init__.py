"""The web page: serpfuse's answer for a person to read, at ``/`` and SearXNG's ``/search?q=...``.

Server-rendered (Jinja2 templates and one stylesheet, all shipped in this package: no JavaScript, no CDN).
Two views of one search: the fused results, each with its engine badges and one-line reason, and the explain
view, every candidate with its score parts and the step that cut it. Both show each engine's status, latency
and rows, and the form offers the time range and the engines. The API's guard (token, rate limit) sits in
front of the page as in front of every route; bad input is the same one-line message the API gives, shown
on the page with the API's status code.
"""

from __future__ import annotations

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

from serpfuse.models import ANSWERED, SearchResponse
from serpfuse.ranking.rankers import UnknownStrategy
from serpfuse.service import QueryTooLong, SearchService
from serpfuse.settings import validation_message
from serpfuse.sources.base import SourceError
from serpfuse.sources.fanout import UnknownEngine
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

_templates = Environment(
    loader=PackageLoader("serpfuse.serve.page", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)


def _many(values: list[str]) -> list[str]:
    """Repeated fields and comma lists alike: a form's ``engines=a&engines=b`` and SearXNG's ``engines=a,b``."""
    return [part.strip() for v in values for part in v.split(",") if part.strip()]


@dataclass
class Ask:
    """What the form asked for, as the page reads it from the URL (or a SearXNG-style POST form)."""

    query: str = ""
    time_range: str = ""
    engines: list[str] = field(default_factory=list)
    view: str = "results"

    @classmethod
    def read(cls, params: Any) -> Ask:
        view = params.get("view") or "results"
        return cls(
            query=" ".join((params.get("q") or "").split()),
            time_range=(params.get("time_range") or "").strip().lower(),
            engines=_many(params.getlist("engines")),
            view=view if view in VIEWS else "results",
        )

    def href(self, **change: Any) -> str:
        """This search's URL with ``change`` applied (view=..., engines=[...]), for links between views."""
        state = {"q": self.query, "time_range": self.time_range, "engines": self.engines, "view": self.view}
        state.update(change)
        pairs = [("q", state["q"])]
        if state["time_range"]:
            pairs.append(("time_range", state["time_range"]))
        pairs += [("engines", e) for e in state["engines"]]
        if state["view"] != "results":
            pairs.append(("view", state["view"]))
        return "/search?" + urlencode(pairs)


def cut_summary(resp: SearchResponse) -> list[tuple[str, int]]:
    """How many candidates each step cut, most first: the explain view's one-line overview."""
    counts = Counter(c.cut_by for c in resp.candidates or [] if not c.selected)
    return sorted(counts.items(), key=lambda t: (-t[1], t[0] or ""))


def ranks_text(ranks: Mapping[str, int]) -> list[tuple[str, int]]:
    return sorted(ranks.items(), key=lambda t: (t[1], t[0]))


class Page:
    """The page's handlers, bound to the service every interface shares."""

    def __init__(self, service: SearchService) -> None:
        self.service = service
        self.static = StaticFiles(packages=[("serpfuse.serve.page", "static")])

    async def engine_choices(self) -> list[tuple[str, str | None]]:
        """(engine, why it cannot run now or None): every engine is offered; one without a key says so."""
        health = await self.service.engine_status()
        return sorted((e.engine, None if e.available else e.reason or e.state) for e in health)

    async def render(self, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        html = _templates.get_template(template).render(
            time_ranges=TIME_RANGES,
            engine_choices=await self.engine_choices(),
            answered=ANSWERED,
            ranks_text=ranks_text,
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

    async def search(self, request: Request, params: Any) -> Response:
        ask = Ask.read(params)
        if not ask.query:
            return await self.render("home.html", ask=ask)
        try:
            search_request = self.service.make_request(
                query=ask.query, time_range=ask.time_range or None, engines=ask.engines or None
            )
            resp = await self.service.search(search_request, explain=ask.view == "explain", interface="page")
        except ValidationError as exc:
            return await self.render("search.html", 400, ask=ask, error=validation_message(exc))
        except (QueryTooLong, UnknownStrategy, UnknownEngine) as exc:
            return await self.render("search.html", 400, ask=ask, error=" ".join(str(exc).split()))
        except ReplayError as exc:
            return await self.render("search.html", 404, ask=ask, error=" ".join(str(exc).split()))
        except SourceError as exc:
            return await self.render("search.html", 503, ask=ask, error=" ".join(str(exc).split()))
        return await self.render(
            "search.html",
            ask=ask,
            resp=resp,
            cuts=cut_summary(resp),
            json_href="/search?" + urlencode([("q", ask.query), ("format", "json")]),
        )
