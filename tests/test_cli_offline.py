"""With no network at all, a live search ends within its deadline, exits non-zero, and says why per engine.

"No network" is made certain by routing every request through a proxy address on 127.0.0.1 where nothing
listens, so the test never reaches a real search engine.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

from serpfuse.cli.search import FAILED_TAIL
from serpfuse.engines import ENGINES, category_of

BIN = Path(sys.executable).parent / "serpfuse"


def _dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_no_network_means_one_clear_line_naming_each_engine_and_a_non_zero_exit(tmp_path):
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
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.strip()]  # one line, on stderr
    assert proc.stdout == ""  # said once: no empty table, no second copy of the statuses
    assert line.startswith("serpfuse: No engine answered: ") and line.endswith(FAILED_TAIL)
    # what to do about it: the network first, a recording at the end
    assert "Network: check the network connection" in line and "--replay" in line
    failed, _, set_up = line.partition(" Not set up (no key or base URL): ")
    # a web search in English: the CJK engines are not asked (the region policy), so in neither part
    web = {n for n in ENGINES if category_of(n) == "general" and ENGINES[n].INFO.region != "cjk"}
    unset = {e for e in web if ENGINES[e].INFO.needs_key or ENGINES[e].INFO.needs_base_url}
    reasons = dict(re.findall(r"(?:: |; )([\w-]+) ((?:error|timeout) \([^;]+\))", failed))
    assert set(reasons) == web - unset, line  # each engine asked, with its status and reason
    # the engines nobody gave a key or a base URL: last, each named
    assert set(set_up.removesuffix(" " + FAILED_TAIL).rstrip(".").split(", ")) == unset, line
    # A bound, not a benchmark: the search may never outlive its deadline (plus process start-up).
    assert elapsed < deadline + 30
