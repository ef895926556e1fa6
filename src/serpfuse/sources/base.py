"""The one seam between the pipeline and the outside world.

A ``Source`` answers "what did engine E return for query variant V?". The live source asks the engine over
HTTP; the replay source looks it up in a recording. The fan-out stage (``serpfuse.sources.fanout``) drives either one
the same way: tiers, deadlines, the core-word retry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from serpfuse.errors import Unavailable
from serpfuse.models import EngineAnswer, SearchRequest

Tier = Literal["primary", "fallback"]
Region = Literal["cjk", "global", "both"]


@dataclass(frozen=True)
class EngineSlot:
    """What the fan-out needs to know about an engine a source can ask."""

    name: str
    tier: Tier = "primary"
    region: Region = "both"
    available: bool = True
    unavailable_reason: str | None = None  # e.g. "no API key configured", "cooling down for 42 s"


class SourceError(Unavailable):
    """The source cannot serve this request at all (e.g. a query absent from a replay file)."""


class Source(Protocol):
    name: str

    def slots(self, request: SearchRequest) -> list[EngineSlot]:
        """Every engine this source can ask for this request, in a stable order."""
        ...

    async def ask(self, engine: str, variant: str, request: SearchRequest) -> EngineAnswer:
        """One engine, one query variant. Never raises for engine failures: the answer carries the status."""
        ...

    async def aclose(self) -> None: ...
