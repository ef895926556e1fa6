"""The HTTP API's OpenAPI document (``/openapi.json``)."""

from __future__ import annotations

from typing import Any

from serpfuse.models import MAX_LIMIT, MAX_QUERY_CHARS, SearchRequest, SearchResponse
from serpfuse.serve.search_shapes import MAX_TAVILY_DAYS, TAVILY_KEYS, TAVILY_TIME_RANGES
from serpfuse.settings import Settings
from serpfuse.validation import LOCALE_MAX_CHARS


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
