"""The search routes' request shapes: serpfuse's native query string, SearXNG's ``/search?format=json``,
Tavily's ``/search`` and Firecrawl's ``/v2/search`` (their answers' shapes: ``reply_shapes``).

Each request form has a model (``NativeQuery``, ``SearxngQuery``, ``TavilySearchRequest``,
``FirecrawlSearchRequest``): the contract the
OpenAPI document is generated from. The readers below enforce it with the messages each interface's clients
expect (Tavily's 400 when time_range and dates are combined, for one), then hand the search request fields on.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.json_schema import SkipJsonSchema

from serpfuse.models import (
    MAX_LIMIT,
    MAX_PASSAGE_CHARS,
    MAX_QUERY_CHARS,
    MIN_PASSAGE_CHARS,
    Category,
    SearchCall,
    field_bounds,
)
from serpfuse.serve.errors import ApiError
from serpfuse.serve.read_shapes import FirecrawlFormat, FirecrawlFormatObject
from serpfuse.validation import (
    LOCALE_MAX_CHARS,
    InputError,
    bounded_int,
    check_text,
    read_bool,
    reject_misspelt_keys,
    reject_unknown_keys,
    unknown_name,
)

TimeRange = Literal["day", "week", "month", "year"]
TAVILY_DATES_MESSAGE = "When time_range is set, start_date or end_date cannot be set"
TAVILY_TIME_RANGES = {"day": "day", "week": "week", "month": "month", "year": "year"}
TAVILY_TIME_RANGES.update({"d": "day", "w": "week", "m": "month", "y": "year"})
MAX_TAVILY_DAYS = 36_500  # a century back: anything more is not a date range
# What serpfuse does whatever a Tavily client asks for: answered when a client sets auto_parameters.
TAVILY_APPLIED = {"topic": "general", "search_depth": "basic"}

QUERY = Field(description="the query", min_length=1, max_length=MAX_QUERY_CHARS)
LOCALE: dict[str, Any] = {"min_length": 2, "max_length": LOCALE_MAX_CHARS}


DEFAULT_CONTEXT_CHARS = 8000  # /v1/context's budget when none is asked (Brave's LLM Context: about 8k tokens)
MAX_CONTEXT_CHARS = 100_000


class ContextQuery(BaseModel):
    """``GET /v1/context``'s query string: a search's best passages across its shown pages, under one budget."""

    q: str = QUERY
    max_chars: Annotated[int, Field(ge=MIN_PASSAGE_CHARS, le=MAX_CONTEXT_CHARS)] | SkipJsonSchema[None] = (
        Field(None, description=f"the budget (default {DEFAULT_CONTEXT_CHARS})")
    )
    max_chars_per_page: (
        Annotated[int, Field(ge=MIN_PASSAGE_CHARS, le=MAX_PASSAGE_CHARS)] | SkipJsonSchema[None]
    ) = Field(None, description="a page's share at most")
    limit: Annotated[int, Field(ge=1, le=MAX_LIMIT)] | SkipJsonSchema[None] = Field(
        None, description="pages to read (1-20)"
    )
    engines: str | SkipJsonSchema[None] = Field(None, description="comma list")
    include_domains: str | SkipJsonSchema[None] = Field(None, description="comma list")
    exclude_domains: str | SkipJsonSchema[None] = Field(None, description="comma list")
    time_range: TimeRange | SkipJsonSchema[None] = Field(None, description="day|week|month|year")
    category: Category | SkipJsonSchema[None] = Field(None, description="general|news")
    region: Annotated[str, Field(**LOCALE)] | SkipJsonSchema[None] = Field(None, description="e.g. us")
    language: Annotated[str, Field(**LOCALE)] | SkipJsonSchema[None] = Field(None, description="e.g. en")


class SearxngQuery(BaseModel):
    """SearXNG's ``/search`` query string, the parts serpfuse reads."""

    q: str = QUERY
    format: Literal["json", "html"] | SkipJsonSchema[None] = Field(
        None, description="json; none or html: the page"
    )
    pageno: Annotated[int, Field(ge=1)] | SkipJsonSchema[None] = Field(None, description="page")
    time_range: TimeRange | SkipJsonSchema[None] = Field(None, description="day|week|month|year")
    language: Annotated[str, Field(**LOCALE)] | SkipJsonSchema[None] = Field(None, description="e.g. en")
    engines: str | SkipJsonSchema[None] = Field(None, description="comma list")
    categories: Category | SkipJsonSchema[None] = Field(None, description="general|news (or category=)")


class TavilySearchRequest(BaseModel):
    """Tavily's ``/search`` body. Tavily's documented options are all accepted (those without a serpfuse meaning
    are ignored, as a Tavily client sends them by default); any other key is refused by name."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    max_results: Annotated[int, Field(ge=1, le=MAX_LIMIT)] | SkipJsonSchema[None] = Field(None)
    time_range: Literal[tuple(sorted(TAVILY_TIME_RANGES))] | SkipJsonSchema[None] = None  # type: ignore[valid-type]
    start_date: dt.date | SkipJsonSchema[None] = None
    end_date: dt.date | SkipJsonSchema[None] = None
    days: Annotated[int, Field(ge=1, le=MAX_TAVILY_DAYS)] | SkipJsonSchema[None] = Field(None)
    include_domains: list[str] | SkipJsonSchema[None] = None
    exclude_domains: list[str] | SkipJsonSchema[None] = None
    search_depth: Any = None
    topic: Any = None
    chunks_per_source: Any = None
    include_answer: Any = None
    include_raw_content: Any = None
    include_images: Any = None
    include_image_descriptions: Any = None
    include_favicon: Any = None
    country: Any = None
    auto_parameters: Any = None
    api_key: Any = None
    include_usage: Any = None
    timeout: Any = None


FIRECRAWL_SOURCES = ("web", "news", "images")
FIRECRAWL_CATEGORIES = {"web": "general", "news": "news"}  # the sources serpfuse answers: one search each
FIRECRAWL_MAX_LIMIT = 100  # Firecrawl's own bound; serpfuse answers at most MAX_LIMIT of them
FIRECRAWL_DEFAULT_LIMIT = 5  # Firecrawl's default when a request names none (firecrawl-py sends none)
FIRECRAWL_TBS_RANGES = {"h": "day", "d": "day", "w": "week", "m": "month", "y": "year"}
FIRECRAWL_TBS_MESSAGE = "tbs must be qdr:h|d|w|m|y or cdr:1,cd_min:M/D/YYYY,cd_max:M/D/YYYY"
# Firecrawl's /v2/search options that change nothing here, as firecrawl-py 4.x sends them: accepted (its client
# adds options between releases, and Firecrawl's API takes them). A key close to a known one is a misspelling.
FIRECRAWL_IGNORED = (
    "categories", "location", "timeout", "ignoreInvalidURLs", "origin", "integration", "highlights",
    "enterprise", "threatProtection", "domainTools", "toolDetail", "maxAge",
)  # fmt: skip


class FirecrawlSource(BaseModel):
    model_config = ConfigDict(extra="allow")

    type: Literal[FIRECRAWL_SOURCES]  # type: ignore[valid-type]


class FirecrawlScrapeOptions(BaseModel):
    """``scrapeOptions``: the formats each result's page is read in (as ``/v2/scrape`` takes them); the other
    options are accepted and change nothing."""

    model_config = ConfigDict(extra="allow")

    formats: list[FirecrawlFormat | FirecrawlFormatObject] = ["markdown"]


class FirecrawlSearchRequest(BaseModel):
    """Firecrawl's ``/v2/search`` body, as firecrawl-py 4.x sends it. Web results come back under ``data.web``,
    news (the news engines' search) under ``data.news``; images are answered empty, with a warning. ``scrapeOptions.formats`` reads each result's page.
    Firecrawl's other options (location, categories, timeout, origin...) are accepted and change nothing."""

    model_config = ConfigDict(extra="allow")

    query: str = QUERY
    limit: Annotated[int, Field(ge=1, le=FIRECRAWL_MAX_LIMIT)] | SkipJsonSchema[None] = Field(
        None, description=f"1-100; at most {MAX_LIMIT} answered"
    )
    sources: list[Literal[FIRECRAWL_SOURCES] | FirecrawlSource] | SkipJsonSchema[None] = None  # type: ignore[valid-type]
    tbs: str | SkipJsonSchema[None] = Field(
        None, description="qdr:h|d|w|m|y, or cdr:1,cd_min:M/D/YYYY,cd_max:M/D/YYYY"
    )
    country: Annotated[str, Field(**LOCALE)] | SkipJsonSchema[None] = Field(None, description="e.g. us")
    includeDomains: list[str] | SkipJsonSchema[None] = None
    excludeDomains: list[str] | SkipJsonSchema[None] = None
    scrapeOptions: FirecrawlScrapeOptions | SkipJsonSchema[None] = Field(
        None, description="formats: read each result's page"
    )


class NativeSearchBody(SearchCall):
    """``POST /v1/search``'s body: a ``SearchRequest`` and the two flags of how it is run. ``GET /v1/search``'s
    query string takes the same fields (``NativeQuery``, generated from this)."""


TAVILY_KEYS = frozenset(TavilySearchRequest.model_fields)
FIRECRAWL_KEYS = frozenset({*FirecrawlSearchRequest.model_fields, *FIRECRAWL_IGNORED})
# A native request's keys: its fields by name or by camelCase alias, and ``q`` for the query.
NATIVE_NAMES = {
    **{name: name for name in NativeSearchBody.model_fields},
    **{f.alias: name for name, f in NativeSearchBody.model_fields.items() if f.alias},
}
NATIVE_KEYS = frozenset(NATIVE_NAMES)
QUERY_NAMES = {**NATIVE_NAMES, "q": "query"}


def _is_list(name: str) -> bool:
    return "list[" in str(NativeSearchBody.model_fields[name].annotation)


def _native_query_model() -> type[BaseModel]:
    """``GET /v1/search``'s query string as a model (for the OpenAPI document), generated from
    ``NativeSearchBody``: ``q`` for the query, a comma list for each list field, every field optional."""
    fields: dict[str, Any] = {"q": (str, QUERY)}
    for name, info in NativeSearchBody.model_fields.items():
        if name == "query":
            continue
        low, high = field_bounds(NativeSearchBody, name)
        bounds: dict[str, Any] = {k: v for k, v in (("ge", low), ("le", high)) if v is not None}
        if info.metadata and any(hasattr(m, "max_length") for m in info.metadata):
            bounds.update(LOCALE)
        kind = str if _is_list(name) else info.annotation
        text = f"{info.description} (comma list)" if _is_list(name) else info.description
        fields[name] = (kind, Field(None, description=text, **bounds))
    return create_model("NativeQuery", **fields)


NativeQuery = _native_query_model()


# --- reading requests --------------------------------------------------------------------------------------


def flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def many(values: list[str]) -> list[str] | None:
    """Repeated parameters and comma lists, both: ``engines=a,b&engines=c`` -> [a, b, c]."""
    out = [part.strip() for v in values for part in v.split(",") if part.strip()]
    return out or None


def native_query_fields(params: Any) -> tuple[dict[str, Any], bool, bool]:
    """A native GET's query string -> the search request fields, explain and use_cache: exactly the fields
    of ``NativeSearchBody`` (``q`` or ``query`` for the query), each list field a comma list or repeated. An
    unknown parameter, a value given twice and a flag that is not true or false are each a one-line
    ``InputError``; an empty value is left out."""
    fields: dict[str, Any] = {}
    for key in dict.fromkeys(params.keys()):
        check_text(key, "a parameter's name")
        name = QUERY_NAMES.get(key)
        if name is None:
            raise unknown_name(
                "parameter", key, ["q", *(n for n in NativeSearchBody.model_fields if n != "query")]
            )
        if name in fields:
            raise InputError(f"{key}: given twice (as {name} and as another spelling)")
        values = params.getlist(key)
        if _is_list(name):
            fields[name] = many(values)
            continue
        if len(set(values)) > 1:
            raise InputError(f"{key}: given {len(values)} times with different values; give it once")
        fields[name] = values[0] if values[0].strip() or name == "query" else None  # "q=": the query is empty
    explain, use_cache = fields.pop("explain", None), fields.pop("cache", None)
    explain = False if explain is None else read_bool(explain, "explain")
    use_cache = True if use_cache is None else read_bool(use_cache, "cache")
    return fields, explain, use_cache


def context_fields(params: Any) -> tuple[dict[str, Any], int, int | None]:
    """``/v1/context``'s query string -> the search request fields, the budget and a page's share at most."""
    fields = {
        "query": params.get("q", params.get("query", "")),
        "limit": params.get("limit"),
        "engines": many(params.getlist("engines")),
        "include_domains": many(params.getlist("include_domains")),
        "exclude_domains": many(params.getlist("exclude_domains")),
        "time_range": params.get("time_range") or None,
        "category": params.get("category") or None,
        "region": params.get("region") or None,
        "language": params.get("language") or None,
    }
    unknown = sorted(set(params.keys()) - set(ContextQuery.model_fields) - {"query"})
    if unknown:
        raise ApiError(
            400, f"unknown parameter {unknown[0]!r}; parameters: {', '.join(ContextQuery.model_fields)}"
        )
    budget = _chars(params.get("max_chars"), "max_chars", DEFAULT_CONTEXT_CHARS, MAX_CONTEXT_CHARS)
    per_page = params.get("max_chars_per_page")
    share = _chars(per_page, "max_chars_per_page", 0, MAX_PASSAGE_CHARS) if per_page else None
    return fields, budget, share


def _chars(value: Any, name: str, default: int, most: int) -> int:
    if value in (None, ""):
        return default
    try:
        n = int(value)
    except (TypeError, ValueError):
        raise ApiError(400, f"{name} must be a whole number") from None
    if not MIN_PASSAGE_CHARS <= n <= most:
        raise ApiError(400, f"{name} must be between {MIN_PASSAGE_CHARS} and {most}")
    return n


def native_body_fields(body: dict[str, Any]) -> tuple[dict[str, Any], bool, bool]:
    """A native POST body -> the search request fields, explain and use_cache."""
    reject_unknown_keys(body, NATIVE_KEYS)
    explain = read_bool(body.pop("explain", False), "explain")
    use_cache = read_bool(body.pop("cache", True), "cache")
    return body, explain, use_cache


def searxng_page(params: Any) -> int:
    try:
        return int(params.get("pageno") or 1)
    except ValueError:
        raise ApiError(400, "pageno must be an integer") from None


# What SearXNG clients send that serpfuse does not read (SearXNG's own search parameters, documented at
# docs.searxng.org/dev/search_api.html, and the page's): accepted and ignored, as SearXNG ignores what it
# does not use. A parameter close to one of these or to a read one (``pagno``, ``time_rnage``) is a misspelling
# whose value would be lost: a 400 that names the nearest.
SEARXNG_IGNORED = frozenset(
    {
        "results_on_new_tab", "image_proxy", "autocomplete", "safesearch", "theme", "enabled_plugins",
        "disabled_plugins", "enabled_engines", "disabled_engines", "enabled_categories", "disabled_categories",
        "locale", "doi_resolver", "method", "preferences", "simple_style", "center_alignment", "hotkeys",
        "url_formatting", "search_on_category_select",
    }
)  # fmt: skip
SEARXNG_READ = frozenset({*SearxngQuery.model_fields, "category", "limit"})
SEARXNG_PARAMS = SEARXNG_READ | SEARXNG_IGNORED


def searxng_fields(params: Any) -> dict[str, Any]:
    """SearXNG's query string -> the search request fields (engines still as named: the caller keeps the ones
    it has)."""
    reject_misspelt_keys(params.keys(), SEARXNG_PARAMS)
    language = params.get("language")
    return {
        "query": params.get("q", ""),
        "limit": params.get("limit"),
        "time_range": params.get("time_range") or None,
        "language": None if language in (None, "", "all", "auto") else language,
        "category": params.get("categories") or params.get("category") or None,
    }


TAVILY_CHUNK_CHARS = 500  # Tavily's chunks are "up to 500 characters" each
TAVILY_CHUNK_JOIN = " [...] "  # and content joins them so


def tavily_chunks(body: dict[str, Any]) -> int:
    """Tavily's ``chunks_per_source``: 1-3, default 3 (advanced search only)."""
    chunks = body.get("chunks_per_source")
    if chunks is None:
        return 3
    if not isinstance(chunks, int) or isinstance(chunks, bool) or not 1 <= chunks <= 3:
        raise ApiError(400, "chunks_per_source must be 1, 2 or 3")
    return chunks


def tavily_request_fields(body: dict[str, Any]) -> dict[str, Any]:
    """Tavily's body -> our request fields. Tavily's own options are accepted; an unknown key is a 400."""
    reject_unknown_keys(body, TAVILY_KEYS)
    if not isinstance(body.get("query"), str):
        raise ApiError(400, "query must be a string")
    time_range = body.get("time_range")
    start, end = body.get("start_date"), body.get("end_date")
    if time_range and (start or end):
        raise ApiError(400, TAVILY_DATES_MESSAGE)
    fields: dict[str, Any] = {"query": body.get("query") or "", "category": tavily_category(body)}
    if body.get("search_depth") == "advanced":  # Tavily's: the most relevant chunks of each page as content
        fields["passages"] = True
        fields["max_chars"] = TAVILY_CHUNK_CHARS * tavily_chunks(body)
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


def _firecrawl_tbs(tbs: Any) -> dict[str, Any]:
    """Firecrawl's (Google's) ``tbs`` -> time_range or dates: ``qdr:w``; ``cdr:1,cd_min:1/1/2024,cd_max:...``."""
    if not isinstance(tbs, str):
        raise ApiError(400, FIRECRAWL_TBS_MESSAGE)
    parts = dict(p.split(":", 1) for p in tbs.split(",") if ":" in p)
    if "qdr" in parts:
        if parts["qdr"] not in FIRECRAWL_TBS_RANGES:
            raise ApiError(400, FIRECRAWL_TBS_MESSAGE)
        return {"time_range": FIRECRAWL_TBS_RANGES[parts["qdr"]]}
    if parts.get("cdr") == "1" and ("cd_min" in parts or "cd_max" in parts):
        dates = {}
        for key, field in (("cd_min", "date_from"), ("cd_max", "date_to")):
            if key in parts:
                m = re.fullmatch(r"(\d{1,2})/(\d{1,2})/(\d{4})", parts[key])
                try:
                    dates[field] = dt.date(int(m[3]), int(m[1]), int(m[2])).isoformat() if m else None
                except ValueError:
                    dates[field] = None
                if dates[field] is None:
                    raise ApiError(400, f"{key} must be a date M/D/YYYY, e.g. 12/31/2024")
        return dates
    if not parts.get("sbd"):  # sbd alone (sort by date) narrows nothing
        raise ApiError(400, FIRECRAWL_TBS_MESSAGE)
    return {}


def firecrawl_search_fields(body: dict[str, Any]) -> tuple[dict[str, Any], list[str], list[str]]:
    """Firecrawl's ``/v2/search`` body -> our request fields, the sources asked (web, news, images) and warnings
    for what serpfuse cannot answer as asked."""
    reject_misspelt_keys(body, FIRECRAWL_KEYS, "key")
    query = body.get("query")
    if not isinstance(query, str):
        raise ApiError(400, "query must be a string")
    fields: dict[str, Any] = {"query": query}
    warnings: list[str] = []
    limit = body.get("limit")
    limit = FIRECRAWL_DEFAULT_LIMIT if limit is None else bounded_int(limit, "limit", 1, FIRECRAWL_MAX_LIMIT)
    if limit > MAX_LIMIT:
        warnings.append(f"serpfuse answers at most {MAX_LIMIT} results")
    fields["limit"] = min(limit, MAX_LIMIT)
    raw_sources = body.get("sources")
    if raw_sources is None:
        sources = ["web"]
    else:
        if not isinstance(raw_sources, list) or not raw_sources:
            raise ApiError(400, 'sources must be a non-empty list such as ["web"]')
        sources = []
        for item in raw_sources:
            name = item.get("type") if isinstance(item, dict) else item
            if name not in FIRECRAWL_SOURCES:
                raise ApiError(400, f"source {name!r} is not served; sources: {', '.join(FIRECRAWL_SOURCES)}")
            sources.append(name)
        sources = list(dict.fromkeys(sources))
    if "images" in sources:
        warnings.append("serpfuse answers web and news results; images are empty")
    if body.get("tbs") is not None:
        fields.update(_firecrawl_tbs(body["tbs"]))
    country = body.get("country")
    if country is not None:
        if not isinstance(country, str):
            raise ApiError(400, "country must be a code such as us")
        fields["region"] = country.lower()
    for key, name in (("includeDomains", "include_domains"), ("excludeDomains", "exclude_domains")):
        value = body.get(key)
        if value is not None:
            if not isinstance(value, list):
                raise ApiError(400, f"{key} must be a list of domains")
            fields[name] = value
    return fields, sources, warnings


def tavily_category(body: dict[str, Any]) -> str:
    """Tavily's ``topic``: news searches news; any other topic (general, finance) the web, as before."""
    return "news" if str(body.get("topic") or "").strip().lower() == "news" else "general"
