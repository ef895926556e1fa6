"""One measurement of ``python -m benchmarks --perf``, run in its own process: ``python perf_probe.py NAME JSON``.

It prints one JSON object. It is run by path, with ``PYTHONPATH`` naming the serpfuse tree under test, so the same
probe measures this checkout and a baseline one (``--baseline``) side by side; it therefore imports only what
every serpfuse version since the first round has (``serpfuse.pipeline``, ``serpfuse.sources``, ``serpfuse.service``
...) and nothing from ``serpfuse.bench``.

``engines`` is also the fake engine server: loopback only, ``GET /<latency_ms>/<name>?q=...`` answers after that
many milliseconds with ten JSON rows whose URLs overlap between engines as real engines' do; ``<name>.html``, the
same rows as a Mojeek results page (what ``benchmarks.ddgs_side`` gives ddgs's own parser).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import statistics
import sys
import time
from html import escape
from types import ModuleType
from typing import Any
from urllib.parse import parse_qs, urlsplit

ROWS = 10


# --- the fake engines (server side) ----------------------------------------------------------------------------


def rows_for(engine: str, query: str) -> list[dict[str, str]]:
    """Ten rows; rows 1-6 come from a pool shared by every engine (in an engine-specific order), 7-10 are its own."""
    words = query.split()
    slug = "-".join(words) or "q"
    salt = sum(map(ord, engine))
    shared = [f"https://site{(i * 7 + salt) % 12}.example.org/{slug}/{(i * 7 + salt) % 12}" for i in range(6)]
    own = [f"https://{engine}-{i}.example.net/{slug}" for i in range(4)]
    return [
        {
            "url": url,
            "title": f"{query} - page {n} about {' '.join(words[:3])}",
            "content": f"All about {query}.",
        }
        for n, url in enumerate(shared + own, start=1)
    ]


def results_page(rows: list[dict[str, str]]) -> bytes:
    """The rows as Mojeek lays out its results (what ddgs's Mojeek engine reads)."""
    items = "".join(
        f'<li><h2><a href="{escape(r["url"])}">{escape(r["title"])}</a></h2><p class="s">{escape(r["content"])}</p></li>'
        for r in rows
    )
    return f'<!DOCTYPE html><html><body><ul class="results-standard">{items}</ul></body></html>'.encode()


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            target = head.split(b" ", 2)[1].decode()
            parts = urlsplit(target)
            _, latency, name = parts.path.split("/", 2)
            query = parse_qs(parts.query).get("q", [""])[0]
            await asyncio.sleep(int(latency) / 1000)
            if name.endswith(".html"):
                kind, body = b"text/html; charset=utf-8", results_page(rows_for(name[:-5], query))
            else:
                kind = b"application/json"
                body = json.dumps({"engine": name, "results": rows_for(name, query)}).encode()
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s"
                % (kind, len(body), body)
            )
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, ValueError):
        pass
    finally:
        writer.close()


async def serve_engines(lifetime_s: float) -> None:
    server = await asyncio.start_server(_handle, "127.0.0.1", 0, backlog=1024)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await asyncio.sleep(lifetime_s)  # stops by itself even if the driver dies


# --- the fake engines (serpfuse side) ---------------------------------------------------------------------------


def engine_module(name: str, latency_ms: int, base: str) -> ModuleType:
    import perf_fake_answer  # benchmarks/probe_path is on PYTHONPATH (the parse workers import it too)

    from serpfuse.engines.base import EngineInfo, RequestSpec

    module = ModuleType(f"perf_engine_{name}")
    module.INFO = EngineInfo(
        name=name, website=base, tier="primary", region="both", kind="json", needs_key=False
    )

    def build_request(q: Any) -> Any:
        return RequestSpec("GET", f"{base}/{latency_ms}/{name}", params={"q": q.text})

    module.build_request = build_request
    module.parse = perf_fake_answer.parse  # sent to a server's parse workers, as a real engine's parse is
    return module


def live_source(port: int, latencies: dict[str, int]) -> Any:
    from serpfuse.secrets import KeyStore
    from serpfuse.sources.live import LiveSource
    from serpfuse.sources.transport import Transport
    from serpfuse.state.cooldown import InMemoryCooldownStore

    base = f"http://127.0.0.1:{port}"
    modules = [engine_module(name, ms, base) for name, ms in latencies.items()]
    transport = Transport(trust_env=False)
    keys = KeyStore(env={}, keys_file="/nonexistent/serpfuse-perf-keys")  # no key is needed, none is read
    return LiveSource(keys, InMemoryCooldownStore(), transport, engines=modules, owns_transport=True)


def queries(n: int, salt: str) -> list[str]:
    topics = [
        "rust async runtime",
        "python packaging",
        "sqlite wal mode",
        "http2 multiplexing",
        "tls session",
    ]
    return [f"{topics[i % len(topics)]} {salt} {i}" for i in range(n)]


async def raw_get(port: int, target: str) -> bytes:
    """One GET on a new loopback connection with bare asyncio streams: the floor any HTTP client adds to."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
        head = await reader.readuntil(b"\r\n\r\n")
        if head[9:12] != b"200":
            raise RuntimeError(f"GET {target} answered {head[9:12].decode()}")
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line[:15].lower() == b"content-length:"
        )
        return await reader.readexactly(length)
    finally:
        writer.close()


async def raw_gather(port: int, latencies: dict[str, int], qs: list[str]) -> None:
    """Every engine request of ``qs``'s searches at once, on bare asyncio streams (the real floor)."""
    from urllib.parse import quote

    await asyncio.gather(
        *(raw_get(port, f"/{ms}/{name}?q={quote(q)}") for q in qs for name, ms in latencies.items())
    )


def pool_limits(transport: Any) -> tuple[int, int]:
    """The live transport's connection pool (max connections, keep-alive), in whichever form this version has it."""
    limits = getattr(transport, "limits", None)
    return (limits.max_connections, limits.max_keepalive_connections) if limits else (100, 20)


def recorded_queries(recording: str) -> list[str]:
    with open(recording, encoding="utf-8") as f:
        return [e["query"] for e in json.load(f)]


# --- probes -----------------------------------------------------------------------------------------------------


async def probe_e2e(args: dict) -> dict:
    """Search end-to-end and the fan-out alone, each divided by the slowest engine's own latency, per query."""
    from serpfuse.config import RankingConfig
    from serpfuse.models import SearchRequest
    from serpfuse.pipeline import search
    from serpfuse.ranking.query import analyze_query
    from serpfuse.sources.fanout import fan_out

    source = live_source(args["port"], args["latencies"])
    config = RankingConfig()
    slowest = max(args["latencies"].values()) / 1000
    try:
        await search(SearchRequest(query="warm up"), source=source, config=config)
        total, fan = [], []
        for q in queries(args["n"], args["salt"]):
            request = SearchRequest(query=q)
            t0 = time.perf_counter()
            await search(request, source=source, config=config)
            total.append((time.perf_counter() - t0) / slowest)
            t0 = time.perf_counter()
            await fan_out(source, request, analyze_query(q))
            fan.append((time.perf_counter() - t0) / slowest)
    finally:
        await source.aclose()
    return {"e2e": statistics.median(total), "fanout": statistics.median(fan)}


async def probe_first(args: dict) -> dict:
    """A process's first search (a one-shot CLI or library search): end-to-end ÷ the slowest engine's latency.
    Everything a search imports is imported first, so what is left is what the first search itself loads."""
    from serpfuse.config import RankingConfig
    from serpfuse.models import SearchRequest
    from serpfuse.pipeline import search

    source = live_source(args["port"], args["latencies"])
    slowest = max(args["latencies"].values()) / 1000
    try:
        t0 = time.perf_counter()
        await search(SearchRequest(query=queries(1, args["salt"])[0]), source=source, config=RankingConfig())
        first = (time.perf_counter() - t0) / slowest
    finally:
        await source.aclose()
    return {"first": first}


def start_as_server(source: Any) -> Any:
    """What ``SearchService.start`` starts in a server, in whichever form this version has it: its ranking
    worker (``serpfuse.workers.ranking``; before that ``serpfuse.rank_worker``, and none earlier) and the
    source's parse workers (``serpfuse.workers.WORKERS``; before that ``serpfuse.sources.parsing.WORKERS``).
    Returns a function that stops them."""
    import importlib.util

    wing = importlib.util.find_spec("serpfuse.workers") is not None
    stops = []
    pools: list[Any] = []
    if wing:
        from serpfuse.workers import WORKERS, ranking

        ranking.start()
        stops.append(ranking.close)
        pools.append(WORKERS)
    elif importlib.util.find_spec("serpfuse.rank_worker") is not None:
        rank_worker = importlib.import_module("serpfuse.rank_worker")
        rank_worker.start()
        stops.append(rank_worker.close)
        pools.append(rank_worker.WORKERS)
    if hasattr(source, "start"):
        source.start()
        shared = importlib.import_module("serpfuse.workers" if wing else "serpfuse.sources.parsing")
        pools.append(shared.WORKERS)
    deadline = time.monotonic() + 60
    while not all(p.ready for p in pools) and time.monotonic() < deadline:
        time.sleep(0.05)
    return lambda: [stop() for stop in stops]


async def probe_concurrent(args: dict) -> dict:
    """``n`` searches at once, against a bare httpx gather of the same engine requests (the live transport's pool
    limits) and a raw asyncio gather of them (the floor). With ``server``: the workers a server starts are
    started first (``start_as_server``)."""
    import httpx2

    from serpfuse.config import RankingConfig
    from serpfuse.models import SearchRequest
    from serpfuse.pipeline import search

    source = live_source(args["port"], args["latencies"])
    stop = start_as_server(source) if args.get("server") else (lambda: None)
    config = RankingConfig()
    base = f"http://127.0.0.1:{args['port']}"
    out: dict[str, float] = {}
    failed = 0  # over both serpfuse turns: a failed answer comes back fast and makes a batch look cheap
    try:
        await search(SearchRequest(query="warm up"), source=source, config=config)
        # The live transport's pool and timeout, so both sides queue for the same connections.
        most, keep = pool_limits(source.transport)
        limits = httpx2.Limits(max_connections=most, max_keepalive_connections=keep)
        async with httpx2.AsyncClient(trust_env=False, limits=limits, timeout=httpx2.Timeout(15.0)) as client:
            await client.get(f"{base}/0/warm", params={"q": "warm"})
            for turn in ("raw", "bare", "serpfuse") * 2:  # interleaved, best of two each
                qs = queries(args["n"], f"{args['salt']}-{turn}-{time.perf_counter_ns()}")
                t0 = time.perf_counter()
                if turn == "raw":
                    await raw_gather(args["port"], args["latencies"], qs)
                elif turn == "bare":
                    await asyncio.gather(
                        *(
                            client.get(f"{base}/{ms}/{name}", params={"q": q})
                            for q in qs
                            for name, ms in args["latencies"].items()
                        )
                    )
                else:
                    done = await asyncio.gather(
                        *(search(SearchRequest(query=q), source=source, config=config) for q in qs)
                    )
                    failed += sum(e.status != "ok" for r in done for e in r.engines)
                seconds = time.perf_counter() - t0
                out[turn] = min(out.get(turn, seconds), seconds)
    finally:
        await source.aclose()
        stop()
    return {
        "serpfuse_s": out["serpfuse"],
        "bare_s": out["bare"],
        "raw_s": out["raw"],
        "ratio": out["serpfuse"] / out["bare"],
        "ratio_raw": out["serpfuse"] / out["raw"],
        "failed_answers": failed,
    }


def clear_memos() -> int:
    """Empty every bounded memo (``functools.lru_cache`` with a size) of the loaded serpfuse modules: what was
    learnt about texts, words, URLs and hosts seen before, so the next ranking meets its rows as new. The
    unbounded ``@cache`` ones (tables, parsed lists) stay, as a process keeps them. Returns how many."""
    import functools

    cleared = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith("serpfuse") or module is None:
            continue
        for value in vars(module).values():
            if isinstance(value, functools._lru_cache_wrapper) and value.cache_parameters()["maxsize"]:
                value.cache_clear()
                cleared += 1
    return cleared


def _replay_answers(recording: str) -> tuple[Any, list]:
    from serpfuse.config import RankingConfig
    from serpfuse.models import SearchRequest
    from serpfuse.ranking.query import analyze_query
    from serpfuse.sources import open_source
    from serpfuse.sources.fanout import fan_out

    source = open_source(recording)
    recorded = recorded_queries(recording)

    async def answers() -> list:
        out = []
        for q in recorded:
            request = SearchRequest(query=q)
            query = analyze_query(q)
            out.append((request, query, (await fan_out(source, request, query)).answers))
        return out

    return source, asyncio.run(answers()), RankingConfig()


def probe_ranking(args: dict) -> dict:
    """``rank_answers`` per crw56 query (best of ``repeat``), median over the queries; and its stages. Also the
    first call per query (``first_ms``): its rows' texts seen for the first time by this process, what a search
    with new rows pays, since the best of ``repeat`` finds every per-text memo warm; and each query's call with
    every memo emptied first (``cold_ms``: nothing about its rows known, as in a new process)."""
    from serpfuse.pipeline import rank_answers
    from serpfuse.ranking.candidates import build_candidates
    from serpfuse.ranking.context import FilterContext, RankContext
    from serpfuse.ranking.filters import apply_filters
    from serpfuse.ranking.rankers import get_ranker
    from serpfuse.ranking.selection import select

    _, cases, config = _replay_answers(args["recording"])
    now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    step, first, cold, stages = [], [], [], {"candidates": [], "filters": [], "fusion": []}
    ranker = get_ranker(config.strategy)
    for request, query, answers in cases:  # cold: every memo emptied first (clear_memos), each query once
        rank_answers(answers, request, config=config, query=query, now=now)  # its tables loaded
    for request, query, answers in cases:
        clear_memos()
        t0 = time.perf_counter()
        rank_answers(answers, request, config=config, query=query, now=now)
        cold.append((time.perf_counter() - t0) * 1000)
    clear_memos()
    for request, query, answers in cases:
        best = float("inf")
        for i in range(args["repeat"]):
            t0 = time.perf_counter()
            rank_answers(answers, request, config=config, query=query, now=now)
            best = min(best, time.perf_counter() - t0)
            if i == 0:
                first.append(best * 1000)
        step.append(best * 1000)
        try:  # the stages, as the pipeline calls them (signatures may differ in other versions)
            t0 = time.perf_counter()
            candidates, _ = build_candidates(answers, query)
            t1 = time.perf_counter()
            outcome = apply_filters(
                candidates, FilterContext(request=request, query=query, config=config.filters, now=now)
            )
            t2 = time.perf_counter()
            tiers = {a.engine: a.tier for a in answers}
            sizes: dict[str, int] = {}
            for a in answers:  # as the pipeline counts them: an engine's longest answer over the variants
                sizes[a.engine] = max(sizes.get(a.engine, 0), len(a.rows))
            # Current rankers read the filters' pool analysis; older checkouts (--baseline) have none.
            pool = {"pool": outcome.pool} if hasattr(outcome, "pool") else {}
            ctx = RankContext(
                request=request,
                query=query,
                config=config,
                now=now,
                engine_tiers=tiers,
                engine_list_sizes=sizes,
                **pool,
            )
            select(ranker.rank(outcome.kept, ctx), ranker, ctx)
            t3 = time.perf_counter()
            for name, seconds in zip(stages, (t1 - t0, t2 - t1, t3 - t2), strict=True):
                stages[name].append(seconds * 1000)
        except TypeError:
            pass
    out = {
        "ranking_ms": statistics.median(step),
        "first_ms": statistics.median(first),
        "cold_ms": statistics.median(cold),
    }
    out.update({f"{k}_ms": statistics.median(v) for k, v in stages.items() if v})
    return out


def probe_asearch(args: dict) -> dict:
    """``serpfuse.asearch(q, source=<one replay source>)`` over the recording's queries: median ms."""
    import serpfuse
    from serpfuse.sources import open_source

    source = open_source(args["recording"])
    recorded = recorded_queries(args["recording"])

    async def run() -> float:
        times = []
        for _ in range(args["repeat"]):
            for q in recorded:
                t0 = time.perf_counter()
                await serpfuse.asearch(q, source=source)
                times.append((time.perf_counter() - t0) * 1000)
        return statistics.median(times)

    return {"asearch_ms": asyncio.run(run())}


def probe_cache_hit(args: dict) -> dict:
    """``SearchService.search`` answered from the SQLite cache (and ``search_json`` where the version has it)."""
    from pathlib import Path

    from serpfuse.service import SearchService
    from serpfuse.settings import Settings

    settings = Settings(replay=args["recording"], cache_dir=Path(args["tmp"]))
    recorded = recorded_queries(args["recording"])

    async def run() -> dict:
        service = SearchService.from_settings(settings)
        try:
            requests = [service.make_request(query=q) for q in recorded]
            cached = []
            for r in requests:
                await service.search(r)
                if (await service.search(r)).cached:
                    cached.append(r)
            out = {}
            for name in ("search", "search_json"):
                call = getattr(service, name, None)
                if call is None:
                    continue
                times = []
                for _ in range(args["repeat"]):
                    for r in cached:
                        t0 = time.perf_counter()
                        await call(r)
                        times.append((time.perf_counter() - t0) * 1000)
                out[f"{name}_ms"] = statistics.median(times)
            return out
        finally:
            await service.aclose()

    return asyncio.run(run())


async def probe_serve(args: dict) -> dict:
    """A real ``serve`` app (uvicorn, its ranking and parse workers) on ``args["serve_port"]``, searching the fake
    engines until killed. No result cache: every request searches."""
    from pathlib import Path

    from serpfuse.serve.http_api import serve
    from serpfuse.service import SearchService
    from serpfuse.settings import Settings

    settings = Settings(
        port=args["serve_port"],
        cache_dir=Path(args["home"]),
        rate_limit_burst=10**9,
        rate_limit_per_min=10**9,
    )
    service = SearchService(settings, live_source(args["port"], args["latencies"]))
    try:
        await serve(service)
    finally:
        await service.aclose()
    return {}


def main() -> None:
    name, args = sys.argv[1], json.loads(sys.argv[2])
    if name == "engines":
        asyncio.run(serve_engines(args["lifetime_s"]))
        return
    probe = globals()[f"probe_{name}"]
    result = asyncio.run(probe(args)) if asyncio.iscoroutinefunction(probe) else probe(args)
    import resource

    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


if __name__ == "__main__":
    main()
