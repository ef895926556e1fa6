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


def test_table_has_a_transport_column(tmp_path):
    proc = run(tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "transport" in proc.stdout
    ddg_line = next(line for line in proc.stdout.splitlines() if " ddg " in line)
    assert "browser" in ddg_line
