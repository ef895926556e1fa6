"""`serpfuse engines` as a person runs it: every engine with its transport, time-range support and cooldown."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from serpfuse.engines import ENGINES

BIN = Path(sys.executable).parent / "serpfuse"


def run(*args: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("SERPFUSE_") and not k.endswith("_API_KEY")
    }
    env.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"), COLUMNS="200")
    return subprocess.run(
        [str(BIN), "engines", *args], capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path
    )


def test_json_lists_each_engines_transport(tmp_path):
    proc = run("--json", tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = {row["engine"]: row for row in json.loads(proc.stdout)}
    assert set(rows) == set(ENGINES)
    for name, row in rows.items():
        info = ENGINES[name].INFO
        assert row["transport"] == info.transport and row["timeRange"] == info.time_range_support
        assert row["challengeCooldownS"] == info.challenge_cooldown_s
    assert rows["ddg"]["transport"] == "browser" and rows["wikipedia"]["transport"] == "api"


def test_table_shows_the_transport_and_key_in_one_access_column(tmp_path):
    proc = run(tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "access" in proc.stdout
    line = {
        name: next(ln for ln in proc.stdout.splitlines() if ln.startswith(f"│ {name} ")) for name in ENGINES
    }
    assert "browser" in line["ddg"] and "browser" in line["bing"]
    assert "api" in line["wikipedia"] and "browser" not in line["wikipedia"]
    assert "api, no key" in line["brave"]  # the keyed API without a key in this clean environment
