"""Domain include/exclude from the request and from the query's site: / -site: operators."""

from __future__ import annotations

from typing import TYPE_CHECKING

from serpfuse.ranking.context import FilterContext
from serpfuse.urls import domain_matches, host_of

if TYPE_CHECKING:
    from serpfuse.ranking.types import Candidate


def wanted_domains(ctx: FilterContext) -> tuple[list[str], list[str]]:
    """(include, exclude): the request's lists merged with the query's operators, order kept, no repeats."""
    include = list(dict.fromkeys([*ctx.request.include_domains, *ctx.query.include_domains]))
    exclude = list(dict.fromkeys([*ctx.request.exclude_domains, *ctx.query.exclude_domains]))
    return include, exclude


class DomainFilter:
    """Excluding a domain excludes its subdomains; including domains keeps only hosts under one of them."""

    name = "domains"

    def idle(self, ctx: FilterContext) -> bool:
        include, exclude = wanted_domains(ctx)
        return not include and not exclude

    def check(self, candidate: Candidate, ctx: FilterContext) -> str | None:
        include, exclude = wanted_domains(ctx)
        if not include and not exclude:
            return None
        host = candidate.host or host_of(candidate.url)
        excluded = next((d for d in exclude if domain_matches(host, d)), None)
        if excluded:
            return f"excluded domain {excluded}"
        if include and not any(domain_matches(host, d) for d in include):
            return f"not under the included domains ({', '.join(include)})"
        return None


DOMAINS = DomainFilter()
