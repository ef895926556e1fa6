"""The `serpfuse` command. Each subcommand lives in its own module and registers itself on the app."""

from __future__ import annotations

from importlib import import_module

import typer

app = typer.Typer(
    name="serpfuse",
    help="Fused web search for LLM agents: many engines, one explainable list of the best results.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """Fused web search for LLM agents: many engines, one explainable list of the best results."""


# One module per command group, each with register(app); an explicit list so a typo is an ImportError, not a gap.
_COMMANDS = ["search", "engines", "record", "bench", "fuse", "serve", "mcp", "config"]
for _name in _COMMANDS:
    import_module(f".{_name}", __name__).register(app)


def main() -> None:
    app()
