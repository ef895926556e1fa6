"""``python -m benchmarks --perf``: the performance table, every row measured in one run on this machine.

Each figure is a ratio or a time measured side by side in the same run: fake engines with set latencies on
loopback (another process, ``perf_probe.py engines``), the crw56 recording for the ranking step, and real server
processes for requests per second. Every probe runs in its own process, ``repeat`` times; the table shows the
median and the minimum over the repetitions, and peak RSS over every probe. With ``baseline`` (the ``src``
directory of another checkout) each probe also runs against that tree, interleaved with this one, and the table
adds the before column and after ÷ before.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROBE = Path(__file__).with_name("perf_probe.py")
THIS_SRC = Path(__file__).resolve().parents[1] / "src"  # this checkout's package tree
LATENCIES_MS = {"e50": 50, "e100": 100, "e150": 150, "e200": 200, "e300": 300}
RECORDING = "crw56/searxng_raw.json"
CLI = "from serpfuse.cli import main; main()"
IMPORTS = "import typer, rich, pydantic, pydantic_settings"


@dataclass
class Row:
    what: str
    goal: str
    unit: str = ""  # "" = a ratio
    values: dict[str, list[float]] = field(default_factory=dict)  # tree label -> one value per repetition


def _env(src: Path) -> dict[str, str]:
    # and the one module the parse workers import from here, the fake engines' parse (a directory of its own:
    # benchmarks/ itself would put modules such as "tables" before the installed ones)
    path = os.pathsep.join((str(src), str(PROBE.with_name("probe_path"))))
    return {**os.environ, "PYTHONPATH": path, "PYTHONDONTWRITEBYTECODE": "1"}


def run_probe(src: Path, name: str, args: dict[str, Any]) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, str(PROBE), name, json.dumps(args)],
        env=_env(src),
        capture_output=True,
        text=True,
        timeout=900,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"perf probe {name} failed under {src}: {proc.stderr.strip().splitlines()[-1:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _process_seconds(cmd: list[str], env: dict[str, str], timeout_s: float = 120) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=timeout_s
    )
    return time.perf_counter() - t0


def help_ratio(src: Path, runs: int = 5) -> float:
    """``serpfuse --help`` ÷ importing typer+rich+pydantic+pydantic-settings, interleaved, median of ratios."""
    env = _env(src)
    ratios = []
    for _ in range(runs):
        own = _process_seconds([sys.executable, "-c", CLI, "--help"], env)
        base = _process_seconds([sys.executable, "-c", IMPORTS], env)
        ratios.append(own / base)
    return statistics.median(ratios)


def fuse_seconds(src: Path, runs: list[Path], strategy: str | None = None) -> float:
    """``serpfuse fuse`` over the MQ2008 run files, the whole process."""
    chosen = ["--strategy", strategy] if strategy else []
    return _process_seconds([sys.executable, "-c", CLI, "fuse", *chosen, *map(str, runs)], _env(src))


# ranx (the ``ranx`` extra) fuses with RRF, as ``serpfuse fuse --strategy rrf`` does, and writes a TREC run.
RANX = """import sys
from ranx import Run, fuse
fuse([Run.from_file(p, kind="trec") for p in sys.argv[2:]], method="rrf").save(sys.argv[1], kind="trec")
"""


def ranx_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("ranx") is not None


def ranx_seconds(runs: list[Path], out: Path, timeout_s: float = 120) -> float:
    """ranx's RRF over ``runs``, the whole process (its numba code compiled on a first, untimed call)."""
    cmd = [sys.executable, "-c", RANX, str(out), *map(str, runs)]
    return _process_seconds(cmd, _env(THIS_SRC), timeout_s)


def common_query_runs(runs: list[Path], out: Path) -> list[Path]:
    """The run files cut to the queries every run answers: ranx fuses only runs with the same query ids."""
    from serpfuse.bench import trec

    loaded = {path: trec.read_run(path) for path in runs}
    common = set.intersection(*(set(run) for run in loaded.values()))
    out.mkdir(exist_ok=True)
    paths = []
    for path, run in loaded.items():
        cut = out / path.name
        ranked = {qid: sorted(run[qid].items(), key=lambda d: (-d[1], d[0])) for qid in sorted(common)}
        trec.write_run(cut, ranked, tag=path.stem)
        paths.append(cut)
    return paths


def write_mq2008_runs(data_dir: Path, out: Path) -> list[Path]:
    """The 25 MQ2008-agg rankers as TREC run files (all five subsets), for the ``fuse`` row."""
    from benchmarks import mq2008
    from serpfuse.bench import trec

    corpus = mq2008.load_mq2008(data_dir)
    queries = mq2008.queries_of(corpus)
    paths = []
    for ranker in mq2008.RANKERS:
        ranked = {}
        for qid, q in queries.items():
            docs = q.ranking(ranker)
            ranked[qid] = [(doc, float(len(docs) - i)) for i, doc in enumerate(docs)]
        path = out / f"{mq2008.engine_name(ranker)}.run"
        trec.write_run(path, ranked, tag=mq2008.engine_name(ranker))
        paths.append(path)
    return paths


# --- servers ------------------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Process:
    """A child process stopped on exit (SIGTERM, then SIGKILL), whatever happens."""

    def __init__(
        self, cmd: list[str], env: dict[str, str], cwd: Path, *, stdout: Any = subprocess.DEVNULL
    ) -> None:
        self.log = Path(tempfile.mkstemp(prefix="serpfuse-perf-", suffix=".log")[1])
        with self.log.open("wb") as err:
            self.proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=stdout, stderr=err)

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-600:]

    def __enter__(self) -> Process:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.unlink(missing_ok=True)


def start_engines(lifetime_s: float) -> tuple[Process, int]:
    cmd = [sys.executable, str(PROBE), "engines", json.dumps({"lifetime_s": lifetime_s})]
    engines = Process(cmd, _env(THIS_SRC), THIS_SRC, stdout=subprocess.PIPE)
    assert engines.proc.stdout is not None
    return engines, int(engines.proc.stdout.readline())


async def _keep_alive_client(host: str, port: int, paths: list[str], offset: int, stop_at: float) -> int:
    """One keep-alive HTTP/1.1 connection sending GETs back to back until ``stop_at``; returns the answers.

    Written on bare asyncio streams on purpose: an httpx client costs more CPU per request than the server
    does for /healthz, so with it the load generator, not the server, would be measured. Any status but 200
    fails the run (a 429 or 500 answers fast and would flatter the server).
    """
    reader, writer = await asyncio.open_connection(host, port)
    done, i = 0, offset
    try:
        while time.perf_counter() < stop_at:
            path = paths[i % len(paths)]
            writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
            head = await reader.readuntil(b"\r\n\r\n")
            status = head[9:12]
            if status != b"200":
                raise RuntimeError(f"GET {path} answered {status.decode()}")
            length = next(
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line[:15].lower() == b"content-length:"
            )
            await reader.readexactly(length)
            done += 1
            i += 1
    finally:
        writer.close()
    return done


async def _load(base: str, paths: list[str], seconds: float, concurrency: int) -> float:
    """Requests per second that ``concurrency`` keep-alive clients get, cycling through ``paths``."""
    host, port = base.removeprefix("http://").rsplit(":", 1)
    started = time.perf_counter()
    stop_at = started + seconds
    counts = await asyncio.gather(
        *(_keep_alive_client(host, int(port), paths, i, stop_at) for i in range(concurrency))
    )
    return sum(counts) / (time.perf_counter() - started)


def serve_rps(src: Path, recording: Path, workers: int | None, seconds: float, tmp: Path) -> dict[str, float]:
    """``/v1/search`` cache hits and ``/healthz``, requests/s at concurrency 16, from a real ``serve`` process."""
    import urllib.request

    port = _free_port()
    home = Path(tempfile.mkdtemp(dir=tmp))
    env = {
        **_env(src),
        "HOME": str(home),
        "SERPFUSE_CACHE_DIR": str(home / "cache"),
        "SERPFUSE_RATE_LIMIT_BURST": "1000000000",
        "SERPFUSE_RATE_LIMIT_PER_MIN": "1000000000",
    }
    cmd = [sys.executable, "-c", CLI, "serve", "--port", str(port), "--replay", str(recording)]
    cmd += ["--workers", str(workers)] if workers else []
    base = f"http://127.0.0.1:{port}"
    queries = [e["query"] for e in json.loads(recording.read_text(encoding="utf-8"))]
    every = [f"/v1/search?q={urllib.request.quote(q)}&limit=8" for q in queries]
    with Process(cmd, env, home) as server:
        deadline = time.monotonic() + 180
        while True:
            try:
                urllib.request.urlopen(base + "/healthz", timeout=5).read()
                break
            except OSError:
                if server.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"serve did not start under {src}: {server.tail()}") from None
                time.sleep(0.2)
        # Only queries whose answer is cached: a response without results is never stored, and each request for
        # it would be a whole search. Asked twice, so the cache holds every one whichever worker answers.
        paths = []
        for path in every:
            urllib.request.urlopen(base + path, timeout=60).read()
            if json.loads(urllib.request.urlopen(base + path, timeout=60).read()).get("cached"):
                paths.append(path)
            if len(paths) == 20:
                break
        cpu0 = _tree_cpu_s(server.proc.pid)
        search = asyncio.run(_load(base, paths, seconds, 16))
        cpu1 = _tree_cpu_s(server.proc.pid)
        health = asyncio.run(_load(base, ["/healthz"], seconds, 16))
        cpu2 = _tree_cpu_s(server.proc.pid)
    # CPU per request: what the server spends, whatever the load generator (on the same cores) can send.
    return {
        "search_rps": search,
        "healthz_rps": health,
        "search_cpu_ms": (cpu1 - cpu0) * 1000 / (search * seconds),
        "healthz_cpu_ms": (cpu2 - cpu1) * 1000 / (health * seconds),
    }


def served_concurrent(src: Path, port: int, n: int, tmp: Path, salt: str, soak: int = 0) -> dict[str, float]:
    """``n`` searches at once through a real ``serve`` app (uvicorn, its ranking and parse workers; the fake
    engines), against a raw asyncio gather of the same engine requests, best of two each, interleaved; and
    the server tree's CPU per search and its memory (RSS of every process, and the tree's PSS, sampled under
    that load). ``soak`` batches of ``n`` new searches run first, so the memory is a server's that has ranked
    many rows."""
    from benchmarks.perf_probe import queries, raw_gather, raw_get

    serve_port, home = _free_port(), Path(tempfile.mkdtemp(dir=tmp))
    args = {"port": port, "latencies": LATENCIES_MS, "serve_port": serve_port, "home": str(home)}
    cmd = [sys.executable, str(PROBE), "serve", json.dumps(args)]
    with Process(cmd, _env(src), home) as server:
        deadline = time.monotonic() + 180
        while True:  # up, and its workers too: a search waits for nothing a server starts first
            try:
                asyncio.run(raw_get(serve_port, "/healthz"))
                break
            except OSError:
                if server.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"the serve probe did not start under {src}: {server.tail()}"
                    ) from None
                time.sleep(0.2)
        time.sleep(3)  # the ranking and parse workers start in the background

        # when each search of the latest batch was answered, from the batch's start
        finished: list[float] = []

        async def batch(qs: list[str]) -> list[bytes]:
            started = time.perf_counter()

            async def one(q: str) -> bytes:
                body = await raw_get(serve_port, f"/v1/search?q={urllib.parse.quote(q)}&limit=8")
                finished.append(time.perf_counter() - started)
                return body

            finished.clear()
            return await asyncio.gather(*(one(q) for q in qs))

        asyncio.run(batch(queries(3, f"{salt}-warm")))
        for i in range(soak):
            asyncio.run(batch(queries(n, f"{salt}-soak-{i}")))
        out: dict[str, float] = {}
        failed, peaks, pss, cpu, spreads = 0, [], [], [], []  # cpu: (ms a search, ms a search by role) a turn
        idle = rss_by_role(server.proc.pid)  # started and warmed, before the load
        idle_pss = tree_pss_mb(server.proc.pid)
        for turn in ("raw", "serve") * 2:
            qs = queries(n, f"{salt}-{turn}-{time.perf_counter_ns()}")
            roles0, t0 = cpu_by_role(server.proc.pid), time.perf_counter()
            if turn == "raw":
                asyncio.run(raw_gather(port, LATENCIES_MS, qs))
            else:
                sampler = _RssSampler(server.proc.pid)
                with sampler:
                    bodies = asyncio.run(batch(qs))
                peaks.append(sampler.peak_by_role)
                pss.append(sampler.peak_pss_mb)
                spreads.append(sorted(finished))
                roles1 = cpu_by_role(server.proc.pid)
                split = {r: (roles1[r] - roles0.get(r, 0.0)) * 1000 / n for r in roles1}
                cpu.append(((sum(roles1.values()) - sum(roles0.values())) * 1000 / n, split))
                failed += sum(e["status"] != "ok" for b in bodies for e in json.loads(b)["engines"])
            seconds = time.perf_counter() - t0
            out[turn] = min(out.get(turn, seconds), seconds)
    cpu_ms, cpu_split = min(cpu, key=lambda turn: turn[0])
    fastest = min(spreads, key=lambda answered: answered[-1])  # the faster serve batch's answer times
    by_role = max(peaks, key=_total_mb)
    return {
        "ratio": out["serve"] / out["raw"],
        "serve_s": out["serve"],
        "raw_s": out["raw"],
        "failed": failed,
        "cpu_ms": cpu_ms,
        "cpu_ms_by_role": cpu_split,
        "rss_mb": _total_mb(by_role),
        "pss_mb": max(pss),
        "finished_s": (fastest[0], fastest[len(fastest) // 2], fastest[-1]),  # first, median, last
        "idle_pss_mb": idle_pss,
        "rss_by_role": by_role,
        "idle_rss_by_role": idle,
    }


def _total_mb(by_role: list[tuple[str, float]]) -> float:
    return sum(mb for _, mb in by_role)


class _RssSampler:
    """The peak, over a ``with`` block, of the summed RSS of ``pid`` and every process below it (every 50 ms),
    each process's RSS at that peak (``peak_by_role``), and the peak of their summed PSS (``peak_pss_mb``)."""

    def __init__(self, pid: int) -> None:
        import threading

        self.pid, self.peak_by_role, self.peak_pss_mb = pid, [], 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while True:
            by_role = rss_by_role(self.pid)
            if _total_mb(by_role) > _total_mb(self.peak_by_role):
                self.peak_by_role = by_role
            self.peak_pss_mb = max(self.peak_pss_mb, tree_pss_mb(self.pid))
            if self._stop.wait(0.05):
                return

    def __enter__(self) -> _RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _tree_pids(pid: int) -> list[int]:
    pids, todo = [], [pid]
    while todo:
        p = todo.pop()
        pids.append(p)
        try:
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += map(int, (task / "children").read_text().split())
        except (OSError, ValueError):
            continue
    return pids


def _role(pid: int) -> str:
    """What a process of the serve probe's tree is, from its command line."""
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return "?"
    # a worker, by what it loaded first: the pipeline (it ranks; it parses too since 2026-12-03) or the engines
    if "worker_main" in cmd:
        return "worker (pipeline)" if "serpfuse.pipeline" in cmd else "worker (engines)"
    return "server" if "perf_probe" in cmd else "other"


def rss_by_role(pid: int) -> list[tuple[str, float]]:
    """``(role, RSS MB)`` of ``pid`` and every process below it (Linux ``/proc``)."""
    out = []
    for p in _tree_pids(pid):
        try:
            pages = int(Path(f"/proc/{p}/statm").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue
        out.append((_role(p), pages * os.sysconf("SC_PAGE_SIZE") / 1e6))
    return out


def tree_pss_mb(pid: int) -> float:
    """The PSS of ``pid`` and every process below it, summed (Linux ``/proc/PID/smaps_rollup``): each page shared
    between processes (the interpreter, its libraries, the memory-mapped word tables) counted once, split among
    them. RSS summed counts such a page once per process that maps it; PSS summed is what the tree costs."""
    total_kb = 0
    for p in _tree_pids(pid):
        try:
            lines = Path(f"/proc/{p}/smaps_rollup").read_text().splitlines()
        except OSError:
            continue
        total_kb += next((int(line.split()[1]) for line in lines if line.startswith("Pss:")), 0)
    return total_kb / 1000


def _tree_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) used so far by ``pid`` and every process below it (Linux ``/proc``)."""
    return sum(cpu_by_role(pid).values())


def cpu_by_role(pid: int) -> dict[str, float]:
    """CPU seconds (user + system) used so far by ``pid`` and every process below it, summed by role."""
    ticks = os.sysconf("SC_CLK_TCK")
    out: dict[str, float] = {}
    for p in _tree_pids(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            seconds = (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
        except (OSError, IndexError, ValueError):
            continue
        role = _role(p)
        out[role] = out.get(role, 0.0) + seconds
    return out


# --- the run --------------------------------------------------------------------------------------------------


def measure(
    data_dir: Path,
    *,
    repeat: int = 3,
    baseline: Path | None = None,
    workers: list[int] | None = None,
    load_seconds: float = 3.0,
    progress: Callable[[str], None] = lambda _: None,
) -> tuple[list[Row], float]:
    """Every row, ``repeat`` times, this tree and the baseline interleaved. Returns the rows and peak RSS (MB)."""
    from benchmarks import oneshot
    from serpfuse.serve.workers import default_workers

    recording = (Path(data_dir) / RECORDING).resolve()  # the serve processes run in their own directories
    if not recording.is_file():
        raise FileNotFoundError(f"crw56 recording not found: {recording}")
    cores = default_workers()
    worker_counts = workers or sorted({1, 2, cores})
    trees = {"this": THIS_SRC} | ({"baseline": Path(baseline)} if baseline else {})
    rows = {
        "e2e": Row(
            "search end-to-end ÷ the slowest engine's set latency, p50 (5 engines 50–300 ms)", "≤ 1.03"
        ),
        "fanout": Row("fan-out alone ÷ the slowest engine's set latency, p50", ""),
        # Each of the runs above begins with a warm-up search: this is the search a new process makes first.
        "first": Row("a new process's first search ÷ the slowest engine's set latency, median of 3", ""),
        "concurrent": Row(
            "100 concurrent searches, batch time ÷ a bare httpx gather of the same requests", "≤ 1.2"
        ),
        # Failed answers come back fast and make the batch look cheap: the ratio holds only when this is 0.
        "concurrent_failed": Row(
            "engine answers that failed in that batch (the ratio holds only at 0)", "0", "count"
        ),
        # The same batch with what a server starts first (SearchService.start): the ranking worker process and
        # the parse workers. The row above is the library's (serpfuse.asearch), which starts neither.
        "concurrent_raw": Row("the same batch ÷ a raw asyncio gather of the same requests (the floor)", ""),
        "concurrent_server": Row(
            "the same, with a server's workers started (they parse and rank: serpfuse.start_workers)",
            "≤ 1.2",
        ),
        "concurrent_server_failed": Row("engine answers that failed in that batch", "0", "count"),
        "concurrent_server_raw": Row("that batch ÷ the raw asyncio gather", ""),
        # The whole server: uvicorn, HTTP requests in and JSON out, its ranking and parse workers.
        "served": Row(
            "100 concurrent searches through serve (1 worker, no result cache) ÷ a raw asyncio gather of the "
            "same engine requests",
            "≤ 1.5",
        ),
        "served_failed": Row("engine answers that failed in those searches", "0", "count"),
        "served_cpu": Row("serve's CPU per search in that batch (its whole process tree)", "", "ms"),
        "served_rss": Row("serve's memory under that load (RSS summed over its process tree)", "", "MB"),
        "served_pss": Row("the same as PSS summed (a page its processes share counted once)", "", "MB"),
        "ranking": Row("ranking step (rank_answers), default, median per crw56 query", "≤ 1", "ms"),
        "ranking_cold": Row(
            "ranking step, cold: each query with every memo emptied first (its rows, words and hosts new)",
            "≤ 3",
            "ms",
        ),
        # The row above is the best of three calls, when every per-text memo is warm; this is the first call.
        "ranking_first": Row(
            "ranking step, the first call of each query (its rows new to the process), median", "", "ms"
        ),
        "asearch": Row(
            "serpfuse.asearch over the 56 crw56 queries (one replay source), median", "≤ 1.5", "ms"
        ),
        "stages": Row("of which candidates / filters / fusion+selection", "", "ms"),
        "help": Row(
            "serpfuse --help ÷ importing typer+rich+pydantic+pydantic-settings (interleaved)", "≤ 1.0"
        ),
        "oneshot": Row(
            "a one-shot serpfuse search --replay crw56 (fresh result cache), whole process, median of 3",
            "≤ 0.5",
            "s",
        ),
        "oneshot_rss": Row("its peak RSS", "≤ 80", "MiB"),
        "hit": Row("in-process cache hit: SearchService.search (decoded)", "≤ 0.2", "ms"),
        "hit_json": Row(
            "in-process cache hit: search_json (stored bytes, what /v1/search sends)", "≤ 0.2", "ms"
        ),
        "rps_ratio": Row("/v1/search cache hits ÷ /healthz requests/s at concurrency 16 (1 worker)", "≥ 0.5"),
        # The load generator shares the cores: the server's own CPU per request does not depend on it.
        "cpu_ratio": Row(
            "/healthz ÷ /v1/search cache hit, server CPU per request (1 worker, its workers included)",
            "≥ 0.5",
        ),
        "fuse": Row("serpfuse fuse, 25 MQ2008 runs, whole process", "", "s"),
        "ranx": Row(
            "serpfuse fuse --strategy rrf ÷ ranx's rrf, the 25 runs cut to the queries all answer, whole processes",
            "≤ 0.1",
        ),
    }
    for n in worker_counts:
        workers_n = f"{n} worker{'s' if n > 1 else ''}"
        rows[f"rps{n}"] = Row(f"/v1/search cache hits, requests/s, {workers_n}", "", "req/s")
        # The load generator shares the cores, so requests/s cannot grow with workers on a small machine; the
        # server's CPU per request can show what more workers cost (shared state, accept sharing) per request.
        rows[f"hit_cpu{n}"] = Row(f"/v1/search cache hit, server CPU per request, {workers_n}", "", "ms")
    stage_values: dict[str, list[tuple[float, ...]]] = {}
    peak = 0.0

    def note(key: str, tree: str, value: float) -> None:
        rows[key].values.setdefault(tree, []).append(value)

    with tempfile.TemporaryDirectory(prefix="serpfuse-perf-") as tmp_name:
        tmp = Path(tmp_name)
        runs = (
            write_mq2008_runs(Path(data_dir) / "mq2008-agg", tmp)
            if (Path(data_dir) / "mq2008-agg").is_dir()
            else []
        )
        common = common_query_runs(runs, tmp / "common") if runs and ranx_installed() else []
        if common:
            ranx_seconds(common, tmp / "ranx.run", timeout_s=900)  # compiles and caches its numba code
        engines, port = start_engines(lifetime_s=3600)
        with engines:
            for rep in range(repeat):
                for label, src in trees.items() if rep % 2 == 0 else reversed(trees.items()):
                    progress(f"repetition {rep + 1}/{repeat}: {label}")
                    fake = {"port": port, "latencies": LATENCIES_MS, "salt": f"{label}{rep}"}
                    e2e = run_probe(src, "e2e", {**fake, "n": 15})
                    note("e2e", label, e2e["e2e"])
                    note("fanout", label, e2e["fanout"])
                    firsts = [
                        run_probe(src, "first", {**fake, "salt": f"{label}{rep}-{i}"}) for i in range(3)
                    ]
                    note("first", label, statistics.median(f["first"] for f in firsts))
                    conc = run_probe(src, "concurrent", {**fake, "n": 100})
                    note("concurrent", label, conc["ratio"])
                    note("concurrent_failed", label, conc["failed_answers"])
                    if "raw_s" in conc:
                        note("concurrent_raw", label, conc["ratio_raw"])
                    served = run_probe(src, "concurrent", {**fake, "n": 100, "server": True})
                    note("concurrent_server", label, served["ratio"])
                    note("concurrent_server_failed", label, served["failed_answers"])
                    if "raw_s" in served:
                        note("concurrent_server_raw", label, served["ratio_raw"])
                    whole = served_concurrent(src, port, 100, tmp, f"{label}{rep}")
                    note("served", label, whole["ratio"])
                    note("served_failed", label, whole["failed"])
                    note("served_cpu", label, whole["cpu_ms"])
                    note("served_rss", label, whole["rss_mb"])
                    note("served_pss", label, whole["pss_mb"])
                    ranking = run_probe(src, "ranking", {"recording": str(recording), "repeat": 3})
                    note("ranking", label, ranking["ranking_ms"])
                    note("ranking_cold", label, ranking["cold_ms"])
                    if "first_ms" in ranking:
                        note("ranking_first", label, ranking["first_ms"])
                    if "candidates_ms" in ranking:
                        stage_values.setdefault(label, []).append(
                            (ranking["candidates_ms"], ranking["filters_ms"], ranking["fusion_ms"])
                        )
                    asearch = run_probe(src, "asearch", {"recording": str(recording), "repeat": 2})
                    note("asearch", label, asearch["asearch_ms"])
                    hit = run_probe(
                        src,
                        "cache_hit",
                        {"recording": str(recording), "repeat": 3, "tmp": tempfile.mkdtemp(dir=tmp)},
                    )
                    note("hit", label, hit["search_ms"])
                    if "search_json_ms" in hit:
                        note("hit_json", label, hit["search_json_ms"])
                    note("help", label, help_ratio(src))
                    once = oneshot.measure(recording, {label: src}, runs=3)[label]
                    note("oneshot", label, once["search_s"])
                    note("oneshot_rss", label, once["rss_mib"])
                    if runs:
                        note("fuse", label, fuse_seconds(src, runs))
                    if common and label == "this":  # ranx does not change with the tree: this one's ratio
                        own = fuse_seconds(src, common, "rrf")
                        note("ranx", label, own / ranx_seconds(common, tmp / "ranx.run"))
                    for n in worker_counts:
                        if label != "this" and n > 1:
                            continue  # a baseline without --workers serves one process
                        rps = serve_rps(src, recording, n if label == "this" else None, load_seconds, tmp)
                        note(f"rps{n}", label, rps["search_rps"])
                        note(f"hit_cpu{n}", label, rps["search_cpu_ms"])
                        if n == 1:
                            note("rps_ratio", label, rps["search_rps"] / rps["healthz_rps"])
                            note("cpu_ratio", label, rps["healthz_cpu_ms"] / rps["search_cpu_ms"])
                    peak = max(
                        peak, *(r.get("peak_rss_mb", 0.0) for r in (e2e, conc, served, ranking, asearch, hit))
                    )
    for label, triples in stage_values.items():
        rows["stages"].values[label] = [statistics.median(t[i] for t in triples) for i in range(3)]
    return list(rows.values()), peak


def _cell(values: list[float] | None, unit: str, stages: bool = False) -> str:
    if not values:
        return "–"
    if stages:
        return " / ".join(f"{v:.2f}" for v in values)
    digits = 0 if unit in ("req/s", "count", "MB", "MiB") else 3
    return f"{statistics.median(values):.{digits}f} (min {min(values):.{digits}f})"


def markdown(rows: list[Row], peak_rss_mb: float, *, command: str, when: str, commit: str) -> str:
    """The table BENCHMARKS.md keeps: median (min) over repetitions; the before column when measured."""
    has_baseline = any("baseline" in r.values for r in rows)
    head = "| what | unit | this run: median (min) | goal |"
    rule = "|---|---|---:|---:|"
    if has_baseline:
        head = "| what | unit | before: median (min) | after: median (min) | after ÷ before | goal |"
        rule = "|---|---|---:|---:|---:|---:|"
    lines = [f"`{command}` — {when}, commit {commit}", "", head, rule]
    for r in rows:
        stages = r.what.startswith("of which")
        after = _cell(r.values.get("this"), r.unit, stages)
        if has_baseline:
            before_values, after_values = r.values.get("baseline"), r.values.get("this")
            ratio = "–"
            if before_values and after_values and not stages and statistics.median(before_values):
                ratio = f"{statistics.median(after_values) / statistics.median(before_values):.2f}"
            before = _cell(before_values, r.unit, stages)
            lines.append(f"| {r.what} | {r.unit or 'ratio'} | {before} | {after} | {ratio} | {r.goal} |")
        else:
            lines.append(f"| {r.what} | {r.unit or 'ratio'} | {after} | {r.goal} |")
    lines += ["", f"Peak RSS of any probe process: {peak_rss_mb:.0f} MB."]
    return "\n".join(lines)


def _commit(src: Path) -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(src), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except OSError:
        return "unknown"
    return out.stdout.strip() or "unknown"


@dataclass
class PerfOutcome:
    """``--perf``'s result: the rows (values per tree and repetition) and the peak RSS of any probe."""

    rows: list[Row]
    peak_rss_mb: float
    when: str = field(default_factory=lambda: time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    commit: str = field(default_factory=lambda: _commit(THIS_SRC))

    def _command(self) -> str:
        has_baseline = any("baseline" in r.values for r in self.rows)
        return "make bench-perf" + (' ARGS="--baseline SRC"' if has_baseline else "")

    def to_json(self) -> Any:
        return {
            "command": self._command(),
            "date": self.when,
            "commit": self.commit,
            "peak_rss_mb": round(self.peak_rss_mb, 1),
            "rows": [
                {"what": r.what, "unit": r.unit or "ratio", "goal": r.goal, "values": r.values}
                for r in self.rows
            ],
        }

    def markdown(self) -> str:
        return markdown(
            self.rows, self.peak_rss_mb, command=self._command(), when=self.when, commit=self.commit
        )

    def render(self, console: Any) -> None:
        from rich.markdown import Markdown

        console.print(Markdown(self.markdown()))
