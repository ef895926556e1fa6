"""The first five minutes of a new user, following only the README: each thing issue 13 found, pinned.

Real processes throughout (make, the `serpfuse` CLI, setuptools' build backend); nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path

import pytest

from conftest import need
from redis_server import isolated_env
from serpfuse.config import RankingConfig
from serpfuse.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent / "serpfuse"
BELGRAD = "top restaurants in belgrad"


def run(args: list[str], tmp_path: Path, env: dict | None = None, timeout: float = 60):
    return subprocess.run(
        args, capture_output=True, text=True, timeout=timeout, cwd=tmp_path,
        env=isolated_env(tmp_path, {"COLUMNS": "100", **(env or {})}),
    )  # fmt: skip


@pytest.fixture(scope="module")
def replay(data_dir) -> str:
    return str(need(data_dir / "crw56" / "searxng_raw.json"))


# --- make ------------------------------------------------------------------------------------------------------


def _make_dry_run(target: str, tmp_path: Path, *extra: str) -> list[str]:
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    proc = subprocess.run(
        [make, "-n", "-C", str(ROOT), target, f"VENV={tmp_path / 'venv'}", *extra],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_make_search_installs_serpfuse_alone_and_make_test_the_dev_extra(tmp_path):
    search = _make_dry_run("search", tmp_path, "Q=rust")
    installs = [ln for ln in search if "pip install" in ln and "--upgrade pip" not in ln]
    assert installs == [f"{tmp_path / 'venv'}/bin/pip install --quiet -e ."], search
    test = _make_dry_run("test", tmp_path)
    assert any(ln.endswith("pip install --quiet -e '.[dev]'") for ln in test), test


def test_make_install_puts_serpfuse_on_the_path(tmp_path):
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    venv = Path(sys.executable).parent.parent  # this test's own environment, already set up
    for stamp in (".installed-run",):
        (venv / stamp).touch(exist_ok=True)  # set up already: make must link, not reinstall
    prefix = tmp_path / "prefix"
    proc = subprocess.run(
        [make, "-C", str(ROOT), "install", f"VENV={venv}", f"PREFIX={prefix}"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "not on your PATH" in proc.stdout  # it says what to do when PREFIX/bin is not on the PATH
    linked = prefix / "bin" / "serpfuse"
    assert linked.is_symlink() and linked.resolve() == BIN.resolve()
    env = {**os.environ, "PATH": f"{prefix / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    found = shutil.which("serpfuse", path=env["PATH"])
    assert found == str(linked)
    help_text = subprocess.run([found, "--help"], capture_output=True, text=True, timeout=60, env=env)
    assert help_text.returncode == 0 and "search" in help_text.stdout


def test_package_metadata_builds_without_deprecation_warnings(tmp_path):
    """The license is an SPDX string with license-files (setuptools >= 77): no `project.license` warnings."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["project"]["license"] == "MIT"
    assert pyproject["project"]["license-files"] == ["LICENSE"] and (ROOT / "LICENSE").is_file()
    assert any(re.fullmatch(r"setuptools>=(7[7-9]|[89]\d)", r) for r in pyproject["build-system"]["requires"])
    code = (
        "import sys, warnings; warnings.simplefilter('always')\n"
        "from setuptools import build_meta\n"
        "print(build_meta.prepare_metadata_for_build_wheel(sys.argv[1]))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr
    assert "deprecat" not in proc.stderr.lower() and "license" not in proc.stderr.lower(), proc.stderr
    metadata = next(tmp_path.glob("*.dist-info")).joinpath("METADATA").read_text()
    assert "License-Expression: MIT" in metadata
    import serpfuse

    assert f"Version: {serpfuse.__version__}" in metadata  # one version, said by the package


# --- the README ------------------------------------------------------------------------------------------------


def test_readme_first_screen_says_what_it_is_the_two_commands_the_path_and_shows_the_page():
    readme = (ROOT / "README.md").read_text()
    first_screen = "\n".join(readme.splitlines()[:40])
    assert "Fused web search for LLM agents" in first_screen
    for needle in ('make search Q="', "make test", "make install", "PATH"):
        assert needle in first_screen, needle
    pictures = re.findall(r"!\[[^\]]+\]\((docs/[^)]+\.png)\)", readme, re.S)
    assert pictures and pictures[0] in first_screen
    for picture in pictures:
        data = (ROOT / picture).read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) < 300_000, picture  # small, and really a PNG


# --- the docs' sample configuration -------------------------------------------------------------------------


def test_the_docs_sample_config_shows_the_defaults(tmp_path):
    page = (ROOT / "docs" / "configuration.md").read_text()
    sample = re.search(r"```toml\n(# serpfuse\.toml\n.*?)```", page, re.S)
    assert sample, "docs/configuration.md lost its serpfuse.toml sample"
    values = tomllib.loads(sample[1])
    defaults = Settings.model_fields
    shown = {k: v for k, v in values.items() if k not in ("ranking", "engines")}  # engines: an example set
    assert {"cache_ttl_s", "limit", "deadline_s"} <= set(shown)
    for key, value in shown.items():
        assert defaults[key].default == value, (
            f"docs/configuration.md shows {key} = {value}; the default is {defaults[key].default}"
        )
    ranking = RankingConfig()
    assert values["ranking"]["strategy"] == ranking.strategy
    for key, value in values["ranking"]["rrf"].items():
        assert getattr(ranking.rrf, key) == value, key
    path = tmp_path / "serpfuse.toml"
    path.write_text(sample[1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from serpfuse.settings import load_settings

        assert load_settings(path).cache_ttl_s == defaults["cache_ttl_s"].default  # the sample loads as is


# --- the CLI ---------------------------------------------------------------------------------------------------


def test_engine_alias_finds_the_recordings_name(replay, tmp_path):
    """The recording says duckduckgo (SearXNG's name); serpfuse's own name ddg asks it all the same."""
    proc = run([str(BIN), "search", BELGRAD, "--replay", replay, "--engine", "ddg", "--json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    body = json.loads(proc.stdout)
    assert [e["engine"] for e in body["engines"]] == ["duckduckgo"]
    assert body["results"] and all(r["engines"] == ["duckduckgo"] for r in body["results"])
    proc = run([str(BIN), "search", BELGRAD, "--replay", replay, "--engine", "qwant"], tmp_path)
    assert proc.returncode == 2 and "unknown engine 'qwant'" in proc.stderr


def test_time_range_reads_snippet_dates_and_marks_undated_rows(replay, tmp_path):
    args = [str(BIN), "search", BELGRAD, "--replay", replay, "--json", "--explain", "--no-cache"]
    everything = json.loads(run(args, tmp_path).stdout)
    stamped = [r for r in everything["results"] if r["snippet"].startswith("Mar 15, 2024 · ")]
    assert stamped and stamped[0]["published"] is None  # the engines gave no date; the snippet does
    proc = run([*args, "--time-range", "day"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    day = json.loads(proc.stdout)
    cut = {c["url"]: c for c in day["candidates"] if c["cutBy"] == "timerange"}
    assert cut[stamped[0]["url"]]["cutReason"] == "published 2024-03-15, before the last day"
    assert stamped[0]["url"] not in {r["url"] for r in day["results"]}
    # what is left has no date at all: every row says so, and so does the answer
    assert day["results"] and all("undated" in r["reason"] for r in day["results"])
    assert any(
        f"{len(day['results'])} of {len(day['results'])} results carry no date" in w for w in day["warnings"]
    )
    assert not any("undated" in r["reason"] for r in everything["results"])  # no window asked, nothing said


def test_engines_table_shows_every_reason_whole_at_100_columns(tmp_path):
    listed = json.loads(run([str(BIN), "engines", "--json"], tmp_path).stdout)
    reasons = [r["reason"] for r in listed if r["reason"]]
    assert reasons  # keyed engines without keys say which variable to set
    proc = run([str(BIN), "engines"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert max(len(ln) for ln in lines) <= 100
    cells = "".join(ch for ch in proc.stdout if ch not in "│┃ \n")
    for reason in reasons:
        assert reason.replace(" ", "") in cells, reason


def test_serve_on_a_taken_port_says_so_before_serving(replay, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = run([str(BIN), "serve", "--port", str(port), "--replay", replay], tmp_path, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"serpfuse: error: port {port} on 127.0.0.1 is already in use (another server?); choose another with --port"
    )
    assert "serving" not in proc.stderr
