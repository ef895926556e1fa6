"""The MCP server (official SDK 2.x, ``MCPServer``): web_search, explain_search, engine_status and read_url.
The tools and the HTTP transport are here; their answers' text and structure in ``mcp_render``, the stdio
transport in ``mcp_stdio``.

Agent hosts flood the model's context when a tool answers at length (Claude Code warns past ~10k tokens), so
every answer is bounded by ``max_chars`` (default 6000: eight compact rows fit well inside it) and says when it
dropped rows. Each tool answers twice: as text a model reads well, and as structured content (the same rows)
a program can use. Bad input (empty query, unknown engine or strategy, a date that is not YYYY-MM-DD) is a tool
error whose message is one line.
"""

from __future__ import annotations

import functools
import inspect
import logging
import re
import time
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError

from serpfuse.errors import SerpfuseError
from serpfuse.models import (
    DEFAULT_PASSAGE_CHARS,
    MIN_PASSAGE_CHARS,
    Model,
    SearchRequest,
    SearchResponse,
    field_bounds,
)
from serpfuse.ranking.rankers import available
from serpfuse.reader.models import ReadError
from serpfuse.serve.mcp_render import (
    EngineStatusOutput,
    ExplainOutput,
    WebSearchOutput,
    _clip,
    _outcome,
    render_explanation,
    render_results,
    render_status,
)
from serpfuse.serve.read_shapes import ReadUrlOutput
from serpfuse.service import SearchService
from serpfuse.settings import MCP_MAX_CHARS, MCP_MIN_CHARS, Settings, split_list, validation_message
from serpfuse.validation import InputError, reject_unknown_keys
from serpfuse.version import __version__

log = logging.getLogger(__name__)


INSTRUCTIONS = (
    "serpfuse searches the web with several engines at once and fuses their ranked lists into one short list "
    "of the best results. Use web_search for web results (title, url, snippet, published date, score, and "
    "which engines found each one); explain_search to see why each candidate ranked where it did or was cut; "
    "engine_status to see which engines are ready, cooling down after a failure, or missing an API key; "
    "read_url to read a result page's main content as markdown."
)
_READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=True, idempotent_hint=True)


# --- the server ----------------------------------------------------------------------------------------------


def _one_line(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return validation_message(exc)
    return " ".join(str(exc).split())


# pydantic's multi-line message, as the SDK reports arguments that fail the tool's input schema.
_PYDANTIC_ERROR = re.compile(
    r"(?P<prefix>.*?)\d+ validation errors? for \S+\n(?P<loc>[^\n]+)\n\s+(?P<msg>[^\n\[]+)"
)


def one_line_error(text: str) -> str:
    """Any tool error text as one line; a pydantic report becomes ``field: message``."""
    m = _PYDANTIC_ERROR.match(text)
    if m:
        text = f"{m['prefix']}{m['loc'].strip()}: {m['msg'].strip()}"
    return " ".join(text.split())


class OneLineToolErrors:
    """Server middleware: every tool error reaches the model as one line, whoever raised it; and an argument a
    tool does not take is such an error, naming the nearest it does (the SDK would drop ``limt`` unread and
    search with the default limit)."""

    def __init__(self) -> None:
        self.arguments: dict[str, list[str]] = {}  # tool -> the arguments it takes, once registered

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method == "tools/call" and isinstance(ctx.params, Mapping):
            known = self.arguments.get(str(ctx.params.get("name")))
            given = ctx.params.get("arguments")
            if known is not None and isinstance(given, Mapping):
                try:
                    reject_unknown_keys(dict(given), known, "argument")
                except InputError as exc:
                    return CallToolResult(content=[TextContent(type="text", text=str(exc))], is_error=True)
        result = await call_next(ctx)
        if ctx.method != "tools/call":
            return result
        if isinstance(result, CallToolResult) and result.is_error:
            content = [
                TextContent(type="text", text=one_line_error(c.text)) if isinstance(c, TextContent) else c
                for c in result.content
            ]
            return result.model_copy(update={"content": content})
        if isinstance(result, dict) and result.get("isError"):  # the wire form, as the runner hands it over
            wire = [
                {**c, "text": one_line_error(c["text"])} if c.get("type") == "text" else c
                for c in result.get("content", [])
            ]
            return {**result, "content": wire}
        return result


# How a tool argument's type differs from the request field's: engines and domains may also come as a comma
# string (agents send both), a date as text (the tool says what is wrong with it, in one line).
_TOOL_TYPES: dict[str, Any] = {
    "engines": list[str] | str | None,
    "include_domains": list[str] | str | None,
    "exclude_domains": list[str] | str | None,
    "date_from": str | None,
    "date_to": str | None,
}
_LISTS = ("engines", "include_domains", "exclude_domains")


def search_parameters(settings: Settings) -> list[inspect.Parameter]:
    """The search tools' arguments, generated from the one declaration of a search (``SearchRequest``): each
    field's type, bounds and description, and the default this deployment runs with (its limit and strategy),
    so the schema an agent reads cannot drift from what the server does."""
    defaults: dict[str, Any] = {
        "limit": settings.limit,
        "strategy": settings.ranking_config.strategy,
        "engines": settings.engines or None,
    }
    params = []
    for name, info in SearchRequest.model_fields.items():
        if (
            name == "max_chars"
        ):  # the tools' own max_chars bounds the whole answer; the rows' passages share it
            continue
        low, high = field_bounds(SearchRequest, name)
        bounds: dict[str, Any] = {k: v for k, v in (("ge", low), ("le", high)) if v is not None}
        default = defaults.get(name, info.get_default(call_default_factory=True))
        kind: Any = _TOOL_TYPES.get(name, info.annotation)
        if name == "strategy":  # the rankers there are (the service names them when one is not), the default
            kind, bounds = str, {"json_schema_extra": {"enum": available()}}
        elif default in (None, []):
            default = None
            if "None" not in str(kind):
                kind = kind | None
        annotation = Annotated[kind, Field(description=info.description or name, **bounds)]
        if info.is_required():
            params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation))
        else:
            params.append(
                inspect.Parameter(
                    name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
                )
            )
    return params


MaxChars = Annotated[
    int,
    Field(
        ge=MCP_MIN_CHARS,
        le=MCP_MAX_CHARS,
        description="Upper bound on the answer's length in characters; rows that do not fit are left out.",
    ),
]


ROW_OVERHEAD = 250  # a row's title, URL and score line, beside its passages


def passage_share(max_chars: int, rows: int) -> int:
    """Each row's passage budget when ``rows`` rows share an answer of ``max_chars``."""
    return max(MIN_PASSAGE_CHARS, min(DEFAULT_PASSAGE_CHARS, max_chars // max(1, rows) - ROW_OVERHEAD))


def build_server(service: SearchService, *, name: str = "serpfuse") -> MCPServer:
    one_line = OneLineToolErrors()
    server = MCPServer(name, instructions=INSTRUCTIONS, version=__version__, middleware=[one_line])
    max_default = service.settings.mcp_max_chars

    def search_tool(explain: bool, render: Callable[[SearchResponse, int], tuple[str, Model]]):
        """One search tool; web_search and explain_search differ only in ``explain`` and how they render."""

        async def tool(*, max_chars: int = max_default, **fields: Any) -> CallToolResult:
            for name in _LISTS:
                fields[name] = split_list(fields.get(name))
            try:
                request = service.make_request(**fields)
                if request.passages:  # the rows share the answer's length: each row's passages get a share
                    request = request.model_copy(
                        update={"max_chars": passage_share(max_chars, request.limit)}
                    )
                resp = await service.search(request, explain=explain, interface="mcp")
            # Bad input (pydantic's ValidationError is a ValueError) or any serpfuse error (a query the source
            # cannot serve among them): a tool error, never a crash.
            except (ValueError, SerpfuseError) as exc:
                raise ToolError(_one_line(exc)) from None
            outcome = _outcome(resp)
            if outcome.status == "failed":  # never "no results": the agent must hear that nobody answered
                return CallToolResult(
                    content=[TextContent(type="text", text=_clip(outcome.message, max_chars))], is_error=True
                )
            text, out = render(resp, max_chars)
            return CallToolResult(
                content=[TextContent(type="text", text=text)], structured_content=out.to_json_dict()
            )

        return tool

    web_search = (
        "Search the web with several engines at once; one fused, de-duplicated list of the best results."
    )
    explain_search = (
        "The same search, explained: every candidate with its score parts, "
        "and the step that cut each cut row."
    )
    for tool_name, explain, render, output, description in (
        ("web_search", False, render_results, WebSearchOutput, web_search),
        ("explain_search", True, render_explanation, ExplainOutput, explain_search),
    ):
        tool = search_tool(explain, render)
        tool.__name__ = tool.__qualname__ = tool_name
        # The tool's arguments (the request's fields, then max_chars) and its output schema, as the SDK reads
        # them: from the signature.
        max_chars = inspect.Parameter(
            "max_chars", inspect.Parameter.KEYWORD_ONLY, default=max_default, annotation=MaxChars
        )
        tool.__signature__ = inspect.Signature(
            [*search_parameters(service.settings), max_chars],
            return_annotation=Annotated[CallToolResult, output],
        )
        server.add_tool(tool, description=description, annotations=_READ_ONLY)
        one_line.arguments[tool_name] = list(tool.__signature__.parameters)

    @functools.cache
    def reader():  # built on first use: the extractors are not imported until a page is read
        return service.reader

    @server.tool(annotations=_READ_ONLY)
    async def read_url(
        url: Annotated[str, Field(description="the http(s) page to read (HTML, PDF or plain text)")],
        max_chars: MaxChars = max_default,
        offset: Annotated[
            int, Field(ge=0, description="where to continue: the offset a truncated answer names")
        ] = 0,
        format: Annotated[  # noqa: A002 - the argument's name in the tool's schema
            Literal["markdown", "text"], Field(description="markdown (headings, lists, tables) or plain text")
        ] = "markdown",
        query: Annotated[
            str | None,
            Field(
                max_length=500,
                description="Only the passages of the page that answer this, within max_chars (not the whole page)",
            ),
        ] = None,
    ) -> Annotated[CallToolResult, ReadUrlOutput]:
        """Read a web page's main content as markdown, with title, author and date; long pages in pieces.
        With query: only the page's passages that answer it."""
        from serpfuse.serve.read_shapes import chunk, passages_chunk

        try:
            page = await reader().read(url)
            if query and query.strip():
                text, structured = passages_chunk(page, query.strip(), max_chars)
            else:
                text, structured = chunk(page, format, offset, max_chars)
        except ReadError as exc:
            raise ToolError(str(exc)) from None
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)

    @server.tool(annotations=_READ_ONLY)
    async def engine_status() -> Annotated[CallToolResult, EngineStatusOutput]:
        """Each engine's health: ready, cooling down after a failure (and for how long), or missing an API key."""
        engines = await service.engine_status()
        out = EngineStatusOutput(engines=engines)
        return CallToolResult(
            content=[TextContent(type="text", text=render_status(engines))],
            structured_content=out.to_json_dict(),
        )

    return server


SESSION_REFUSALS_QUIET_S = 10.0  # a refusal this long after the last starts a new burst, and a new log line


class OncePerBurst(logging.Filter):
    """Lets through the first of a burst of the SDK's "Refusing to open a new session" warnings (one per refused
    initialize: a flood of them is a flood of lines) and the first after a quiet spell, counting the rest."""

    def __init__(self) -> None:
        super().__init__()
        self.last = -float("inf")
        self.dropped = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.getMessage().startswith("Refusing to open a new session"):
            return True
        now = time.monotonic()
        quiet = now - self.last > SESSION_REFUSALS_QUIET_S
        self.last = now
        if not quiet:
            self.dropped += 1
            return False
        if self.dropped:
            record.msg = (
                f"{record.msg} (logged once per burst; {self.dropped} more refused in the last burst)"
            )
            self.dropped = 0
        return True


async def run_http(service: SearchService, *, host: str, port: int, log_level: str = "warning") -> None:
    """Streamable HTTP at ``http://host:port/mcp``; with ``SERPFUSE_API_TOKEN`` set, every request needs it."""
    import uvicorn

    from serpfuse.serve.connections import server_config
    from serpfuse.serve.guard import Guard

    server = build_server(service)
    logging.getLogger("mcp.server.streamable_http_manager").addFilter(OncePerBurst())
    # Sessions a client opened and never closed end when idle, and there are at most so many: 10,000 never
    # closed took a server from 85 to 483 MB under the SDK's defaults (30 minutes, 10,000).
    app = server.streamable_http_app(
        host=host,
        session_idle_timeout=service.settings.mcp_session_idle_s,
        max_sessions=service.settings.mcp_max_sessions,
    )
    # Same token check as the HTTP API; no per-request rate limit: one tool call is several MCP requests.
    guarded = Guard(
        app, settings=service.settings, metrics=service.metrics, routes={"/mcp": "mcp"}, limit_rate=False
    )
    config = server_config(guarded, service.settings, log_level=log_level, host=host, port=port)
    service.start()
    try:
        await uvicorn.Server(config).serve()
    finally:
        await service.aclose()
