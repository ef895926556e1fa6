"""One browser-transport request in a fresh process, measured: ``python tests/bomb_probe.py URL DEADLINE_S``.

It first fetches ``URL`` with ``/warm`` in place of its path's last part (so curl_cffi is imported and a session
made before measuring), then ``URL`` itself, and prints one JSON line: the error's type and message (or the
body's length), the call's duration, and how far the process's peak RSS (ru_maxrss) rose during the call.
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
import time

from serpfuse.engines.base import RequestSpec
from serpfuse.sources.transport import Transport


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def main(url: str, deadline_s: float) -> dict:
    async with Transport(trust_env=False, impersonate=True) as transport:
        await transport.send(RequestSpec("GET", url.rsplit("/", 1)[0] + "/warm"), browser=True, timeout_s=10)
        before = peak_mb()
        started = time.monotonic()
        out: dict = {}
        try:
            response = await transport.send(RequestSpec("GET", url), browser=True, timeout_s=deadline_s)
            out["body_bytes"] = len(response.body)
        except Exception as exc:
            out["error"], out["message"] = type(exc).__name__, str(exc)
        out["took_s"] = time.monotonic() - started
        out["rss_growth_mb"] = peak_mb() - before
        return out


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], float(sys.argv[2])))))
