"""Every ranking knob in one object, and its fingerprint.

``RankingConfig`` holds the knobs of every ranker, the filters and the final selection. Its fingerprint
(sha256 of its canonical JSON plus the score version) goes into every response and every cache key, so a
change of any knob can never serve a ranking computed under another one.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from functools import cache
from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, BeforeValidator, Field, PrivateAttr, field_validator, model_validator

from serpfuse import data
from serpfuse.models import Model

SCORE_VERSION = "serpfuse-1"


@cache
def engine_table() -> dict:
    """The shipped engine weights/groups table (``data/engine_weights.json``)."""
    return data.json("engine_weights.json")


def _groups() -> dict[str, str]:
    return dict(engine_table()["groups"])


def _retention() -> dict[str, float]:
    return dict(engine_table()["retention"])


def _aliases() -> dict[str, str]:
    return dict(engine_table()["aliases"])


class FilterConfig(Model):
    """The CJK gate and the junk, coverage and geo filters (each can be switched off).

    On by default are only the rules the ablation (benchmarks/ablation.py, BENCHMARKS.md) finds earned on crw56:
    the coverage guard with its pool gate, evidence guard and anchor demotion, the pool's spellings and the echo
    rule. The junk rules, the geo guard, the CJK gate, the weak-term discount and the non-junk fallback changed
    nothing measurable there, so they are opt-in."""

    junk: bool = False
    coverage: bool = True
    min_coverage: float = Field(0.5, ge=0, le=1)
    geo: bool = False
    cjk_gate: bool = False
    cjk_gate_units: int = Field(2, ge=1)
    # The non-junk fallback: when coverage/geo leave nothing, fall back to the non-junk rows.
    fallback_when_empty: bool = False
    # Which coverage guard runs: "relevance" (filters/relevance.py: stems, weak terms, the pool gate) or
    # "exact" (exact tokens). The fallback never overrides the relevance guard's pool gate.
    coverage_rule: Literal["relevance", "exact"] = "relevance"
    pool_gate: bool = True  # drop every row when none mentions the query's key terms together
    # What a weak term (a year, "latest", "guide", "speed") counts in a row's coverage; a key term counts 1.
    weak_term_weight: float = Field(1.0, ge=0, le=1)  # 0.5 was the discount; opt-in
    # A kept row lacking the query's most specific word (the anchor) that the rest of the pool carries, or a
    # key term its engine's list left out while the other engines' rows carry it, has its score multiplied
    # by this, so it ranks below the rows that carry it; 1 = no demotion.
    anchor_demotion: float = Field(0.2, ge=0, le=1)
    # A row short of min_coverage is cut only when the evidence is against it on both counts: it carries less
    # than evidence_meaning of the query's specific meaning (ranking/pool.py), and every engine listing it is
    # off-topic (its top on_topic_depth rows carry less than evidence_on_topic of that meaning). Otherwise
    # it is kept, demoted by anchor_demotion: what it lacks is the query's generic words.
    evidence_guard: bool = True
    # A row at least agreement_engines engines rank in their top agreement_depth is about the query as the
    # engines read it: the relevance guard neither cuts nor demotes it for a word it lacks, and the pool gate
    # keeps it (0 = off).
    agreement_engines: int = Field(3, ge=0)
    agreement_depth: int = Field(10, ge=1)
    evidence_meaning: float = Field(0.75, ge=0, le=1)
    evidence_on_topic: float = Field(0.75, ge=0, le=1)
    on_topic_depth: int = Field(8, ge=1)
    # The pool gate: a query with up to short_query_key_terms key terms needs a row with all of them; a longer
    # one needs gate_share of them (rounded up, at least short_query_key_terms), and its rows are held to
    # min_coverage of what the pool's best row covers.
    short_query_key_terms: int = Field(3, ge=1)
    gate_share: float = Field(0.6, gt=0, le=1)
    # The anchor (ranking/pool.py): the query's rarest key word anchors it when at least this share of the rows
    # mentioning any key term mention it (and two rows do).
    anchor_share: float = Field(1 / 3, ge=0, le=1)
    # An engine left a key term out when at most partial_own_share of its rows mention it while at least
    # partial_others_share of the other engines' rows do; each side needs partial_min_rows rows.
    partial_own_share: float = Field(1 / 3, ge=0, le=1)
    partial_others_share: float = Field(2 / 3, ge=0, le=1)
    partial_min_rows: int = Field(3, ge=1)
    # A typed word reads as a pool word one or two slips away that the pool uses this many times as often; it
    # is a typo when wordfreq finds it typo_zipf_gap (Zipf units) rarer than the pool's spelling.
    # A query word also counts as the words of its family (ranking/words.py: the same Snowball stem).
    word_families: bool = False  # opt-in: earned nowhere once agreement is on (BENCHMARKS.md)
    pool_spellings: bool = True  # False: the query's words are read only as typed (no spellings, no lemmas)
    spelling_majority: float = Field(2.0, ge=1)
    typo_zipf_gap: float = Field(1.0, ge=0)
    min_fixable: int = Field(5, ge=1, description="the shortest word whose inflection the pool may teach")
    # An echo page: titled with the query and saying it echo_repeats times in its snippet (queries of at least
    # echo_min_words words). echo and junk switch off apart: either alone still reports its rows as junk.
    echo: bool = True
    echo_repeats: int = Field(3, ge=1)
    echo_min_words: int = Field(3, ge=1)
    # ... or saying it twice or more in a snippet where the query's words are this share of all its words or more
    echo_density: float = Field(0.4, gt=0, le=1)
    cjk_ascii_units: int = Field(2, ge=1, description="CJK gate: what an ASCII query word found is worth")


DEFAULT_FILTERS = FilterConfig()  # what a stage reads when its caller passes no configuration


class RRFConfig(Model):
    """Weighted RRF with authority and freshness boosts, weighted round-robin interleave."""

    rrf_constant: float = Field(60.0, gt=0)
    authority_boost: float = Field(0.25, ge=0)
    freshness_boost: float = Field(0.2, ge=0)
    freshness_days: float = Field(30.0, gt=0)
    interleave: bool = True
    region_policy: bool = True
    region_lead_bonus: float = Field(0.0, ge=0)
    weights: dict[str, float] = Field(default_factory=lambda: {"anysearch": 2.0})


class ConsensusConfig(Model):
    """consensus-v2.1, exactly as its design gives it."""

    kappa: float = Field(10.0, gt=0)
    beta: float = Field(1.0, ge=0)
    metadata_clip: float = Field(0.2, ge=0)
    lexical: float = 0.10
    freshness: float = 0.15
    groups: dict[str, str] = Field(default_factory=_groups)
    retention: dict[str, float] = Field(default_factory=_retention)
    aliases: dict[str, str] = Field(default_factory=_aliases)
    ranking: str = Field(
        "balanced", description="weight preset of data/engine_weights.json (balanced, research, fresh)"
    )
    weights: dict[str, float] = Field(
        default_factory=dict, description="default: the `ranking` preset's weights"
    )
    recency_half_life_days: dict[str, float] = Field(
        default_factory=lambda: {"day": 0.5, "week": 3.0, "month": 15.0, "year": 90.0}
    )

    @model_validator(mode="before")
    @classmethod
    def _weights_from_preset(cls, data: object) -> object:
        """Weights not given (an explicit {} means every engine weighs 1) are the named preset's; an unknown preset is an error."""
        if isinstance(data, dict) and "weights" not in data:
            name = data.get("ranking", "balanced")
            presets = engine_table()["presets"]
            if name not in presets:
                raise ValueError(f"unknown ranking preset {name!r}; choose one of: {', '.join(presets)}")
            data = {**data, "weights": dict(presets[name])}
        return data


class SearxngConfig(Model):
    """SearXNG's own score: product of weights x occurrences x sum of 1/position."""

    weights: dict[str, float] = Field(default_factory=dict)


class LexicalConfig(Model):
    """The lexical core: filters, upstream (SearXNG score) order, one row per registrable domain."""

    searxng_weights: dict[str, float] = Field(default_factory=dict)


class CombConfig(Model):
    """CombMNZ or Borda over each engine's list, cut at ``depth`` rows (None: the whole list it showed).

    ``short_list_scale`` (CombMNZ, opt-in): a list shorter than this share of the longest shown list is scored
    over that share of the longest's length, not its own, so a list of two vouches for its first row less than a
    list of twenty does; 1 puts every list on the longest's scale (Borda's points, times the lists holding the
    row), 0 is the textbook normalisation, each list over its own length. Borda's points are on one scale."""

    depth: int | None = Field(None, ge=1)
    short_list_scale: float = Field(0.0, ge=0, le=1)


class AgreementConfig(Model):
    """Knobs of the agreement-weighted fusion (strategy ``agree``)."""

    rrf_constant: float = Field(
        10.0, gt=0, description="k of the reciprocal-rank votes, in fusion and consensus"
    )
    power: float = Field(
        0.25, ge=0, description="sharpening of support into weight; 0 = ignore support (coverage only)"
    )
    coverage: float = Field(
        1.0, ge=0, description="exponent of an engine's list length relative to the longest"
    )
    iterations: int = Field(1, ge=1, le=10, description="support -> weight rounds")
    support_depth: int = Field(
        8, ge=1, description="m: how many of an engine's top rows its support looks at"
    )
    min_engines: int = Field(3, ge=2, description="fewer engines than this: support is not informative")
    content_power: float = Field(
        1.0,
        ge=0,
        description="adaptive: exponent of each engine's content reliability (the query's specific meaning "
        "its top rows carry, relative to the best engine's); 0 = ignore content",
    )
    content_floor: float = Field(
        1e-3,
        ge=0,
        description="adaptive: an engine whose rows carry none of the query still votes this faintly",
    )
    unbacked_budget: float = Field(
        1e-6, ge=0, description="what an engine no other engine backs casts in all, shared among its rows"
    )


class SelectionConfig(Model):
    """How the selection stage fills ``limit`` slots from any ranker's order (ranking/selection.py)."""

    method: Literal["auto", "top", "mmr"] = Field(
        "auto", description="auto: the ranker's own (MMR for consensus and adaptive, top-k for the rest)"
    )
    per_domain: int | None = Field(
        None, ge=0, description="top-k: rows per registrable domain (0 = no cap; default: the ranker's own)"
    )
    # MMR: selection score = score - diversity_penalty * the largest shingle Jaccard against the rows chosen
    diversity_penalty: float = Field(0.15, ge=0)
    sparse_domain_cap: int = Field(
        2, ge=1, description="MMR: rows per domain for rows too short for shingles"
    )
    shingle_n: int = Field(3, ge=1)
    shingle_min_tokens: int = Field(8, ge=1)


# The one default ranker of every face (search, fuse, bench, HTTP, MCP): each takes it from RankingConfig.
# Plain CombMNZ: no adaptive weighting earned its place on two corpora (benchmarks/ablation.py, BENCHMARKS.md).
DEFAULT_STRATEGY = "combmnz"


def _not_bool(value: object) -> object:
    if isinstance(value, bool):  # pydantic would read true as 1.0: a weight is a number, said as one
        raise ValueError(f"must be a number, got {value!r}")
    return value


def _finite_non_negative(value: float) -> float:
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"must be a finite number >= 0, got {value!r}")
    return value


EngineWeight = Annotated[float, BeforeValidator(_not_bool), AfterValidator(_finite_non_negative)]


class RankingConfig(Model):
    strategy: str = DEFAULT_STRATEGY
    # Engine weights learned from judgments (``serpfuse calibrate``, ``[ranking.weights]``, ``--weights``): one
    # multiplier per engine on top of each weighted ranker's own engine weights (adaptive and consensus:
    # consensus.weights; rrf: rrf.weights), read through ``weight_of``. An engine not named keeps 1; 0 silences it.
    weights: dict[str, EngineWeight] = Field(
        default_factory=dict, description="engine -> multiplier of its weight (default 1)"
    )
    # One answer's rows name at most this many engines as voters; the rest are one voter (candidates.py).
    engine_names_per_answer: int = Field(16, ge=1)
    filters: FilterConfig = Field(default_factory=FilterConfig)
    rrf: RRFConfig = Field(default_factory=RRFConfig)
    consensus: ConsensusConfig = Field(default_factory=ConsensusConfig)
    searxng: SearxngConfig = Field(default_factory=SearxngConfig)
    lexical: LexicalConfig = Field(default_factory=LexicalConfig)
    combmnz: CombConfig = Field(default_factory=CombConfig)
    borda: CombConfig = Field(default_factory=CombConfig)
    agree: AgreementConfig = Field(default_factory=AgreementConfig)
    selection: SelectionConfig = Field(default_factory=SelectionConfig)
    # The rules that measured nothing (BENCHMARKS.md, the ablation: no corpus they help on) run only with this
    # switch on, so a configuration that turns one on says it is an experiment. Not a ranking knob itself: it
    # is left out of the fingerprint.
    experimental: bool = False

    # The fingerprint and the per-strategy copies, computed once: every response and cache key needs them and
    # hashing the whole config costs 50-150 us. A copy or a field assignment starts afresh; a section is not
    # edited in place (build a new config, as ``model_copy(update=...)`` does).
    _memo: dict[str, Any] = PrivateAttr(default_factory=dict)

    def fingerprint(self) -> str:
        memo = (
            self._memo
        )  # read once: a private attribute is pydantic's slow lookup (about 2 us), every cache key's
        if "fingerprint" not in memo:
            blob = json.dumps(
                {
                    "scoreVersion": SCORE_VERSION,
                    "config": self.model_dump(mode="json", exclude={"experimental"}),
                },
                sort_keys=True,
                separators=(",", ":"),
            )
            memo["fingerprint"] = hashlib.sha256(blob.encode()).hexdigest()[:16]
        return memo["fingerprint"]

    def experiments(self) -> list[str]:
        """The measured-zero rules this configuration turns on (``EXPERIMENTS``)."""
        return [name for name, on in EXPERIMENTS.items() if on(self)]

    @model_validator(mode="after")
    def _experiments_need_the_switch(self) -> RankingConfig:
        if not self.experimental and (on := self.experiments()):
            raise ValueError(
                f"{', '.join(on)} measured nothing on the benchmark corpora (BENCHMARKS.md, the ablation); "
                "set ranking.experimental = true to run it anyway"
            )
        return self

    @field_validator("weights")
    @classmethod
    def _named_engines(cls, weights: dict[str, float]) -> dict[str, float]:
        if any(not name.strip() for name in weights):
            raise ValueError("an engine weight needs an engine name")
        return weights

    def weight_of(self, engine: str) -> float:
        """The engine's ``weights`` multiplier: by its logical name (aliases folded, as the consensus counts
        voters), else by the name it was given, else 1."""
        if not self.weights:
            return 1.0
        voter = self.consensus.aliases.get(engine, engine)
        return self.weights.get(voter, self.weights.get(engine, 1.0))

    def with_strategy(self, strategy: str | None) -> RankingConfig:
        if not strategy or strategy == self.strategy:
            return self
        key = f"strategy:{strategy}"
        if key not in self._memo:
            self._memo[key] = self.model_copy(update={"strategy": strategy})
        return self._memo[key]

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name in type(self).model_fields:
            self._memo = {}

    def model_copy(self, *, update: Any = None, deep: bool = False) -> Self:
        copied = super().model_copy(update=update, deep=deep)
        copied._memo = {}
        return copied

    def __copy__(self) -> Self:
        copied = super().__copy__()
        copied._memo = {}
        return copied

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Self:
        copied = super().__deepcopy__(memo)
        copied._memo = {}
        return copied


# The opt-in rules the ablation found no corpus for (BENCHMARKS.md, "The default, and the ablation that chose it"):
# each runs only under ``ranking.experimental = true``.
EXPERIMENTS: dict[str, Callable[[RankingConfig], bool]] = {
    "filters.junk": lambda c: c.filters.junk,
    "filters.geo": lambda c: c.filters.geo,
    "filters.cjk_gate": lambda c: c.filters.cjk_gate,
    "filters.fallback_when_empty": lambda c: c.filters.fallback_when_empty,
    "filters.weak_term_weight": lambda c: c.filters.weak_term_weight != 1.0,
    "filters.word_families": lambda c: c.filters.word_families,
    "combmnz.short_list_scale": lambda c: c.combmnz.short_list_scale != 0.0,
}
