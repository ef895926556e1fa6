"""`serpfuse search` as a person runs it: a real subprocess, real exit codes, one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import need

BIN = Path(sys.executable).parent / "serpfuse"
BELGRAD = "top restaurants in belgrad"


def run(*args: str, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if k != "SERPFUSE_REPLAY"}
    full_env.update({"COLUMNS": "120", **(env or {})})
    return subprocess.run([str(BIN), *args], capture_output=True, text=True, timeout=timeout, env=full_env)


@pytest.fixture(scope="module")
def replay(data_dir) -> str:
    return str(need(data_dir / "crw56" / "searxng_raw.json"))


def test_json_output_has_at_most_8_results_with_every_field(replay):
    proc = run("search", BELGRAD, "--replay", replay, "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert 1 <= len(data["results"]) <= 8
    assert {"evidenceScore", "selectionScore", "metadataDelta", "provenance", "dateStatus"} <= set(
        data["results"][0]
    )


def test_table_and_explain(replay):
    proc = run("search", BELGRAD, "--replay", replay, "--explain")
    assert proc.returncode == 0, proc.stderr
    assert "tripadvisor" in proc.stdout and "every candidate" in proc.stdout
    assert "relevance:" in proc.stdout  # a cut row names the step that cut it


def test_replay_from_environment(replay):
    proc = run("search", BELGRAD, "--json", env={"SERPFUSE_REPLAY": replay})
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["search", ""], "query is empty"),
        (["search", "x" * 501], "the limit is 500"),
        (["search", BELGRAD, "--limit", "0"], "limit"),
        (["search", BELGRAD, "--limit", "21"], "limit"),
        (["search", BELGRAD, "--strategy", "magic"], "unknown strategy 'magic'"),
        (["search", BELGRAD, "--engine", "nosuch"], "unknown engine 'nosuch'"),
        (["search", "not recorded at all"], "not in the recording"),
        (["search", BELGRAD, "--from", "2026-13-01"], "bad date"),
        (["search", BELGRAD, "--time-range", "week", "--from", "2026-01-01"], "cannot be combined"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(replay, args, message):
    proc = run(*args, "--replay", replay)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and message in lines[0], proc.stderr


def test_unreadable_replay_file(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text("[")
    proc = run("search", BELGRAD, "--replay", str(bad))
    assert proc.returncode == 2 and "cannot read replay file" in proc.stderr
