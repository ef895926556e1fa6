"""consensus-v2.1 (seed 002): the published vectors, invalid inputs, the weight invariant, the 10,000-input
property run, and the metadata and selection checks, all against the shipped ranker.

Expected values come from ../shared/data/consensus-v2.1/consensus-v2.1-test-vectors.json (see its SOURCE.txt).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import random
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from pydantic import ValidationError

from conftest import data_root, need
from serpfuse.config import ConsensusConfig, RankingConfig, engine_table
from serpfuse.models import SearchRequest
from serpfuse.ranking.context import RankContext
from serpfuse.ranking.query import QueryAnalysis, analyze_query
from serpfuse.ranking.rankers.consensus import (
    RANKER,
    SCORE_VERSION,
    ConsensusRanker,
    EvidenceBreakdown,
    evidence,
)
from serpfuse.ranking.selection import select
from serpfuse.ranking.types import Candidate, Scored

VECTORS = "consensus-v2.1/consensus-v2.1-test-vectors.json"
NOW = dt.datetime(2026, 9, 22, 12, 0, tzinfo=dt.UTC)
# The vectors use weight 1 for every engine ("neutral"); groups, retention and aliases stay the shipped ones.
NEUTRAL = ConsensusConfig(weights={})
ENGINES = list(engine_table()["presets"]["balanced"])  # the eight logical engines, in the source's order


def _load_vectors() -> dict:
    path = data_root() / VECTORS
    return json.loads(path.read_text()) if path.exists() else {}


_DATA = _load_vectors()


@pytest.fixture(scope="module")
def vectors(data_dir: Path) -> dict:
    return json.loads(need(data_dir / VECTORS).read_text())


def E(obs, cfg: ConsensusConfig = NEUTRAL, weights=None) -> float:
    return evidence(obs, cfg, weights).evidence


# --- the exact vectors -----------------------------------------------------------------------------------


def _observations(raw) -> list[tuple[str, int]]:
    if raw == "all 8 engines rank 1":
        return [(e, 1) for e in ENGINES]
    return [(engine, rank) for engine, rank in raw]


def _weights(vector: dict) -> dict[str, float] | None:
    if vector.get("weights") == "all Number.MAX_VALUE":
        return dict.fromkeys(ENGINES, sys.float_info.max)
    return vector.get("weights_override")


@pytest.mark.parametrize("index", range(len(_DATA.get("evidenceScore_vectors", []))))
def test_evidence_vector(vectors: dict, index: int) -> None:
    v = vectors["evidenceScore_vectors"][index]
    obs = _observations(v["obs"])
    got = evidence(obs, NEUTRAL, _weights(v))
    checked = False
    if "expected" in v:
        assert got.evidence == pytest.approx(v["expected"], abs=1e-12, rel=0), v
        checked = True
    if "expected_engineRanks" in v:
        assert got.engine_ranks == v["expected_engineRanks"]
        checked = True
    relation = v.get("expected_relation")
    if relation == "< 1":
        assert got.evidence < 1, v
        checked = True
    elif relation == "> 1":
        assert got.evidence > 1, v
        checked = True
    elif relation == "finite":
        assert math.isfinite(got.evidence) and got.evidence > 0, v
        assert math.isfinite(got.consensus_boost)
        checked = True
    if "x-official" in v.get("note", "") or any(e == "x-official" for e, _ in obs):
        # A merged Web+X post keeps each provider's original rank; the ranker scores exactly those
        # observations: M = 10/11 (x-official #2), residuals 10/17 (bing #8) and 10/29 (tavily #20).
        assert got.evidence == pytest.approx(10 / 11 + math.log1p(10 / 17 + 10 / 29), abs=1e-12, rel=0)
        post = Candidate(
            key="x.com/alice/status/123",
            url="https://x.com/alice/status/123",
            title="alpha",
            snippet="",
            domain="x.com",
            host="x.com",
            engine_ranks=dict(obs),
        )
        (scored,) = RANKER.rank([post], _ctx(query="zzz", cfg=NEUTRAL))
        assert scored.evidence == got.evidence
        checked = True
    assert checked, f"vector with no check this test understands: {v}"


def test_vectors_file_has_the_published_cases(vectors: dict) -> None:
    assert len(vectors["evidenceScore_vectors"]) >= 14


def test_zero_weight_engine_casts_no_vote_and_is_not_a_contribution() -> None:
    got = evidence([("bing", 1), ("tavily", 1)], NEUTRAL, {"tavily": 0})
    assert got.contributions == {"bing": 1.0} and got.M == got.best_single == 1.0
    assert got.engine_ranks == {"bing": 1, "tavily": 1}


def test_aliases_fold_to_the_best_rank_of_one_voter() -> None:
    got = evidence([("anysearch-anonymous", 4), ("anysearch-keyed", 2), ("anysearch", 3)], NEUTRAL)
    assert got.engine_ranks == {"anysearch": 2}
    assert got.contributions == {"anysearch": pytest.approx(10 / 11)}


def test_weight_precedence_argument_then_config_then_one() -> None:
    cfg = NEUTRAL.model_copy(update={"weights": {"bing": 2.0, "brave": 3.0}})
    got = evidence([("bing", 1), ("brave", 1), ("mojeek", 1)], cfg, {"brave": 0.5})
    assert got.contributions == {"bing": 2.0, "brave": 0.5, "mojeek": 1.0}


def test_unknown_engine_is_its_own_group_with_full_retention() -> None:
    # Two unlisted engines are independent: 1 + ln 2, like two independent groups.
    assert E([("mq-ranker-1", 1), ("mq-ranker-2", 1)]) == pytest.approx(1 + math.log(2), abs=1e-12)


def test_empty_observations_give_zero() -> None:
    assert evidence([], NEUTRAL) == EvidenceBreakdown(0.0, 0.0, 0.0, 0.0, {}, {})


def test_shipped_weights_change_the_score() -> None:
    # Default config carries the balanced preset: bing #1 alone is w_bing, not 1.
    balanced = engine_table()["presets"]["balanced"]
    assert E([("bing", 1)], ConsensusConfig()) == pytest.approx(balanced["bing"], abs=1e-15)


# --- invalid inputs --------------------------------------------------------------------------------------


def _js(value):
    """The vectors spell JavaScript values as strings: "Infinity", "NaN" and "'1' (string)"."""
    return (
        {"Infinity": math.inf, "NaN": math.nan, "'1' (string)": "1"}.get(value, value)
        if isinstance(value, str)
        else value
    )


def test_invalid_ranks_raise(vectors: dict) -> None:
    bad = [_js(v) for v in vectors["invalid_inputs_must_throw"]["rank"]] + [True, 2.0, "1", None]
    for rank in bad:
        with pytest.raises(ValueError, match="rank"):
            evidence([("bing", rank)], NEUTRAL)


def test_invalid_weights_raise(vectors: dict) -> None:
    bad = [_js(v) for v in vectors["invalid_inputs_must_throw"]["weight"]] + [True, None, -math.inf]
    assert "1" in bad
    for weight in bad:
        with pytest.raises(ValueError, match="weight"):
            evidence([("bing", 1)], NEUTRAL, {"bing": weight})
        # the same value reaching the scorer through the configuration is rejected too
        with pytest.raises(ValueError, match="weight"):
            evidence([("bing", 1)], NEUTRAL.model_copy(update={"weights": {"bing": weight}}))


def test_invalid_config_raises(vectors: dict) -> None:
    for bad in vectors["invalid_inputs_must_throw"]["config"]:
        # model_copy skips validation, as a config assembled in code could: the scorer still refuses it
        cfg = NEUTRAL.model_copy(update=bad)
        with pytest.raises(ValueError, match="kappa|beta|retention"):
            evidence([("bing", 1)], cfg)
    for bad in ({"kappa": 0}, {"beta": -1}):
        with pytest.raises(ValidationError):
            ConsensusConfig(**bad)
    for bad in ({"retention": {"bing": -0.1}}, {"retention": {"exa": math.nan}}, {"kappa": math.inf}):
        with pytest.raises(ValueError):
            evidence([("bing", 1)], NEUTRAL.model_copy(update=bad))


def test_bad_engine_name_raises() -> None:
    for engine in ("", None, 3):
        with pytest.raises(ValueError, match="engine"):
            evidence([(engine, 1)], NEUTRAL)


# --- the weights invariant -------------------------------------------------------------------------------


def test_geometric_mean_of_every_preset_is_one() -> None:
    presets = engine_table()["presets"]
    assert set(presets) == {"balanced", "research", "fresh"}
    for name, weights in presets.items():
        assert len(weights) == 8, name
        gm = math.exp(math.fsum(math.log(w) for w in weights.values()) / len(weights))
        assert gm == pytest.approx(1, abs=1e-11), name


def test_presets_equal_the_published_weights_and_formula(data_dir: Path) -> None:
    shared = json.loads(need(data_dir / "consensus-v2.1" / "shared-ranking-weights.json").read_text())
    presets = engine_table()["presets"]
    for name, priors in shared["native_priors"].items():
        if name.startswith("_"):
            continue
        gm = math.exp(math.fsum(math.log(p) for p in priors.values()) / len(priors))
        for engine, prior in priors.items():
            assert presets[name][engine] == pytest.approx(shared["weights"][name][engine], abs=1e-15)
            assert presets[name][engine] == pytest.approx(math.sqrt(prior / gm), abs=1e-12)


# --- the property run ------------------------------------------------------------------------------------


class LCG:
    """The source's generator: seed = (imul(seed, 1664525) + 1013904223) >>> 0; u = seed / 2^32."""

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def __call__(self) -> float:
        self.seed = (self.seed * 1664525 + 1013904223) & 0xFFFFFFFF
        return self.seed / 2**32


def test_lcg_matches_javascript_imul_arithmetic() -> None:
    # Math.imul wraps to signed 32 bits and >>> 0 makes it unsigned again: the same as mod 2^32.
    def js_step(seed: int) -> int:
        product = (seed * 1664525) & 0xFFFFFFFF
        signed = product - 2**32 if product >= 2**31 else product
        return (signed + 1013904223) % 2**32

    rng, seed = LCG(20260922), 20260922
    for _ in range(1000):
        seed = js_step(seed)
        assert rng() == seed / 2**32


def _reference(obs: list[tuple[str, int]], weights: dict[str, float], cfg: ConsensusConfig) -> float:
    """Straight group sums, the formula as written (no residual trick, no aliases: the 8 names are logical)."""
    groups: dict[str, list[float]] = {}
    for engine, rank in obs:
        groups.setdefault(cfg.groups.get(engine, engine), []).append(weights[engine] * 10 / (10 + rank - 1))
    total = sum(max(v) + cfg.retention.get(g, 1) * (sum(v) - max(v)) for g, v in groups.items())
    best = max((x for v in groups.values() for x in v), default=0.0)
    return best + math.log1p(max(0.0, total - best))


def test_property_run(vectors: dict) -> None:
    spec = vectors["property_run"]
    assert spec["seed"] == 20260922 and spec["iterations"] == 10_000 and len(spec["checks"]) == 8
    tol = spec["tolerance"]
    rnd = LCG(spec["seed"])
    cfg = ConsensusConfig()
    full = cfg.model_copy(update={"retention": {"bing": 1.0, "exa": 1.0}})
    half = cfg.model_copy(update={"retention": {"bing": 0.5, "exa": 0.5}})
    for i in range(spec["iterations"]):
        # the draws happen in the source's order, so this is the same 10,000 inputs
        kept = [e for e in ENGINES if rnd() > 0.3]
        obs = [(e, 1 + math.floor(rnd() * 30)) for e in kept]
        weights = {e: rnd() * 2 for e in ENGINES}
        base = E(obs, cfg, weights)
        engine = ENGINES[math.floor(rnd() * len(ENGINES))]
        ctx = f"iteration {i}: obs={obs} engine={engine}"
        # 1 monotone in evidence
        assert E([*obs, (engine, 1 + math.floor(rnd() * 30))], cfg, weights) + tol >= base, ctx
        # 2 monotone in weight
        assert E(obs, cfg, {**weights, engine: weights[engine] + rnd()}) + tol >= base, ctx
        # 3 monotone in rank
        assert E([(e, 1 if e == engine else r) for e, r in obs], cfg, weights) + tol >= base, ctx
        # 4 order invariance (identical, not merely close)
        assert E(obs[::-1], cfg, weights) == base, ctx
        # 5 best rank only
        assert E([*obs, *((e, r + 1) for e, r in obs)], cfg, weights) == base, ctx
        # 6 and 7: more retention never lowers the score
        assert E(obs, full, weights) + tol >= base, ctx
        assert E(obs, half, weights) + tol >= base, ctx
        # 8 independent reference calculation
        assert base == pytest.approx(_reference(obs, weights, cfg), abs=1e-11, rel=0), ctx


def test_property_reference_is_not_trivially_equal() -> None:
    # Guard for check 8: the reference must see retention, or it would agree with a broken scorer.
    cfg = ConsensusConfig()
    obs = [("bing", 1), ("ddg", 1)]
    weights = {"bing": 1.0, "ddg": 1.0}
    assert _reference(obs, weights, cfg) == pytest.approx(1 + math.log1p(0.25))
    assert _reference(obs, weights, cfg) != _reference(obs, weights, cfg.model_copy(update={"retention": {}}))


def test_random_inputs_order_and_duplicates_beyond_the_eight_engines() -> None:
    # Same invariances with aliases and unknown engines mixed in (not covered by the source's run).
    rng = random.Random(7)
    names = [*ENGINES, "anysearch-keyed", "anysearch-anonymous", "duckduckgo", "mojeek", "wikipedia"]
    for _ in range(500):
        obs = [(rng.choice(names), rng.randint(1, 40)) for _ in range(rng.randint(0, 12))]
        base = E(obs, ConsensusConfig())
        shuffled = obs[:]
        rng.shuffle(shuffled)
        assert E(shuffled, ConsensusConfig()) == base
        assert E([*obs, *((e, r + 3) for e, r in obs)], ConsensusConfig()) == base


# --- ranking and metadata --------------------------------------------------------------------------------


def _query(text: str, **fields) -> QueryAnalysis:
    return replace(analyze_query(text), **fields) if fields else analyze_query(text)


def _ctx(
    query: str = "alpha",
    *,
    cfg: ConsensusConfig | None = None,
    limit: int = 8,
    include_domains: tuple[str, ...] = (),
    time_range: str | None = None,
    min_score: float = 0.0,
    qa: QueryAnalysis | None = None,
) -> RankContext:
    request = SearchRequest(
        query=query,
        limit=limit,
        include_domains=list(include_domains),
        time_range=time_range,
        min_score=min_score,
    )
    config = RankingConfig(consensus=cfg if cfg is not None else NEUTRAL)
    return RankContext(request=request, query=qa or _query(query), config=config, now=NOW)


def _cand(
    url: str = "https://example.org/doc",
    *,
    ranks: dict[str, int] | None = None,
    title: str = "alpha",
    snippet: str = "useful alpha evidence",
    published: dt.datetime | None = None,
    date_status: str | None = None,
) -> Candidate:
    host = url.split("/")[2]
    return Candidate(
        key=url.split("://", 1)[1],
        url=url,
        title=title,
        snippet=snippet,
        domain=host,
        host=host,
        published=published,
        date_status=date_status or ("known" if published else "unknown"),
        engine_ranks=ranks or {"bing": 1},
    )


def test_ranker_identity() -> None:
    assert isinstance(RANKER, ConsensusRanker)
    assert RANKER.name == "consensus" and RANKER.score_version == SCORE_VERSION == "consensus-v2.1"


def test_parts_hold_every_piece_of_the_score() -> None:
    (s,) = RANKER.rank([_cand(ranks={"bing": 1, "tavily": 3})], _ctx("alpha"))
    x_tavily = 10 / 12
    assert s.evidence == pytest.approx(1 + math.log1p(x_tavily), abs=1e-12)
    assert s.parts["evidence"] == s.evidence
    assert s.parts["M"] == 1.0
    assert s.parts["consensus"] == pytest.approx(x_tavily)
    assert s.parts["consensusBoost"] == pytest.approx(math.log1p(x_tavily))
    assert s.parts["lexical"] == 1.0 and s.parts["freshness"] == 0.0
    assert s.score == pytest.approx(s.evidence * 1.10, abs=1e-12)
    assert s.metadata_delta == s.parts["metadataDelta"] == pytest.approx(s.score - s.evidence, abs=1e-15)
    assert s.contributions == {"bing": 1.0, "tavily": pytest.approx(x_tavily)}


def test_rank_sorts_by_score_then_key_and_ignores_input_order() -> None:
    cands = [
        _cand("https://b.org/x", ranks={"bing": 2}),
        _cand("https://a.org/x", ranks={"bing": 2}),
        _cand("https://c.org/x", ranks={"bing": 1, "brave": 4}),
        _cand("https://d.org/x", ranks={"exa": 9}),
    ]
    ranked = RANKER.rank(cands, _ctx())
    keys = [s.candidate.key for s in ranked]
    assert keys == ["c.org/x", "a.org/x", "b.org/x", "d.org/x"]
    for seed in range(5):
        shuffled = cands[:]
        random.Random(seed).shuffle(shuffled)
        assert [s.candidate.key for s in RANKER.rank(shuffled, _ctx())] == keys


def test_lexical_counts_query_words_and_cjk_bigrams() -> None:
    qa = _query("rust 异步运行时", terms=("rust", "tokio"), cjk_tokens=("异步", "运行", "行时"))
    (s,) = RANKER.rank([_cand(title="Rust 的异步", snippet="运行 environment")], _ctx(qa=qa))
    # matched: rust, 异步, 运行 -> 3 of 5 terms; 行时 spans two words so it is not in the text
    assert s.parts["lexical"] == pytest.approx(3 / 5)
    assert s.score == pytest.approx(1 + 0.10 * 3 / 5, abs=1e-12)


def test_lexical_matches_whole_words_not_substrings() -> None:
    qa = _query("or abort", terms=("or", "abort"))
    (s,) = RANKER.rank([_cand(title="abortion", snippet="orchid")], _ctx(qa=qa))
    assert s.parts["lexical"] == 0.0 and s.score == 1.0


def test_lexical_uses_the_analysed_query() -> None:
    (s,) = RANKER.rank([_cand(title="中文语义检索 alpha", snippet="")], _ctx("中文语义检索 alpha"))
    assert s.parts["lexical"] == 1.0


def test_freshness_half_life_only_with_a_time_range() -> None:
    three_days = NOW - dt.timedelta(days=3)
    cand = _cand(title="zzz", snippet="", published=three_days)  # no lexical match: freshness alone
    (week,) = RANKER.rank([cand], _ctx(time_range="week"))
    assert week.parts["freshness"] == pytest.approx(0.5)  # half-life for week is 3 days
    assert week.score == pytest.approx(1 + 0.15 * 0.5, abs=1e-12)
    (year,) = RANKER.rank([cand], _ctx(time_range="year"))
    assert year.parts["freshness"] == pytest.approx(0.5 ** (3 / 90))
    (none,) = RANKER.rank([cand], _ctx(time_range=None))
    assert none.parts["freshness"] == 0.0 and none.score == 1.0


def test_future_unknown_and_conflicting_dates_are_neutral() -> None:
    future = _cand(title="zzz", snippet="", published=NOW + dt.timedelta(days=2))
    unknown = _cand(title="zzz", snippet="")
    conflicting = _cand(title="zzz", snippet="", published=NOW, date_status="conflicting")
    for cand in (future, unknown, conflicting):
        (s,) = RANKER.rank([cand], _ctx(time_range="day"))
        assert s.parts["freshness"] == 0.0 and s.score == 1.0, cand.date_status


def test_naive_dates_are_read_as_utc() -> None:
    cand = _cand(title="zzz", snippet="", published=dt.datetime(2026, 9, 19, 12, 0))  # naive, 3 days old
    (s,) = RANKER.rank([cand], _ctx(time_range="week"))
    assert s.parts["freshness"] == pytest.approx(0.5)


# --- the metadata_and_selection_checks list --------------------------------------------------------------


def test_check_list_is_the_one_these_tests_cover(vectors: dict) -> None:
    assert len(vectors["metadata_and_selection_checks"]) == 11


def test_conflicting_dates_get_no_freshness_and_ranking_is_order_independent() -> None:
    # "merge is input-order independent; conflicting dates -> dateStatus conflicting": merging belongs to
    # serpfuse.ranking.candidates; here the ranker's half: a conflicting date earns nothing even under recency,
    # and rank() does not depend on the order the candidates arrive in.
    rows = [
        _cand("https://example.org/doc", ranks={"bing": 3, "tavily": 1}, date_status="conflicting"),
        _cand("https://example.org/other", ranks={"bing": 1}, published=NOW - dt.timedelta(days=1)),
    ]
    forward = RANKER.rank(rows, _ctx(time_range="week"))
    backward = RANKER.rank(rows[::-1], _ctx(time_range="week"))
    assert [(s.candidate.key, s.score) for s in forward] == [(s.candidate.key, s.score) for s in backward]
    conflicting = next(s for s in forward if s.candidate.date_status == "conflicting")
    assert conflicting.parts["freshness"] == 0.0


def test_score_is_at_most_evidence_times_1_2() -> None:
    # Full lexical match (0.10) plus a same-day date (0.15) would be +25 %; the clip keeps it at +20 %.
    cand = _cand(ranks={"bing": 3, "tavily": 1}, published=NOW)
    (s,) = RANKER.rank([cand], _ctx(time_range="week"))
    assert s.parts["lexical"] == 1.0 and s.parts["freshness"] == 1.0
    assert s.score <= s.evidence * 1.2
    assert s.score == pytest.approx(s.evidence * 1.2, abs=1e-12)


def test_no_lexical_match_and_unknown_date_is_neutral() -> None:
    cand = _cand(title="中文", snippet="语义检索")
    (s,) = RANKER.rank([cand], _ctx("alpha", time_range="day"))
    assert s.evidence == 1.0 and s.score == 1.0 and s.metadata_delta == 0.0


def test_zero_weight_single_source_row_is_dropped() -> None:
    cfg = NEUTRAL.model_copy(update={"weights": {"bing": 0.0}})
    cand = _cand(title="alpha", published=dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    assert RANKER.rank([cand], _ctx(cfg=cfg, time_range="year")) == []
    # a row with votes next to it stays
    assert len(RANKER.rank([cand, _cand("https://b.org/x", ranks={"brave": 1})], _ctx(cfg=cfg))) == 1


def test_edu_tld_earns_no_bonus() -> None:
    (s,) = RANKER.rank([_cand("https://test.edu/doc", title="无关", snippet="")], _ctx("alpha"))
    assert s.score == 1.0


def _sparse_rows() -> list[Scored]:
    cands = [_cand(f"https://example.org/{i}", ranks={"bing": i + 1}) for i in range(5)]
    return [Scored(candidate=c, score=1.0, evidence=1.0) for c in cands]


def test_sparse_rows_domain_cap_and_single_site_exemption() -> None:
    rows = _sparse_rows()
    capped = select(rows, RANKER, _ctx(limit=5))
    assert len(capped.selected) == 2 and capped.truncated
    assert {c.step for c in capped.cut.values()} == {"diversity"}
    single = select(rows, RANKER, _ctx(limit=5, include_domains=("example.org",)))
    assert len(single.selected) == 5 and not single.truncated
    assert all(r.score == 1 and r.evidence == 1 and r.selection_score == 1 for r in single.selected)
    # a site: operator in the query counts as the one include domain too
    via_query = select(rows, RANKER, _ctx("alpha site:example.org", limit=5))
    assert len(via_query.selected) == 5
    # two include domains: no exemption
    two = select(rows, RANKER, _ctx(limit=5, include_domains=("example.org", "example.net")))
    assert len(two.selected) == 2


def _rich(url: str, score: float, text: str) -> Scored:
    cand = _cand(url, title="", snippet=text)
    return Scored(candidate=cand, score=score, evidence=score)


RICH = [
    _rich("https://a.org/1", 1.0, "the official update enables concurrent tasks with bounded memory usage"),
    _rich("https://b.org/1", 0.98, "the official update enables concurrent tasks with bounded memory usage"),
    _rich(
        "https://c.org/1",
        0.95,
        "another documented aspect includes release dates migration rules and supported versions",
    ),
]


def test_mmr_skips_a_duplicate_text() -> None:
    chosen = select(RICH, RANKER, _ctx(limit=2))
    assert [r.candidate.url for r in chosen.selected] == ["https://a.org/1", "https://c.org/1"]
    assert chosen.selected[1].score == 0.95 and chosen.selected[1].selection_score == 0.95
    assert chosen.truncated and chosen.cut["b.org/1"].step == "limit"
    again = select(RICH[::-1], RANKER, _ctx(limit=2))
    assert [(r.candidate.url, r.selection_score) for r in again.selected] == [
        (r.candidate.url, r.selection_score) for r in chosen.selected
    ]
    # the duplicate still comes, last and discounted by the full penalty, when there is room
    three = select(RICH, RANKER, _ctx(limit=3))
    assert [r.candidate.url for r in three.selected][-1] == "https://b.org/1"
    assert three.selected[-1].selection_score == pytest.approx(0.98 - 0.15)
    assert three.selected[-1].score == 0.98 and not three.truncated


def test_min_score_applies_to_quality_before_diversity() -> None:
    sel = select(RICH, RANKER, _ctx(limit=3, min_score=0.97))
    assert [r.candidate.url for r in sel.selected] == ["https://a.org/1", "https://b.org/1"]
    assert sel.selected[1].selection_score == pytest.approx(0.98 - 0.15)  # below the floor, yet kept
    assert sel.cut["c.org/1"].step == "min_score"
    assert not sel.truncated  # the floor is not truncation: nothing eligible was left out


def test_provider_rank_is_used_as_recorded() -> None:
    # An invalid row at bing #1 was dropped before ranking; the next row keeps its provider rank #2.
    cands = [
        _cand("https://example.org/0", ranks={"bing": 2}),
        _cand("https://example.org/1", ranks={"bing": 3}),
    ]
    ranked = RANKER.rank(cands, _ctx("zzz"))
    assert [s.evidence for s in ranked] == [pytest.approx(10 / 11), pytest.approx(10 / 12)]


def test_failed_engine_is_neutral() -> None:
    # brave failed: it has no observations. Its weight and its presence in the request change nothing,
    # and nothing is renormalised over the engines that answered.
    cands = [
        _cand("https://example.org/a", ranks={"bing": 1, "tavily": 2}),
        _cand("https://b.org/b", ranks={"bing": 4}),
    ]
    with_brave = NEUTRAL.model_copy(update={"weights": {"bing": 0.9, "tavily": 1.1, "brave": 1.3}})
    without = NEUTRAL.model_copy(update={"weights": {"bing": 0.9, "tavily": 1.1}})
    ctx = _ctx(cfg=with_brave)
    ctx.engine_tiers.update({"bing": "primary", "tavily": "primary", "brave": "primary"})
    ctx.engine_list_sizes.update({"bing": 10, "tavily": 10, "brave": 0})
    a = [(s.candidate.key, s.score) for s in RANKER.rank(cands, ctx)]
    b = [(s.candidate.key, s.score) for s in RANKER.rank(cands, _ctx(cfg=without))]
    assert a == b


def test_fingerprint_changes_with_every_consensus_knob() -> None:
    base = RankingConfig()
    changed = {
        "kappa": 20.0,
        "beta": 0.5,
        "metadata_clip": 0.1,
        "lexical": 0.2,
        "freshness": 0.3,
        "groups": {**base.consensus.groups, "brave": "bing"},
        "retention": {**base.consensus.retention, "bing": 0.3},
        "aliases": {**base.consensus.aliases, "brave-api": "brave"},
        "ranking": "research",
        "weights": {**base.consensus.weights, "bing": 1.0},
        "recency_half_life_days": {**base.consensus.recency_half_life_days, "day": 1.0},
    }
    assert set(changed) == set(ConsensusConfig.model_fields), "a new knob needs a case here"
    seen = {base.fingerprint()}
    for knob, value in changed.items():
        cfg = base.model_copy(update={"consensus": base.consensus.model_copy(update={knob: value})})
        fp = cfg.fingerprint()
        assert fp not in seen, knob
        seen.add(fp)


def test_ranking_preset_names_the_weights() -> None:
    """``consensus.ranking`` picks the weight preset; explicit weights win; an unknown preset is an error."""
    from serpfuse.config import engine_table

    presets = engine_table()["presets"]
    for name in ("balanced", "research", "fresh"):
        assert ConsensusConfig(ranking=name).weights == presets[name]
    assert ConsensusConfig().weights == presets["balanced"]
    assert ConsensusConfig(ranking="fresh", weights={"bing": 2.0}).weights == {"bing": 2.0}
    assert ConsensusConfig(ranking="research").model_dump() != ConsensusConfig().model_dump()
    with pytest.raises(ValueError, match="unknown ranking preset"):
        ConsensusConfig(ranking="nope")
