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


@dataclass(frozen=True)
class EngineFacts:
    """What a source knows of one of its engines without asking it (``serpfuse engines``, ``/v1/engines``)."""

    tier: str | None = None
    region: str | None = None
    key: str | None = None  # configured | missing | not needed; None where no key is asked (a recording)
    unavailable: str | None = (
        None  # why it cannot serve a plain query whatever its cooldown (no key, no base URL)
    )


class Source(Protocol):
    """Everything the pipeline and the service ask of where answers come from: no face looks past it."""

    name: str

    def slots(self, request: SearchRequest) -> list[EngineSlot]:
        """Every engine this source can ask for this request, in a stable order."""
        ...

    async def ask(self, engine: str, variant: str, request: SearchRequest) -> EngineAnswer:
        """One engine, one query variant. Never raises for engine failures: the answer carries the status."""
        ...

    async def aclose(self) -> None: ...

    def identity(self) -> str:
        """What a cache key says about where the answers come from (the engines, a recording and its version)."""
        ...

    def engine_names(self, query: str | None = None) -> list[str] | None:
        """The engines it has (a recording's for ``query`` when it holds that query); None when it cannot say
        before it is asked."""
        ...

    def recorded_queries(self) -> list[str] | None:
        """The queries it can answer, when it answers only those (a recording); None for any query."""
        ...

    def facts(self, engine: str) -> EngineFacts: ...

    def expected_s(self, engine: str) -> float | None:
        """How long ``engine`` is expected to take to answer, or None: the fan-out asks the slowest first."""
        ...

    def start(self) -> None:
        """For a server, before it serves (worker processes, libraries a first request would load)."""
        ...


class SourceBase:
    """A ``Source``'s answers to what it cannot know beyond its slots and answers: a source made for a test or a
    benchmark inherits them and writes ``slots`` and ``ask``."""

    name = "source"

    def identity(self) -> str:
        return self.name

    def engine_names(self, query: str | None = None) -> list[str] | None:
        return None

    def recorded_queries(self) -> list[str] | None:
        return None

    def facts(self, engine: str) -> EngineFacts:
        return EngineFacts()

    def expected_s(self, engine: str) -> float | None:
        return None

    def start(self) -> None:
        return None

    async def aclose(self) -> None:
        return None
