"""The fault matrix: each hostile engine answer played on loopback against a real HTTP API process.

For every fault, one ``tests/fault_app.py`` process serves the API with three live engine modules pointed at a
fake server on 127.0.0.1: the faulty engine, a healthy Wikipedia that answers after ``HEALTHY_DELAY_S`` (so
every search is still running while /healthz is probed), and nothing else. One search is sent; meanwhile
/healthz is polled. Measured per fault: the search's own duration (``tookMs``) against the deadline, each
engine's status, the rows kept, the app process's peak RSS (its VmHWM) and the largest of its helper
processes' (the parse and ranking workers), /healthz latency, and whether any process the app started
outlives it.

``tests/test_faults.py`` asserts on it; ``python tests/fault_matrix.py`` prints the table BENCHMARKS.md quotes.
Nothing leaves 127.0.0.1, and every process and server stops by itself.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import threading
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bombs import brotli_bomb  # noqa: E402
from fakeserver import FakeServer, Reply  # noqa: E402
from redis_server import free_port, http, isolated_env  # noqa: E402

DEADLINE_S = 2.0
HEALTHY_DELAY_S = 0.6
QUERY = "rust async runtime"
JSON = {"Content-Type": "application/json"}


def _searxng(results: list[dict]) -> bytes:
    return json.dumps({"query": QUERY, "results": results}).encode()


def _sx_row(i: int, engines: list[str]) -> dict:
    return {
        "url": f"https://flood.example/{i}",
        "title": f"rust async runtime flood {i}",
        "content": "rust async runtime",
        "engine": engines[0],
        "engines": engines,
        "positions": list(range(1, len(engines) + 1)),
    }


def flood(rows: int) -> bytes:
    return _searxng([_sx_row(i, ["flood"]) for i in range(rows)])


def _gzip_bomb(megabytes: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: gzip framing
    chunk = b"\0" * (1 << 20)
    return b"".join([*(packer.compress(chunk) for _ in range(megabytes)), packer.flush()])


@functools.cache
def _brotli_gib() -> bytes:
    return brotli_bomb(1024)  # 190 KB


@dataclass
class Fault:
    name: str
    engine: str  # which engine plays it: "bing" (HTML) or "searxng" (JSON)
    reply: Reply
    statuses: tuple[str, ...]  # what the faulty engine may be reported as


def faults() -> list[Fault]:
    ten = [f"e{i}" for i in range(10)]
    return [
        # No fault: the floor the machine's own load puts under every /healthz figure below.
        Fault("none (a healthy SearXNG)", "searxng", Reply(200, JSON, _searxng([_sx_row(i, ["ok"]) for i in range(10)])), ("ok",)),
        Fault("nested-div page (800 KB)", "bing", Reply(200, {"Content-Type": "text/html"}, b"<div>" * 160_000), ("error",)),
        Fault("SearXNG result naming 10 engines", "searxng", Reply(200, JSON, _searxng([_sx_row(i, ten) for i in range(30)])), ("ok",)),
        Fault("30,000 rows", "searxng", Reply(200, JSON, flood(30_000)), ("ok",)),
        Fault("hang", "searxng", Reply(200, JSON, b"{}", delay_s=30), ("timeout",)),
        Fault("drip (1 byte / 50 ms)", "searxng", Reply(200, JSON, _searxng([]) * 50, drip_interval_s=0.05), ("timeout",)),
        Fault("big body (50 MB)", "searxng", Reply(200, JSON, huge_bytes=50 << 20), ("error",)),
        Fault("gzip bomb (200 MB inflated)", "searxng", Reply(200, {**JSON, "Content-Encoding": "gzip"}, _gzip_bomb(200)), ("error",)),
        Fault("brotli bomb (1 GiB inflated), browser transport", "bing", Reply(200, {"Content-Type": "text/html", "Content-Encoding": "br"}, _brotli_gib()), ("error",)),
        Fault("connection reset", "searxng", Reply(reset=True), ("error",)),
    ]  # fmt: skip


def healthy_reply() -> Reply:
    hits = [
        {"title": f"Rust async runtime {i}", "snippet": "a rust async runtime", "timestamp": "2024-01-01T00:00:00Z"}
        for i in range(10)
    ]  # fmt: skip
    return Reply(200, JSON, json.dumps({"query": {"search": hits}}).encode(), delay_s=HEALTHY_DELAY_S)


@dataclass
class Outcome:
    fault: str
    status: int
    took_s: float
    wall_s: float
    engines: dict[str, str]
    rows: dict[str, int]
    result_engines: list[str]
    peak_rss_mb: float
    helper_peak_rss_mb: float = 0.0
    healthz_ms: list[float] = field(default_factory=list)
    healthz_before_end: int = 0
    leftovers: list[int] = field(default_factory=list)  # app helpers still running after it stopped

    @property
    def overrun_s(self) -> float:
        return self.took_s - DEADLINE_S


def _engine_paths(url: str) -> dict[str, str]:
    return {"bing": f"{url}/bing", "searxng": f"{url}/sx", "wikipedia": f"{url}/wiki"}


class FaultApp:
    """One fault app process and its fake engine server; ``play`` one fault after another against it."""

    def __init__(self, home: Path, *, forgetful: bool) -> None:
        self.server = FakeServer(lifetime_s=300)
        self.server.start()
        self.server.route("/wiki/w/api.php", healthy_reply())
        bases = _engine_paths(self.server.url)
        port = free_port()
        cmd = [sys.executable, str(HERE / "fault_app.py"), "--port", str(port), "--deadline", str(DEADLINE_S)]
        cmd += [arg for name, url in bases.items() for arg in ("--engine", f"{name}={url}")]
        cmd += ["--no-cooldown"] if forgetful else []
        home.mkdir(parents=True, exist_ok=True)
        self._log = (home / "fault-app.log").open("wb")
        self.proc = subprocess.Popen(
            cmd, stdout=self._log, stderr=subprocess.STDOUT, env=isolated_env(home), cwd=home
        )
        self.base = f"http://127.0.0.1:{port}"
        self.helpers: set[int] = set()  # every process the app started, seen while it ran
        self.leftovers: list[int] = []  # those still running after it stopped
        try:
            _wait_up(self.base, self.proc)
            # One search first: it loads the language tables, a one-off cost that is no fault's.
            http("GET", f"{self.base}/v1/search?q={QUERY.replace(' ', '+')}&engines=wikipedia&cache=false")
            wait_for_workers(self.proc.pid)
        except BaseException:
            self.close()
            raise

    def play(self, fault: Fault) -> Outcome:
        self.server.route({"bing": "/bing/search", "searxng": "/sx/search"}[fault.engine], fault.reply)
        return _probe(fault, self.base, self.proc)

    def close(self) -> tuple[float, float]:
        """Stop both; the app's peak RSS in MB and the largest of its helpers': VmHWM, read before it stops.
        Not wait4's ru_maxrss: a child forked from a large parent (pytest, late in a run) counts the parent's
        pages until it execs. Afterwards ``leftovers`` lists any helper still running."""
        try:
            self.helpers |= set(descendants(self.proc.pid))
            peak = _vm_hwm_mb(self.proc.pid)
            helper_peak = max((_vm_hwm_mb(pid) or 0.0 for pid in self.helpers), default=0.0)
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGINT)
            reaped = _reap(self.proc)
            deadline = time.monotonic() + 5
            while (alive := [pid for pid in self.helpers if _running(pid)]) and time.monotonic() < deadline:
                time.sleep(0.05)
            self.leftovers = alive
            for pid in alive:  # a leak is reported, and not left behind
                os.kill(pid, signal.SIGKILL)
            return (peak if peak is not None else reaped), helper_peak
        finally:
            self._log.close()
            self.server.stop()


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children, their children...)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "gone"


def _running(pid: int) -> bool:
    return _state(pid) not in ("Z", "X", "gone")


def workers_below(pid: int) -> list[int]:
    """The worker processes below ``pid`` (``workers.pool``'s ``worker_main``): they parse and rank."""
    out = []
    for child in descendants(pid):
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if b"worker_main" in cmdline:
            out.append(child)
    return out


def wait_for_workers(pid: int, count: int = 1) -> None:
    """Until ``count`` workers at least are up below ``pid`` (they start in the background when the server
    does) and have imported what they preload (a worker then sleeps on its pipe)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        workers = workers_below(pid)
        if len(workers) >= count and all(_state(w) == "S" for w in workers):
            return
        time.sleep(0.1)
    raise RuntimeError(f"{count} workers did not start below {pid}")


def _vm_hwm_mb(pid: int) -> float | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return None


def _reap(proc: subprocess.Popen) -> float:
    """Wait for the process (killing it after 10 s) and return its peak RSS in MB."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        pid, _, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = 0
            return usage.ru_maxrss / 1024
        time.sleep(0.05)
    proc.kill()
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = -9
    return usage.ru_maxrss / 1024


def _wait_up(base: str, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("fault app exited early")
        try:
            if http("GET", base + "/healthz")[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError("fault app did not answer /healthz")


def _probe(fault: Fault, base: str, proc: subprocess.Popen) -> Outcome:
    done = threading.Event()
    probes: list[tuple[float, float]] = []  # (answered at, latency)

    def poll() -> None:
        while not done.is_set():
            started = time.monotonic()
            try:
                if http("GET", base + "/healthz")[0] == 200:
                    probes.append((time.monotonic(), time.monotonic() - started))
            except OSError:
                pass
            done.wait(0.05)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    started = time.monotonic()
    engines = f"wikipedia,{fault.engine}"
    status, _, raw = http(
        "GET", f"{base}/v1/search?q={QUERY.replace(' ', '+')}&engines={engines}&cache=false"
    )
    ended = time.monotonic()
    done.set()
    poller.join(timeout=5)
    body = json.loads(raw)
    during = [lat for at, lat in probes if at < ended]
    return Outcome(
        fault=fault.name,
        status=status,
        took_s=body.get("tookMs", 0) / 1000,
        wall_s=ended - started,
        engines={e["engine"]: e["status"] for e in body.get("engines", [])},
        rows={e["engine"]: e["rows"] for e in body.get("engines", [])},
        result_engines=sorted({e for r in body.get("results", []) for e in r["engines"]}),
        peak_rss_mb=0.0,
        healthz_ms=[round(lat * 1000, 1) for lat in during],
        healthz_before_end=len(during),
    )


def run_all(home: Path, *, groups: list[list[str]] | None = None) -> list[Outcome]:
    """Every fault, each in its own app process (peak RSS per fault), or, with ``groups`` (lists of fault
    names), each group in one process (faster; a group's peak is then the highest of its faults)."""
    by_name = {f.name: f for f in faults()}
    out = []
    for n, names in enumerate(groups or [[name] for name in by_name]):
        app = FaultApp(home / f"app-{n}", forgetful=True)
        try:
            played = [app.play(by_name[name]) for name in names]
        finally:
            peak, helper_peak = app.close()
        for outcome in played:
            outcome.peak_rss_mb = round(peak, 1)
            outcome.helper_peak_rss_mb = round(helper_peak, 1)
            outcome.leftovers = app.leftovers
        out.extend(played)
    return out


def main() -> None:
    """``python tests/fault_matrix.py [ROUNDS]``: every fault ROUNDS times (default 1), each in a fresh app
    process; per fault, the worst round of each column, and the rows kept."""
    import tempfile

    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    by_fault: dict[str, list[Outcome]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(rounds):
            for o in run_all(Path(tmp) / f"round-{n}"):
                by_fault.setdefault(o.fault, []).append(o)
    print(
        f"deadline {DEADLINE_S:g} s; healthy engine answers after {HEALTHY_DELAY_S:g} s; worst of {rounds} round(s)"
    )
    print(
        "| fault | faulty engine | search took (s) | over deadline (s) | peak RSS (MB): app, largest helper"
        " | /healthz during (probes, max ms) | helpers left |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, runs in by_fault.items():
        faulty = sorted({f"{e}: {s}" for o in runs for e, s in o.engines.items() if e != "wikipedia"})
        worst = max(runs, key=lambda o: o.took_s)
        healthz = max((ms for o in runs for ms in o.healthz_ms), default=float("nan"))
        print(
            f"| {name} | {', '.join(faulty)} | {worst.took_s:.2f} | {worst.overrun_s:+.2f} |"
            f" {max(o.peak_rss_mb for o in runs):.0f}, {max(o.helper_peak_rss_mb for o in runs):.0f} |"
            f" {sum(o.healthz_before_end for o in runs)}, {healthz:.0f} | {sum(len(o.leftovers) for o in runs)} |"
        )


if __name__ == "__main__":
    main()
