"""`serpfuse search`: one query, the fused list as a table (or JSON), every cut explained on request."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import sys
import time
from enum import StrEnum
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from serpfuse import service
from serpfuse.cli.errors import EXIT_NO_RESULTS, fail, fail_on, validation_message
from serpfuse.config import DEFAULT_STRATEGY
from serpfuse.engines import ENGINE_NAMES
from serpfuse.errors import SerpfuseError
from serpfuse.models import (
    ANSWERED,
    DEFAULT_LIMIT,
    EngineReport,
    SearchCall,
    SearchRequest,
    SearchResponse,
    field_help,
)
from serpfuse.ranking.rankers import available
from serpfuse.service import SearchService
from serpfuse.settings import load_settings, read_weights_file
from serpfuse.state.metrics import Uncounted

# What a failed search's one line ends with: where to look, and what answers without the network.
FAILED_TAIL = "(serpfuse engines shows keys and cooldowns; --replay FILE searches a recording)"
# An engine skipped for want of set-up (a key, a base URL), in the live source's own words.
NOT_SET_UP = {"no API key": "key", "no base URL": "base URL"}
BACKUP_NOT_NEEDED = "fallback tier not needed"
# The fan-out's words for its tiers, said plainly: a user never chose a "tier".
PLAIN_WARNINGS = (
    ("; used the fallback tier", "; asked the backup engines"),
    ("primary engine", "main engine"),
)


class TimeRangeChoice(StrEnum):
    day = "day"
    week = "week"
    month = "month"
    year = "year"


# Engine text (titles, snippets, URLs, engine names and reasons) goes through ``escape``: rich reads "[...]" as
# markup, and "[link=...]" in a title would become a terminal hyperlink the engine chose.
def render_table(resp: SearchResponse, console: Console, *, named: bool = False) -> None:
    table = Table(
        title=f"serpfuse · {escape(repr(resp.query))} · {resp.strategy}", show_lines=True, expand=True
    )
    table.add_column("#", justify="right", width=3)
    table.add_column("result", ratio=5, overflow="fold")
    table.add_column("why", ratio=3)
    table.add_column("score", justify="right", width=7)
    for i, r in enumerate(resp.results, start=1):
        snippet = r.snippet if len(r.snippet) <= 160 else r.snippet[:157] + "..."
        body = f"[bold]{escape(r.title or r.url)}[/bold]\n[cyan]{escape(r.url)}[/cyan]\n{escape(snippet)}"
        if r.passages:  # the evidence, in place of the snippet
            shown = "\n".join(
                f"> {escape(' '.join(p.text.split()))}" + (f" [dim]({escape(p.why)})[/dim]" if p.why else "")
                for p in r.passages
            )
            body = f"[bold]{escape(r.title or r.url)}[/bold]\n[cyan]{escape(r.url)}[/cyan]\n{shown}"
        elif r.passages_status:
            body += f"\n[yellow](no passages: {r.passages_status})[/yellow]"
        table.add_row(str(i), body, escape(r.reason), f"{r.score:.3f}")
    console.print(table)
    render_engines(resp, console, named=named)


def _needs_set_up(report: EngineReport) -> str | None:
    """What a skipped engine lacks ("key", "base URL"), or None."""
    if report.status != "skipped" or not report.reason:
        return None
    return next((what for prefix, what in NOT_SET_UP.items() if report.reason.startswith(prefix)), None)


def plain_warning(warning: str) -> str:
    for jargon, plain in PLAIN_WARNINGS:
        warning = warning.replace(jargon, plain)
    return warning


def split_engines(resp: SearchResponse, *, named: bool) -> tuple[list[EngineReport], str | None]:
    """The engines to report one by one, and one line for those left out because nobody set them up.

    Engines the user named are each reported; of the default set, those that need a key or a base URL nobody
    gave are summed up in one line, and backup engines not needed are left out (the others answered)."""
    shown: list[EngineReport] = []
    lacking: dict[str, list[str]] = {"key": [], "base URL": []}
    for report in resp.engines:
        what = None if named else _needs_set_up(report)
        if what is not None:
            lacking[what].append(report.engine)
        elif named or report.reason != BACKUP_NOT_NEEDED:
            shown.append(report)
    parts = []
    if keyed := lacking["key"]:
        n = len(keyed)
        parts.append(
            f"{n} keyed engines need keys ({', '.join(keyed)})"
            if n > 1
            else f"1 keyed engine needs a key ({keyed[0]})"
        )
    if based := lacking["base URL"]:
        parts.append(f"{', '.join(based)} need{'' if len(based) > 1 else 's'} a base URL")
    summary = f"{' and '.join(parts)}; see serpfuse engines" if parts else None
    return shown, summary


def render_engines(resp: SearchResponse, console: Console, *, named: bool = False) -> None:
    shown, summary = split_engines(resp, named=named)
    outcome = resp.outcome
    if outcome is not None and outcome.status in ("degraded", "empty"):  # said before the engines' details
        console.print(f"[yellow]{outcome.status}:[/yellow] {escape(outcome.summary)}")  # reasons: below
    parts = []
    for e in shown:
        colour = {"ok": "green", "empty": "yellow", "decoy": "yellow", "skipped": "dim"}.get(e.status, "red")
        why = f" ({escape(e.reason)})" if e.reason and e.status != "ok" else ""
        parts.append(
            f"[{colour}]{escape(e.engine)}: {e.status}, {e.rows} rows, {e.latency_ms:.0f} ms{why}[/{colour}]"
        )
    if summary:
        parts.append(f"[dim]{escape(summary)}[/dim]")
    console.print("engines: " + " · ".join(parts) if parts else "engines: none")
    for w in resp.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(plain_warning(w))}")
    console.print(
        f"[dim]took {resp.took_ms:.0f} ms · {resp.score_version} · config {resp.config_fingerprint}"
        f"{' · truncated' if resp.truncated else ''}{' · cached' if resp.cached else ''}[/dim]"
    )


def failure_line(resp: SearchResponse) -> str:
    """A search no engine answered, in one line: the outcome (the engines that failed and why, each hint's
    advice, those nobody set up) and where to look next. (Its warnings say the same again: left out.)"""
    message = resp.outcome.message if resp.outcome is not None else service.NOT_REACHED_HINT
    return f"serpfuse: {message} {FAILED_TAIL}"


def render_explain(resp: SearchResponse, console: Console) -> None:
    table = Table(title="every candidate, and why it is where it is", expand=True)
    table.add_column("pos", justify="right", width=4)
    table.add_column("url", ratio=4, overflow="fold")
    table.add_column("engines", ratio=2)
    table.add_column("score parts", ratio=3, overflow="fold")
    table.add_column("cut by", ratio=3, overflow="fold")
    for c in resp.candidates or []:
        ranks = ", ".join(f"{e} #{r}" for e, r in sorted(c.engine_ranks.items()))
        parts = ", ".join(f"{k}={v:.3g}" for k, v in c.score_parts.items() if v)
        cut = "" if c.selected else f"{c.cut_by}: {c.cut_reason}"
        table.add_row(str(c.position or "-"), escape(c.url), escape(ranks), parts, escape(cut))
    console.print(table)
    # Rows that never became candidates: an engine's list about another question (engines.decoy).
    for e in resp.engines:
        if e.status == "decoy":
            console.print(
                f"[yellow]{escape(e.engine)}: not a candidate: {escape(e.reason or 'decoy list')}[/yellow]"
            )


def register(app: typer.Typer) -> None:
    @app.command()
    def search(
        query: Annotated[str, typer.Argument(help=field_help(SearchRequest, "query"))],
        limit: Annotated[
            int | None, typer.Option("--limit", "-n", help=field_help(SearchRequest, "limit", DEFAULT_LIMIT))
        ] = None,
        strategy: Annotated[
            str | None, typer.Option(help=f"Ranker: {', '.join(available())} (default {DEFAULT_STRATEGY}).")
        ] = None,
        engine: Annotated[
            list[str] | None,
            typer.Option("--engine", "-e", help=f"Engine to ask (repeatable): {', '.join(ENGINE_NAMES)}."),
        ] = None,
        include_domain: Annotated[
            list[str] | None,
            typer.Option(
                "--include-domain", help=field_help(SearchRequest, "include_domains") + " Repeatable."
            ),
        ] = None,
        exclude_domain: Annotated[
            list[str] | None,
            typer.Option(
                "--exclude-domain", help=field_help(SearchRequest, "exclude_domains") + " Repeatable."
            ),
        ] = None,
        time_range: Annotated[
            TimeRangeChoice | None, typer.Option(help=field_help(SearchRequest, "time_range"))
        ] = None,
        date_from: Annotated[
            str | None, typer.Option("--from", help=field_help(SearchRequest, "date_from"))
        ] = None,
        date_to: Annotated[
            str | None, typer.Option("--to", help=field_help(SearchRequest, "date_to"))
        ] = None,
        region: Annotated[str | None, typer.Option(help=field_help(SearchRequest, "region"))] = None,
        language: Annotated[str | None, typer.Option(help=field_help(SearchRequest, "language"))] = None,
        category: Annotated[
            str | None, typer.Option(help=field_help(SearchRequest, "category", "general"))
        ] = None,
        min_score: Annotated[float, typer.Option(help=field_help(SearchRequest, "min_score"))] = 0.0,
        replay: Annotated[
            str | None,
            typer.Option(help="Answer from a recording instead of the web (or set SERPFUSE_REPLAY)."),
        ] = None,
        deadline: Annotated[
            float | None, typer.Option(help="Overall deadline in seconds (default 20).")
        ] = None,
        no_cache: Annotated[
            bool, typer.Option("--no-cache", help="Ignore and do not fill the result cache.")
        ] = False,
        config_file: Annotated[
            str | None, typer.Option("--config", help="Settings file (default serpfuse.toml).")
        ] = None,
        weights: Annotated[
            str | None, typer.Option(help="Engine weights file, [ranking.weights] (serpfuse calibrate).")
        ] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print the response object as JSON.")] = False,
        explain: Annotated[bool, typer.Option(help=field_help(SearchCall, "explain"))] = False,
        read: Annotated[
            int,
            typer.Option("--read", min=0, max=20, help="Also read the top N pages (within the deadline)."),
        ] = 0,
        passages: Annotated[
            bool,
            typer.Option(
                "--passages",
                help="Read each shown page: the passages that answer the query (deadline + 2 s).",
            ),
        ] = False,
        max_chars: Annotated[
            int | None,
            typer.Option("--max-chars", help="Characters of passages per row (100-20000, default 1500)."),
        ] = None,
    ) -> None:
        """Search the web (or a recording) and print the fused list."""
        try:
            settings = load_settings(
                config_file, replay=replay, deadline_s=deadline, limit=limit, strategy=strategy
            )
            if weights:  # the file's weights replace the settings' [ranking.weights]
                settings.ranking = settings.ranking.model_copy(update={"weights": read_weights_file(weights)})
        except SerpfuseError as exc:
            fail_on(exc)
        try:
            day_from = dt.date.fromisoformat(date_from) if date_from else None
            day_to = dt.date.fromisoformat(date_to) if date_to else None
        except ValueError as exc:
            fail(f"bad date: {exc}")

        pages: list[dict] = []

        async def run() -> SearchResponse:
            started = time.monotonic()
            service = SearchService.from_settings(settings, use_cache=not no_cache, metrics=Uncounted())
            try:
                request = service.make_request(
                    query=query,
                    limit=limit,
                    strategy=strategy,
                    engines=engine or None,
                    include_domains=include_domain or [],
                    exclude_domains=exclude_domain or [],
                    time_range=time_range.value if time_range else None,
                    date_from=day_from,
                    date_to=day_to,
                    region=region,
                    language=language,
                    category=category,
                    min_score=min_score,
                    passages=passages or max_chars is not None or None,  # --max-chars alone asks for them
                    max_chars=max_chars,
                )
                response = await service.search(
                    request, explain=explain, use_cache=not no_cache, interface="cli"
                )
                if read:  # the pages share what is left of the search's deadline
                    from serpfuse.reader.service import Reader
                    from serpfuse.serve.read_shapes import read_results

                    reader = Reader.from_settings(settings, service.cache if not no_cache else None)
                    left = settings.deadline_s - (time.monotonic() - started)
                    urls = [r.url for r in response.results[:read]]
                    pages.extend(await read_results(reader, urls, left))
                return response
            finally:
                await service.aclose()

        try:
            response = asyncio.run(run())
        except ValidationError as exc:
            fail(validation_message(exc))
        except SerpfuseError as exc:
            fail_on(exc)
        named = bool(engine or settings.engines)  # the user chose the engines: each one is reported
        answered = any(e.status in ANSWERED for e in response.engines)
        if as_json:
            payload = response.to_json_dict()
            if read:
                payload["pages"] = pages
            print(json.dumps(payload, ensure_ascii=False, indent=2))
        elif response.results or answered:
            console = Console(soft_wrap=False)
            render_table(response, console, named=named)
            if explain:
                render_explain(response, console)
            for i, page in enumerate(pages, start=1):
                console.rule(escape(f"{i}. {page['title'] or page['url']}"))
                if page["markdown"]:
                    console.print(page["markdown"], markup=False, highlight=False)
                else:
                    console.print(f"not read: {page['error']}", style="red", markup=False, highlight=False)
        if response.outcome is not None and response.outcome.status == "failed":
            print(failure_line(response), file=sys.stderr)
            raise SystemExit(EXIT_NO_RESULTS)
