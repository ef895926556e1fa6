"""Where engine rows come from: live engines over HTTP, or a recording replayed offline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from serpfuse.sources.base import Source


def open_source(replay: str | Path | None = None, **live_options: Any) -> Source:
    """The replay source when a recording is given, else the live engines (``live_options`` go to them).
    Both imported here: a parse worker imports this package for ``parsing`` alone (the replay source and what
    it imports are 8 MB of each worker's memory)."""
    if replay:
        from serpfuse.sources.replay import ReplaySource

        return ReplaySource(replay)
    from serpfuse.sources.live import LiveSource  # imported late: replay needs no HTTP stack

    return LiveSource.from_environment(**live_options)
