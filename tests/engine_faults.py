"""Every bomb on every keyless engine at once, through ``serpfuse serve`` as a user would run it.

The fault matrix (``fault_matrix.py``) plays each fault on one HTML engine and on SearXNG's JSON client. Here
each fault is served to *every* keyless engine in one search (each engine's whole site on a loopback fake,
reached through its base URL setting, ``SERPFUSE_ENGINES__NAME__BASE_URL``, as an operator would set it),
beside a healthy Wikipedia that answers after ``HEALTHY_DELAY_S``. Each fault gets a fresh ``serpfuse serve``
process (so no engine is cooling down from the fault before). Measured per fault: the search's duration against
the deadline, every engine's status and reason, the healthy rows kept, the peak RSS of the server and of its
largest helper, and /healthz latency while the search runs.

``tests/test_faults_engines.py`` asserts on it; ``python tests/engine_faults.py`` prints the table BENCHMARKS.md
quotes. Nothing leaves 127.0.0.1: every engine asked has a loopback base URL, and any proxy the engines might
fall back to is a dead loopback port.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bombs import BOMBS  # noqa: E402
from fakeserver import FakeServer, Reply  # noqa: E402
from fault_matrix import _vm_hwm_mb, descendants, healthy_reply, wait_for_workers  # noqa: E402
from redis_server import free_port, http, start_serpfuse, stop  # noqa: E402
from serpfuse.engines import ENGINES, base_url_env  # noqa: E402

DEADLINE_S = 2.0
HEALTHY_DELAY_S = 0.6
QUERY = "rust async runtime"
BOMB_MIB = 1024  # each inflates to 1 GiB; the transport's cap (5 MiB of decoded bytes) is what must stop it
HTML = {"Content-Type": "text/html; charset=utf-8"}
HEALTHY = "wikipedia"


def faulty_engines() -> list[str]:
    """Every engine a keyless user's search may ask, but the healthy one: web and news, HTML and JSON."""
    return sorted(
        name
        for name, module in ENGINES.items()
        if not module.INFO.needs_key and not module.INFO.needs_base_url and name != HEALTHY
    )


def searches() -> list[str]:
    """The searches that between them ask every faulty engine: the primaries beside the healthy engine, the
    fallback tier on its own (beside a healthy primary it would not be asked) and the news engines."""
    by_kind: dict[str, list[str]] = {"primary": [HEALTHY], "fallback": [], "news": []}
    for name in faulty_engines():
        info = ENGINES[name].INFO
        by_kind["news" if info.category == "news" else info.tier].append(name)
    web = [f"engines={','.join(by_kind[kind])}" for kind in ("primary", "fallback") if by_kind[kind]]
    return [*web, f"engines={','.join(by_kind['news'])}&category=news"]


@dataclass(frozen=True)
class EngineFault:
    name: str
    reply: Reply
    statuses: tuple[str, ...]  # what every faulty engine may be reported as
    reason: str = ""  # a phrase the reason of every faulty engine reported as an error must carry
    settings: dict[str, str] = field(default_factory=dict)  # the server's SERPFUSE_* environment for it


@functools.cache
def _bomb(encoding: str) -> bytes:
    return BOMBS[encoding](BOMB_MIB)


def faults() -> list[EngineFault]:
    too_large = "too large"
    bombs = [
        EngineFault(
            f"{encoding} bomb (1 GiB inflated)",
            Reply(200, {**HTML, "Content-Encoding": encoding}, _bomb(encoding)),
            ("error",),
            too_large,
        )
        for encoding in BOMBS
    ]
    return [
        *bombs,
        # 16 engines × 50 MB is more than the fake (a thread of the test process) can send by the deadline, so
        # an engine still reading when the deadline comes is a timeout; one that reached the cap is an error.
        EngineFault(
            "big body (50 MB, no length)",
            Reply(200, HTML, huge_bytes=50 << 20),
            ("error", "timeout"),
            too_large,
        ),
        # The same with the cap an operator may lower (engine_max_bytes): less for the loop to read per body.
        EngineFault(
            "big body, engine_max_bytes 1 MB",
            Reply(200, HTML, huge_bytes=50 << 20),
            ("error", "timeout"),
            "over 1048576 bytes",
            {"SERPFUSE_ENGINE_MAX_BYTES": str(1 << 20)},
        ),
        EngineFault("nested-div page (800 KB)", Reply(200, HTML, b"<div>" * 160_000), ("error",)),
        # "<!-->" closes a comment for an HTML parser, so what follows is markup to it, and must be bounded too.
        EngineFault("nested divs after <!-->", Reply(200, HTML, b"<!-->" + b"<div>" * 160_000), ("error",)),
        EngineFault("hang", Reply(200, HTML, b"", delay_s=30), ("timeout",)),
    ]


@dataclass
class EngineOutcome:
    fault: str
    status: int
    took_s: float
    engines: dict[str, str]
    reasons: dict[str, str]
    rows: dict[str, int]
    result_engines: list[str]
    peak_rss_mb: float = 0.0
    helper_peak_rss_mb: float = 0.0
    healthz_ms: list[float] = field(default_factory=list)

    @property
    def overrun_s(self) -> float:
        return self.took_s - DEADLINE_S

    def merge(self, other: EngineOutcome) -> None:
        """Another search of the same fault: the worst status and time, every engine's answer."""
        self.status = max(self.status, other.status)
        self.took_s = max(self.took_s, other.took_s)
        self.engines |= other.engines
        self.reasons |= other.reasons
        self.rows |= {e: n for e, n in other.rows.items() if e not in self.rows}
        self.healthz_ms += other.healthz_ms


def warm_tables(cache_home: Path) -> None:
    """Build the word tables a machine builds once (its first search) into ``cache_home``, so the servers
    measured read them as a user's every later process does, and their peaks are a fault's, not the build's."""
    import os
    import subprocess

    code = "from serpfuse.pipeline import load_tables_for; load_tables_for(None)"
    subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, "XDG_CACHE_HOME": str(cache_home)}, check=True
    )


def play(fault: EngineFault, home: Path, cache_home: Path | None = None) -> EngineOutcome:
    """One fresh server; one search asking the healthy engine and every faulty one, each served ``fault``.
    ``cache_home``: where the word tables are kept (see ``warm_tables``); else the server's own, built anew."""
    engines = faulty_engines()
    # The fake engines at the lowest priority: on a 2-core machine sixteen of them streaming 50 MB each compete
    # with the server for the cores (/healthz 123-147 ms at normal priority, 29-33 ms so), which engines on
    # other machines never do.
    with FakeServer(lifetime_s=120, nice=19) as fake:
        fake.route(f"/{HEALTHY}/w/api.php", healthy_reply())
        for name in engines:
            fake.route_prefix(f"/{name}", fault.reply)
        dead = f"http://127.0.0.1:{free_port()}"
        env = {base_url_env(name): f"{fake.url}/{name}" for name in [HEALTHY, *engines]}
        env |= {"SERPFUSE_DEADLINE_S": str(DEADLINE_S), "SERPFUSE_TIMEOUT_S": str(DEADLINE_S)}
        env |= {"SERPFUSE_CACHE": "off", "NO_PROXY": "127.0.0.1,localhost"}
        env |= {"XDG_CACHE_HOME": str(cache_home)} if cache_home else {}
        env |= fault.settings
        env |= {k: dead for k in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy")}
        server = start_serpfuse(home, [], env)
        try:
            # One search first, of the healthy engine alone: it loads the language tables, no fault's cost; then
            # the workers up, as on a server that has run a while (until they are, the server parses and ranks
            # in its own threads, and its peak memory measured the start, not the fault).
            server.get(f"/v1/search?q={QUERY.replace(' ', '+')}&engines={HEALTHY}&cache=false")
            wait_for_workers(server.proc.pid)
            outcome = _search(server.base, fault, searches()[0])
            for extra in searches()[1:]:
                outcome.merge(_search(server.base, fault, extra))
            helpers = descendants(server.proc.pid)
            outcome.peak_rss_mb = round(_vm_hwm_mb(server.proc.pid) or 0.0, 1)
            outcome.helper_peak_rss_mb = round(max((_vm_hwm_mb(p) or 0.0 for p in helpers), default=0.0), 1)
        finally:
            stop(server.proc)
    return outcome


def _search(base: str, fault: EngineFault, asked: str) -> EngineOutcome:
    # /healthz from a process of its own: this one's fake engines serving 50 MB bodies hold its GIL
    prober = subprocess.Popen(
        [sys.executable, str(HERE / "healthz_probe.py"), base],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert prober.stdout is not None and prober.stdout.readline().strip() == "ready"
        status, _, raw = http("GET", f"{base}/v1/search?q={QUERY.replace(' ', '+')}&{asked}&cache=false")
        out, _ = prober.communicate("", timeout=30)
        probes = json.loads(out)
    finally:
        if prober.poll() is None:
            prober.kill()
            prober.wait()
    body = json.loads(raw)
    answers = body.get("engines", [])
    return EngineOutcome(
        fault=fault.name,
        status=status,
        took_s=body.get("tookMs", 0) / 1000,
        engines={e["engine"]: e["status"] for e in answers},
        reasons={e["engine"]: e.get("reason") or "" for e in answers},
        rows={e["engine"]: e["rows"] for e in answers},
        result_engines=sorted({e for r in body.get("results", []) for e in r["engines"]}),
        healthz_ms=probes,
    )


def main(names: list[str]) -> None:
    """``python tests/engine_faults.py [NAME...]``: the table, one fresh server per fault (those whose name
    contains a NAME given, each as often as it is given: ``bomb bomb`` plays every bomb twice)."""
    import tempfile

    engines = faulty_engines()
    print(
        f"deadline {DEADLINE_S:g} s; {len(engines)} faulty engines asked at once beside a healthy {HEALTHY}"
    )
    print("| fault | faulty engines' statuses | search took (s) | over deadline (s) | peak RSS (MB): server,"
          " largest helper | /healthz during (probes, max ms) | healthy rows kept |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        warm_tables(Path(tmp) / "cache")
        chosen = [f for name in names for f in faults() if name in f.name] if names else faults()
        for n, fault in enumerate(chosen):
            o = play(fault, Path(tmp) / f"fault-{n}", Path(tmp) / "cache")
            counts: dict[str, int] = {}
            for name in engines:
                counts[o.engines.get(name, "missing")] = counts.get(o.engines.get(name, "missing"), 0) + 1
            statuses = ", ".join(f"{s} ×{c}" for s, c in sorted(counts.items()))
            print(
                f"| {fault.name} | {statuses} | {o.took_s:.2f} | {o.overrun_s:+.2f} | {o.peak_rss_mb:.0f},"
                f" {o.helper_peak_rss_mb:.0f} | {len(o.healthz_ms)}, {max(o.healthz_ms, default=float('nan')):.0f}"
                f" | {o.rows.get(HEALTHY, 0)} |"
            )


if __name__ == "__main__":
    main(sys.argv[1:])
