"""Where engine rows come from: live engines over HTTP, or a recording replayed offline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from serpfuse.sources.base import Source
from serpfuse.sources.replay import ReplaySource


def open_source(replay: str | Path | None = None, **live_options: Any) -> Source:
    """The replay source when a recording is given, else the live engines (``live_options`` go to them)."""
    if replay:
        return ReplaySource(replay)
    from serpfuse.sources.live import LiveSource  # imported late: replay needs no HTTP stack

    return LiveSource.from_environment(**live_options)
