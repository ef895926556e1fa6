"""What a ranker is: a pure function of the surviving candidates and a ``RankContext`` that scores and orders
them. Choosing the final list is the selection stage's (``ranking.selection``), the same for every ranker."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from serpfuse.ranking.context import RankContext
    from serpfuse.ranking.types import Candidate, Scored


class Ranker(Protocol):
    name: str
    score_version: str
    # How the selection stage fills the list when ``selection.method`` is "auto": greedy MMR over the
    # quality score (the consensus-v2.1 selection), or the ranker's own order ("top").
    selects_by: Literal["mmr", "top"]
    # A ranker may also declare ``per_domain``: the cap of "top" when ``selection.per_domain`` is not set
    # (otherwise 0, no cap).

    def rank(self, candidates: list[Candidate], ctx: RankContext) -> list[Scored]: ...


def demote(scored: list[Scored], reasons: dict[str, str], factor: float) -> list[Scored]:
    """The scored rows with each listed row's score multiplied by ``factor`` (its reason kept in ``parts``
    as ``demoted``), re-sorted best first; ties keep their order."""
    if not reasons or factor >= 1:
        return scored
    for s in scored:
        if s.candidate.key in reasons:
            s.score *= factor
            s.parts["demoted"] = factor
    return sorted(scored, key=lambda s: -s.score)
