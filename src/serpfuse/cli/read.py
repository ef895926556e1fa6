"""`serpfuse read TARGET...`: pages' main content as markdown (or text, or HTML), safely fetched, in one process.

Targets are read a few at a time and printed in the order given, each as soon as it and those before it are
done. With ``--query``, only each page's passages that answer it are printed (``serpfuse.passages``: in page
order, within ``--max-chars`` a page); with ``--json`` too, ``passages`` is ``[{"text", "start", "end"}]``, the
offsets into the page's text, in place of its content. With ``--json``, one JSON object per target per line: the page and its metadata with ``content`` in the
chosen format and ``"error": null``, or, for a target that failed, ``{"url": TARGET, "error": "why"}``. Without
it, each page's content, under a ``==> TARGET <==`` line when there are several; a failure is one line on
stderr. Exit 0 when every target was read; else 1 when every failure was the network's or the page's
(unreachable, HTTP error, too large), 2 when any was the caller's (not a URL or file, refused, unsupported).
"""

from __future__ import annotations

import asyncio
import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from serpfuse.cli.errors import EXIT_BAD_INPUT, fail, fail_on
from serpfuse.errors import SerpfuseError
from serpfuse.settings import load_settings

if TYPE_CHECKING:
    from serpfuse.reader.models import Format, Page, ReadError
    from serpfuse.reader.service import Reader

# Pages fetched at once: enough to hide the network's latency, few enough to be polite to one site.
CONCURRENT_READS = 8


class FormatChoice(StrEnum):
    markdown = "markdown"
    text = "text"
    html = "html"


FORMAT_OF: dict[FormatChoice, Format] = {
    FormatChoice.markdown: "markdown",
    FormatChoice.text: "text",
    FormatChoice.html: "html",
}


def register(app: typer.Typer) -> None:
    @app.command("read")
    def read_command(
        targets: Annotated[
            list[str], typer.Argument(help="http(s) URLs or local files (HTML, PDF, text), one or more")
        ],
        fmt: Annotated[
            FormatChoice, typer.Option("--format", "-f", help="what to print")
        ] = FormatChoice.markdown,
        as_json: Annotated[
            bool, typer.Option("--json", help="each page and its metadata as one JSON object per line")
        ] = False,
        no_cache: Annotated[
            bool, typer.Option("--no-cache", help="neither read nor fill the page cache")
        ] = False,
        no_robots: Annotated[
            bool,
            typer.Option("--no-robots", help="do not check the site's robots.txt (the setting read_robots)"),
        ] = False,
        config: Annotated[str | None, typer.Option("--config", help="settings file (TOML)")] = None,
        query: Annotated[
            str | None,
            typer.Option("--query", "-q", help="print only each page's passages that answer this query"),
        ] = None,
        max_chars: Annotated[
            int | None,
            typer.Option("--max-chars", help="characters of passages per page with --query (default 1500)"),
        ] = None,
    ) -> None:
        """Read pages (or files) and print their main content as markdown, text or HTML; with --query, only the
        passages that answer it (in page order; with --json, each with its offsets in the page's text)."""
        from serpfuse.models import DEFAULT_PASSAGE_CHARS, MAX_PASSAGE_CHARS, MIN_PASSAGE_CHARS
        from serpfuse.reader import workers
        from serpfuse.reader.service import Reader, cache_for, is_url

        if max_chars is not None and query is None:
            fail("--max-chars needs --query (the passages are those that answer it)")
        if max_chars is not None and not MIN_PASSAGE_CHARS <= max_chars <= MAX_PASSAGE_CHARS:
            fail(f"--max-chars must be between {MIN_PASSAGE_CHARS} and {MAX_PASSAGE_CHARS}")
        if query is not None and not query.strip():
            fail("--query is empty")
        asked = (query.strip(), max_chars or DEFAULT_PASSAGE_CHARS) if query is not None else None
        try:
            settings = load_settings(config, read_robots=False if no_robots else None)
            any_url = any(is_url(t) for t in targets)
            cache = cache_for(settings) if any_url and not no_cache else None
        except SerpfuseError as exc:
            fail_on(exc)
        # Pages are extracted in worker processes under the reader's budget, started now so that they import
        # the extractors while the first pages download.
        workers.start(min(len(targets), _cores()))
        reader = Reader.from_settings(settings, cache)
        reader.workers = True
        try:
            codes = asyncio.run(
                _read_all(reader, targets, FORMAT_OF[fmt], as_json, use_cache=not no_cache, asked=asked)
            )
        finally:
            workers.close()
        failed = [c for c in codes if c]
        if failed:
            raise SystemExit(max(failed))


def _cores() -> int:
    import os

    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


async def _read_all(
    reader: Reader,
    targets: list[str],
    fmt: Format,
    as_json: bool,
    *,
    use_cache: bool,
    asked: tuple[str, int] | None = None,
) -> list[int]:
    """Read every target, print each in order; the exit code of each (0: read)."""
    slots = asyncio.Semaphore(CONCURRENT_READS)

    async def one(target: str) -> Page | ReadError:
        async with slots:
            return await _read_one(reader, target, use_cache=use_cache)

    tasks = [asyncio.create_task(one(t)) for t in targets]
    codes = []
    for i, (target, task) in enumerate(zip(targets, tasks, strict=True)):
        header = None
        if len(targets) > 1:  # as head(1) does for several files
            header = ("\n" if i else "") + f"==> {target} <==\n"
        codes.append(_print(target, await task, fmt, as_json, header=header, asked=asked))
    return codes


async def _read_one(reader: Reader, target: str, *, use_cache: bool) -> Page | ReadError:
    from serpfuse.reader.models import CallerError, ReadError
    from serpfuse.reader.service import is_url

    try:
        if is_url(target):
            return await reader.read(target, use_cache=use_cache)
        if Path(target).is_file():
            return await reader.read_file(Path(target))
        return CallerError(f"{target!r} is neither an http(s) URL nor a readable file")
    except ReadError as exc:
        return exc


def _print(
    target: str,
    got: Page | ReadError,
    fmt: Format,
    as_json: bool,
    *,
    header: str | None,
    asked: tuple[str, int] | None = None,
) -> int:
    from serpfuse.reader.models import ReadError

    if isinstance(got, ReadError):
        if as_json:
            _out(json.dumps({"url": target, "error": str(got)}, ensure_ascii=False) + "\n")
        print(f"serpfuse: error: {f'{target}: ' if header else ''}{got}", file=sys.stderr)
        return got.exit_code or EXIT_BAD_INPUT
    passages = None
    if asked is not None:  # the passages are of the page's text: their offsets point into it
        from serpfuse.reader.evidence import page_passages

        passages = page_passages(got, *asked)
    if as_json:
        payload = got.to_json_dict()
        if passages is None:
            payload["content"] = got.content(fmt)
        else:  # the evidence, not the page (`serpfuse read PAGE --format text` gives the text offsets index)
            for name in ("markdown", "text", "html"):
                del payload[name]
            payload["passages"] = [p.to_json_dict() for p in passages]
        payload["error"] = None
        _out(json.dumps(payload, ensure_ascii=False) + "\n")
    elif passages is not None:
        shown = "\n\n[...]\n\n".join(p.text for p in passages) or "(no passage of this page fits)"
        _out((header or "") + shown + "\n")
    else:
        _out((header or "") + got.content(fmt).rstrip("\n") + "\n")
    return 0


def _out(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()  # each page as soon as it is read: a reader of the pipe need not wait for the batch
