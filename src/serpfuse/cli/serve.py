"""`serpfuse serve`: the HTTP API (native, SearXNG-compatible and Tavily-compatible endpoints)."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import Annotated

import typer

from ..service import SearchService
from ..settings import ConfigError, Settings, check_bind, load_settings
from ..sources.base import SourceError
from .errors import fail


def build_settings(
    config: str | None,
    *,
    host: str | None,
    port: int | None,
    replay: str | None,
    redis: str | None,
    no_cache: bool,
) -> Settings:
    """Flags over the environment over the TOML file; a flag left out is None and does not override."""
    try:
        return load_settings(
            config, host=host, port=port, replay=replay, redis_url=redis, cache="off" if no_cache else None
        )
    except ConfigError as exc:
        fail(str(exc))


def open_service(settings: Settings) -> SearchService:
    try:
        return SearchService.from_settings(settings)
    except (ConfigError, SourceError) as exc:
        fail(str(exc))


ConfigOpt = Annotated[str | None, typer.Option("--config", help="TOML settings file (else ./serpfuse.toml).")]
ReplayOpt = Annotated[
    str | None, typer.Option("--replay", help="Answer from a recording ($SERPFUSE_REPLAY).")
]
RedisOpt = Annotated[
    str | None,
    typer.Option("--redis", help="Share cache and cooldowns through Redis, e.g. redis://127.0.0.1:6379/0."),
]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", help="Never read or write the result cache.")]


def register(app: typer.Typer) -> None:
    @app.command()
    def serve(
        host: Annotated[str | None, typer.Option(help="Address to listen on (default 127.0.0.1).")] = None,
        port: Annotated[int | None, typer.Option(help="Port (default 8765).")] = None,
        replay: ReplayOpt = None,
        redis: RedisOpt = None,
        no_cache: NoCacheOpt = False,
        config: ConfigOpt = None,
        log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "warning",
    ) -> None:
        """Serve the HTTP API: /v1/search, SearXNG-style /search, Tavily-style /tavily/search, /metrics."""
        settings = build_settings(config, host=host, port=port, replay=replay, redis=redis, no_cache=no_cache)
        try:
            check_bind(settings.host, settings.token())
        except ConfigError as exc:
            fail(str(exc))
        service = open_service(settings)
        from ..http_api import serve as run

        source = f"replay {settings.replay}" if settings.replay else "live engines"
        print(
            f"serpfuse: serving http://{settings.host}:{settings.port} ({source}; cache {settings.cache_backend}"
            f"{'; token required' if settings.api_token else ''})",
            file=sys.stderr,
        )
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(run(service, log_level=log_level))
