"""Where serpfuse leans on a library's internals, the library is pinned to a minor (pyproject.toml) and what the
code relies on is checked here, so a new minor that moves it fails this file rather than a user's server."""

from __future__ import annotations

import inspect

import typer.core
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


def test_typer_option_still_has_the_help_hook_cli_patches():
    """cli/__init__.py wraps TyperOption.display_type_rich so a flag shows no <bool> type."""
    import serpfuse.cli  # noqa: F401 - importing the CLI installs the wrapper

    hook = typer.core.TyperOption.display_type_rich
    assert callable(hook) and list(inspect.signature(hook).parameters)[:2] == ["self", "ctx"]
    assert getattr(hook, "flags_untyped", False)  # serpfuse's wrapper is installed (the CLI was imported)


def test_uvicorns_httptools_protocol_keeps_the_methods_serve_overrides():
    """serve/connections.py's HeaderTimeoutProtocol extends these and reads parser, cycle and transport."""
    for name in (
        "connection_made",
        "data_received",
        "on_headers_complete",
        "on_body",
        "on_message_complete",
        "on_response_complete",
        "connection_lost",
    ):
        assert callable(getattr(HttpToolsProtocol, name)), name
    source = inspect.getsource(HttpToolsProtocol)
    for attribute in ("self.parser", "self.cycle", "self.transport"):
        assert attribute in source, attribute


def test_the_mcp_server_still_exposes_the_low_level_server_stdio_runs(tmp_path):
    """serve/mcp_stdio.py runs the SDK's low-level server itself, on its screened stdin."""
    from serpfuse.serve.mcp_server import build_server
    from serpfuse.service import SearchService
    from serpfuse.settings import Settings

    recording = tmp_path / "empty.json"
    recording.write_text("[]")
    service = SearchService.from_settings(Settings(replay=recording, cache="off"))
    lowlevel = build_server(service)._lowlevel_server
    assert callable(lowlevel.run) and callable(lowlevel.create_initialization_options)
