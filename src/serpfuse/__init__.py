"""serpfuse: fused web search for LLM agents.

import serpfuse
resp = serpfuse.search("rust async runtime")          # or: await serpfuse.asearch(...)
"""

from .api import asearch, search
from .config import RankingConfig
from .models import FusedResult, SearchRequest, SearchResponse

__version__ = "0.1.0"

__all__ = [
    "FusedResult",
    "RankingConfig",
    "SearchRequest",
    "SearchResponse",
    "asearch",
    "search",
    "__version__",
]
