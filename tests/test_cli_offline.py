"""With no network at all, a live search ends within its deadline, exits non-zero, and says why per engine.

"No network" is made certain by routing every request through a proxy address on 127.0.0.1 where nothing
listens, so the test never reaches a real search engine.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from serpfuse.cli.search import NO_ANSWER_HINT
from serpfuse.engines import ENGINES, category_of

BIN = Path(sys.executable).parent / "serpfuse"


def _dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_no_network_means_one_clear_line_per_engine_and_a_non_zero_exit(tmp_path):
    dead = f"http://127.0.0.1:{_dead_port()}"
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY") and not k.startswith("SERPFUSE_") and "proxy" not in k.lower()
    }
    env.update(
        HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_CACHE_HOME=str(tmp_path / "cache"),
        HTTP_PROXY=dead, HTTPS_PROXY=dead, ALL_PROXY=dead, NO_PROXY="",
    )  # fmt: skip
    deadline = 10.0
    started = time.monotonic()
    proc = subprocess.run(
        [str(BIN), "search", "rust async runtime", "--deadline", str(deadline), "--no-cache"],
        capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path,
    )  # fmt: skip
    elapsed = time.monotonic() - started
    assert proc.returncode == 1, proc.stderr
    *lines, hint = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    # the last line says what to do about it: the network, or a recording
    assert hint == NO_ANSWER_HINT and "network" in hint and "--replay" in hint
    assert "came back empty" not in proc.stdout  # they failed; they did not answer "nothing"
    named = {ln.split(":")[1].strip() for ln in lines if ln.startswith("serpfuse: ")}
    assert named == {name for name in ENGINES if category_of(name) == "general"}, lines  # a web search
    for line in lines:
        engine, status, reason = (part.strip() for part in line.removeprefix("serpfuse: ").split(":", 2))
        assert status in {"error", "timeout", "skipped"} and reason, line
    keyed = [ln for ln in lines if "no API key" in ln]
    assert keyed and all("set " in ln for ln in keyed)  # tells the user which variable to set
    # A bound, not a benchmark: the search may never outlive its deadline (plus process start-up).
    assert elapsed < deadline + 30
