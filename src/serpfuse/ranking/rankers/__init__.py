"""The rankers, chosen by name. One module per method (as ranx does), one registry (a dict) as the source of truth."""

from __future__ import annotations

from importlib import import_module

from serpfuse.errors import InputError
from serpfuse.ranking.context import RankContext
from serpfuse.ranking.rankers.base import Ranker
from serpfuse.ranking.types import Candidate, Scored, Selection

# strategy name -> module holding ``RANKER``; the CLI choices, MCP schema and errors all derive from this.
_MODULES: dict[str, str] = {
    "adaptive": "adaptive",
    "consensus": "consensus",
    "rrf": "rrf",
    "searxng": "searxng",
    "lexical": "lexical",
    "combmnz": "combmnz",
    "borda": "borda",
    "agree": "agreement",
}


class UnknownStrategy(InputError):
    def __init__(self, name: str):
        super().__init__(f"unknown strategy {name!r}; choose one of: {', '.join(available())}")


def available() -> list[str]:
    return list(_MODULES)


def get_ranker(name: str) -> Ranker:
    ranker = _LOADED.get(name)
    if ranker is None:
        if name not in _MODULES:
            raise UnknownStrategy(name)
        ranker = _LOADED[name] = import_module(f".{_MODULES[name]}", __name__).RANKER
    return ranker


_LOADED: dict[str, Ranker] = {}  # each ranker's module is imported on first use, then looked up here


__all__ = [
    "Candidate",
    "RankContext",
    "Ranker",
    "Scored",
    "Selection",
    "UnknownStrategy",
    "available",
    "get_ranker",
]
