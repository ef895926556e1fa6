"""serpfuse: fused web search for LLM agents.

import serpfuse
resp = serpfuse.search("rust async runtime")          # or: await serpfuse.asearch(...)
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from serpfuse.version import __version__

# The public names are imported on first use (PEP 562), so `serpfuse --help` and the light subcommands,
# which live in this package too, do not load the whole pipeline first.
_EXPORTS = {
    "FusedResult": ".models",
    "RankingConfig": ".config",
    "SearchRequest": ".models",
    "SearchResponse": ".models",
    "asearch": ".api",
    "search": ".api",
    "start_workers": ".api",
    "stop_workers": ".api",
}

if TYPE_CHECKING:
    from serpfuse.api import asearch, search, start_workers, stop_workers
    from serpfuse.config import RankingConfig
    from serpfuse.models import FusedResult, SearchRequest, SearchResponse

__all__ = [
    "FusedResult",
    "RankingConfig",
    "SearchRequest",
    "SearchResponse",
    "asearch",
    "search",
    "start_workers",
    "stop_workers",
    "__version__",
]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'serpfuse' has no attribute {name!r}")
    value = getattr(import_module(_EXPORTS[name], __name__), name)
    globals()[name] = value
    return value
