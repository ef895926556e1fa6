"""The Python API: ``serpfuse.search("query")`` and its async twin.

A search here is the one the CLI and the servers make: the deployment is built from the same settings
(``serpfuse.toml`` in the working directory or ``$SERPFUSE_CONFIG``, then ``SERPFUSE_*``), so engine base URLs,
``[ranking.weights]``, the deadline, the results cache and the engines' cooldowns apply alike. Pass ``settings``
to use others (``serpfuse.settings.load_settings(path)``, or a ``Settings`` built in code).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Hashable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from serpfuse.config import RankingConfig
from serpfuse.models import SearchRequest, SearchResponse
from serpfuse.service import SearchService
from serpfuse.settings import Settings, find_config_file, load_settings
from serpfuse.sources.base import Source
from serpfuse.state.metrics import Uncounted
from serpfuse.workers import WORKERS, ranking

if TYPE_CHECKING:
    from serpfuse.reader.service import Reader


_loaded: tuple[Hashable, Settings] | None = None


def _current_settings(**flags: Any) -> Settings:
    """``load_settings(**flags)``, read again only when what it reads has changed: the environment, which file it
    finds and that file's modification time. A program searching in a loop otherwise pays a settings load a call
    (about 3 ms, the larger part of a replayed search)."""
    global _loaded
    path = find_config_file()
    stamp = (path.stat().st_mtime_ns, path.stat().st_size) if path is not None else None
    key = (tuple(sorted(os.environ.items())), str(path.resolve()) if path else None, stamp, repr(flags))
    if _loaded is None or _loaded[0] != key:
        _loaded = (key, load_settings(**flags))
    return _loaded[1]


def deployment_settings(
    settings: Settings | None = None,
    *,
    replay: str | Path | None = None,
    config: RankingConfig | None = None,
    deadline_s: float | None = None,
) -> Settings:
    """``settings``, else the ones the CLI reads; ``replay``, ``config`` and ``deadline_s`` given win over
    either, as the CLI's flags do. Raises ``ConfigError`` for settings that cannot be used."""
    if settings is None:
        settings = _current_settings(replay=replay, deadline_s=deadline_s)
    else:
        given = {"replay": Path(replay) if replay else None, "deadline_s": deadline_s}
        settings = settings.model_copy(update={k: v for k, v in given.items() if v is not None})
    if config is not None:  # the caller's configuration whole, its strategy included
        settings = settings.model_copy(update={"ranking": config, "strategy": None})
    return settings


async def asearch(
    query: str | SearchRequest,
    *,
    settings: Settings | None = None,
    source: Source | None = None,
    replay: str | Path | None = None,
    config: RankingConfig | None = None,
    deadline_s: float | None = None,
    explain: bool = False,
    use_cache: bool | None = None,
    reader: Reader | None = None,
    **request_fields: Any,
) -> SearchResponse:
    """Search as the CLI does (see the module's docstring); ``request_fields`` are ``SearchRequest``'s (limit,
    engines, time_range...), the settings' defaults filling what is left out.

    ``passages=True`` (``max_chars=N`` a row) also reads the shown rows' pages until the deadline + 2 s and gives
    each row the passages that answer the query, or why not (``serpfuse.reader.evidence``); ``reader``: read
    them through this reader instead of the one the settings make.

    ``source``: search it instead of the engines or recording the settings name (a test's, a recording opened
    once for many searches). Its answers are not cached unless ``use_cache=True``: the cache's key cannot tell
    one such source from another. Raises what the CLI reports: ``serpfuse.errors.SerpfuseError``'s kinds, or
    pydantic's ``ValidationError`` for a field out of range.
    """
    settings = deployment_settings(settings, replay=replay, config=config, deadline_s=deadline_s)
    cache = use_cache if use_cache is not None else source is None
    service = SearchService.from_settings(settings, use_cache=cache, source=source, metrics=Uncounted())
    if reader is not None:
        service.reader = reader
    try:
        if isinstance(query, SearchRequest):
            request = query
        else:
            request = service.make_request(query=query, **request_fields)
        return await service.search(request, explain=explain, use_cache=cache, interface="python")
    finally:
        await service.aclose()


def search(query: str | SearchRequest, **kwargs: Any) -> SearchResponse:
    """``asearch`` run to its end (from code with no event loop running)."""
    return asyncio.run(asearch(query, **kwargs))


def start_workers() -> None:
    """For a program that runs many searches at once: parse the engines' answers and rank each search in
    worker processes, as a server does, so the event loop is left to the network (100 concurrent searches:
    1.02 × a bare httpx gather of the same engine requests, 1.29 without them;
    BENCHMARKS.md, "Performance"). Until they are up (about a second) searches rank and parse in threads, as
    without them. They stop with ``stop_workers()`` or with the program."""
    ranking.start()
    WORKERS.start()


def stop_workers() -> None:
    """Stop what ``start_workers`` started; later searches rank and parse in threads again."""
    ranking.close()
    WORKERS.close()
