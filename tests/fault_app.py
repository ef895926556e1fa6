"""A real HTTP API process whose engines all point at loopback fake servers (the fault matrix starts one per
fault): ``python tests/fault_app.py --port P --deadline S --engine NAME=URL ...``.

It is ``serpfuse serve`` with live engine modules (bing, searxng, wikipedia) whose base URLs are overridden,
which the CLI has no flag for; everything else (settings, service, app, uvicorn) is the shipped code path.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from dataclasses import replace

from serpfuse.engines.base import EngineError
from serpfuse.secrets import KeyStore
from serpfuse.serve.http_api import serve
from serpfuse.service import SearchService
from serpfuse.settings import Settings
from serpfuse.sources.live import LiveSource
from serpfuse.sources.transport import Transport
from serpfuse.state.cooldown import CooldownPolicy, CooldownState, InMemoryCooldownStore, next_state


class Forgetful:
    """A cooldown store that keeps nothing: one process can then play every fault in turn (cooldowns have
    their own tests)."""

    async def get(self, engine: str) -> None:
        return None

    async def record_failure(self, engine: str, error: EngineError) -> CooldownState:
        return replace(next_state(None, engine, error, time.time(), CooldownPolicy()), until=0.0)  # over

    async def record_success(self, engine: str) -> None:
        return None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--deadline", type=float, required=True)
    parser.add_argument("--engine", action="append", default=[], help="NAME=BASE_URL")
    parser.add_argument("--no-cooldown", action="store_true", help="play each fault against a fresh engine")
    args = parser.parse_args()
    base_urls = dict(item.split("=", 1) for item in args.engine)
    settings = Settings(port=args.port, deadline_s=args.deadline, timeout_s=args.deadline, cache="off")
    cooldowns = Forgetful() if args.no_cooldown else InMemoryCooldownStore()
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
