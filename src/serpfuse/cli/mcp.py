"""`serpfuse mcp`: the MCP server over stdio (for agent hosts) or streamable HTTP (``--http``)."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import Annotated

import typer

from serpfuse.cli.errors import fail_on
from serpfuse.cli.serve import (
    ConfigOpt,
    NoCacheOpt,
    RedisOpt,
    ReplayOpt,
    build_settings,
    listen,
    open_service,
    settings_flags,
)
from serpfuse.errors import SerpfuseError
from serpfuse.serve.logs import settings_secrets, setup_logging
from serpfuse.settings import check_bind

MCP_HTTP_PORT = 8766


def register(app: typer.Typer) -> None:
    @app.command("mcp")
    def mcp_command(
        http: Annotated[
            bool, typer.Option("--http", help="Serve streamable HTTP at /mcp instead of stdio.")
        ] = False,
        host: Annotated[str | None, typer.Option(help="With --http: address (default 127.0.0.1).")] = None,
        port: Annotated[int, typer.Option(help="With --http: port.")] = MCP_HTTP_PORT,
        replay: ReplayOpt = None,
        redis: RedisOpt = None,
        no_cache: NoCacheOpt = False,
        config: ConfigOpt = None,
    ) -> None:
        """Run the MCP server (tools: web_search, explain_search, engine_status, read_url)."""
        settings = build_settings(
            settings_flags(config, host=host, port=None, replay=replay, redis=redis, no_cache=no_cache)
        )
        setup_logging(secrets=settings_secrets(settings))
        from serpfuse.serve.mcp_server import run_http
        from serpfuse.serve.mcp_stdio import run_stdio

        if not http:
            # stdout is the protocol channel: nothing else may be printed there.
            asyncio.run(run_stdio(open_service(settings)))
            return
        try:
            check_bind(settings.host, settings.token())
        except SerpfuseError as exc:
            fail_on(exc)
        # A taken port is a one-line error before anything says "serving" (the server binds it again itself).
        listen(settings.host, port).close()
        service = open_service(settings)
        print(f"serpfuse: MCP over streamable HTTP at http://{settings.url_host}:{port}/mcp", file=sys.stderr)
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(run_http(service, host=settings.host, port=port))
