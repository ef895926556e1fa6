"""The HTTP API (Starlette on uvicorn): serpfuse's own endpoints, and drop-ins for SearXNG, Tavily and
Firecrawl clients.

- ``GET|POST /v1/search``: the native request and response (``SearchRequest`` in, ``SearchResponse`` out).
- ``GET|POST /search?q=...&format=json``: SearXNG's JSON shape, so Open WebUI, LibreChat and every other
  SearXNG client work unchanged.
- ``POST /tavily/search``: Tavily's request body and response shape (a Tavily client with its base URL set to
  ``http://host:port/tavily`` works unchanged), including Tavily's 400 when time_range and dates are combined.
- ``POST /v2/search``: Firecrawl's v2 search (firecrawl-py 4.x ``Firecrawl(api_url=...).search``): web and
  news results, its ``scrapeOptions`` reading each result's page.
- ``POST /v1/read``, ``POST /tavily/extract``, ``POST /v1/scrape``, ``POST /v2/scrape``: the page reader,
  natively and in Tavily's and Firecrawl's (v1 and v2) shapes.
- ``/healthz``, ``/metrics`` (Prometheus text), ``/openapi.json``.
- ``/`` and ``/search?q=...`` without ``format``: the web page (``page/``), SearXNG's URL scheme;
  ``/opensearch.xml`` its OpenSearch description, so a browser can add it as a search engine.

Every request passes one guard (``guard.Guard``): the bearer token, a per-client token bucket and the body-size
limit. Bad input is always a 4xx with a one-line JSON error, never a 500. The shapes live beside this module:
``search_shapes`` for the search routes, ``read_shapes`` for the read routes.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import socket
import time
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.types import ASGIApp

from serpfuse.errors import SerpfuseError
from serpfuse.models import SearchRequest, SearchResponse
from serpfuse.serve import read_shapes, reply_shapes, search_shapes
from serpfuse.serve.errors import ApiError, error_response
from serpfuse.serve.guard import Guard
from serpfuse.serve.openapi import openapi_document
from serpfuse.serve.page import PageHandlers
from serpfuse.service import SearchService
from serpfuse.settings import validation_message
from serpfuse.state.metrics import CONTENT_TYPE
from serpfuse.validation import parse_json_object

if TYPE_CHECKING:
    from serpfuse.reader.service import Reader

log = logging.getLogger(__name__)

# path -> route label (metrics, error shape, which guard checks apply); anything else is "other".
ROUTES = {
    "/v1/search": "native",
    "/search": "searxng",
    "/tavily/search": "tavily",
    "/v1/read": "read",
    "/tavily/extract": "tavily",
    "/v1/scrape": "firecrawl",
    "/v2/scrape": "firecrawl",
    "/v2/search": "firecrawl",
    "/v1/context": "native",
    "/healthz": "healthz",
    "/metrics": "metrics",
    "/openapi.json": "openapi",
    "/": "page",
    "/opensearch.xml": "page",
}
RECENT_QUERIES = 1024  # GET /v1/search query strings remembered with the request they make
Handler = Callable[[Request], Awaitable[Response]]


async def read_json_object(request: Request, max_bytes: int) -> dict[str, Any]:
    """The JSON object body, read with a size cap (a chunked body has no Content-Length to check up front)."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise ApiError(413, f"request body is over the limit of {max_bytes} bytes")
        chunks.append(chunk)
    return parse_json_object(b"".join(chunks))  # InputError (a 400) for anything but a plain JSON object


def guarded(route: str, handler: Handler) -> Handler:
    """The handler with every expected failure turned into the route's one-line error, its status the error
    class's (``serpfuse.errors``: 400 the caller's input, 404 a recording's missing query, 503 no source)."""

    async def endpoint(request: Request) -> Response:
        try:
            return await handler(request)
        except ApiError as exc:
            return error_response(route, exc.http_status, exc.message, exc.headers)
        except ValidationError as exc:
            return error_response(route, 400, validation_message(exc))
        except SerpfuseError as exc:
            return error_response(route, exc.http_status, str(exc))
        except ClientDisconnect:  # gone before its body came: nobody hears this; the guard logs the drop
            return error_response(route, 400, "client disconnected")

    return endpoint


class Endpoints:
    """The routes' handlers, over one service (and one page reader, built on first use)."""

    def __init__(self, service: SearchService, reader: Reader | None = None) -> None:
        self.service = service
        self.settings = service.settings
        self.max_body = service.settings.max_body_bytes
        self.page = PageHandlers(service)
        self._reader = reader
        # A GET's query string -> the request it makes: a repeated query (a cache hit, mostly) is not parsed
        # and validated again. Only requests that passed validation are kept; nothing changes a request once made.
        self._parsed: dict[bytes, tuple[SearchRequest, bool, bool]] = {}
        self._openapi = openapi_document(self.settings)

    @functools.cached_property
    def reader(self) -> Reader:  # built on first use: the extractors are not imported until a page is read
        if self._reader is not None:
            return self._reader
        from serpfuse.reader.service import Reader

        return Reader.from_settings(self.settings, self.service.cache)

    async def body(self, request: Request) -> dict[str, Any]:
        return await read_json_object(request, self.max_body)

    async def _search(self, fields: dict[str, Any], *, interface: str) -> SearchResponse:
        request = self.service.make_request(**fields)
        return await self.service.search(request, explain=False, use_cache=True, interface=interface)

    def _known_engines(self, fields: dict[str, Any], named: list[str] | None) -> list[str] | None:
        """SearXNG ignores engine names it does not have, and its clients name SearXNG's engines: so do we."""
        if not named:
            return None
        known = {s.name for s in self.service.source.slots(self.service.make_request(**fields))}
        return [e for e in named if e in known] or None

    async def _native_request(self, request: Request) -> tuple[SearchRequest, bool, bool]:
        """The search request, explain and use_cache of a native GET or POST."""
        if request.method == "POST":
            fields, explain, use_cache = search_shapes.native_body_fields(await self.body(request))
        else:
            fields, explain, use_cache = search_shapes.native_query_fields(request.query_params)
        return self.service.make_request(**fields), explain, use_cache

    async def native_search(self, request: Request) -> Response:
        raw = request.scope["query_string"] if request.method == "GET" else None
        known = self._parsed.get(raw) if raw is not None else None
        if known is None:
            known = await self._native_request(request)
            if raw is not None:
                if len(self._parsed) >= RECENT_QUERIES:
                    del self._parsed[next(iter(self._parsed))]  # the oldest
                self._parsed[raw] = known
        search_request, explain, use_cache = known
        # The JSON as stored: a cache hit is sent without being decoded and encoded again.
        body = await self.service.search_json(
            search_request, explain=explain, use_cache=use_cache, interface="http"
        )
        return Response(body, media_type="application/json")

    async def searxng_search(self, request: Request) -> Response:
        params: Any = request.query_params
        if request.method == "POST":
            form = await request.form()
            params = form if form else params
        fmt = (params.get("format") or "html").lower()
        if fmt == "html":  # as on SearXNG: no format is the page a person reads
            return await self.page.search(request, params)
        if fmt != "json":
            raise ApiError(400, f"format {fmt!r} is not served; only format=json (or no format: the page)")
        page = search_shapes.searxng_page(params)
        fields = search_shapes.searxng_fields(params)
        fields["engines"] = self._known_engines(fields, search_shapes.many([params.get("engines") or ""]))
        shaped = reply_shapes.searxng_shape(await self._search(fields, interface="searxng"))
        if page > 1:  # one fused page: later pages are empty, which ends a client's paging
            shaped["results"], shaped["number_of_results"] = [], 0
        return JSONResponse(shaped)

    async def tavily_search(self, request: Request) -> Response:
        started = time.perf_counter()
        body = await self.body(request)
        resp = await self._search(search_shapes.tavily_request_fields(body), interface="tavily")
        shaped = reply_shapes.tavily_shape(resp, time.perf_counter() - started, body)
        raw = read_shapes.raw_content_format(body.get("include_raw_content"))
        if raw:  # the pages are read within what is left of the search deadline
            left = max(1.0, self.settings.deadline_s - (time.perf_counter() - started))
            await read_shapes.add_raw_content(self.reader, shaped["results"], raw, left)
            shaped["response_time"] = round(time.perf_counter() - started, 3)
        return JSONResponse(shaped)

    async def context(self, request: Request) -> Response:
        """The query's best passages across the shown pages under one budget (Brave's LLM Context, natively)."""
        fields, budget, per_page = search_shapes.context_fields(request.query_params)
        search_request = self.service.make_request(**fields)
        return JSONResponse(
            await self.service.context(search_request, budget, per_page=per_page, interface="http")
        )

    async def native_read(self, request: Request) -> Response:
        return JSONResponse(await read_shapes.native_read(self.reader, await self.body(request)))

    async def tavily_extract(self, request: Request) -> Response:
        return JSONResponse(await read_shapes.tavily_extract(self.reader, await self.body(request)))

    async def firecrawl_scrape(self, request: Request) -> Response:
        return JSONResponse(await read_shapes.firecrawl_scrape(self.reader, await self.body(request)))

    async def firecrawl_v2_scrape(self, request: Request) -> Response:
        return JSONResponse(await read_shapes.firecrawl_v2_scrape(self.reader, await self.body(request)))

    async def firecrawl_v2_search(self, request: Request) -> Response:
        started = time.perf_counter()
        body = await self.body(request)
        fields, sources, warnings = search_shapes.firecrawl_search_fields(body)
        options = body.get("scrapeOptions")
        if options is not None and not isinstance(options, dict):
            raise ApiError(400, "scrapeOptions must be an object")
        formats = (
            read_shapes.firecrawl_formats(options.get("formats"), objects=True) if options is not None else []
        )
        # web is the general category, news the news one: one search each, at once
        asked = [s for s in sources if s in search_shapes.FIRECRAWL_CATEGORIES]
        answers = await asyncio.gather(
            *(
                self._search(
                    {**fields, "category": search_shapes.FIRECRAWL_CATEGORIES[s]}, interface="firecrawl"
                )
                for s in asked
            )
        )
        shaped = reply_shapes.firecrawl_search_shape(
            dict(zip(asked, answers, strict=True)), sources, warnings
        )
        if formats and options is not None:  # the pages are read within what is left of the deadline
            left = max(1.0, self.settings.deadline_s - (time.perf_counter() - started))
            rows = [row for s in asked for row in shaped["data"][s]]
            highlights = read_shapes.highlights_query((options or {}).get("formats"), fields["query"])
            await read_shapes.add_firecrawl_documents(self.reader, rows, formats, left, query=highlights)
        return JSONResponse(shaped)

    async def healthz(self, request: Request) -> Response:
        ok = await self.service.ping()
        degraded = self.service.degraded()  # shared stores skipped now, this process serving from its own
        body: dict[str, Any] = {
            "status": "ok" if ok and not degraded else "degraded",
            "source": self.service.source.name,
            "cache": self.settings.cache_backend,
        }
        if self.settings.redis_url:
            body["redis"] = "ok" if ok else "unreachable"
        if degraded:
            body["degraded"] = degraded
        return JSONResponse(body, status_code=200 if ok else 503)

    async def metrics(self, request: Request) -> Response:
        return Response(self.service.metrics.render(), media_type=CONTENT_TYPE)

    async def openapi(self, request: Request) -> Response:
        return JSONResponse(self._openapi)


async def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    route = ROUTES.get(request.url.path, "other")
    return error_response(route, exc.status_code, str(exc.detail), getattr(exc, "headers", None))


async def crash(request: Request, exc: Exception) -> Response:
    if not isinstance(exc, ClientDisconnect):  # a client gone mid-body: the guard logs it in one line
        log.exception("unexpected error on %s", request.url.path)
    return error_response(ROUTES.get(request.url.path, "other"), 500, "internal error")


def api_route(path: str, handler: Handler, methods: list[str]) -> Route:
    """A route whose expected failures are its clients' one-line errors."""
    return Route(path, guarded(ROUTES[path], handler), methods=methods)


def create_app(service: SearchService, *, reader: Reader | None = None) -> ASGIApp:
    """The API over ``service``, behind the guard. ``reader`` reads pages (default: the deployment's own,
    from its settings)."""
    api = Endpoints(service, reader)
    if reader is not None:  # a search with passages reads through it too
        service.reader = reader

    @asynccontextmanager
    async def lifespan(app: Starlette):
        service.start()
        try:
            yield
        finally:
            await service.aclose()

    app = Starlette(
        routes=[
            api_route("/v1/search", api.native_search, ["GET", "POST"]),
            api_route("/search", api.searxng_search, ["GET", "POST"]),
            api_route("/tavily/search", api.tavily_search, ["POST"]),
            api_route("/v1/read", api.native_read, ["POST"]),
            api_route("/tavily/extract", api.tavily_extract, ["POST"]),
            api_route("/v1/scrape", api.firecrawl_scrape, ["POST"]),
            api_route("/v2/scrape", api.firecrawl_v2_scrape, ["POST"]),
            api_route("/v2/search", api.firecrawl_v2_search, ["POST"]),
            api_route("/v1/context", api.context, ["GET"]),
            Route("/healthz", api.healthz, methods=["GET"]),
            Route("/metrics", api.metrics, methods=["GET"]),
            Route("/openapi.json", api.openapi, methods=["GET"]),
            Route("/", api.page.home, methods=["GET", "POST"]),
            Route("/opensearch.xml", api.page.opensearch, methods=["GET"]),
            Mount("/static", api.page.static),
        ],
        exception_handlers={HTTPException: http_error, Exception: crash},
        lifespan=lifespan,
    )
    settings = service.settings
    # Shared as the cooldowns are (Redis, else serve --workers' state file): one bucket per client.
    client_buckets = service.stores.buckets(
        settings.rate_limit_per_min, settings.rate_limit_burst, prefix="client:"
    )
    return Guard(
        app, settings=settings, metrics=service.metrics, routes=ROUTES, client_buckets=client_buckets
    )


async def serve(
    service: SearchService,
    *,
    log_level: str = "warning",
    sock: socket.socket | None = None,
    reader: Reader | None = None,
) -> None:
    """Run the API on ``settings.host:port`` (or on ``sock``, already bound there) until stopped, as
    ``serpfuse serve`` runs it (``connections.serve_app``: the same connection bounds).

    Call ``settings.check_bind`` first."""
    from serpfuse.serve.connections import serve_app

    await serve_app(create_app(service, reader=reader), service.settings, log_level=log_level, sock=sock)
