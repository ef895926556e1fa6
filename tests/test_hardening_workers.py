"""``serve --workers 2`` whose supervisor is killed outright (``kill -9``, as the OOM killer or a crash ends it):
its workers, and the processes they parse and rank in, end with it, and the port can be served again."""

from __future__ import annotations

import os
import signal
import time

import pytest

from conftest import running
from fault_matrix import descendants, wait_for_workers
from redis_server import http, start_serpfuse, stop

GONE_WITHIN_S = 5.0


@pytest.mark.slow
def test_killing_the_supervisor_ends_every_worker_and_frees_the_port(tmp_path):
    server = start_serpfuse(tmp_path / "first", ["--workers", "2"])
    try:
        wait_for_workers(server.proc.pid, 2)  # one at least per server process
        started = descendants(server.proc.pid)
        assert len(started) >= 4  # two server processes, each with the workers it parses and ranks in
        killed_at = time.monotonic()
        os.kill(server.proc.pid, signal.SIGKILL)
        server.proc.wait(timeout=10)
        while (alive := [pid for pid in started if running(pid)]) and time.monotonic() - killed_at < 30:
            time.sleep(0.05)
        gone_after_s = time.monotonic() - killed_at
    finally:
        for pid in started:  # a leak fails the test below, and is not left behind
            if running(pid):
                os.kill(pid, signal.SIGKILL)
    print(
        f"\nsupervisor killed: {len(alive)} of {len(started)} processes left, the last gone after {gone_after_s:.2f} s"
    )
    assert alive == [], f"{len(alive)} of {len(started)} processes outlived the supervisor"
    assert gone_after_s <= GONE_WITHIN_S, f"the last one ended {gone_after_s:.1f} s after the supervisor"

    again = start_serpfuse(tmp_path / "second", ["--workers", "2"], port=server.port)
    try:
        assert http("GET", again.base + "/healthz")[0] == 200
    finally:
        stop(again.proc)
