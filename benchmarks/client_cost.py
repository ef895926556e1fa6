"""What one engine request costs the process that sends it, by HTTP client: ``n`` GETs at once to the perf fake
engines on loopback (a 5 ms answer each), this process's CPU time per request, median of ``--rounds``:

    python -m benchmarks.client_cost [-n 500] [--rounds 3]

raw asyncio streams (a new connection each: the floor), curl_cffi's ``AsyncSession``, httpx2, aiohttp when it is
installed (no serpfuse dependency; measured as a candidate leaner client), and serpfuse's own ``Transport`` as a
JSON API and as an impersonated browser are sent (whichever serpfuse is first on ``PYTHONPATH``: a baseline tree's
``src`` measures that tree). Timings mean something only as ratios of clients measured in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable

from benchmarks.perf import start_engines
from benchmarks.perf_probe import raw_get


def _targets(n: int) -> list[str]:
    return [f"/5/e{i % 5}?q=x{i}" for i in range(n)]


async def _timed(get: Callable[[str], Awaitable[object]], n: int) -> float:
    """CPU seconds of ``n`` GETs at once through ``get`` (one GET first, so a pool has its connections)."""
    await get("/0/warm?q=w")
    t0 = time.process_time()
    await asyncio.gather(*(get(t) for t in _targets(n)))
    return time.process_time() - t0


async def _raw(port: int, n: int) -> float:
    return await _timed(lambda target: raw_get(port, target), n)


async def _curl(port: int, n: int) -> float:
    from curl_cffi.requests import AsyncSession

    async with AsyncSession(max_clients=100) as session:
        return await _timed(lambda target: session.get(f"http://127.0.0.1:{port}{target}"), n)


async def _transport(port: int, n: int, browser: bool) -> float:
    from serpfuse.engines.base import RequestSpec
    from serpfuse.sources.transport import Transport

    options = {"browser": True, "profile": "chrome152"} if browser else {}
    async with Transport(trust_env=False) as t:
        return await _timed(
            lambda target: t.send(RequestSpec("GET", f"http://127.0.0.1:{port}{target}"), **options), n
        )


async def _httpx(port: int, n: int) -> float:
    import httpx2

    limits = httpx2.Limits(max_connections=100, max_keepalive_connections=100)
    async with httpx2.AsyncClient(limits=limits, trust_env=False) as client:
        return await _timed(lambda target: client.get(f"http://127.0.0.1:{port}{target}"), n)


async def _aiohttp(port: int, n: int) -> float:
    import aiohttp

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=100)) as session:

        async def get(target: str) -> bytes:
            async with session.get(f"http://127.0.0.1:{port}{target}") as response:
                return await response.read()

        return await _timed(get, n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=500, help="requests at once")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    clients: dict[str, Callable[[int, int], Awaitable[float]]] = {
        "raw asyncio": _raw,
        "curl_cffi AsyncSession": _curl,
        "httpx2": _httpx,
        "serpfuse Transport, JSON API": lambda port, n: _transport(port, n, browser=False),
        "serpfuse Transport, browser": lambda port, n: _transport(port, n, browser=True),
    }
    try:
        import aiohttp  # noqa: F401

        clients["aiohttp"] = _aiohttp
    except ImportError:
        pass
    engines, port = start_engines(lifetime_s=600)
    seconds: dict[str, list[float]] = {name: [] for name in clients}
    with engines:
        for _ in range(args.rounds):  # interleaved, so a busy moment falls on every client alike
            for name, run in clients.items():
                seconds[name].append(asyncio.run(run(port, args.n)))
    for name, got in seconds.items():
        print(f"{name}: {statistics.median(got) * 1000 / args.n:.3f} ms CPU a request ({args.n} at once)")


if __name__ == "__main__":
    main()
