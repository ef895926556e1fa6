"""The MCP server (official SDK 2.x, ``MCPServer``): web_search, explain_search, engine_status and read_url.

Agent hosts flood the model's context when a tool answers at length (Claude Code warns past ~10k tokens), so
every answer is bounded by ``max_chars`` (default 6000: eight compact rows fit well inside it) and says when it
dropped rows. Each tool answers twice: as text a model reads well, and as structured content (the same rows)
a program can use. Bad input (empty query, unknown engine or strategy, a date that is not YYYY-MM-DD) is a tool
error whose message is one line.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import logging
import os
import re
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Annotated, Any, BinaryIO, Literal

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.message import SessionMessage
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from mcp_types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    jsonrpc_message_adapter,
)
from pydantic import Field, ValidationError

from serpfuse.errors import SerpfuseError
from serpfuse.models import (
    ANSWERED,
    DEFAULT_PASSAGE_CHARS,
    MIN_PASSAGE_CHARS,
    CandidateExplanation,
    FusedResult,
    Model,
    Outcome,
    SearchRequest,
    SearchResponse,
    field_bounds,
)
from serpfuse.ranking.rankers import available
from serpfuse.reader.models import ReadError
from serpfuse.serve.read_shapes import ReadUrlOutput
from serpfuse.service import EngineHealth, SearchService
from serpfuse.settings import MCP_MAX_CHARS, MCP_MIN_CHARS, Settings, split_list, validation_message
from serpfuse.validation import InputError, check_strings, reject_unknown_keys
from serpfuse.version import __version__

log = logging.getLogger(__name__)

SNIPPET_CHARS = 300
TITLE_CHARS = 200
REASON_CHARS = 100

INSTRUCTIONS = (
    "serpfuse searches the web with several engines at once and fuses their ranked lists into one short list "
    "of the best results. Use web_search for web results (title, url, snippet, published date, score, and "
    "which engines found each one); explain_search to see why each candidate ranked where it did or was cut; "
    "engine_status to see which engines are ready, cooling down after a failure, or missing an API key; "
    "read_url to read a result page's main content as markdown."
)
_READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=True, idempotent_hint=True)


# --- structured output -------------------------------------------------------------------------------------


class ResultRow(Model):
    title: str
    url: str
    snippet: str
    published: str | None = None
    score: float
    engines: list[str]
    # with passages=true: the page's passages that answer the query (in page order), or None and why
    passages: list[str] | None = Field(None, exclude_if=lambda v: v is None)
    passages_status: str | None = Field(None, exclude_if=lambda v: v is None)


class EngineLine(Model):
    engine: str
    status: str
    rows: int
    reason: str | None = None


class WebSearchOutput(Model):
    query: str
    strategy: str
    results: list[ResultRow]
    engines: list[EngineLine]
    warnings: list[str]
    truncated: bool = Field(description="true when rows were left out to stay within max_chars")
    omitted: int = 0
    cached: bool
    shared: bool = Field(False, description="true when an identical search in flight answered this one")
    outcome: Outcome = Field(description="results, empty, degraded or failed, with the engines and why")
    score_version: str
    config_fingerprint: str


class CandidateRow(Model):
    position: int | None
    url: str
    title: str
    engine_ranks: dict[str, int]
    score: float | None
    score_parts: dict[str, float]
    selected: bool
    cut_by: str | None
    cut_reason: str | None


class ExplainOutput(Model):
    query: str
    strategy: str
    candidates: list[CandidateRow]
    total_candidates: int
    selected: int
    engines: list[EngineLine]
    warnings: list[str]
    truncated: bool
    omitted: int = 0
    cached: bool
    shared: bool = False
    outcome: Outcome
    config_fingerprint: str


class EngineStatusOutput(Model):
    engines: list[EngineHealth]


# --- text rendering ----------------------------------------------------------------------------------------


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + "…"


def _row(r: FusedResult) -> ResultRow:
    return ResultRow(
        title=_clip(r.title or r.url, TITLE_CHARS),
        url=r.url,
        snippet=_clip(r.snippet, SNIPPET_CHARS),
        published=r.published.date().isoformat() if r.published else None,
        score=round(r.score, 4),
        engines=r.engines,
        passages=[p.text for p in r.passages] if r.passages is not None else None,
        passages_status=r.passages_status,
    )


def _engine_lines(resp: SearchResponse) -> list[EngineLine]:
    """Each engine's line: those that failed first, then those that answered, then those not asked."""
    failed = {t.engine for t in _outcome(resp).failed}
    order = {e.engine: 0 if e.engine in failed else 1 if e.status in ANSWERED else 2 for e in resp.engines}
    return [
        EngineLine(
            engine=e.engine,
            status=e.status,
            rows=e.rows,
            reason=_clip(e.reason, REASON_CHARS) if e.reason else None,
        )
        for e in sorted(resp.engines, key=lambda e: order[e.engine])
    ]


def _outcome(resp: SearchResponse) -> Outcome:
    assert resp.outcome is not None  # SearchResponse fills it
    return resp.outcome


def _outcome_line(resp: SearchResponse) -> str:
    """The head's second line when the search did not simply go well: the outcome, said first."""
    outcome = _outcome(resp)
    if outcome.status in ("degraded", "empty"):  # the engines' line below says each one's reason
        return f"\n{outcome.status.capitalize()}: {_clip(outcome.summary, REASON_CHARS * 2)}."
    return ""


def _engines_text(lines: list[EngineLine]) -> str:
    parts = []
    for e in lines:
        if e.status in ANSWERED:
            parts.append(f"{e.engine} {e.status} ({e.rows})")
        else:
            parts.append(f"{e.engine} {e.status}" + (f": {e.reason}" if e.reason else ""))
    return "Engines: " + "; ".join(parts) if parts else "Engines: none"


def _row_text(i: int, r: ResultRow) -> str:
    meta = [f"score {r.score:.3f}", ", ".join(r.engines)]
    if r.published:
        meta.insert(0, f"published {r.published}")
    lines = [f"{i}. {r.title}", f"   {r.url}"]
    if r.passages:
        lines.extend(f"   > {' '.join(p.split())}" for p in r.passages)
    elif r.snippet:
        lines.append(f"   {r.snippet}")
    if r.passages_status:
        lines.append(f"   (no passages: {r.passages_status}; the engine's snippet above)")
    lines.append(f"   {' · '.join(meta)}")
    return "\n".join(lines)


def fit_blocks(
    head: str, blocks: list[str], tail: str, max_chars: int, note: Callable[[int, int], str]
) -> tuple[str, int]:
    """Join ``head``, as many leading ``blocks`` as fit, and ``tail`` within ``max_chars``; (text, blocks kept).

    When blocks are dropped, ``note(kept, total)`` is appended, and its room is reserved before any block is
    kept, so the result never exceeds ``max_chars`` (a too-long head or tail is clipped as a last resort).
    """
    total = len(blocks)
    fixed = [p for p in (head, tail) if p]
    base = sum(len(p) + 2 for p in fixed)
    reserve = len(note(total, total)) + 2 + len(str(total))  # digits of "kept" may vary
    kept: list[str] = []
    used = base
    for block in blocks:
        room = max_chars - used - reserve
        if len(block) + 2 > room:
            break
        kept.append(block)
        used += len(block) + 2
    parts = [head, *kept] if head else list(kept)
    if len(kept) < total:
        parts.append(note(len(kept), total))
    if tail:
        parts.append(tail)
    text = "\n\n".join(parts)
    if len(text) > max_chars:
        text = text[: max_chars - 1] + "…"
    return text, len(kept)


def render_results(resp: SearchResponse, max_chars: int) -> tuple[str, WebSearchOutput]:
    rows = [_row(r) for r in resp.results]
    engines = _engine_lines(resp)
    cached = " · from cache" if resp.cached else ""
    cached += " · shared with an identical search in flight" if resp.shared else ""
    head = f'Results for "{resp.query}" ({resp.strategy}, {len(rows)} rows{cached}):'
    if not rows:  # the engines answered (a search none answered is a tool error): nothing relevant came back
        head = f'No relevant results for "{resp.query}" ({resp.strategy}{cached}).'
    head += _outcome_line(resp)
    tail_lines = [_clip(_engines_text(engines), max(80, max_chars // 4))]
    tail_lines += [f"Warning: {_clip(w, 200)}" for w in resp.warnings[:3]]
    text, kept = fit_blocks(
        head,
        [_row_text(i, r) for i, r in enumerate(rows, start=1)],
        "\n".join(tail_lines),
        max_chars,
        lambda k, n: f"[truncated: showing {k} of {n} results to stay within max_chars={max_chars}]",
    )
    out = WebSearchOutput(
        query=resp.query,
        strategy=resp.strategy,
        results=rows[:kept],
        engines=engines,
        warnings=resp.warnings,
        truncated=kept < len(rows),
        omitted=len(rows) - kept,
        cached=resp.cached,
        shared=resp.shared,
        outcome=_outcome(resp),
        score_version=resp.score_version,
        config_fingerprint=resp.config_fingerprint,
    )
    return text, out


def _candidate(c: CandidateExplanation) -> CandidateRow:
    return CandidateRow(
        position=c.position,
        url=c.url,
        title=_clip(c.title or c.url, TITLE_CHARS),
        engine_ranks=c.engine_ranks,
        score=round(c.score, 4) if c.score is not None else None,
        score_parts={k: round(v, 4) for k, v in c.score_parts.items()},
        selected=c.selected,
        cut_by=c.cut_by,
        cut_reason=_clip(c.cut_reason, REASON_CHARS) if c.cut_reason else None,
    )


def _candidate_text(c: CandidateRow) -> str:
    ranks = ", ".join(f"{e} #{r}" for e, r in sorted(c.engine_ranks.items(), key=lambda t: (t[1], t[0])))
    where = f"#{c.position}" if c.selected else "cut"
    score = f"score {c.score:.3f}" if c.score is not None else "not scored"
    lines = [f"{where} {score} [{ranks}] {c.title}", f"   {c.url}"]
    if c.score_parts:
        lines.append("   parts: " + ", ".join(f"{k}={v:.3g}" for k, v in c.score_parts.items()))
    if not c.selected:
        lines.append(f"   cut by {c.cut_by}: {c.cut_reason}")
    return "\n".join(lines)


def render_explanation(resp: SearchResponse, max_chars: int) -> tuple[str, ExplainOutput]:
    candidates = [_candidate(c) for c in resp.candidates or []]
    selected = sum(1 for c in candidates if c.selected)
    engines = _engine_lines(resp)
    head = (
        f'Candidates for "{resp.query}" ({resp.strategy}): {len(candidates)} seen, {selected} selected; '
        "selected rows first, then every cut row with the step that cut it."
    ) + _outcome_line(resp)
    text, kept = fit_blocks(
        head,
        [_candidate_text(c) for c in candidates],
        _clip(_engines_text(engines), max(80, max_chars // 4)),
        max_chars,
        lambda k, n: f"[truncated: showing {k} of {n} candidates to stay within max_chars={max_chars}]",
    )
    out = ExplainOutput(
        query=resp.query,
        strategy=resp.strategy,
        candidates=candidates[:kept],
        total_candidates=len(candidates),
        selected=selected,
        engines=engines,
        warnings=resp.warnings,
        truncated=kept < len(candidates),
        omitted=len(candidates) - kept,
        cached=resp.cached,
        shared=resp.shared,
        outcome=_outcome(resp),
        config_fingerprint=resp.config_fingerprint,
    )
    return text, out


def render_status(engines: list[EngineHealth]) -> str:
    lines = ["Engine status (key status only; keys are never shown):"]
    for e in engines:
        bits: list[str] = [e.state]
        if e.reason:
            bits.append(e.reason)
        if e.tier:
            bits.append(f"tier {e.tier}")
        if e.key:
            bits.append(f"key {e.key}")
        if e.last_status:
            bits.append(f"last search: {e.last_status} in {e.last_latency_ms or 0:.0f} ms")
        lines.append(f"- {e.engine}: " + " · ".join(bits))
    return "\n".join(lines)


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


async def run_stdio(service: SearchService) -> None:
    """``MCPServer.run_stdio_async``, except that every line is screened first (``screen_line``): the SDK only
    logs a line it cannot read, so a request it cannot read would never be answered."""
    from mcp.server.stdio import stdio_server

    server = build_server(service)
    lowlevel = server._lowlevel_server  # what run_stdio_async runs; the SDK has no hook for unread lines
    service.start()
    try:
        with _claimed_stdin() as wire:
            lines = ScreenedLines(anyio.wrap_file(wire))
            async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
                lines.answer_with(write_stream)
                answers = AnswerWatch(write_stream, lines)
                await lowlevel.run(read_stream, answers, lowlevel.create_initialization_options())
    finally:
        await service.aclose()


@contextlib.contextmanager
def _claimed_stdin() -> Iterator[BinaryIO]:
    """The protocol's input, read through a private duplicate of fd 0 while fd 0 itself reads /dev/null (as
    the SDK does when it reads stdin itself), so nothing else in the process can take the client's bytes."""
    if sys.platform == "win32":  # pragma: no cover
        yield sys.stdin.buffer
        return
    import fcntl

    wire = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        # Never closed: a reading thread may still block on it after the server stops.
        yield os.fdopen(wire, "rb", closefd=False)
    finally:
        os.dup2(wire, 0)


IN_FLIGHT_GRACE_S = 60.0  # at most this long after stdin closes for the requests it sent to be answered


class ScreenedLines:
    """stdin's lines as the SDK's reader takes them (``async for line in stdin``), each screened first: a line
    the SDK can read goes on; one it cannot is answered here (a JSON-RPC error for each request whose id can be
    read, with a null id for a request whose id is no string or integer), or, with no id to answer, logged (its
    length, never its text) and skipped.

    When stdin closes, the lines end only once every request they carried has been answered (``AnswerWatch``
    sees the answers go out), or after ``IN_FLIGHT_GRACE_S``: the SDK stops serving when its input ends, and
    would answer the searches still running "Connection closed"."""

    def __init__(self, wire: Any) -> None:
        self._wire = wire
        self._replies: Any = None
        self._ready = anyio.Event()
        self.pending: set[str | int] = set()  # requests passed on and not yet answered
        self._answered = anyio.Event()

    def answer_with(self, write_stream: Any) -> None:
        self._replies = write_stream
        self._ready.set()

    def answered(self, request_id: Any) -> None:
        self.pending.discard(request_id)
        if not self.pending:
            self._answered.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._screened()

    async def _screened(self) -> AsyncIterator[str]:
        async for raw in self._wire:
            line = raw.decode("utf-8", "replace")  # as the SDK decodes: an invalid byte becomes U+FFFD
            readable, replies = screen_line(line)
            if readable:
                self._note(line)
                yield line
                continue
            if not replies and line.strip():
                log.warning("skipped a line that is no JSON-RPC message with an id (%d bytes)", len(raw))
            if replies:
                await self._ready.wait()
            for reply in replies:
                await self._replies.send(SessionMessage(reply))
        if self.pending:  # stdin closed with requests in flight: their answers first
            self._answered = anyio.Event()
            with anyio.move_on_after(IN_FLIGHT_GRACE_S):
                while self.pending:
                    await self._answered.wait()
                    self._answered = anyio.Event()

    def _note(self, line: str) -> None:
        """A request passed on is pending until answered; a cancelled one is not waited for."""
        try:
            message = json.loads(line)
        except ValueError:
            return
        if not isinstance(message, dict):
            return
        if "method" in message and _request_id(message) is not None:
            self.pending.add(message["id"])
        elif message.get("method") == "notifications/cancelled":
            params = message.get("params")
            if isinstance(params, dict):
                self.answered(params.get("requestId"))


class AnswerWatch:
    """The SDK's write stream, telling ``ScreenedLines`` of each answer that goes out."""

    def __init__(self, stream: Any, lines: ScreenedLines) -> None:
        self._stream = stream
        self._lines = lines

    async def send(self, item: Any) -> None:
        await self._stream.send(item)
        message = getattr(item, "message", None)
        if message is not None and not hasattr(message, "method"):  # a response or an error, not a request
            self._lines.answered(getattr(message, "id", None))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    async def __aenter__(self) -> AnswerWatch:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._stream.__aexit__(*exc)


def screen_line(line: str) -> tuple[bool, list[JSONRPCError]]:
    """Whether the SDK can read ``line`` (one JSON-RPC message), and if not, the errors that answer it: one per
    request whose id can be read (in a batch, which MCP does not take, each of its requests), none for a
    notification, a response or a line whose id cannot be read."""
    if not line.strip():
        return False, []
    try:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
        readable = True
    except ValueError:  # pydantic's ValidationError, for JSON or for the message's shape
        readable = False
    if readable:
        # The SDK reads a request whose id is no id ({"a": 1}, [1], true) as a notification, and never answers.
        if _asks_with_unreadable_id(json.loads(line)):
            return False, [_error(None, INVALID_REQUEST, "id must be a string or an integer")]
        return True, []
    try:
        return False, _answers_to_unreadable(line)
    except (
        RecursionError
    ):  # nested past what json (or the checks below) can walk: its id is up front, or none
        try:
            request_id = _leading_id(line)
        except RecursionError:
            request_id = None
        return False, [] if request_id is None else [
            _error(request_id, PARSE_ERROR, "nests too deeply to read")
        ]


def _answers_to_unreadable(line: str) -> list[JSONRPCError]:
    try:
        data = json.loads(line)
    except ValueError:
        request_id = _leading_id(line)
        return [] if request_id is None else [_error(request_id, PARSE_ERROR, "not valid JSON")]
    if isinstance(data, list):
        ids = [i for i in map(_request_id, data) if i is not None]
        return [_error(i, INVALID_REQUEST, "batches are not taken: one message a line") for i in ids]
    request_id = _request_id(data)
    if request_id is None:
        if _asks_with_unreadable_id(data):  # JSON-RPC's answer when the id cannot be read: a null id
            return [_error(None, INVALID_REQUEST, "id must be a string or an integer")]
        return []
    return [_error(request_id, *_what_is_wrong(data))]


def _asks_with_unreadable_id(message: Any) -> bool:
    """A request (it names a method) whose id is there but no id JSON-RPC allows ({"a": 1}, [1], true, 1.5)."""
    return (
        isinstance(message, dict)
        and isinstance(message.get("method"), str)
        and message.get("id") is not None
        and _request_id(message) is None
    )


def _request_id(message: Any) -> str | int | None:
    """The id of a message that asks for an answer (not a response), when it is one JSON-RPC allows."""
    if not isinstance(message, dict) or (
        "method" not in message and ("result" in message or "error" in message)
    ):
        return None
    request_id = message.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return None
    if isinstance(request_id, str) and not request_id.isascii():
        try:
            request_id.encode()
        except UnicodeEncodeError:  # a lone surrogate: no answer could carry it
            return None
    return request_id


def _what_is_wrong(request: dict[str, Any]) -> tuple[int, str]:
    try:
        check_strings(request.get("params"), "params")
    except InputError as exc:
        return INVALID_PARAMS, str(exc)
    if request.get("jsonrpc") != "2.0":
        return INVALID_REQUEST, 'jsonrpc must be "2.0"'
    if not isinstance(request.get("method"), str):
        return INVALID_REQUEST, "method must be a string"
    if "params" in request and not isinstance(request["params"], dict):
        return INVALID_PARAMS, "params must be an object"
    return INVALID_REQUEST, "not a JSON-RPC request this server can read"


def _leading_id(line: str) -> str | int | None:
    """The top-level id of a JSON object cut short or broken after it (``{"jsonrpc":"2.0","id":7,"meth``): its
    members read one by one up to the first that does not parse."""
    decoder = json.JSONDecoder()
    at = _skip_space(line, 0)
    if not line.startswith("{", at):
        return None
    at += 1
    while True:
        try:
            key, at = decoder.raw_decode(line, _skip_space(line, at))
            at = _skip_space(line, at)
            if not line.startswith(":", at):
                return None
            value, at = decoder.raw_decode(line, _skip_space(line, at + 1))
        except ValueError:
            return None
        if key == "id":
            return _request_id({"id": value})
        at = _skip_space(line, at)
        if not line.startswith(",", at):
            return None
        at += 1


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def _error(request_id: str | int | None, code: int, message: str) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message))


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
