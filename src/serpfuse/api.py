"""The Python API: ``serpfuse.search("query")`` and its async twin."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from serpfuse import rank_worker
from serpfuse.config import RankingConfig
from serpfuse.models import SearchRequest, SearchResponse
from serpfuse.pipeline import search as _run
from serpfuse.sources import open_source, parsing
from serpfuse.sources.base import Source
from serpfuse.sources.fanout import DEFAULT_DEADLINE_S

REPLAY_ENV = "SERPFUSE_REPLAY"  # the Python API honours it as the CLI and servers do (through their settings)


async def asearch(
    query: str | SearchRequest,
    *,
    source: Source | None = None,
    replay: str | Path | None = None,
    config: RankingConfig | None = None,
    deadline_s: float = DEFAULT_DEADLINE_S,
    explain: bool = False,
    **request_fields: Any,
) -> SearchResponse:
    request = query if isinstance(query, SearchRequest) else SearchRequest(query=query, **request_fields)
    own = source is None
    source = source or open_source(replay or os.environ.get(REPLAY_ENV))
    try:
        return await _run(request, source=source, config=config, deadline_s=deadline_s, explain=explain)
    finally:
        if own:
            await source.aclose()


def search(query: str | SearchRequest, **kwargs: Any) -> SearchResponse:
    return asyncio.run(asearch(query, **kwargs))


def start_workers() -> None:
    """For a program that runs many searches at once: parse the engines' answers and rank each search in
    worker processes, as a server does, so the event loop is left to the network (100 concurrent searches:
    1.02 × a bare httpx gather of the same engine requests, 1.29 without them;
    BENCHMARKS.md, "Performance"). Until they are up (about a second) searches rank and parse in threads, as
    without them. They stop with ``stop_workers()`` or with the program."""
    rank_worker.start()
    parsing.WORKERS.start()


def stop_workers() -> None:
    """Stop what ``start_workers`` started; later searches rank and parse in threads again."""
    rank_worker.close()
    parsing.WORKERS.close()
