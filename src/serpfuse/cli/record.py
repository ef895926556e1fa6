"""`serpfuse record`: run live searches and save every engine's raw response and parsed rows for replay.

Layout of ``--out DIR`` (format ``serpfuse-replay/1``, read back by ``serpfuse search --replay DIR``)::

    index.json               {"format": "serpfuse-replay/1", "queries": [{"query", "file"}], ...}
    001-rust-async-runtime.json
        {"query", "recorded_at",
         "engines":  {engine: {status, reason, latency_ms, tier, retry_after_s, rows: [EngineRow...],
                               raw_file, http_status, content_type}},     # the main variant
         "variants": {variant text: {engine: {...same...}}}}               # every variant asked
    raw/001-rust-async-runtime/ddg.html, brave.json ...                    # bodies as received, keys masked

Every engine is asked for every variant the fan-out could ask (the main one, ` OR ` alternatives and the
core-word retry), tiers ignored, so a replay can answer whatever the live fan-out would have asked. Engines
run concurrently; the per-engine rate limits and cooldowns of a live search apply.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer

from serpfuse.cli.errors import EXIT_NO_RESULTS, fail, fail_on
from serpfuse.deployment import live_source
from serpfuse.errors import InputError, SerpfuseError
from serpfuse.files import private_dir, write_private
from serpfuse.models import ANSWERED, EngineAnswer, SearchRequest
from serpfuse.ranking.query import analyze_query
from serpfuse.sources.capped_body import HttpResponse
from serpfuse.sources.live import LiveSource
from serpfuse.sources.replay import FORMAT
from serpfuse.text import fold
from serpfuse.version import __version__

_EXTENSIONS = (("json", "json"), ("html", "html"), ("xml", "xml"), ("event-stream", "sse"), ("text/", "txt"))


class QueryFileError(InputError):
    pass


def read_queries(path: Path) -> list[str]:
    """Queries from a text file (one per line, ``#`` comments) or JSON (a list of strings or of
    ``{"query": ...}`` objects, or ``{"queries": [...]}``, as bench query files are)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise QueryFileError(
            f"cannot read queries file {path}: {exc.strerror or type(exc).__name__}"
        ) from None
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            raise QueryFileError(f"queries file {path} is not valid JSON") from None
        items = data.get("queries") if isinstance(data, dict) else data
        if not isinstance(items, list):
            raise QueryFileError(f'queries file {path}: expected a list or {{"queries": [...]}}')
        queries = []
        for item in items:
            query = item.get("query") if isinstance(item, dict) else item
            if not isinstance(query, str):
                raise QueryFileError(f"queries file {path}: every entry needs a query string")
            queries.append(query)
    else:
        queries = [line.strip() for line in text.splitlines()]
        queries = [q for q in queries if q and not q.startswith("#")]
    queries = list(dict.fromkeys(" ".join(q.split()) for q in queries if q.strip()))
    if not queries:
        raise QueryFileError(f"queries file {path} holds no query")
    return queries


def query_slug(index: int, query: str) -> str:
    """``003-rust-async-runtime``; a query with no ASCII word gets a short hash instead."""
    words = re.sub(r"[^a-z0-9]+", "-", fold(query)).strip("-")[:48].rstrip("-")
    return f"{index:03d}-{words or hashlib.sha1(query.encode()).hexdigest()[:10]}"


def extension_for(content_type: str) -> str:
    lowered = content_type.lower()
    for marker, ext in _EXTENSIONS:
        if marker in lowered:
            return ext
    return "bin"


def variants_of(query: str, core_variant: bool) -> list[str]:
    analysis = analyze_query(query)
    variants = list(analysis.variants) or [query]
    if core_variant and analysis.core_variant:
        variants.append(analysis.core_variant)
    return list(dict.fromkeys(variants))


@dataclass
class RecordSummary:
    out_dir: Path
    queries: int = 0
    answers: list[EngineAnswer] = field(default_factory=list)

    @property
    def answered(self) -> int:
        return sum(a.status in ANSWERED for a in self.answers)


def _line(query: str, answers: list[EngineAnswer]) -> str:
    parts = []
    for a in answers:
        detail = f"{len(a.rows)} rows" if a.status in ANSWERED else (a.reason or "no reason given")
        parts.append(f"{a.engine} {a.status} ({detail})")
    return f"{query}: " + " · ".join(parts)


def _write_json(path: Path, data: Any) -> None:
    write_private(path, json.dumps(data, ensure_ascii=False, indent=1) + "\n")


async def record_queries(
    source: LiveSource,
    queries: list[str],
    out_dir: Path,
    *,
    core_variant: bool = True,
    echo: Callable[[str], None] | None = None,
) -> RecordSummary:
    """Ask every engine of ``source`` every variant of each query; write the recording into ``out_dir``."""
    private_dir(out_dir)
    summary = RecordSummary(out_dir)
    index: list[dict[str, str]] = []
    previous_hook = source.on_response
    try:
        for number, query in enumerate(queries, start=1):
            slug = query_slug(number, query)
            entry = await _record_one(source, query, slug, out_dir, core_variant)
            _write_json(out_dir / f"{slug}.json", entry["json"])
            index.append({"query": query, "file": f"{slug}.json"})
            summary.queries += 1
            summary.answers.extend(entry["answers"])
            if echo is not None:
                echo(f"[{number}/{len(queries)}] " + _line(query, entry["main_answers"]))
    finally:
        source.on_response = previous_hook
    _write_json(
        out_dir / "index.json",
        {
            "format": FORMAT,
            "generator": f"serpfuse {__version__} record",
            "recorded_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "engines": list(source.modules),
            "queries": index,
        },
    )
    return summary


async def _record_one(source: LiveSource, query: str, slug: str, out_dir: Path, core_variant: bool) -> dict:
    request = SearchRequest(query=query)
    variants = variants_of(request.query, core_variant)
    captured: dict[tuple[str, str], list[HttpResponse]] = {}
    source.on_response = lambda engine, variant, response: captured.setdefault((engine, variant), []).append(
        response
    )
    jobs = [(slot.name, v) for slot in source.slots(request) for v in variants]
    answers = await asyncio.gather(*(source.ask(engine, v, request) for engine, v in jobs))

    raw_dir = out_dir / "raw" / slug
    by_variant: dict[str, dict[str, Any]] = {v: {} for v in variants}
    for (engine, variant), answer in zip(jobs, answers, strict=True):
        item = answer.model_dump(mode="json")
        responses = captured.get((engine, variant), [])
        files = []
        for n, response in enumerate(responses, start=1):
            content_type = response.headers.get("content-type", "")
            name = engine
            if variant != variants[0]:
                name += f".v{variants.index(variant)}"
            if len(responses) > 1:
                name += f".{n}"
            raw_path = raw_dir / f"{name}.{extension_for(content_type)}"
            write_private(raw_path, source.keys.mask_bytes(response.body))
            files.append(raw_path.relative_to(out_dir).as_posix())
            item["http_status"] = response.status
            item["content_type"] = content_type
        if files:
            item["raw_file"] = files[-1]  # the response the rows were parsed from
            if len(files) > 1:
                item["raw_files"] = files
        by_variant[variant][engine] = item
    entry = {
        "query": request.query,
        "recorded_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "engines": by_variant[variants[0]],
        "variants": by_variant,
    }
    main = [a for (_, v), a in zip(jobs, answers, strict=True) if v == variants[0]]
    return {"json": entry, "answers": list(answers), "main_answers": main}


def _base_urls(values: list[str] | None) -> dict[str, str]:
    out = {}
    for value in values or []:
        engine, sep, url = value.partition("=")
        if not sep or not engine.strip() or not url.strip().lower().startswith(("http://", "https://")):
            fail(f"--base-url wants ENGINE=http(s)://..., got {value!r}")
        out[engine.strip().lower()] = url.strip()
    return out


def register(app: typer.Typer) -> None:
    @app.command()
    def record(
        queries: Annotated[Path, typer.Option("--queries", "-q", help="Queries: one per line, or JSON.")],
        out: Annotated[Path, typer.Option("--out", "-o", help="Directory to write the recording into.")],
        engine: Annotated[
            list[str] | None,
            typer.Option("--engine", "-e", help="Engine to record (repeatable; default all)."),
        ] = None,
        base_url: Annotated[
            list[str] | None,
            typer.Option(
                "--base-url", help="ENGINE=URL: send that engine's requests there (e.g. a SearXNG)."
            ),
        ] = None,
        core_variant: Annotated[
            bool, typer.Option(help="Also record the core-word retry variant (one more request per engine).")
        ] = True,
        timeout: Annotated[float | None, typer.Option(help="Per-engine timeout in seconds.")] = None,
        config: Annotated[str | None, typer.Option(help="Settings file (TOML).")] = None,
    ) -> None:
        """Run live searches and save, per query and engine, the raw response and the parsed rows."""
        from serpfuse.settings import load_settings

        try:
            query_list = read_queries(queries)
            settings = load_settings(config, timeout_s=timeout)
        except SerpfuseError as exc:
            fail_on(exc)
        if timeout is not None and timeout <= 0:
            fail("timeout must be positive")
        try:
            source = live_source(
                settings,
                engines=engine or settings.engines,
                base_urls={**settings.engine_base_urls, **_base_urls(base_url)},
            )
        except SerpfuseError as exc:
            fail_on(exc)

        async def run() -> RecordSummary:
            try:
                return await record_queries(
                    source,
                    query_list,
                    out,
                    core_variant=core_variant,
                    echo=lambda line: print(line, flush=True),
                )
            finally:
                await source.aclose()

        try:
            summary = asyncio.run(run())
        except OSError as exc:
            fail(f"cannot write the recording into {out}: {exc.strerror or type(exc).__name__}")
        print(
            f"recorded {summary.queries} queries, {summary.answered} of {len(summary.answers)} engine answers usable,"
            f" into {out}"
        )
        if summary.answered == 0:
            print("serpfuse: error: no engine answered; the recording holds only failures", file=sys.stderr)
            raise SystemExit(EXIT_NO_RESULTS)
