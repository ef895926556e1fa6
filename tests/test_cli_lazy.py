"""The CLI root imports a subcommand's module only when that command runs, and lists them all without it."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from importlib import import_module

import pytest

import serpfuse
import serpfuse.cli as cli

# What `serpfuse --help` may not load: each is the cost of one command, paid by everyone before.
HEAVY = ["httpx2", "serpfuse.api", "serpfuse.bench", "serpfuse.pipeline", "serpfuse.service", "pydantic"]

_PROBE = """
import json, sys
from serpfuse.cli import main
sys.argv = ["serpfuse", *json.loads(sys.argv[1])]
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def _modules_loaded_by(*args: str) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(args)], capture_output=True, text=True, timeout=60
    )
    return set(json.loads(proc.stderr.strip().splitlines()[-1]))


def test_help_lists_every_command_without_importing_any():
    loaded = _modules_loaded_by("--help")
    assert not [m for m in HEAVY if m in loaded]
    assert not [m for m in loaded if m.startswith("serpfuse.cli.")]


def test_a_light_command_does_not_load_the_http_stack_or_the_service():
    loaded = _modules_loaded_by("fuse", "--help")
    assert "serpfuse.cli.fuse" in loaded
    assert not {"httpx2", "serpfuse.service", "serpfuse.cli.search", "serpfuse.cli.serve"} & loaded


@pytest.mark.parametrize("name", list(cli.COMMANDS))
def test_listed_help_is_the_commands_own(name):
    command = cli.load_command(name)
    assert command.name == name
    own = (command.short_help or command.help or "").strip().split("\n\n")[0]
    assert cli.COMMANDS[name] == " ".join(own.split())


def test_every_command_module_is_listed():
    modules = {m.name for m in pkgutil.iter_modules(cli.__path__)}
    with_register = {m for m in modules if hasattr(import_module(f"serpfuse.cli.{m}"), "register")}
    assert with_register == set(cli.COMMANDS)


def test_help_output_names_every_command():
    from typer.testing import CliRunner

    result = CliRunner().invoke(cli.app, ["--help"])
    assert result.exit_code == 0
    for name in cli.COMMANDS:
        assert name in result.output


def test_a_typo_still_gets_suggestions():
    from typer.testing import CliRunner

    result = CliRunner().invoke(cli.app, ["serch"])
    assert result.exit_code == 2
    assert "search" in result.output


def test_the_package_root_exports_resolve_on_first_use():
    assert set(serpfuse.__all__) == {*serpfuse._EXPORTS, "__version__"}
    for name in serpfuse._EXPORTS:
        assert getattr(serpfuse, name).__name__ == name
    with pytest.raises(AttributeError):
        serpfuse.not_a_name  # noqa: B018


_GC_PROBE = """
import gc, json, sys
import serpfuse.cli as cli
before = gc.get_freeze_count()
cli.load_command("fuse")
loaded = gc.get_freeze_count()
sys.argv = ["serpfuse", "--version"]
try:
    cli.main()
except SystemExit:
    pass
print(json.dumps([before, loaded, gc.isenabled(), gc.get_freeze_count()]), file=sys.stderr)
"""


def test_a_commands_modules_and_the_ending_process_are_kept_out_of_the_cycle_collector():
    proc = subprocess.run([sys.executable, "-c", _GC_PROBE], capture_output=True, text=True, timeout=60)
    before, loaded, enabled, at_exit = json.loads(proc.stderr.strip().splitlines()[-1])
    # frozen once the command's modules are in, and again on the way out
    assert before == 0 < loaded <= at_exit
    assert enabled  # collection is back on for the command itself
