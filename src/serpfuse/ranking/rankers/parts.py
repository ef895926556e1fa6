"""What each score part the rankers report means: the explain views' legend, one table for every ranker.

A part is named as a ranker puts it in ``Scored.parts``; ``ENGINE_PARTS`` are the per-engine ones
(``weight:google``), whose meaning names the engine.
"""

from __future__ import annotations

from collections.abc import Iterable

SCORE_PARTS: dict[str, str] = {
    # consensus-v2.1 and adaptive (rankers/consensus.py)
    "evidence": "E, the rank evidence: M plus the consensus boost, before the metadata correction",
    "M": "the best single engine's vote: its weight × κ / (κ + rank − 1)",
    "consensus": "C, the votes of every engine beside the best one (correlated engines counted once)",
    "consensusBoost": "log(1 + C): what the other engines' agreement adds to M (times β)",
    "lexical": "how much of the query the title and snippet carry, 0 to 1",
    "freshness": "the recency bonus for a requested time range (0 when undated or no range)",
    "metadataDelta": "what the lexical and freshness correction changed the score by (bounded)",
    "demoted": "the factor a demotion rule multiplied the score by",
    # agree (rankers/agreement.py)
    "agree": "the weighted reciprocal-rank votes, each engine weighted by how much the others back it",
    # rrf (rankers/rrf.py)
    "rrf": "the weighted reciprocal-rank votes",
    "authority": "the bonus for an official domain",
    "interleave": "the tie-break: the row's place in a weighted round-robin of the engines' lists",
    # borda, combmnz, searxng, lexical
    "borda": "the Borda points: for each engine, how many of its rows rank below this one",
    "combsum": "the sum of the engines' normalised rank scores",
    "hits": "how many engines returned the row",
    "searxng": "SearXNG's score: product of engine weights × sightings × sum of 1/rank",
    "sightings": "how many times the engines returned the row",
    "reciprocal_rank_sum": "the sum of 1/rank over the row's sightings",
}

ENGINE_PARTS: dict[str, str] = {
    "weight": "ENGINE's weight in the votes: its prior, times (adaptive, agree) how much the others back it",
    "support": "how strongly the other engines back ENGINE's top rows, 0 to 1",
    "content": "how much of the query's specific meaning ENGINE's top rows carry, relative to the best engine",
}


def meaning(part: str) -> str | None:
    """What ``part`` means (a per-engine part names its engine); None for a part no table holds."""
    if part in SCORE_PARTS:
        return SCORE_PARTS[part]
    kind, _, engine = part.partition(":")
    if engine and kind in ENGINE_PARTS:
        return ENGINE_PARTS[kind].replace("ENGINE", engine)
    return None


def legend(parts: Iterable[str]) -> list[tuple[str, str]]:
    """(name, meaning) for each kind of part in ``parts``, in table order: per-engine parts as ``weight:ENGINE``."""
    seen = set()
    for part in parts:
        kind, _, engine = part.partition(":")
        seen.add(f"{kind}:ENGINE" if engine and kind in ENGINE_PARTS else part)
    rows = [(name, text) for name, text in SCORE_PARTS.items() if name in seen]
    rows += [(f"{kind}:ENGINE", text) for kind, text in ENGINE_PARTS.items() if f"{kind}:ENGINE" in seen]
    return rows
