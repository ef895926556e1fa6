"""`serpfuse engines`: every engine with its tier, weight, group, region, transport, key status, base URL and
cooldown state."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from serpfuse.cli.errors import fail_on
from serpfuse.config import RankingConfig
from serpfuse.deployment import live_source
from serpfuse.errors import SerpfuseError
from serpfuse.models import SearchRequest
from serpfuse.secrets import mask_url
from serpfuse.settings import Settings, load_settings
from serpfuse.sources.live import LiveSource
from serpfuse.state import open_stores

_ANY_REQUEST = SearchRequest(query="serpfuse engines")  # no time range, no dates: only static reasons show


def engine_weight(ranking: RankingConfig, engine: str) -> float | None:
    """The weight the active strategy gives ``engine`` before any query is seen: ``[ranking.weights]`` (the
    learned multiplier, 1 unless set) times the strategy's own table where it has one; None for a strategy that
    weighs no engine (agree, lexical, borda). Adaptive's per-query agreement comes on top of its prior."""
    strategy, learned = ranking.strategy, ranking.weight_of(engine)
    if strategy == "combmnz":
        return learned
    if strategy in ("consensus", "adaptive"):
        table = ranking.consensus.weights
        voter = ranking.consensus.aliases.get(engine, engine)
        return table.get(voter, table.get(engine, 1.0)) * learned
    if strategy == "rrf":
        return ranking.rrf.weights.get(engine, 1.0) * learned
    if strategy == "searxng":
        return ranking.searxng.weights.get(engine, 1.0)
    return None


async def engine_rows(source: LiveSource, ranking: RankingConfig) -> list[dict[str, Any]]:
    """One JSON-ready dict per engine. Key status only: a key itself never appears, nor a base URL's password.
    ``weight`` is what the active strategy reads (``engine_weight``); ``weightOf`` names the strategy."""
    groups = ranking.consensus.groups
    now = time.time()
    rows = []
    for slot in source.slots(_ANY_REQUEST):
        info = source.modules[slot.name].INFO
        state = await source.cooldowns.get(slot.name)
        reason: str | None
        if state is not None:
            status, reason = "cooling down", state.describe(now)
        elif not slot.available:
            status, reason = "unavailable", slot.unavailable_reason
        else:
            status, reason = "ready", None
        rows.append(
            {
                "engine": slot.name,
                "tier": info.tier,
                "weight": None if (w := engine_weight(ranking, slot.name)) is None else round(w, 4),
                "weightOf": ranking.strategy,
                "group": groups.get(slot.name, slot.name),
                "ownIndex": info.own_index,
                "region": info.region,
                "kind": info.kind,
                "transport": info.transport,
                "timeRange": info.time_range_support,
                "challengeCooldownS": info.challenge_cooldown_s,
                "quota": info.quota,
                "key": source.keys.status(slot.name),
                "baseUrl": mask_url(base) if (base := source.base_url(slot.name)) else None,
                "status": status,
                "reason": reason,
                "cooldownRemainingS": round(state.remaining_s(now), 1) if state else None,
                "cooldownFailures": state.failures if state else None,
            }
        )
    return rows


NO_WRAP = {"engine", "weight"}


KEY_NOTES = {"not needed": "", "configured": ", key set", "missing": ", no key"}


def access(row: dict[str, Any]) -> str:
    """How an engine is asked, in one narrow cell: its transport, its key when it takes one, and where its
    requests go when the operator set a base URL."""
    cell = row["transport"] + KEY_NOTES.get(row["key"], f", key {row['key']}")
    return f"{cell}, at {row['baseUrl']}" if row.get("baseUrl") else cell


def render(rows: list[dict[str, Any]], console: Console) -> None:
    strategy = rows[0]["weightOf"] if rows else None
    title = f"serpfuse engines · weights as {strategy} reads them" if strategy else "serpfuse engines"
    table = Table(title=title, expand=False)
    # Names and numbers never wrap; the words may, so the whole table (and all of "why") fits the terminal.
    for name in ("engine", "tier", "weight", "group", "region", "access", "state"):
        table.add_column(
            name, justify="right" if name == "weight" else "left", no_wrap=name in NO_WRAP, overflow="fold"
        )
    table.add_column("why", overflow="fold", ratio=1)
    colours = {"ready": "green", "cooling down": "yellow", "unavailable": "dim"}
    for row in rows:
        colour = colours.get(row["status"], "red")
        table.add_row(
            row["engine"],
            row["tier"],
            "-" if row["weight"] is None else f"{row['weight']:.2f}",
            row["group"] if row.get("ownIndex", True) else f"{row['group']} (no index of its own)",
            row["region"],
            access(row),
            f"[{colour}]{row['status']}[/{colour}]",
            row["reason"] or (f"[dim]{row['quota']}[/dim]" if row.get("quota") else ""),
        )
    console.print(table)
    console.print(
        "[dim]add a key: export BRAVE_API_KEY=... (or SERPFUSE_<ENGINE>_API_KEY), "
        "or put it in the keys file (mode 0600)[/dim]"
    )


async def _collect(settings: Settings) -> tuple[list[dict[str, Any]], str | None]:
    """The rows, with the cooldowns searches use: in Redis when configured (shared by every process), else this
    process's own (empty); and, when Redis did not answer, the line that says so (the rows are still listed:
    what each engine is, its key and its tier do not depend on Redis). Raises UnusableStore."""
    stores = open_stores(settings, use_cache=False)
    # Every engine, built as searches build it; no request is sent (the transport's client is made on first use).
    source = live_source(settings, cooldowns=stores.cooldowns)
    try:
        rows = await engine_rows(source, settings.ranking_config)
    finally:
        await source.aclose()
        await stores.aclose()
    note = None
    if down := stores.degraded():  # the rows say "ready" for what Redis may hold in cooldown
        note = f"redis did not answer ({down['redis']}): cooldowns shown are this process's own, not the shared ones"
    return rows, note


def register(app: typer.Typer) -> None:
    @app.command()
    def engines(
        as_json: Annotated[bool, typer.Option("--json", help="Print the list as JSON.")] = False,
        config: Annotated[str | None, typer.Option(help="Settings file (TOML).")] = None,
    ) -> None:
        """List every engine: tier, weight, group, region, transport (browser/api), key status and cooldown."""
        try:
            settings = load_settings(config)
        except SerpfuseError as exc:
            fail_on(exc)
        try:
            rows, note = asyncio.run(_collect(settings))
        except SerpfuseError as exc:
            fail_on(exc)  # one line, no URL (it may hold a password)
        if note is not None:
            print(f"serpfuse: warning: {note}", file=sys.stderr)
        if as_json:
            print(json.dumps(rows, ensure_ascii=False, indent=2))
        else:
            render(rows, Console(soft_wrap=False))
