"""The reader's request and response shapes for each interface: native ``/v1/read``, Tavily's ``/extract`` and
``include_raw_content``, Firecrawl's ``/v1/scrape`` and ``/v2/scrape`` (and the pages of a ``/v2/search`` with
``scrapeOptions``), the MCP tool's bounded chunk, and ``search --read N``.

Pure functions over ``Reader.read``: the HTTP API, the MCP server and the CLI only route to them. No request
field can widen the policy (loopback, ports, robots): the reader a server holds is built from its own settings.
Each HTTP body has a model (``ReadRequest``, ``TavilyExtractRequest``, ``FirecrawlScrapeRequest``,
``FirecrawlV2ScrapeRequest``): the contract
the OpenAPI document is generated from; the functions enforce it with each interface's own messages.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from serpfuse.models import Model, Passage
from serpfuse.reader.models import FORMATS, CallerError, Format, Page, ReadError
from serpfuse.urls import favicon_url

if TYPE_CHECKING:
    from serpfuse.reader.service import Reader

MAX_URLS = 20  # Tavily's own limit per extract call
FirecrawlV1Format = Literal["markdown", "html", "rawHtml"]
FIRECRAWL_FORMATS: dict[FirecrawlV1Format, Format] = {
    "markdown": "markdown",
    "html": "html",
    "rawHtml": "html",
}
# v2 also has highlights ({"type": "highlights", "query": ...}): the page's passages that answer the query
FirecrawlFormat = Literal["markdown", "html", "rawHtml", "highlights"]
FIRECRAWL_V2_FORMATS: tuple[FirecrawlFormat, ...] = ("markdown", "html", "rawHtml", "highlights")
HIGHLIGHT_CHARS = (
    1500  # Firecrawl's highlights of a page: its passages that answer the query, this long at most
)

ReadFormat = Literal[FORMATS]  # type: ignore[valid-type]
PageUrl = Annotated[
    str, Field(min_length=1, examples=["https://example.com/article"], json_schema_extra={"format": "uri"})
]


class ReadRequest(BaseModel):
    """``POST /v1/read``'s body."""

    model_config = ConfigDict(extra="forbid")

    url: PageUrl = Field(description="the page to read (http or https)")
    format: ReadFormat = Field("markdown", description="the form of content")
    cache: bool = Field(True, description="false reads the page again")


class TavilyExtractRequest(BaseModel):
    """Tavily's ``/extract`` body. With ``query``, each page's content is its passages that answer it (at most
    ``chunks_per_source`` of Tavily's 500-character chunks, joined as Tavily joins them). Its other options
    (extract_depth, include_images, timeout...) are accepted and change nothing."""

    model_config = ConfigDict(extra="allow")

    urls: PageUrl | Annotated[list[PageUrl], Field(min_length=1, max_length=MAX_URLS)]
    format: ReadFormat = "markdown"
    include_favicon: bool = False
    query: Annotated[str, Field(min_length=1, max_length=500)] | SkipJsonSchema[None] = Field(
        None, description="rank each page's chunks by this"
    )
    chunks_per_source: Annotated[int, Field(ge=1, le=5)] | SkipJsonSchema[None] = Field(
        None, description="chunks per page with query (default 3)"
    )


class FirecrawlScrapeRequest(BaseModel):
    """Firecrawl's ``/v1/scrape`` body. Its other options (onlyMainContent, waitFor, timeout...) are accepted
    and change nothing."""

    model_config = ConfigDict(extra="allow")

    url: PageUrl
    formats: list[FirecrawlV1Format] = ["markdown"]


class FirecrawlFormatObject(BaseModel):
    """A v2 format written as an object (``{"type": "markdown"}``), as firecrawl-py sends some of them."""

    model_config = ConfigDict(extra="allow")

    type: FirecrawlFormat


class FirecrawlV2ScrapeRequest(BaseModel):
    """Firecrawl's ``/v2/scrape`` body, as firecrawl-py 4.x sends it. ``maxAge: 0`` reads the page again (else
    the reader's cache may answer); its other options (onlyMainContent, blockAds, storeInCache, origin...) are
    accepted and change nothing."""

    model_config = ConfigDict(extra="allow")

    url: PageUrl
    formats: list[FirecrawlFormat | FirecrawlFormatObject] = ["markdown"]
    maxAge: Annotated[int, Field(ge=0)] | SkipJsonSchema[None] = Field(
        None, description="milliseconds; 0 reads the page again"
    )


class BadRequest(CallerError):
    http_status = 400


def _format(value: Any, default: str = "markdown") -> str:
    fmt = default if value is None else str(value).lower()
    if fmt not in FORMATS:
        raise BadRequest(f"format must be one of {', '.join(FORMATS)}")
    return fmt


def _url(value: Any, name: str = "url") -> str:
    if not isinstance(value, str) or not value.strip():
        raise BadRequest(f"{name} must be a non-empty string")
    return value.strip()


async def read_many(
    reader: Reader, urls: Sequence[str], timeout_s: float | None = None
) -> list[Page | ReadError]:
    """Read every URL concurrently; each answer is its Page or its one-line error. ``timeout_s`` bounds the lot:
    a page still loading then is a timeout error, never a hang."""

    async def one(url: str) -> Page | ReadError:
        try:
            return await reader.read(url)
        except ReadError as exc:
            return exc

    tasks = [asyncio.ensure_future(one(u)) for u in urls]
    if not tasks:
        return []
    done, pending = await asyncio.wait(tasks, timeout=timeout_s)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    return [
        t.result() if t in done else ReadError("the page was not read before the deadline") for t in tasks
    ]


async def read_results(reader: Reader, urls: Sequence[str], timeout_s: float) -> list[dict[str, Any]]:
    """``search --read N``: each URL's title and markdown, or why it was not read (the deadline included)."""
    out = []
    for url, got in zip(urls, await read_many(reader, urls, max(0.0, timeout_s)), strict=True):
        if isinstance(got, ReadError):
            out.append({"url": url, "title": None, "markdown": None, "error": str(got)})
        else:
            out.append({"url": url, "title": got.title, "markdown": got.markdown, "error": None})
    return out


# --- native ---------------------------------------------------------------------------------------------------

NATIVE_FIELDS = frozenset(ReadRequest.model_fields)


async def native_read(reader: Reader, body: dict[str, Any]) -> dict[str, Any]:
    """``POST /v1/read {"url", "format"?, "cache"?}`` -> the Page with ``content`` in the asked format."""
    unknown = sorted(set(body) - NATIVE_FIELDS)
    if unknown:
        raise BadRequest(f"unknown field {unknown[0]!r}; fields: {', '.join(sorted(NATIVE_FIELDS))}")
    url, fmt = _url(body.get("url")), _format(body.get("format"))
    page = await reader.read(url, use_cache=body.get("cache", True) is not False)
    return {**page.to_json_dict(), "content": page.content(fmt)}  # type: ignore[arg-type]


# --- Tavily -----------------------------------------------------------------------------------------------------


async def tavily_extract(reader: Reader, body: dict[str, Any]) -> dict[str, Any]:
    """Tavily's ``/extract``: ``urls`` (one or a list), ``format`` markdown|text; results and failed_results."""
    started = time.perf_counter()
    urls = body.get("urls")
    urls = [urls] if isinstance(urls, str) else urls
    if not isinstance(urls, list) or not urls or not all(isinstance(u, str) and u.strip() for u in urls):
        raise BadRequest("urls must be a URL or a non-empty list of URLs")
    if len(urls) > MAX_URLS:
        raise BadRequest(f"at most {MAX_URLS} urls per request")
    fmt = _format(body.get("format"))
    include_favicon = body.get("include_favicon") is True
    query, chunks = _extract_query(body)
    results, failed = [], []
    for url, got in zip(urls, await read_many(reader, urls), strict=True):
        if isinstance(got, ReadError):
            failed.append({"url": url, "error": str(got)})
            continue
        content = got.content(fmt) if query is None else _chunks(got, query, chunks)  # type: ignore[arg-type]
        row: dict[str, Any] = {"url": url, "raw_content": content, "images": []}
        if include_favicon:
            row["favicon"] = favicon_url(got.final_url or url)
        results.append(row)
    return {
        "results": results,
        "failed_results": failed,
        "response_time": round(time.perf_counter() - started, 3),
        "request_id": str(uuid.uuid4()),
    }


TAVILY_CHUNK_CHARS = 500
TAVILY_CHUNK_JOIN = " [...] "


def _extract_query(body: dict[str, Any]) -> tuple[str | None, int]:
    query, chunks = body.get("query"), body.get("chunks_per_source")
    if query is not None and (not isinstance(query, str) or not query.strip()):
        raise BadRequest("query must be a non-empty string")
    if chunks is None:
        chunks = 3
    elif not isinstance(chunks, int) or isinstance(chunks, bool) or not 1 <= chunks <= 5:
        raise BadRequest("chunks_per_source must be between 1 and 5")
    return (query.strip() if query else None), chunks


def _chunks(page: Page, query: str, chunks: int) -> str:
    """A page's passages that answer ``query``, at most ``chunks`` of Tavily's chunks' length, as Tavily
    joins its chunks."""
    from serpfuse.reader.evidence import page_passages

    return TAVILY_CHUNK_JOIN.join(p.text for p in page_passages(page, query, TAVILY_CHUNK_CHARS * chunks))


def raw_content_format(value: Any) -> str | None:
    """Tavily's ``include_raw_content``: false/absent -> None, true or "markdown" -> markdown, "text" -> text."""
    if value in (None, False, "false", ""):
        return None
    if value is True or value in ("true", "markdown"):
        return "markdown"
    if value == "text":
        return "text"
    raise BadRequest('include_raw_content must be true, false, "markdown" or "text"')


async def add_raw_content(reader: Reader, results: list[dict[str, Any]], fmt: str, timeout_s: float) -> None:
    """Fill each Tavily result's ``raw_content`` (None where the page could not be read in time)."""
    pages = await read_many(reader, [r["url"] for r in results], timeout_s)
    for row, got in zip(results, pages, strict=True):
        row["raw_content"] = None if isinstance(got, ReadError) else got.content(fmt)  # type: ignore[arg-type]


# --- Firecrawl ------------------------------------------------------------------------------------------------


def _unknown_format(name: str, known: Sequence[str]) -> BadRequest:
    return BadRequest(f"format {name!r} is not served; formats: {', '.join(known)}")


def firecrawl_formats(value: Any, *, objects: bool = False) -> list[FirecrawlFormat]:
    """Firecrawl's ``formats``: names (v1 and v2) or, with ``objects``, v2's ``{"type": name}`` objects."""
    if value is None:
        return ["markdown"]
    if not isinstance(value, list):
        raise BadRequest('formats must be a list such as ["markdown"]')
    names: list[FirecrawlFormat] = []
    for item in value:
        name = item.get("type") if objects and isinstance(item, dict) else item
        if not isinstance(name, str):
            raise BadRequest('formats must be a list such as ["markdown"]')
        served: Sequence[FirecrawlFormat] = FIRECRAWL_V2_FORMATS if objects else tuple(FIRECRAWL_FORMATS)
        known = next((f for f in served if f == name), None)
        if known is None:
            raise _unknown_format(name, served)
        names.append(known)
    return list(dict.fromkeys(names))


def highlights_query(formats: Any, default: str | None = None) -> str | None:
    """The query of a v2 ``{"type": "highlights", "query": ...}`` format (``default`` when it names none)."""
    for item in formats or ():
        if isinstance(item, dict) and item.get("type") == "highlights":
            query = item.get("query")
            return query.strip() if isinstance(query, str) and query.strip() else default
        if item == "highlights":
            return default
    return None


def firecrawl_document(
    page: Page, url: str, formats: Sequence[FirecrawlFormat], *, query: str | None = None
) -> dict[str, Any]:
    """A Firecrawl document: each asked format's content and the page's metadata (v1 and v2 alike);
    ``highlights``: the page's passages that answer ``query``, one a paragraph."""
    from serpfuse.reader.evidence import page_passages

    data: dict[str, Any] = {}
    for f in formats:
        if f != "highlights":
            data[f] = page.content(FIRECRAWL_FORMATS[f])
        elif query is None:
            raise BadRequest('the highlights format needs a query: {"type": "highlights", "query": "..."}')
        else:
            data[f] = "\n\n".join(p.text for p in page_passages(page, query, HIGHLIGHT_CHARS))
    metadata = {
        "title": page.title,
        "language": page.language,
        "sourceURL": url,
        "url": page.final_url or url,
        "statusCode": 200,
        "contentType": page.content_type,
    }
    if page.author:
        metadata["author"] = page.author
    if page.date:
        metadata["publishedTime"] = page.date
    if page.canonical_url:
        metadata["canonical"] = page.canonical_url
    data["metadata"] = {k: v for k, v in metadata.items() if v is not None}
    return data


async def firecrawl_scrape(reader: Reader, body: dict[str, Any]) -> dict[str, Any]:
    """Firecrawl's ``/v1/scrape``: ``url`` and ``formats`` (markdown, html); the rest of its options accepted."""
    url = _url(body.get("url"))
    formats = firecrawl_formats(body.get("formats", ["markdown"]))
    return {"success": True, "data": firecrawl_document(await reader.read(url), url, formats)}


async def firecrawl_v2_scrape(reader: Reader, body: dict[str, Any]) -> dict[str, Any]:
    """Firecrawl's ``/v2/scrape`` (firecrawl-py 4.x ``Firecrawl.scrape``): the v1 answer, formats as names or
    ``{"type": name}`` objects, and ``maxAge: 0`` to bypass the reader's cache."""
    url = _url(body.get("url"))
    formats = firecrawl_formats(body.get("formats"), objects=True)
    max_age = body.get("maxAge")
    if max_age is not None and (not isinstance(max_age, int) or isinstance(max_age, bool) or max_age < 0):
        raise BadRequest("maxAge must be a whole number of milliseconds, 0 or more")
    query = highlights_query(body.get("formats"))
    if "highlights" in formats and query is None:
        raise BadRequest('the highlights format needs a query: {"type": "highlights", "query": "..."}')
    page = await reader.read(url, use_cache=max_age != 0)
    return {"success": True, "data": firecrawl_document(page, url, formats, query=query)}


async def add_firecrawl_documents(
    reader: Reader,
    rows: list[dict[str, Any]],
    formats: Sequence[FirecrawlFormat],
    timeout_s: float,
    *,
    query: str | None = None,
) -> None:
    """A ``/v2/search`` with ``scrapeOptions``: each result row gains its page's formats and metadata, or, where
    the page was not read in time or was refused, metadata with the error (and no content)."""
    pages = await read_many(reader, [r["url"] for r in rows], timeout_s)
    for row, got in zip(rows, pages, strict=True):
        if isinstance(got, ReadError):
            row["metadata"] = {"sourceURL": row["url"], "url": row["url"], "error": str(got)}
        else:
            row.update(firecrawl_document(got, row["url"], formats, query=query))


def firecrawl_error(exc: ReadError) -> dict[str, Any]:
    return {"success": False, "error": str(exc)}


# --- MCP ----------------------------------------------------------------------------------------------------------


class ReadUrlOutput(Model):
    """The MCP tool's structured answer: the piece of content and where the next piece starts (None: the end)."""

    url: str
    final_url: str | None = None
    title: str | None = None
    author: str | None = None
    date: str | None = None
    language: str | None = None
    canonical_url: str | None = None
    format: str
    offset: int
    total_chars: int
    next_offset: int | None = None
    content: str
    # with a query: the passages content joins, with their offsets in the page's text (offset is then 0)
    passages: list[Passage] | None = Field(None, exclude_if=lambda v: v is None)
    query: str | None = Field(None, exclude_if=lambda v: v is None)


PASSAGE_JOIN = "\n\n[...]\n\n"


def passages_chunk(page: Page, query: str, max_chars: int) -> tuple[str, dict[str, Any]]:
    """The page's passages that answer ``query`` for a model: a header, then the passages (in page order)
    within ``max_chars`` all told."""
    from serpfuse.reader.evidence import page_passages

    meta = [f"title: {page.title}" if page.title else None, f"url: {page.final_url or page.url}",
            f"date: {page.date}" if page.date else None]  # fmt: skip
    head = "\n".join(m for m in meta if m)
    text_chars = len(page.text)
    intro = f"passages of the page that answer {query!r} (of {text_chars} characters):"
    room = max(0, max_chars - len(head) - len(intro) - 4)
    found = page_passages(page, query, room)
    while found and sum(len(p.text) for p in found) + len(PASSAGE_JOIN) * (len(found) - 1) > room:
        found = found[:-1] if len(found) > 1 else []  # the separators count too
    content = PASSAGE_JOIN.join(p.text for p in found)
    text = f"{head}\n\n{intro}\n\n{content or '(no passage of this page fits)'}"
    structured = _read_output(
        page, format="text", offset=0, total_chars=text_chars, next_offset=None, content=content,
        passages=found, query=query,
    )  # fmt: skip
    return text, structured.to_json_dict()


def chunk(page: Page, fmt: str, offset: int, max_chars: int) -> tuple[str, dict[str, Any]]:
    """A bounded piece of the page for a model: a header, ``max_chars`` of content from ``offset``, and, when more
    remains, the offset to ask for next."""
    content = page.content(fmt)  # type: ignore[arg-type]
    if offset > len(content):
        raise BadRequest(f"offset {offset} is past the end of the page ({len(content)} characters)")
    piece = content[offset : offset + max_chars]
    end = offset + len(piece)
    next_offset = end if end < len(content) else None
    meta = [f"title: {page.title}" if page.title else None, f"url: {page.final_url or page.url}",
            f"author: {page.author}" if page.author else None, f"date: {page.date}" if page.date else None,
            f"characters {offset}-{end} of {len(content)}"]  # fmt: skip
    text = "\n".join(m for m in meta if m) + "\n\n" + piece
    if next_offset is not None:
        text += f"\n\n[truncated: call read_url again with offset={next_offset} for the rest]"
    structured = _read_output(
        page, format=fmt, offset=offset, total_chars=len(content), next_offset=next_offset, content=piece
    )
    return text, structured.to_json_dict()


def _read_output(page: Page, **piece: Any) -> ReadUrlOutput:
    """``read_url``'s structured answer: the page's own fields and the piece of it given."""
    return ReadUrlOutput(
        url=page.url,
        final_url=page.final_url,
        title=page.title,
        author=page.author,
        date=page.date,
        language=page.language,
        canonical_url=page.canonical_url,
        **piece,
    )
