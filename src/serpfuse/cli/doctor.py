"""`serpfuse doctor`: the live canary. Parses options, runs ``serpfuse.sources.doctor``, prints a table or JSON."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from serpfuse.cli.errors import EXIT_NO_RESULTS, fail

COLOURS = {"ok": "green", "skipped": "dim", "empty": "yellow", "off-topic": "yellow"}


def _pct(value: float | None) -> str:
    return "" if value is None else f"{value:.0%}"


def render(report: dict[str, Any], console: Console) -> None:
    table = Table(title=f"serpfuse doctor · {len(report['queries'])} queries · {report['checkedAt']}")
    for name in ("engine", "status", "ok", "rows", "ms", "title", "url", "snip", "topic", "overlap"):
        table.add_column(name, justify="left" if name in ("engine", "status") else "right", no_wrap=True)
    table.add_column("why", overflow="fold", min_width=20)
    for row in report["engines"]:
        colour = COLOURS.get(row["status"], "red")
        table.add_row(
            row["engine"] + ("*" if row["defaultPrimary"] else ""),
            f"[{colour}]{row['status']}[/{colour}]",
            f"{row['queriesOk']}/{row['queriesAsked']}",
            "" if row["rows"] is None else f"{row['rows']:.1f}",
            "" if row["latencyMs"] is None else f"{row['latencyMs']:.0f}",
            _pct(row["withTitle"]),
            _pct(row["withUrl"]),
            _pct(row["withSnippet"]),
            _pct(row["onTopic"]),
            _pct(row["overlap"]),
            row["reason"] or "",
        )
    console.print(table)
    console.print(
        "[dim]* default primary: one that is not ok fails the check (exit 1). ok = queries ok / asked; "
        "topic = rows carrying the query's terms; overlap = rows another engine also returned[/dim]"
    )
    if report["brokenPrimaries"]:
        console.print(f"[red]broken default primaries: {', '.join(report['brokenPrimaries'])}[/red]")
    else:
        console.print("[green]every default primary answered[/green]")


def register(app: typer.Typer) -> None:
    @app.command()
    def doctor(
        as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
        engine: Annotated[
            list[str] | None,
            typer.Option("--engine", "-e", help="Engine to check (repeatable; default all)."),
        ] = None,
        queries: Annotated[
            Path | None,
            typer.Option(
                "--queries", "-q", help="Queries to use instead of the shipped set: one per line, or JSON."
            ),
        ] = None,
        base_url: Annotated[
            list[str] | None,
            typer.Option("--base-url", help="ENGINE=URL: send that engine's requests there."),
        ] = None,
        timeout: Annotated[float | None, typer.Option(help="Per-engine timeout in seconds.")] = None,
        config: Annotated[str | None, typer.Option(help="Settings file (TOML).")] = None,
    ) -> None:
        """Check every engine live on a fixed query set; exit 1 when a default primary is broken."""
        from serpfuse.cli.record import QueryFileError, _base_urls, read_queries
        from serpfuse.engines import UnknownEngine
        from serpfuse.settings import ConfigError, load_settings
        from serpfuse.sources.base import SourceError
        from serpfuse.sources.doctor import DoctorQuery, check_engines, cooldowns, shipped_queries
        from serpfuse.sources.live import LiveSource

        if timeout is not None and timeout <= 0:
            fail("timeout must be positive")
        try:
            settings = load_settings(config, timeout_s=timeout)
            query_set = [DoctorQuery(q) for q in read_queries(queries)] if queries else shipped_queries()
        except (QueryFileError, ConfigError) as exc:
            fail(str(exc))
        try:
            source = LiveSource.from_environment(
                engines=engine or settings.engines,
                proxy=settings.proxy,
                impersonate=settings.impersonate,
                timeout_s=settings.timeout_s,
                base_urls={**settings.engine_base_urls, **_base_urls(base_url)},
                contacts=settings.engine_contacts,
                cooldowns=cooldowns(),
            )
        except (SourceError, UnknownEngine) as exc:
            fail(str(exc))

        async def run() -> dict[str, Any]:
            try:
                report = await check_engines(source, query_set, settings.ranking_config.consensus.groups)
                return report.to_json()
            finally:
                await source.aclose()

        report = asyncio.run(run())
        if as_json:
            print(json.dumps(report, ensure_ascii=False, indent=2))
        else:
            render(report, Console(soft_wrap=False))
        if report["brokenPrimaries"]:
            raise SystemExit(EXIT_NO_RESULTS)
