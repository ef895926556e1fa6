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

from serpfuse.cli.errors import EXIT_NO_RESULTS, fail, validation_message
from serpfuse.models import ANSWERED, SearchResponse
from serpfuse.ranking.rankers import UnknownStrategy, available
from serpfuse.service import QueryTooLong, SearchService
from serpfuse.settings import ConfigError, load_settings, read_weights_file
from serpfuse.sources.base import SourceError
from serpfuse.sources.fanout import UnknownEngine

NO_ANSWER_HINT = (
    "serpfuse: no engine answered; check the network connection (and any proxy settings), "
    "or search a recording with --replay FILE"
)


class TimeRangeChoice(StrEnum):
    day = "day"
    week = "week"
    month = "month"
    year = "year"


# Engine text (titles, snippets, URLs, engine names and reasons) goes through ``escape``: rich reads "[...]" as
# markup, and "[link=...]" in a title would become a terminal hyperlink the engine chose.
def render_table(resp: SearchResponse, console: Console) -> None:
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
        table.add_row(str(i), body, escape(r.reason), f"{r.score:.3f}")
    console.print(table)
    render_engines(resp, console)


def render_engines(resp: SearchResponse, console: Console) -> None:
    parts = []
    for e in resp.engines:
        colour = {"ok": "green", "empty": "yellow", "skipped": "dim"}.get(e.status, "red")
        why = f" ({escape(e.reason)})" if e.reason and e.status != "ok" else ""
        parts.append(
            f"[{colour}]{escape(e.engine)}: {e.status}, {e.rows} rows, {e.latency_ms:.0f} ms{why}[/{colour}]"
        )
    console.print("engines: " + " · ".join(parts) if parts else "engines: none")
    for w in resp.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(w)}")
    console.print(
        f"[dim]took {resp.took_ms:.0f} ms · {resp.score_version} · config {resp.config_fingerprint}"
        f"{' · truncated' if resp.truncated else ''}{' · cached' if resp.cached else ''}[/dim]"
    )


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


def register(app: typer.Typer) -> None:
    @app.command()
    def search(
        query: Annotated[
            str, typer.Argument(help='What to search for. site:, -site:, "phrases" and OR work.')
        ],
        limit: Annotated[
            int | None, typer.Option("--limit", "-n", help="How many results (1-20, default 8).")
        ] = None,
        strategy: Annotated[str | None, typer.Option(help=f"Ranker: {', '.join(available())}.")] = None,
        engine: Annotated[
            list[str] | None, typer.Option("--engine", "-e", help="Engine to ask (repeatable).")
        ] = None,
        include_domain: Annotated[
            list[str] | None, typer.Option("--include-domain", help="Only these domains.")
        ] = None,
        exclude_domain: Annotated[
            list[str] | None, typer.Option("--exclude-domain", help="Never these (and subdomains).")
        ] = None,
        time_range: Annotated[
            TimeRangeChoice | None, typer.Option(help="Only pages from the last day/week/month/year.")
        ] = None,
        date_from: Annotated[str | None, typer.Option("--from", help="Earliest date, YYYY-MM-DD.")] = None,
        date_to: Annotated[str | None, typer.Option("--to", help="Latest date, YYYY-MM-DD.")] = None,
        region: Annotated[str | None, typer.Option(help="Region, e.g. us, de, cn.")] = None,
        language: Annotated[str | None, typer.Option(help="Language, e.g. en, zh.")] = None,
        category: Annotated[
            str | None, typer.Option(help="general (the web, default) or news (news articles).")
        ] = None,
        min_score: Annotated[float, typer.Option(help="Drop results scoring below this.")] = 0.0,
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
        explain: Annotated[
            bool, typer.Option(help="List every candidate with its score parts and what cut it.")
        ] = False,
        read: Annotated[
            int,
            typer.Option("--read", min=0, max=20, help="Also read the top N pages (within the deadline)."),
        ] = 0,
    ) -> None:
        """Search the web (or a recording) and print the fused list."""
        try:
            settings = load_settings(
                config_file, replay=replay, deadline_s=deadline, limit=limit, strategy=strategy
            )
            if weights:  # the file's weights replace the settings' [ranking.weights]
                settings.ranking = settings.ranking.model_copy(update={"weights": read_weights_file(weights)})
        except ConfigError as exc:
            fail(str(exc))
        try:
            day_from = dt.date.fromisoformat(date_from) if date_from else None
            day_to = dt.date.fromisoformat(date_to) if date_to else None
        except ValueError as exc:
            fail(f"bad date: {exc}")

        pages: list[dict] = []

        async def run() -> SearchResponse:
            started = time.monotonic()
            service = SearchService.from_settings(settings, use_cache=not no_cache)
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
        except (UnknownStrategy, UnknownEngine, SourceError, ConfigError, QueryTooLong) as exc:
            fail(str(exc))
        if as_json:
            payload = response.to_json_dict()
            if read:
                payload["pages"] = pages
            print(json.dumps(payload, ensure_ascii=False, indent=2))
        else:
            console = Console(soft_wrap=False)
            render_table(response, console)
            if explain:
                render_explain(response, console)
            for i, page in enumerate(pages, start=1):
                console.rule(f"{i}. {page['title'] or page['url']}")
                console.print(page["markdown"] or f"[red]not read: {page['error']}[/red]", markup=False)
        if not response.results and not any(e.status in ANSWERED for e in response.engines):
            for e in response.engines:
                print(f"serpfuse: {e.engine}: {e.status}: {e.reason or 'no answer'}", file=sys.stderr)
            if any(e.status in ("error", "timeout") for e in response.engines):
                print(NO_ANSWER_HINT, file=sys.stderr)
            raise SystemExit(EXIT_NO_RESULTS)
