"""A real HTTP API process whose engines all point at loopback fake servers (the fault matrix starts one per
fault): ``python tests/fault_app.py --port P --deadline S --engine NAME=URL ...``.

It is ``serpfuse serve`` with live engine modules (bing, searxng, wikipedia) whose base URLs are overridden,
which the CLI has no flag for; everything else (settings, service, app, uvicorn) is the shipped code path.
"""

from __future__ import annotations

import argparse
import asyncio

from serpfuse.cooldown import InMemoryCooldownStore
from serpfuse.http_api import serve
from serpfuse.secrets import KeyStore
from serpfuse.service import SearchService
from serpfuse.settings import Settings
from serpfuse.sources.live import LiveSource
from serpfuse.transport import Transport


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--deadline", type=float, required=True)
    parser.add_argument("--engine", action="append", default=[], help="NAME=BASE_URL")
    args = parser.parse_args()
    base_urls = dict(item.split("=", 1) for item in args.engine)
    settings = Settings(port=args.port, deadline_s=args.deadline, timeout_s=args.deadline, cache="off")
    cooldowns = InMemoryCooldownStore()
    source = LiveSource(
        KeyStore(env={}),
        cooldowns,
        Transport(trust_env=False),
        engines=list(base_urls),
        base_urls=base_urls,
        timeout_s=args.deadline,
        owns_transport=True,
    )
    asyncio.run(serve(SearchService(settings, source, cooldowns=cooldowns)))


if __name__ == "__main__":
    main()
