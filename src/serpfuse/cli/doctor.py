"""`serpfuse doctor`: the live canary. Parses options, runs ``serpfuse.sources.doctor``, prints a table or JSON."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table

from serpfuse.cli.errors import EXIT_NO_RESULTS, fail, fail_on
from serpfuse.errors import SerpfuseError

COLOURS = {"ok": "green", "skipped": "dim", "empty": "yellow", "off-topic": "yellow", "decoy": "yellow"}


def _pct(value: float | None) -> str:
    return "" if value is None else f"{value:.0%}"


NUMBERS = ("ok", "rows", "ms", "title", "url", "snip", "topic", "overlap")
WHY_MIN_WIDTH = 20


def _table(report: dict[str, Any], *, with_why: bool, compact: bool) -> Table:
    table = Table(
        title=f"serpfuse doctor · {len(report['queries'])} queries · {report['checkedAt']}",
        box=box.SIMPLE_HEAD if compact else box.HEAVY_HEAD,
        pad_edge=not compact,
        padding=(0, 0, 0, 1) if compact else (0, 1),  # at 80 columns one space between columns is enough
    )
    for name in ("engine", "status", *NUMBERS):
        table.add_column(name, justify="left" if name in ("engine", "status") else "right", no_wrap=True)
    if with_why:
        table.add_column("why", overflow="fold", min_width=WHY_MIN_WIDTH)
    for row in report["engines"]:
        colour = COLOURS.get(row["status"], "red")
        cells = [
            escape(row["engine"] + ("*" if row["defaultPrimary"] else "")),
            f"[{colour}]{escape(row['status'])}[/{colour}]",
            f"{row['queriesOk']}/{row['queriesAsked']}",
            "" if row["rows"] is None else f"{row['rows']:.1f}",
            "" if row["latencyMs"] is None else f"{row['latencyMs']:.0f}",
            _pct(row["withTitle"]),
            _pct(row["withUrl"]),
            _pct(row["withSnippet"]),
            _pct(row["onTopic"]),
            _pct(row["overlap"]),
        ]
        table.add_row(*cells, *([escape(row["reason"] or "")] if with_why else []))
    return table


def _room_for_why(report: dict[str, Any], console: Console) -> bool:
    """Whether the columns fit whole with a why column of at least WHY_MIN_WIDTH beside them (rich would
    otherwise shrink the why column to nothing and cut the headers short)."""
    numbers = Measurement.get(console, console.options, _table(report, with_why=False, compact=False))
    return numbers.maximum + WHY_MIN_WIDTH + 3 <= console.width  # 3: the column's padding and border


def render(report: dict[str, Any], console: Console) -> None:
    """The table with each engine's reason in its last column; where that column would not fit (80 columns),
    a tighter table without it and the reasons below, one line each."""
    narrow = not _room_for_why(report, console)
    console.print(_table(report, with_why=not narrow, compact=narrow))
    if narrow:
        for row in report["engines"]:
            if row["reason"]:
                console.print(f"{escape(row['engine'])}: {escape(row['reason'])}", highlight=False)
    console.print(
        "[dim]* default primary: one that is not ok fails the check (exit 1). ok = queries ok / asked; "
        "topic = rows carrying the query's terms; overlap = rows another engine also returned[/dim]"
    )
    indexes = report["independentIndexes"]
    console.print(
        f"independent indexes answered: {indexes['answered']} ({', '.join(indexes['groups']) or 'none'})"
    )
    for what, by in (("tier", indexes["byTier"]), ("region", indexes["byRegion"])):
        counts = [f"{kind} {n['answered']}" + (f" ({', '.join(n['groups'])})" if n["groups"] else "")
                  for kind, n in by.items()]  # fmt: skip
        console.print(f"  by {what}: {escape('; '.join(counts)) or 'none'}", highlight=False)
    for decoy in report["decoys"]:
        console.print(
            f"[yellow]decoy: {escape(decoy['engine'])} answered {len(decoy['queries'])} of "
            f"{decoy['queriesAsked']} queries with pages about another question (kept out of fusion): "
            f"{escape(decoy['reason'] or '')}[/yellow]"
        )
    if report["offline"]:
        console.print(
            "[red]no engine could be reached (no HTTP answer from any): is this machine online, or its proxy "
            "up? The other queries were not asked.[/red]"
        )
    if report["brokenPrimaries"]:
        console.print(f"[red]broken default primaries: {', '.join(report['brokenPrimaries'])}[/red]")
    else:
        console.print("[green]every default primary answered[/green]")


def progress(total: int) -> Callable[[int, Any, dict[str, Any]], None]:
    """One stderr line per query once every engine has answered it: the run takes a while (timeouts)."""

    def note(number: int, item: Any, checks: dict[str, Any]) -> None:
        asked = [c for c in checks.values() if c.asked]
        ok = sum(c.verdict == "ok" for c in asked)
        print(
            f"serpfuse doctor: {number}/{total} {item.query!r}: {ok} of {len(asked)} engines ok",
            file=sys.stderr,
            flush=True,
        )

    return note


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
        from serpfuse.cli.record import _base_urls, read_queries
        from serpfuse.deployment import live_source
        from serpfuse.settings import load_settings
        from serpfuse.sources.doctor import DoctorQuery, check_engines, cooldowns, shipped_queries

        if timeout is not None and timeout <= 0:
            fail("timeout must be positive")
        try:
            settings = load_settings(config, timeout_s=timeout)
            query_set = [DoctorQuery(q) for q in read_queries(queries)] if queries else shipped_queries()
        except SerpfuseError as exc:
            fail_on(exc)
        try:
            source = live_source(
                settings,
                engines=engine or settings.engines,
                base_urls={**settings.engine_base_urls, **_base_urls(base_url)},
                cooldowns=cooldowns(),
            )
        except SerpfuseError as exc:
            fail_on(exc)

        print(
            f"serpfuse doctor: {len(query_set)} queries, each sent to every engine at once "
            f"(up to {settings.timeout_s:g} s a query)",
            file=sys.stderr,
            flush=True,
        )

        async def run() -> dict[str, Any]:
            try:
                groups = settings.ranking_config.consensus.groups
                report = await check_engines(source, query_set, groups, on_query=progress(len(query_set)))
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
