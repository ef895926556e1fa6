"""The Python API: ``serpfuse.search("query")`` and its async twin."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from .config import RankingConfig
from .fanout import DEFAULT_DEADLINE_S
from .models import SearchRequest, SearchResponse
from .pipeline import search as _run
from .sources.base import Source
from .sources.replay import ReplaySource

REPLAY_ENV = "SERPFUSE_REPLAY"


def open_source(replay: str | Path | None = None, **live_options: Any) -> Source:
    """A replay source when a recording is given (argument or $SERPFUSE_REPLAY), else the live engines."""
    replay = replay or os.environ.get(REPLAY_ENV) or None
    if replay:
        return ReplaySource(replay)
    from .sources.live import LiveSource  # imported late: replay needs no HTTP stack

    return LiveSource.from_environment(**live_options)


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
    source = source or open_source(replay)
    try:
        return await _run(request, source=source, config=config, deadline_s=deadline_s, explain=explain)
    finally:
        if own:
            await source.aclose()


def search(query: str | SearchRequest, **kwargs: Any) -> SearchResponse:
    return asyncio.run(asearch(query, **kwargs))
