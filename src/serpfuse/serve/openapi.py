"""The HTTP API's OpenAPI document (``/openapi.json``), generated from the request models, one operation each.

The models live beside the code that reads each request (``search_shapes``, ``read_shapes``), so the bounds a
client or a schema-driven tool reads here are the ones the server enforces.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from serpfuse.models import SearchRequest, SearchResponse
from serpfuse.serve.read_shapes import (
    FirecrawlScrapeRequest,
    FirecrawlV2ScrapeRequest,
    ReadRequest,
    TavilyExtractRequest,
)
from serpfuse.serve.search_shapes import (
    ContextQuery,
    FirecrawlSearchRequest,
    NativeQuery,
    NativeSearchBody,
    SearxngQuery,
    TavilySearchRequest,
)
from serpfuse.settings import Settings

REF = "#/components/schemas/{model}"
SEARCH_ERRORS = {
    "400": "bad input",
    "401": "missing or wrong bearer token",
    "413": "body too large",
    "429": "rate limited",
}
READ_ERRORS = {
    **SEARCH_ERRORS,
    "422": "the URL is refused by the reader's policy, or the page is not readable",
    "502": "the page could not be fetched",
}
# The error body each interface's clients read (errors.error_body).
ERROR_SCHEMAS: dict[str, dict[str, Any]] = {
    "Error": {
        "type": "object",
        "properties": {
            "error": {
                "type": "object",
                "properties": {"status": {"type": "integer"}, "message": {"type": "string"}},
            }
        },
    },
    "TavilyError": {
        "type": "object",
        "properties": {"detail": {"type": "object", "properties": {"error": {"type": "string"}}}},
    },
    "FirecrawlError": {
        "type": "object",
        "properties": {"success": {"type": "boolean", "enum": [False]}, "error": {"type": "string"}},
    },
}


@dataclass(frozen=True)
class Operation:
    path: str
    method: str
    summary: str
    query: type[BaseModel] | None = None  # the query string's parameters
    body: type[BaseModel] | None = None  # the JSON body
    response: type[BaseModel] | None = None  # None: a JSON object
    text_response: str | None = None  # the answer is text, not JSON: what it is
    errors: dict[str, str] | None = None  # status -> what it means; None: a search route's
    error_schema: str = "Error"
    open: bool = False  # answered without the token


OPERATIONS = (
    Operation("/v1/search", "get", "Search (native)", query=NativeQuery, response=SearchResponse),
    Operation(
        "/v1/search",
        "post",
        "Search (native); body is a SearchRequest plus optional explain/cache flags",
        body=NativeSearchBody,
        response=SearchResponse,
    ),
    Operation(
        "/search", "get", "SearXNG-compatible JSON search (without format: the web page)", query=SearxngQuery
    ),
    Operation(
        "/tavily/search",
        "post",
        "Tavily-compatible search (api_key ignored; answer is always null)",
        body=TavilySearchRequest,
        error_schema="TavilyError",
    ),
    Operation(
        "/v1/read",
        "post",
        "Read a page: its main content (markdown, text or html) and metadata",
        body=ReadRequest,
        errors=READ_ERRORS,
    ),
    Operation(
        "/tavily/extract",
        "post",
        "Tavily-compatible extract: each URL's content in results, each failure in failed_results",
        body=TavilyExtractRequest,
        errors=READ_ERRORS,
        error_schema="TavilyError",
    ),
    Operation(
        "/v1/scrape",
        "post",
        "Firecrawl-compatible scrape of one page",
        body=FirecrawlScrapeRequest,
        errors=READ_ERRORS,
        error_schema="FirecrawlError",
    ),
    Operation(
        "/v2/scrape",
        "post",
        "Firecrawl v2-compatible scrape of one page (firecrawl-py 4.x Firecrawl.scrape)",
        body=FirecrawlV2ScrapeRequest,
        errors=READ_ERRORS,
        error_schema="FirecrawlError",
    ),
    Operation(
        "/v2/search",
        "post",
        "Firecrawl v2-compatible search (firecrawl-py 4.x Firecrawl.search): web results in data.web",
        body=FirecrawlSearchRequest,
        error_schema="FirecrawlError",
    ),
    Operation(
        "/v1/context",
        "get",
        "The query's best passages across the shown pages' text under one budget of characters (like Brave's "
        "LLM Context): results of {url, title, passages of {text, start, end}}, and the pages not read with why",
        query=ContextQuery,
    ),
    Operation("/healthz", "get", "Liveness and shared-store health", errors={}, open=True),
    Operation("/metrics", "get", "Prometheus metrics", errors={}, text_response="text exposition"),
)


def _tidy(schema: Any) -> Any:
    """Drop pydantic's generated titles and null defaults (an absent field is the same request)."""
    if isinstance(schema, dict):
        return {
            k: _tidy(v)
            for k, v in schema.items()
            if not (k == "title" and isinstance(v, str)) and not (k == "default" and v is None)
        }
    if isinstance(schema, list):
        return [_tidy(v) for v in schema]
    return schema


def _component(model: type[BaseModel], components: dict[str, Any]) -> dict[str, str]:
    """Register the model (and the models it uses) as components; a reference to it."""
    schema = _tidy(model.model_json_schema(by_alias=True, ref_template=REF))
    components.update(schema.pop("$defs", {}))
    components[model.__name__] = schema
    return {"$ref": REF.format(model=model.__name__)}


def query_parameters(model: type[BaseModel]) -> list[dict[str, Any]]:
    """The model's fields as query-string parameters."""
    schema = _tidy(model.model_json_schema())
    required = set(schema.get("required", []))
    return [
        {
            "name": name,
            "in": "query",
            "required": name in required,
            "description": prop.pop("description", ""),
            "schema": prop,
        }
        for name, prop in schema["properties"].items()
    ]


def _operation(op: Operation, components: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"summary": op.summary}
    if op.query is not None:
        out["parameters"] = query_parameters(op.query)
    if op.body is not None:
        schema = _component(op.body, components)
        out["requestBody"] = {"required": True, "content": {"application/json": {"schema": schema}}}
    if op.text_response is not None:
        ok: dict[str, Any] = {"description": op.text_response}
    else:
        body = _component(op.response, components) if op.response else {"type": "object"}
        ok = {"description": "ok", "content": {"application/json": {"schema": body}}}
    error = {"application/json": {"schema": {"$ref": REF.format(model=op.error_schema)}}}
    errors = SEARCH_ERRORS if op.errors is None else op.errors
    out["responses"] = {
        "200": ok,
        **{code: {"description": text, "content": error} for code, text in errors.items()},
    }
    if op.open:
        out["security"] = []
    return out


def openapi_document(settings: Settings, operations: tuple[Operation, ...] = OPERATIONS) -> dict[str, Any]:
    components: dict[str, Any] = dict(ERROR_SCHEMAS)
    _component(SearchRequest, components)  # what the library and the MCP tool take, named for clients
    paths: dict[str, dict[str, Any]] = {}
    for op in operations:
        paths.setdefault(op.path, {})[op.method] = _operation(op, components)
    return {
        "openapi": "3.1.0",
        "info": {"title": "serpfuse", "version": "1", "description": "Fused web search for LLM agents."},
        "servers": [{"url": f"http://{settings.url_host}:{settings.port}"}],
        "components": {
            "schemas": components,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}] if settings.api_token else [],
        "paths": paths,
    }
