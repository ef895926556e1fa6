"""`serpfuse read URL|FILE`: one page's main content as markdown (or text, or HTML), safely fetched."""

from __future__ import annotations

import asyncio
import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from serpfuse.cli.errors import fail
from serpfuse.settings import ConfigError, load_settings


class FormatChoice(StrEnum):
    markdown = "markdown"
    text = "text"
    html = "html"


def register(app: typer.Typer) -> None:
    @app.command("read")
    def read_command(
        target: Annotated[str, typer.Argument(help="an http(s) URL or a local file (HTML, PDF, text)")],
        fmt: Annotated[
            FormatChoice, typer.Option("--format", "-f", help="what to print")
        ] = FormatChoice.markdown,
        as_json: Annotated[bool, typer.Option("--json", help="the page and its metadata as JSON")] = False,
        no_cache: Annotated[
            bool, typer.Option("--no-cache", help="neither read nor fill the page cache")
        ] = False,
        no_robots: Annotated[
            bool,
            typer.Option("--no-robots", help="do not check the site's robots.txt (the setting read_robots)"),
        ] = False,
        config: Annotated[str | None, typer.Option("--config", help="settings file (TOML)")] = None,
    ) -> None:
        """Read a page (or file) and print its main content as markdown, text or HTML."""
        from serpfuse.reader import workers
        from serpfuse.reader.models import ReadError
        from serpfuse.reader.service import Reader, cache_for, is_url

        try:
            settings = load_settings(config, read_robots=False if no_robots else None)
        except ConfigError as exc:
            fail(str(exc))
        if not is_url(target) and not Path(target).is_file():
            fail(f"{target!r} is neither an http(s) URL nor a readable file")
        # Pages are extracted in a worker process under the reader's budget, started now so that it imports
        # the extractors while the page downloads.
        workers.start(1)
        reader = Reader.from_settings(
            settings, None if no_cache or not is_url(target) else cache_for(settings)
        )
        reader.workers = True
        try:
            if is_url(target):
                page = asyncio.run(reader.read(target, use_cache=not no_cache))
            else:
                page = asyncio.run(reader.read_file(Path(target)))
        except ReadError as exc:
            fail(str(exc), exc.exit_code)
        finally:
            workers.close()
        if as_json:
            payload = page.to_json_dict()
            payload["content"] = page.content(fmt.value)
            sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
        else:
            sys.stdout.write(page.content(fmt.value).rstrip("\n") + "\n")
