"""The filter stage: the CJK gate, the junk, coverage and geo filters, domains and time range."""

from __future__ import annotations

from serpfuse.ranking.context import FilterContext
from serpfuse.ranking.filters.base import Filter, Overlap, cjk_overlap, passes_cjk_gate
from serpfuse.ranking.filters.chain import (
    FilterOutcome,
    Screened,
    apply_filters,
    constrain,
    enabled_filters,
    judge,
    screen,
)
from serpfuse.ranking.filters.cjk_gate import CJK_GATE, CjkGateFilter
from serpfuse.ranking.filters.coverage import COVERAGE, CoverageFilter, covered_terms, passes_coverage
from serpfuse.ranking.filters.domains import DOMAINS, DomainFilter, wanted_domains
from serpfuse.ranking.filters.geo import GEO, GeoFilter, competing_place
from serpfuse.ranking.filters.junk import (
    JUNK,
    JunkFilter,
    JunkVerdict,
    asks_for_definition,
    is_junk,
    junk_verdict,
)
from serpfuse.ranking.filters.timerange import TIMERANGE, TimeRangeFilter
from serpfuse.ranking.tables import host_category, is_official, junk_hosts, official_domains

__all__ = [
    "CJK_GATE",
    "COVERAGE",
    "DOMAINS",
    "GEO",
    "JUNK",
    "TIMERANGE",
    "CjkGateFilter",
    "CoverageFilter",
    "DomainFilter",
    "Filter",
    "FilterContext",
    "FilterOutcome",
    "GeoFilter",
    "JunkFilter",
    "JunkVerdict",
    "Overlap",
    "TimeRangeFilter",
    "Screened",
    "apply_filters",
    "constrain",
    "judge",
    "screen",
    "asks_for_definition",
    "cjk_overlap",
    "competing_place",
    "covered_terms",
    "enabled_filters",
    "host_category",
    "is_junk",
    "is_official",
    "junk_hosts",
    "junk_verdict",
    "official_domains",
    "passes_cjk_gate",
    "passes_coverage",
    "wanted_domains",
]
