"""The `serpfuse` command. Each subcommand lives in its own module and registers itself on the app.

Subcommand modules are imported only when their command runs: ``serpfuse --help`` lists them from the one-line
summaries below (tests/test_cli_lazy.py checks each matches its command's own help), so neither it nor
``serpfuse fuse`` pays for the HTTP stack, the bench package or the service.
"""

from __future__ import annotations

import gc
from importlib import import_module
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

# name -> one-line help, in listing order. The command `name` is `register(app)` of module `.name`; to add a
# command, write that module and add its line here.
COMMANDS = {
    "search": "Search the web (or a recording) and print the fused list.",
    "read": (
        "Read pages (or files) and print their main content as markdown, text or HTML; with --query, only the "
        "passages that answer it (in page order; with --json, each with its offsets in the page's text)."
    ),
    "engines": "List every engine: tier, weight, group, region, transport (browser/api), key status and cooldown.",
    "doctor": "Check every engine live on a fixed query set; exit 1 when a default primary is broken.",
    "record": "Run live searches and save, per query and engine, the raw response and the parsed rows.",
    "judge": "Grade a recording's candidates blind (0, 1, 2 from the keyboard) on a page served on loopback.",
    "bench": "Measure ranking quality on a recording with judgments: overall, per group, per engine, worst queries.",
    "fuse": "Fuse ranked lists given as TREC run files and print the fused run in TREC format.",
    "calibrate": "Learn engine weights for the default fusion from judged queries; print or write them as TOML.",
    "serve": "Serve the HTTP API (native, SearXNG-, Tavily- and Firecrawl-shaped routes) and the web page.",
    "mcp": "Run the MCP server (tools: web_search, explain_search, engine_status, read_url).",
    "config": "Show the effective settings; manage engine API keys.",
}


def load_command(name: str) -> Any:
    """The click command `name` as its module registers it (imports the module).

    The import runs without the cycle collector and its objects are then frozen out of it: modules, classes
    and tables live as long as the process, so scanning them for garbage is wasted work."""
    scratch = typer.Typer(add_completion=False)
    collecting = gc.isenabled()
    gc.disable()
    try:
        import_module(f".{name}", __name__).register(scratch)
    finally:
        gc.freeze()
        if collecting:
            gc.enable()
    return typer.main.get_group(scratch).commands[name]


class LazyGroup(TyperGroup):
    """Lists every command from ``COMMANDS`` and imports a command's module only when it is resolved."""

    _listing = False

    def list_commands(self, ctx: Any) -> list[str]:
        return [*COMMANDS, *(n for n in self.commands if n not in COMMANDS)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            if self._listing:  # the help page needs a name and a line, not the command
                return typer.core.TyperCommand(cmd_name, help=COMMANDS[cmd_name])
            self.commands[cmd_name] = load_command(cmd_name)
        return super().get_command(ctx, cmd_name)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and args[0] not in COMMANDS and not args[0].startswith("-"):
            for name in COMMANDS:  # a typo: typer suggests from the loaded commands, so load them all
                self.get_command(ctx, name)
        return super().resolve_command(ctx, args)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


def _flag_shows_no_type(option_class: Any) -> None:  # a click Option class, patched in place
    """typer labels every flag ``<bool>`` in the help (``--json <bool>``), as if it took a value: a flag shows
    no type, as click's own help does."""
    shown = getattr(option_class, "display_type_rich", None)
    if shown is None or getattr(shown, "flags_untyped", False):
        return

    def display_type_rich(self: Any, ctx: Any) -> str | None:
        return None if getattr(self, "is_flag", False) else shown(self, ctx)

    display_type_rich.flags_untyped = True  # type: ignore[attr-defined]
    option_class.display_type_rich = display_type_rich


_flag_shows_no_type(typer.core.TyperOption)


def _print_version(value: bool) -> None:
    if value:
        from serpfuse.version import __version__

        print(f"serpfuse {__version__}")
        raise typer.Exit()


app = typer.Typer(
    name="serpfuse",
    help="Fused web search for LLM agents: many engines, one explainable list of the best results.",
    cls=LazyGroup,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", is_eager=True, callback=_print_version, help="Print the version and exit."),
    ] = False,
) -> None:
    """Fused web search for LLM agents: many engines, one explainable list of the best results."""
    from serpfuse.serve.logs import setup_logging  # every command logs through the one masked set-up

    setup_logging()


def main() -> None:
    try:
        app()
    except RecursionError:  # a parser (json, tomllib) given a file nested thousands deep, wherever it is read
        import sys

        print(
            "serpfuse: error: an input file nests too deeply to read (JSON or TOML nested thousands of levels)",
            file=sys.stderr,
        )
        raise SystemExit(2) from None
    finally:
        # The process ends here and its objects with it: the interpreter's closing cycle collection over them
        # was a quarter of a one-shot search's wall time (benchmarks.oneshot).
        gc.freeze()
