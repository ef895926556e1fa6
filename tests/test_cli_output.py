"""What the CLI prints for a new user, through the real `serpfuse` command (subprocesses): a failed search said
once, the help without type noise, --version, one-line errors for a bad log level and a taken MCP port, and a
doctor that shows progress and fits 80 columns.

No engine is ever reached: every request goes through a proxy address on 127.0.0.1 where nothing listens (the
offline test's hook), and the one page read is a loopback URL the reader refuses before connecting.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import need
from redis_server import isolated_env
from serpfuse.cli import COMMANDS
from serpfuse.cli.search import FAILED_TAIL
from serpfuse.engines import ENGINES, category_of
from serpfuse.version import __version__

BIN = Path(sys.executable).parent / "serpfuse"
# What a plain English search asks: the web engines but the CJK tier, which answers CJK queries (fanout's policy).
WEB = [name for name in ENGINES if category_of(name) == "general" and ENGINES[name].INFO.region != "cjk"]


def _dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run(args: list[str], tmp_path: Path, *, columns: int = 100, offline: bool = True, timeout: float = 120):
    env = {"COLUMNS": str(columns), "NO_PROXY": ""}
    if offline:
        dead = f"http://127.0.0.1:{_dead_port()}"
        env.update(HTTP_PROXY=dead, HTTPS_PROXY=dead, ALL_PROXY=dead)
    full = {k: v for k, v in isolated_env(tmp_path).items() if "proxy" not in k.lower()}
    full.update(env)
    return subprocess.run(
        [str(BIN), *args], capture_output=True, text=True, timeout=timeout, env=full, cwd=tmp_path
    )


def one_line(proc) -> str:
    """A failed search's stderr: exactly one line, the outcome and where to look next."""
    (line,) = proc.stderr.splitlines()
    assert line.startswith("serpfuse: No engine answered") and line.endswith(FAILED_TAIL), line
    return line


def test_a_failed_search_is_one_line_naming_each_engine_once(tmp_path):
    proc = run(["search", "rust async runtime", "--deadline", "8", "--no-cache"], tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ""  # no empty table, no paragraph of statuses
    line = one_line(proc)
    failed, _, not_set_up = line.partition(" Not set up (no key or base URL): ")
    named = re.findall(r"(?:: |; )([\w-]+) (?:error|timeout|skipped) \(", failed)
    unset = [name for name in WEB if ENGINES[name].INFO.needs_key or ENGINES[name].INFO.needs_base_url]
    assert sorted(named) == sorted(set(WEB) - set(unset)), line  # each engine asked, once, with its reason
    assert not_set_up.removesuffix(" " + FAILED_TAIL) == ", ".join(sorted(unset)) + "."  # last, by name
    assert "Network: check the network connection" in failed
    assert sum("--replay" in ln for ln in proc.stderr.splitlines()) == 1  # one hint
    for jargon in ("tier", "fallback", "primary"):
        assert jargon not in proc.stderr, proc.stderr


def test_an_engine_the_user_named_is_reported_even_without_its_key(tmp_path):
    proc = run(["search", "rust async runtime", "-e", "brave", "-e", "ddg", "--deadline", "8"], tmp_path)
    assert proc.returncode == 1 and proc.stdout == ""
    line = one_line(proc)
    assert line.startswith("serpfuse: No engine answered: ddg error (connection failed")
    assert line.endswith(f"Not set up (no key or base URL): brave. {FAILED_TAIL}")


def test_a_search_no_engine_could_take_does_not_blame_the_network(tmp_path):
    proc = run(["search", "rust async runtime", "-e", "brave"], tmp_path)
    assert proc.returncode == 1 and proc.stdout == ""
    assert (
        one_line(proc)
        == f"serpfuse: No engine answered. Not set up (no key or base URL): brave. {FAILED_TAIL}"
    )
    assert "network" not in proc.stderr


def test_json_output_of_a_failed_search_is_the_response_and_stderr_the_line(tmp_path):
    proc = run(["search", "rust async runtime", "-e", "ddg", "--deadline", "8", "--json"], tmp_path)
    assert proc.returncode == 1
    answer = json.loads(proc.stdout)
    assert answer["results"] == [] and answer["outcome"]["status"] == "failed"
    assert [t["engine"] for t in answer["outcome"]["failed"]] == ["ddg"]
    assert one_line(proc).startswith("serpfuse: No engine answered: ddg error (")


def test_version(tmp_path):
    proc = run(["--version"], tmp_path, offline=False)
    assert proc.returncode == 0 and proc.stdout.strip() == f"serpfuse {__version__}"


@pytest.mark.parametrize("command", [[], *([name] for name in COMMANDS)])
def test_help_shows_no_bool_type_for_flags(command, tmp_path):
    proc = run([*command, "--help"], tmp_path, offline=False)
    assert proc.returncode == 0, proc.stderr
    assert "<bool>" not in proc.stdout, proc.stdout
    assert "--help" in proc.stdout


def test_search_help_names_the_engines_and_the_default_strategy(tmp_path):
    proc = run(["search", "--help"], tmp_path, columns=400, offline=False)
    text = " ".join(proc.stdout.split())
    assert all(f" {name}," in text or f" {name}." in text for name in ENGINES), text
    assert "(default combmnz)" in text


def test_search_read_prints_a_page_it_could_not_read_without_markup(tmp_path):
    # One row, on a loopback address: the reader refuses loopback by default, before any connection.
    url = f"http://127.0.0.1:{_dead_port()}/story"
    row = {
        "url": url,
        "title": "Harbour news",
        "content": "harbour news",
        "engines": ["bing"],
        "positions": [1],
    }
    recording = tmp_path / "one.json"
    recording.write_text(json.dumps([{"query": "harbour news", "results": [row], "unresponsive": []}]))
    proc = run(["search", "harbour news", "--replay", str(recording), "--read", "1"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    (line,) = [ln for ln in proc.stdout.splitlines() if "not read:" in ln]
    assert line.startswith("not read: ") and "[" not in line, line


def test_serve_with_an_unknown_log_level_is_one_line_and_exit_2(tmp_path):
    proc = run(["serve", "--log-level", "nope", "--port", str(_dead_port())], tmp_path, offline=False)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "serpfuse: error: --log-level 'nope' is not a level; choose one of: critical, error, warning, info, debug"
    ]


def test_mcp_http_on_a_taken_port_fails_before_saying_it_serves(data_dir, tmp_path):
    replay = str(need(data_dir / "crw56" / "searxng_raw.json"))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = run(["mcp", "--http", "--port", str(port), "--replay", replay], tmp_path, offline=False)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"serpfuse: error: port {port} on 127.0.0.1 is already in use (another server?); choose another with --port"
    )


def test_doctor_shows_progress_and_fits_80_columns_with_every_reason(tmp_path):
    proc = run(["doctor"], tmp_path, columns=80)
    assert proc.returncode == 1, proc.stderr  # every default primary is broken: nothing is reachable
    progress = [ln for ln in proc.stderr.splitlines() if ln.startswith("serpfuse doctor: ")]
    assert re.fullmatch(r"serpfuse doctor: \d+ queries, .*", progress[0])
    total = int(progress[0].split()[2])
    # No engine answered the first query at all: the machine is offline, so the other queries are not asked.
    assert total > 1 and [ln.split()[2] for ln in progress[1:]] == [f"1/{total}"]
    assert "no engine could be reached" in proc.stdout and "The other queries were not asked" in proc.stdout
    lines = proc.stdout.splitlines()
    assert max(len(ln) for ln in lines) <= 80
    header = next(ln for ln in lines if "engine" in ln and "status" in ln)
    assert all(name in header.split() for name in ("title", "url", "snip", "topic", "overlap")), header
    for engine in ENGINES:  # its reason, whole, on a line of its own
        (reason,) = [ln for ln in lines if ln.startswith(f"{engine}: ")]
        assert "connection failed" in reason or "no API key" in reason or "no base URL" in reason, reason


def test_doctor_keeps_the_why_column_where_it_fits(tmp_path):
    proc = run(["doctor", "-e", "ddg", "-e", "brave"], tmp_path, columns=140)
    assert "why" in proc.stdout.splitlines()[1] or "why" in proc.stdout.splitlines()[2]
    assert "no API key (set BRAVE_API_KEY)" in proc.stdout


async def test_the_tables_engine_line_and_warnings_use_no_tier_words():
    """The fan-out's own warnings when the main engines fail and the backups answer, as the table prints them."""
    from rich.console import Console

    from serpfuse.cli.search import render_engines
    from serpfuse.models import EngineReport, SearchRequest, SearchResponse
    from serpfuse.ranking.query import analyze_query
    from serpfuse.sources.base import EngineSlot
    from serpfuse.sources.fanout import fan_out
    from test_fanout import ScriptedSource, row

    slots = [EngineSlot("p1"), EngineSlot("f1", tier="fallback")]
    src = ScriptedSource(slots, {"p1": (0, []), "f1": (0, [row("f1", 1, "https://b.example/")])})
    fanned = await fan_out(src, SearchRequest(query="x y"), analyze_query("x y"))
    assert any("fallback tier" in w for w in fanned.warnings)  # what the fan-out says, for every interface
    engines = [
        EngineReport(engine="f1", status="ok", rows=1, tier="fallback"),
        EngineReport(engine="f2", status="skipped", tier="fallback", reason="fallback tier not needed"),
        EngineReport(engine="brave", status="skipped", reason="no API key (set BRAVE_API_KEY)"),
    ]
    resp = SearchResponse(
        query="x y", strategy="adaptive", results=[], engines=engines, warnings=fanned.warnings,
        score_version="v", config_fingerprint="f",
    )  # fmt: skip
    console = Console(width=200, record=True)
    render_engines(resp, console)
    text = console.export_text()
    assert "f1: ok" in text and "f2" not in text  # a backup engine that was not needed is left out
    assert "1 keyed engine needs a key (brave); see serpfuse engines" in text
    assert "asked the backup engines" in text
    for jargon in ("tier", "fallback", "primary"):
        assert jargon not in text, text
