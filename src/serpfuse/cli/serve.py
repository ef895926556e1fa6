"""`serpfuse serve`: the HTTP API (native, SearXNG-compatible and Tavily-compatible endpoints)."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import socket
import sys
from typing import Annotated

import typer

from serpfuse.cli.errors import fail, fail_on
from serpfuse.errors import SerpfuseError
from serpfuse.serve.logs import settings_secrets, setup_logging
from serpfuse.serve.workers import default_workers, shared_dir
from serpfuse.serve.workers import run as run_workers
from serpfuse.service import SearchService
from serpfuse.settings import Settings, check_bind, load_settings


def build_settings(flags: dict) -> Settings:
    """``settings_flags``' flags over the environment over the TOML file; a flag left out does not override."""
    rest = dict(flags)
    try:
        return load_settings(rest.pop("config"), **rest)
    except SerpfuseError as exc:
        fail_on(exc)


def settings_flags(
    config: str | None,
    *,
    host: str | None,
    port: int | None,
    replay: str | None,
    redis: str | None,
    no_cache: bool,
) -> dict:
    """The command's flags as ``load_settings`` arguments (``config`` and the overrides)."""
    cache = "off" if no_cache else None
    return {
        "config": config,
        "host": host,
        "port": port,
        "replay": replay,
        "redis_url": redis,
        "cache": cache,
    }


def open_service(settings: Settings, *, workers: int = 1) -> SearchService:
    """The service, or a one-line error and exit 2. With several workers its stores are the workers' shared
    ones, so a state file that cannot be used fails here, once, before any worker starts."""
    try:
        return SearchService.from_settings(settings, shared_dir=shared_dir(settings) if workers > 1 else None)
    except SerpfuseError as exc:
        fail_on(exc)


def listen(host: str, port: int) -> socket.socket:
    """The bound socket the server will use: a taken port is a one-line error before anything says "serving"."""
    try:
        info = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror}")
    # With the protocol named (IPPROTO_TCP, not 0), asyncio sets TCP_NODELAY on each accepted connection; without
    # it every keep-alive answer written in two parts (head, body) waited ~40 ms for the client's delayed ACK.
    sock = socket.socket(info[0], info[1], info[2])
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: TIME_WAIT is not "taken"
    try:
        sock.bind(info[4])
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            fail(f"port {port} on {host} is already in use (another server?); choose another with --port")
        fail(f"cannot listen on {host}:{port}: {exc.strerror}")
    return sock


LOG_LEVELS = ("critical", "error", "warning", "info", "debug")


def log_level_named(value: str) -> str:
    """The log level as uvicorn and the logging set-up take it; anything else is a one-line error (exit 2)."""
    level = value.strip().lower()
    if level not in LOG_LEVELS:
        fail(f"--log-level {value!r} is not a level; choose one of: {', '.join(LOG_LEVELS)}")
    return level


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
        log_level: Annotated[
            str, typer.Option(help=f"Log level: {', '.join(LOG_LEVELS)}.", show_default=True)
        ] = "warning",
        workers: Annotated[
            int | None,
            typer.Option(
                min=1, help="Server processes (default: the cores); they share cache, cooldowns, limits."
            ),
        ] = None,
    ) -> None:
        """Serve the HTTP API (native, SearXNG-, Tavily- and Firecrawl-shaped routes) and the web page."""
        log_level = log_level_named(log_level)
        flags = settings_flags(config, host=host, port=port, replay=replay, redis=redis, no_cache=no_cache)
        settings = build_settings(flags)
        setup_logging(log_level, secrets=settings_secrets(settings))
        try:
            check_bind(settings.host, settings.token())
        except SerpfuseError as exc:
            fail_on(exc)
        sock = listen(settings.host, settings.port)
        processes = workers or default_workers()
        # in the supervisor too: bad settings fail here, once, in one line
        service = open_service(settings, workers=processes)

        source = f"replay {settings.replay}" if settings.replay else "live engines"
        print(
            f"serpfuse: serving http://{settings.url_host}:{settings.port} ({source}; cache {settings.cache_backend}"
            f"{'; token required' if settings.api_token else ''}; {processes} worker{'s' if processes > 1 else ''})",
            file=sys.stderr,
        )
        if processes > 1:
            asyncio.run(service.aclose())
            with contextlib.suppress(KeyboardInterrupt):
                run_workers(
                    flags,
                    settings,
                    sock,
                    workers=processes,
                    log_level=log_level,
                    state_dir=shared_dir(settings),
                )
            return
        from serpfuse.serve.http_api import serve

        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(serve(service, log_level=log_level, sock=sock))
