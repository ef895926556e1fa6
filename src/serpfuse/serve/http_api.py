"""The HTTP API (Starlette on uvicorn): serpfuse's own endpoint, and drop-ins for SearXNG and Tavily clients.

- ``GET|POST /v1/search``: the native request and response (``SearchRequest`` in, ``SearchResponse`` out).
- ``GET|POST /search?q=...&format=json``: SearXNG's JSON shape, so Open WebUI, LibreChat and every other
  SearXNG client work unchanged.
- ``POST /tavily/search``: Tavily's request body and response shape (a Tavily client with its base URL set to
  ``http://host:port/tavily`` works unchanged), including Tavily's 400 when time_range and dates are combined.
- ``/healthz``, ``/metrics`` (Prometheus text), ``/openapi.json``.
- ``/`` and ``/search?q=...`` without ``format``: the web page (``page/``), SearXNG's URL scheme.

Every request passes one guard: the bearer token (when ``SERPFUSE_API_TOKEN`` is set; required to listen beyond
loopback), a per-client token bucket (429 with Retry-After) and the body-size limit (413). Bad input is always a
4xx with a JSON error, never a 500.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import hmac
import logging
import math
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlparse

from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from serpfuse.models import ANSWERED, MAX_LIMIT, MAX_QUERY_CHARS, FusedResult, SearchRequest, SearchResponse
from serpfuse.ranking.rankers import UnknownStrategy
from serpfuse.reader.models import ReadError
from serpfuse.serve import read_shapes
from serpfuse.serve.metrics import CONTENT_TYPE
from serpfuse.serve.page import Page
from serpfuse.service import QueryTooLong, SearchService
from serpfuse.settings import Settings, validation_message
from serpfuse.sources.base import SourceError
from serpfuse.sources.fanout import UnknownEngine
from serpfuse.sources.replay import ReplayError
from serpfuse.state.ratelimit import Buckets, TokenBuckets
from serpfuse.validation import (
    LOCALE_MAX_CHARS,
    InputError,
    bounded_int,
    parse_json_object,
    reject_unknown_keys,
)

log = logging.getLogger(__name__)

# path -> route label (metrics, error shape); anything else is "other".
ROUTES = {
    "/v1/search": "native",
    "/search": "searxng",
    "/tavily/search": "tavily",
    "/v1/read": "read",
    "/tavily/extract": "tavily",
    "/v1/scrape": "firecrawl",
    "/healthz": "healthz",
    "/metrics": "metrics",
    "/openapi.json": "openapi",
    "/": "page",
}
OPEN_ROUTES = {"healthz"}  # probes need no token; they reveal nothing
UNLIMITED_ROUTES = {"healthz", "metrics"}  # probes and scrapers are not rate limited
TAVILY_DATES_MESSAGE = "When time_range is set, start_date or end_date cannot be set"
TAVILY_TIME_RANGES = {"day": "day", "week": "week", "month": "month", "year": "year"}
TAVILY_TIME_RANGES.update({"d": "day", "w": "week", "m": "month", "y": "year"})
Clock = Callable[[], float]
RECENT_QUERIES = 1024  # GET /v1/search query strings remembered with the request they make


class ApiError(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = " ".join(message.split())
        self.headers = headers or {}


def error_body(route: str, status: int, message: str) -> dict[str, Any]:
    if route == "tavily":  # Tavily's own error shape, which its clients read
        return {"detail": {"error": message}}
    if route == "firecrawl":  # Firecrawl's
        return {"success": False, "error": message}
    return {"error": {"status": status, "message": message}}


def error_response(
    route: str, status: int, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(error_body(route, status, message), status_code=status, headers=headers)


# --- the guard: token, rate limit, body size, metrics -------------------------------------------------------


def _header(scope: Scope, name: bytes) -> str | None:
    """The first value of a request header (ASGI names are lower-case bytes)."""
    return next((v.decode("latin-1") for n, v in scope.get("headers", []) if n == name), None)


def _bearer(scope: Scope) -> str | None:
    text = (_header(scope, b"authorization") or "").strip()
    return text[7:].strip() if text[:7].lower() == "bearer " else None


def _same(presented: str | None, token: str) -> bool:
    return presented is not None and hmac.compare_digest(presented.encode(), token.encode())


def _content_length(scope: Scope) -> int | None:
    try:
        return int(_header(scope, b"content-length") or "")
    except ValueError:
        return None


class Guard:
    """ASGI middleware in front of every route.

    A wrong token spends from the caller's address bucket before the 401, so guessing tokens is rate limited
    like anything else (even where requests are not: the MCP endpoint). The body limit holds for every body,
    chunked or form, because it is counted as the body is received, not read from Content-Length.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        settings: Settings,
        metrics: Any,
        limit_rate: bool = True,
        routes: dict[str, str] | None = None,
        client_buckets: Buckets | None = None,
    ) -> None:
        self.app = app
        self.limit_rate = limit_rate
        self.routes = ROUTES if routes is None else routes
        self.token = settings.token()
        self.max_body = settings.max_body_bytes
        self.metrics = metrics
        self.buckets = client_buckets or TokenBuckets(
            settings.rate_limit_per_min / 60.0, settings.rate_limit_burst
        )

    def _client(self, scope: Scope, presented: str | None) -> str:
        if presented:  # a token names its holder better than an address behind a proxy does
            return "token:" + hashlib.sha256(presented.encode()).hexdigest()[:16]
        client = scope.get("client")
        return "ip:" + (client[0] if client else "unknown")

    async def _limited(self, client: str) -> ApiError | None:
        wait_s = await self.buckets.take(client)
        if wait_s <= 0:
            return None
        retry = max(1, math.ceil(wait_s))
        return ApiError(429, f"rate limit exceeded; retry in {retry} s", {"Retry-After": str(retry)})

    async def check(self, scope: Scope, route: str) -> ApiError | None:
        presented = _bearer(scope)
        if self.token and route not in OPEN_ROUTES and not _same(presented, self.token):
            if (limited := await self._limited(self._client(scope, None))) is not None:
                return limited
            message = "missing or wrong bearer token (send 'Authorization: Bearer <token>')"
            return ApiError(401, message, {"WWW-Authenticate": 'Bearer realm="serpfuse"'})
        if self.limit_rate and route not in UNLIMITED_ROUTES:
            limited = await self._limited(self._client(scope, presented if self.token else None))
            if limited is not None:
                return limited
        length = _content_length(scope)
        if length is not None and length > self.max_body:
            return ApiError(413, f"request body is {length} bytes; the limit is {self.max_body}")
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        route = self.routes.get(scope["path"], "other")
        started = time.perf_counter()
        status = [500]
        responded = [False]

        async def send_and_note(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0], responded[0] = message["status"], True
            await send(message)

        received = [0]

        async def receive_counted() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                received[0] += len(message.get("body", b""))
                if received[0] > self.max_body:
                    raise ApiError(413, f"request body is over the limit of {self.max_body} bytes")
            return message

        try:
            problem = await self.check(scope, route)
            if problem is not None:
                response = error_response(route, problem.status, problem.message, problem.headers)
                await response(scope, receive, send_and_note)
            else:
                try:
                    await self.app(scope, receive_counted, send_and_note)
                except ApiError as exc:  # the body limit, raised through an app that is not ours (MCP)
                    if responded[0]:
                        raise
                    await error_response(route, exc.status, exc.message)(scope, receive, send_and_note)
        finally:
            self.metrics.observe_request(route, status[0], time.perf_counter() - started)


# --- reading requests --------------------------------------------------------------------------------------


async def read_json_object(request: Request, max_bytes: int) -> dict[str, Any]:
    """The JSON object body, read with a size cap (a chunked body has no Content-Length to check up front)."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise ApiError(413, f"request body is over the limit of {max_bytes} bytes")
        chunks.append(chunk)
    return parse_json_object(b"".join(chunks))  # InputError (a 400) for anything but a plain JSON object


def _flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def _many(values: list[str]) -> list[str] | None:
    """Repeated parameters and comma lists, both: ``engines=a,b&engines=c`` -> [a, b, c]."""
    out = [part.strip() for v in values for part in v.split(",") if part.strip()]
    return out or None


# --- response shapes ---------------------------------------------------------------------------------------


def _engines_by_rank(r: FusedResult) -> list[str]:
    return sorted(r.engine_ranks, key=lambda e: (r.engine_ranks[e], e)) or list(r.engines)


def searxng_shape(resp: SearchResponse) -> dict[str, Any]:
    """The response as SearXNG's ``/search?format=json`` shapes it (results, answers, ... unresponsive_engines)."""
    results = []
    previous = math.inf
    for r in resp.results:
        engines = _engines_by_rank(r)
        # SearXNG lists results by descending score and clients re-sort on it (Open WebUI does), so the
        # score is kept non-increasing down the list, or a re-sort would undo serpfuse's diversity order.
        score = min(r.score, previous)
        previous = score
        results.append(
            {
                "url": r.url,
                "title": r.title,
                "content": r.snippet,
                "engine": engines[0] if engines else "",
                "engines": engines,
                "positions": [r.engine_ranks.get(e, 0) for e in engines],
                "score": float(score),
                "category": "general",
                "template": "default.html",
                "publishedDate": r.published.isoformat() if r.published else None,
                "parsed_url": list(urlparse(r.url)),
                "priority": "",
            }
        )
    return {
        "query": resp.query,
        "number_of_results": len(results),
        "results": results,
        "answers": [],
        "corrections": [],
        "infoboxes": [],
        "suggestions": [],
        "unresponsive_engines": [
            [e.engine, f"{e.status}: {e.reason}" if e.reason else e.status]
            for e in resp.engines
            if e.status not in ANSWERED
        ],
    }


# What serpfuse does whatever a Tavily client asks for: answered when a client sets auto_parameters.
TAVILY_APPLIED = {"topic": "general", "search_depth": "basic"}


def favicon_url(url: str) -> str:
    """The site's conventional favicon address (not fetched: serpfuse never visits result pages here)."""
    parts = urlparse(url)
    return f"{parts.scheme}://{parts.netloc}/favicon.ico"


def tavily_shape(resp: SearchResponse, seconds: float, body: dict[str, Any] | None = None) -> dict[str, Any]:
    """Tavily's response: scores scaled to 0-1 (the top result is 1), no answer, no images.

    The optional parts come back when the request asks for them, as on Tavily: ``favicon`` per result
    (include_favicon), ``usage`` (include_usage; serpfuse spends no Tavily credits) and ``auto_parameters``
    (the topic and depth serpfuse searched with)."""
    body = body or {}
    top = max((r.score for r in resp.results), default=0.0)
    results = []
    for r in resp.results:
        row: dict[str, Any] = {
            "title": r.title,
            "url": r.url,
            "content": r.snippet,
            "score": round(min(1.0, max(0.0, r.score / top)) if top > 0 else 0.0, 6),
            "raw_content": None,
        }
        if r.published:
            row["published_date"] = r.published.isoformat()
        if _flag(body.get("include_favicon", False)):
            row["favicon"] = favicon_url(r.url)
        results.append(row)
    extras: dict[str, Any] = {}
    if _flag(body.get("auto_parameters", False)):
        extras["auto_parameters"] = dict(TAVILY_APPLIED)
    if _flag(body.get("include_usage", False)):
        extras["usage"] = {"credits": 0}
    return {
        "query": resp.query,
        "answer": None,
        "images": [],
        "follow_up_questions": None,
        "results": results,
        "response_time": round(seconds, 3),
        "request_id": str(uuid.uuid4()),
        **extras,
    }


# Tavily's documented search options: accepted (the ones without a serpfuse meaning are ignored, as a Tavily
# client sends them by default); any other key is refused by name.
TAVILY_KEYS = frozenset(
    {
        "query", "max_results", "time_range", "start_date", "end_date", "days", "include_domains",
        "exclude_domains", "search_depth", "topic", "chunks_per_source", "include_answer", "include_raw_content",
        "include_images", "include_image_descriptions", "include_favicon", "country", "auto_parameters",
        "api_key", "include_usage", "timeout",
    }
)  # fmt: skip
MAX_TAVILY_DAYS = 36_500  # a century back: anything more is not a date range


def tavily_request_fields(body: dict[str, Any]) -> dict[str, Any]:
    """Tavily's body -> our request fields. Tavily's own options are accepted; an unknown key is a 400."""
    reject_unknown_keys(body, TAVILY_KEYS)
    if not isinstance(body.get("query"), str):
        raise ApiError(400, "query must be a string")
    time_range = body.get("time_range")
    start, end = body.get("start_date"), body.get("end_date")
    if time_range and (start or end):
        raise ApiError(400, TAVILY_DATES_MESSAGE)
    fields: dict[str, Any] = {"query": body.get("query") or ""}
    max_results = body.get("max_results")
    if max_results is not None:
        if (
            not isinstance(max_results, int)
            or isinstance(max_results, bool)
            or not 1 <= max_results <= MAX_LIMIT
        ):
            raise ApiError(400, f"max_results must be an integer from 1 to {MAX_LIMIT}")
        fields["limit"] = max_results
    else:
        fields["limit"] = 5  # Tavily's default
    if time_range:
        mapped = TAVILY_TIME_RANGES.get(str(time_range).lower())
        if mapped is None:
            raise ApiError(400, "time_range must be one of day, week, month, year (or d, w, m, y)")
        fields["time_range"] = mapped
    elif start or end:
        fields["date_from"], fields["date_to"] = start or None, end or None
    elif body.get("days") is not None:
        days = bounded_int(body["days"], "days", 1, MAX_TAVILY_DAYS)
        fields["date_from"] = (dt.date.today() - dt.timedelta(days=days)).isoformat()
    for name in ("include_domains", "exclude_domains"):
        value = body.get(name)
        if value is not None:
            if not isinstance(value, list):
                raise ApiError(400, f"{name} must be a list of domains")
            fields[name] = value
    return fields


# --- the app -----------------------------------------------------------------------------------------------

Handler = Callable[[Request], Awaitable[Response]]


def openapi_document(settings: Settings) -> dict[str, Any]:
    ref = "#/components/schemas/{model}"
    request_schema = SearchRequest.model_json_schema(by_alias=True, ref_template=ref)
    response_schema = SearchResponse.model_json_schema(by_alias=True, ref_template=ref)
    components = {**request_schema.pop("$defs", {}), **response_schema.pop("$defs", {})}
    components["SearchRequest"], components["SearchResponse"] = request_schema, response_schema
    components["Error"] = {
        "type": "object",
        "properties": {"error": {"type": "object", "properties": {"status": {"type": "integer"}, "message": {"type": "string"}}}},
    }  # fmt: skip

    def q(name: str, description: str, schema: dict | None = None, required: bool = False) -> dict:
        return {"name": name, "in": "query", "required": required, "description": description, "schema": schema or {"type": "string"}}  # fmt: skip

    errors = {
        code: {"description": text, "content": {"application/json": {"schema": {"$ref": ref.format(model="Error")}}}}
        for code, text in (("400", "bad input"), ("401", "missing or wrong bearer token"), ("413", "body too large"), ("429", "rate limited"))
    }  # fmt: skip
    native = {"description": "fused results", "content": {"application/json": {"schema": {"$ref": ref.format(model="SearchResponse")}}}}  # fmt: skip
    json_any = {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}
    strings = {"type": "array", "items": {"type": "string"}}
    tavily_schema = {
        "type": "object",
        "required": ["query"],
        "additionalProperties": False,
        "properties": {
            **{key: {} for key in sorted(TAVILY_KEYS)},
            "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS},
            "max_results": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
            "days": {"type": "integer", "minimum": 1, "maximum": MAX_TAVILY_DAYS},
            "time_range": {"type": "string", "enum": sorted(TAVILY_TIME_RANGES)},
            "start_date": {"type": "string", "format": "date"},
            "end_date": {"type": "string", "format": "date"},
            "include_domains": strings,
            "exclude_domains": strings,
        },
    }
    # The same bounds the request model enforces, stated where clients and schema-driven tools read them.
    query = {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS}
    locale = {"type": "string", "minLength": 2, "maxLength": LOCALE_MAX_CHARS}
    limit = {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT}
    time_range = {"type": "string", "enum": ["day", "week", "month", "year"]}
    date = {"type": "string", "format": "date"}
    params = [
        q("q", "the query", query, required=True), q("limit", "1-20", limit), q("engines", "comma list"),
        q("include_domains", "comma list"), q("exclude_domains", "comma list"), q("time_range", "day|week|month|year", time_range),
        q("date_from", "YYYY-MM-DD", date), q("date_to", "YYYY-MM-DD", date), q("region", "e.g. us", locale), q("language", "e.g. en", locale),
        q("strategy", "ranker"), q("min_score", "drop below", {"type": "number", "minimum": 0}),
        q("explain", "list every candidate", {"type": "boolean"}), q("cache", "false bypasses the cache", {"type": "boolean"}),
    ]  # fmt: skip
    return {
        "openapi": "3.1.0",
        "info": {"title": "serpfuse", "version": "1", "description": "Fused web search for LLM agents."},
        "servers": [{"url": f"http://{settings.url_host}:{settings.port}"}],
        "components": {
            "schemas": components,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}] if settings.api_token else [],
        "paths": {
            "/v1/search": {
                "get": {"summary": "Search (native)", "parameters": params, "responses": {"200": native, **errors}},
                "post": {
                    "summary": "Search (native); body is a SearchRequest plus optional explain/cache flags",
                    "requestBody": {"content": {"application/json": {"schema": {"$ref": ref.format(model="SearchRequest")}}}},
                    "responses": {"200": native, **errors},
                },
            },
            "/search": {
                "get": {
                    "summary": "SearXNG-compatible JSON search (without format: the web page)",
                    "parameters": [q("q", "the query", query, required=True), q("format", "json; none or html: the page", {"type": "string", "enum": ["json", "html"]}),
                                   q("pageno", "page", {"type": "integer", "minimum": 1}), q("time_range", "day|week|month|year", time_range),
                                   q("language", "e.g. en", locale), q("engines", "comma list")],
                    "responses": {"200": json_any, **errors},
                }
            },
            "/tavily/search": {
                "post": {
                    "summary": "Tavily-compatible search (api_key ignored; answer is always null)",
                    "requestBody": {"content": {"application/json": {"schema": tavily_schema}}},
                    "responses": {"200": json_any, **errors},
                }
            },
            "/healthz": {"get": {"summary": "Liveness and shared-store health", "security": [], "responses": {"200": json_any}}},
            "/metrics": {"get": {"summary": "Prometheus metrics", "responses": {"200": {"description": "text exposition"}}}},
        },
    }  # fmt: skip


# A native POST body: SearchRequest's fields (by name or camelCase alias) and the two flags.
NATIVE_KEYS = frozenset(
    [
        *SearchRequest.model_fields,
        *(f.alias for f in SearchRequest.model_fields.values() if f.alias),
        "explain",
        "cache",
    ]
)


def create_app(service: SearchService) -> ASGIApp:
    settings = service.settings
    max_body = settings.max_body_bytes

    def guarded(route: str, handler: Handler) -> Handler:
        async def endpoint(request: Request) -> Response:
            try:
                return await handler(request)
            except ApiError as exc:
                return error_response(route, exc.status, exc.message, exc.headers)
            except InputError as exc:
                return error_response(route, 400, str(exc))
            except ValidationError as exc:
                return error_response(route, 400, validation_message(exc))
            except (QueryTooLong, UnknownStrategy, UnknownEngine) as exc:
                return error_response(route, 400, str(exc))
            except ReplayError as exc:
                return error_response(route, 404, str(exc))
            except SourceError as exc:
                return error_response(route, 503, str(exc))
            except ReadError as exc:  # the reader's one-line causes: 400/422 the caller's, 502 the page's
                return error_response(route, exc.status, str(exc))

        return endpoint

    @functools.cache
    def reader():  # built on first use: the extractors are not imported until a page is read
        from serpfuse.reader.service import Reader

        return Reader.from_settings(settings, service.cache)

    async def search(
        fields: dict[str, Any], *, explain: bool, use_cache: bool, interface: str
    ) -> SearchResponse:
        request = service.make_request(**fields)
        return await service.search(request, explain=explain, use_cache=use_cache, interface=interface)

    def known_engines(fields: dict[str, Any], named: list[str] | None) -> list[str] | None:
        """SearXNG ignores engine names it does not have, and its clients name SearXNG's engines: so do we."""
        if not named:
            return None
        known = {s.name for s in service.source.slots(service.make_request(**fields))}
        return [e for e in named if e in known] or None

    # A GET's query string -> the request it makes: a repeated query (a cache hit, mostly) is not parsed and
    # validated again. Only requests that passed validation are kept; nothing changes a request once made.
    parsed: dict[bytes, tuple[SearchRequest, bool, bool]] = {}

    async def native_request(request: Request) -> tuple[SearchRequest, bool, bool]:
        """The search request, explain and use_cache of a native GET or POST."""
        if request.method == "POST":
            body = await read_json_object(request, max_body)
            reject_unknown_keys(body, NATIVE_KEYS)
            explain, use_cache = _flag(body.pop("explain", False)), _flag(body.pop("cache", True))
            fields = body
        else:
            p = request.query_params
            fields = {
                "query": p.get("q", p.get("query", "")),
                "limit": p.get("limit"),
                "engines": _many(p.getlist("engines")),
                "include_domains": _many(p.getlist("include_domains")),
                "exclude_domains": _many(p.getlist("exclude_domains")),
                "time_range": p.get("time_range") or None,
                "date_from": p.get("date_from") or None,
                "date_to": p.get("date_to") or None,
                "region": p.get("region") or None,
                "language": p.get("language") or None,
                "strategy": p.get("strategy") or None,
                "min_score": p.get("min_score") or None,
            }
            explain, use_cache = _flag(p.get("explain", "")), _flag(p.get("cache", "true"))
        return service.make_request(**fields), explain, use_cache

    async def native(request: Request) -> Response:
        raw = request.scope["query_string"] if request.method == "GET" else None
        known = parsed.get(raw) if raw is not None else None
        if known is None:
            known = await native_request(request)
            if raw is not None:
                if len(parsed) >= RECENT_QUERIES:
                    del parsed[next(iter(parsed))]  # the oldest
                parsed[raw] = known
        search_request, explain, use_cache = known
        # The JSON as stored: a cache hit is sent without being decoded and encoded again.
        body = await service.search_json(
            search_request, explain=explain, use_cache=use_cache, interface="http"
        )
        return Response(body, media_type="application/json")

    async def searxng(request: Request) -> Response:
        params: Any = request.query_params
        if request.method == "POST":
            form = await request.form()
            params = form if form else params
        fmt = (params.get("format") or "html").lower()
        if fmt == "html":  # as on SearXNG: no format is the page a person reads
            return await web_page.search(request, params)
        if fmt != "json":
            raise ApiError(400, f"format {fmt!r} is not served; only format=json (or no format: the page)")
        try:
            page = int(params.get("pageno") or 1)
        except ValueError:
            raise ApiError(400, "pageno must be an integer") from None
        time_range = params.get("time_range") or None
        fields = {
            "query": params.get("q", ""),
            "limit": params.get("limit"),
            "time_range": time_range,
            "language": None
            if params.get("language") in (None, "", "all", "auto")
            else params.get("language"),
        }
        fields["engines"] = known_engines(fields, _many([params.get("engines") or ""]))
        resp = await search(fields, explain=False, use_cache=True, interface="searxng")
        shaped = searxng_shape(resp)
        if page > 1:  # one fused page: later pages are empty, which ends a client's paging
            shaped["results"], shaped["number_of_results"] = [], 0
        return JSONResponse(shaped)

    async def tavily(request: Request) -> Response:
        started = time.perf_counter()
        body = await read_json_object(request, max_body)
        resp = await search(tavily_request_fields(body), explain=False, use_cache=True, interface="tavily")
        shaped = tavily_shape(resp, time.perf_counter() - started, body)
        raw = read_shapes.raw_content_format(body.get("include_raw_content"))
        if raw:  # the pages are read within what is left of the search deadline
            left = max(1.0, settings.deadline_s - (time.perf_counter() - started))
            await read_shapes.add_raw_content(reader(), shaped["results"], raw, left)
            shaped["response_time"] = round(time.perf_counter() - started, 3)
        return JSONResponse(shaped)

    async def read(request: Request) -> Response:
        return JSONResponse(
            await read_shapes.native_read(reader(), await read_json_object(request, max_body))
        )

    async def tavily_extract(request: Request) -> Response:
        return JSONResponse(
            await read_shapes.tavily_extract(reader(), await read_json_object(request, max_body))
        )

    async def scrape(request: Request) -> Response:
        return JSONResponse(
            await read_shapes.firecrawl_scrape(reader(), await read_json_object(request, max_body))
        )

    async def healthz(request: Request) -> Response:
        ok = await service.ping()
        degraded = service.degraded()  # shared stores being skipped now, this process serving from its own
        body = {
            "status": "ok" if ok and not degraded else "degraded",
            "source": service.source.name,
            "cache": settings.cache_backend,
        }
        if settings.redis_url:
            body["redis"] = "ok" if ok else "unreachable"
        if degraded:
            body["degraded"] = degraded
        return JSONResponse(body, status_code=200 if ok else 503)

    async def metrics(request: Request) -> Response:
        return Response(service.metrics.render(), media_type=CONTENT_TYPE)

    document = openapi_document(settings)
    web_page = Page(service)

    async def openapi(request: Request) -> Response:
        return JSONResponse(document)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        route = ROUTES.get(request.url.path, "other")
        return error_response(route, exc.status_code, str(exc.detail), getattr(exc, "headers", None))

    async def crash(request: Request, exc: Exception) -> Response:
        log.exception("unexpected error on %s", request.url.path)
        return error_response(ROUTES.get(request.url.path, "other"), 500, "internal error")

    @asynccontextmanager
    async def lifespan(app: Starlette):
        service.start()
        try:
            yield
        finally:
            await service.aclose()

    app = Starlette(
        routes=[
            Route("/v1/search", guarded("native", native), methods=["GET", "POST"]),
            Route("/search", guarded("searxng", searxng), methods=["GET", "POST"]),
            Route("/tavily/search", guarded("tavily", tavily), methods=["POST"]),
            Route("/v1/read", guarded("read", read), methods=["POST"]),
            Route("/tavily/extract", guarded("tavily", tavily_extract), methods=["POST"]),
            Route("/v1/scrape", guarded("firecrawl", scrape), methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/metrics", metrics, methods=["GET"]),
            Route("/openapi.json", openapi, methods=["GET"]),
            Route("/", web_page.home, methods=["GET", "POST"]),
            Mount("/static", web_page.static),
        ],
        exception_handlers={HTTPException: http_error, Exception: crash},
        lifespan=lifespan,
    )
    # Shared as the cooldowns are (Redis, else serve --workers' state file): one bucket per client.
    client_buckets = service.stores.buckets(
        settings.rate_limit_per_min, settings.rate_limit_burst, prefix="client:"
    )
    return Guard(app, settings=settings, metrics=service.metrics, client_buckets=client_buckets)


async def serve(
    service: SearchService, *, log_level: str = "warning", sock: socket.socket | None = None
) -> None:
    """Run the API on ``settings.host:port`` (or on ``sock``, already bound there) until stopped.

    Call ``settings.check_bind`` first."""
    import uvicorn

    settings = service.settings
    config = uvicorn.Config(
        create_app(service), host=settings.host, port=settings.port, log_level=log_level, lifespan="on",
        server_header=False, proxy_headers=False, log_config=None, access_log=False,  # logs: serpfuse.serve.logs
    )  # fmt: skip
    await uvicorn.Server(config).serve(sockets=[sock] if sock else None)
