"""The CJK relevance gate: a CJK or mixed query's row must share enough two-character tokens."""

from __future__ import annotations

from typing import TYPE_CHECKING

from serpfuse.ranking.context import FilterContext
from serpfuse.ranking.filters.base import cjk_overlap

if TYPE_CHECKING:
    from serpfuse.ranking.types import Candidate


class CjkGateFilter:
    """Keeps a row when its title, snippet or URL collects ``cjk_gate_units`` units of overlap.

    It exists because a scraped Chinese engine sometimes answers a long query with rows about one of its
    characters (ten rows for 东, a company named 李在东). ASCII-only queries pass unchanged.
    """

    name = "cjk_gate"

    def idle(self, ctx: FilterContext) -> bool:
        return not ctx.query.is_cjk

    def check(self, candidate: Candidate, ctx: FilterContext) -> str | None:
        if not ctx.query.is_cjk:
            return None
        overlap = cjk_overlap(
            ctx.query,
            candidate.title,
            candidate.snippet,
            candidate.url,
            ctx.config.cjk_gate_units,
            ctx.config.cjk_ascii_units,
        )
        if overlap.passes:
            return None
        found = f" ({', '.join(overlap.matched)})" if overlap.matched else ""
        return f"shares {overlap.units} of {overlap.needed} needed units with the query{found}"


CJK_GATE = CjkGateFilter()
