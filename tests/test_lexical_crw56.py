"""Seed 001's gates for the `lexical` ranker on the crw56 SearXNG recording (issue 2 item 6, tests).

The recording is 56 real queries and the 827 rows a SearXNG instance returned for them. The metric
definitions below are seed 001's (us/crw rerank_tests.rs), restated here on purpose: they are the yardstick,
so they must not be the shipped filter code measuring itself.

- Junk@5: junk rows in the top 5, summed over the queries.
- CleanRel@5: top-5 rows that are neither junk nor fail the coverage guard, divided by 5, averaged.
- Baseline: raw SearXNG score descending, dedupe by exact URL.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from conftest import need
from serpfuse.config import RankingConfig
from serpfuse.models import Observation, SearchRequest
from serpfuse.ranking.context import FilterContext, RankContext
from serpfuse.ranking.filters import FilterOutcome, apply_filters, junk_verdict
from serpfuse.ranking.query import QueryAnalysis, analyze_query, clean_query
from serpfuse.ranking.rankers.lexical import RANKER, sighting_score
from serpfuse.ranking.selection import select
from serpfuse.ranking.types import Candidate
from serpfuse.text import fold
from serpfuse.urls import host_of, registrable_domain

# The instance's effective engine weights: they reproduce every recorded score (see test below).
CRW56_WEIGHTS = {"google": 3.0, "duckduckgo": 1.0, "bing": 0.3}
NOW = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)  # the recording's date; no row carries a date anyway

# --- seed 001's definitions, verbatim from the PR (field notes section 6) -----------------------------------
SEED_STOPWORDS = frozenset(
    [
        "top",
        "best",
        "good",
        "greatest",
        "finest",
        "cheapest",
        "cheap",
        "the",
        "a",
        "an",
        "in",
        "of",
        "to",
        "for",
        "and",
        "or",
        "near",
        "how",
        "is",
        "are",
        "do",
        "does",
        "from",
        "with",
        "you",
        "your",
        "should",
        "per",
        "what",
    ]
)
SEED_JUNK_HOSTS = frozenset(
    [
        "merriam-webster.com",
        "dictionary.cambridge.org",
        "usdictionary.com",
        "dictionary.com",
        "vocabulary.com",
        "thefreedictionary.com",
        "collinsdictionary.com",
        "wiktionary.org",
        "zara.com",
        "bestbuy.com",
        "ebay.com",
        "aliexpress.com",
        "foxnews.com",
        "apnews.com",
        "news.google.com",
        "culturedcode.com",
        "thingiverse.com",
        "apps.apple.com",
        "fix.com",
    ]
)
SEED_DICTIONARY_WORDS = frozenset({"definition", "meaning", "synonym", "synonyms", "antonym", "antonyms"})
SEED_BOT_CHECK = (
    "just a moment",
    "attention required",
    "verify you are human",
    "are you a robot",
    "access denied",
    "enable javascript",
)
SEED_ASSET_MARKERS = ("/mapfiles/", "/apple-app-site-association/", "/.well-known/")
SEED_BELGRAD_COMPETITORS = ("istanbul", "forest", "turkey", "maine", "lakes", "montana")
_TOKEN = re.compile(r"[a-z0-9]+")


def seed_tokens(text: str) -> list[str]:
    return _TOKEN.findall(fold(text))


def seed_domain(url: str) -> str:
    host = host_of(url)
    return host[4:] if host.startswith("www.") else host


def seed_is_junk(title: str, url: str) -> bool:
    """Seed 001's junk predicate with its exact (corpus-tuned) host list: the benchmark's yardstick."""
    host = seed_domain(url)
    if host in SEED_JUNK_HOSTS or host.endswith("myshopify.com"):
        return True
    toks = seed_tokens(title)
    if len(toks) <= 6 and any(t in SEED_DICTIONARY_WORDS for t in toks):
        return True
    lowered = title.lower()
    return any(p in lowered for p in SEED_BOT_CHECK) or any(m in url for m in SEED_ASSET_MARKERS)


def seed_covers(query: str, title: str, snippet: str) -> bool:
    terms = [t for t in seed_tokens(query) if t not in SEED_STOPWORDS]
    if not terms:
        return True
    have = set(seed_tokens(f"{title} {snippet}"))
    return sum(t in have for t in terms) / len(terms) >= 0.5


# --- the recording as candidates --------------------------------------------------------------------------


@dataclass
class Query:
    index: int
    text: str
    rows: list[dict]


@cache
def _load(path: Path) -> tuple[Query, ...]:
    data = json.loads(need(path).read_text(encoding="utf-8"))
    return tuple(Query(i, q["query"], q["results"]) for i, q in enumerate(data))


@pytest.fixture(scope="module")
def crw56(data_dir: Path) -> tuple[Query, ...]:
    return _load(data_dir / "crw56" / "searxng_raw.json")


@pytest.fixture(scope="module")
def qrels(data_dir: Path) -> dict[tuple[int, str], int]:
    lines = need(data_dir / "crw56" / "qrels-dev.jsonl").read_text(encoding="utf-8").splitlines()
    return {(j["qid"], j["url"]): j["rel"] for j in map(json.loads, lines)}


def sightings(row: dict) -> list[tuple[str, int]]:
    """Pair `engines` with `positions` as a multiset (SOURCE.txt): `engines` is serialised from a set, so
    index-by-index pairing is meaningless; when the lengths differ, sorted engines meet sorted positions."""
    engines, positions = row["engines"], row["positions"]
    if len(engines) == len(positions) == 1:
        return [(engines[0], positions[0])]
    return list(zip(sorted(engines), sorted(positions), strict=False))


def candidates_of(query: Query) -> list[Candidate]:
    """One candidate per distinct URL, in recorded order, with one observation per sighting."""
    out: dict[str, Candidate] = {}
    for row in query.rows:
        if row["url"] in out:
            continue
        obs = [
            Observation(engine=e, rank=p, url=row["url"], title=row["title"], snippet=row["content"])
            for e, p in sightings(row)
        ]
        ranks: dict[str, int] = {}
        for o in obs:
            ranks[o.engine] = min(o.rank, ranks.get(o.engine, o.rank))
        out[row["url"]] = Candidate(
            key=row["url"],
            url=row["url"],
            title=row["title"],
            snippet=row["content"],
            domain=registrable_domain(row["url"]),
            host=host_of(row["url"]),
            observations=obs,
            engine_ranks=ranks,
        )
    return list(out.values())


@dataclass
class Run:
    query: Query
    analysis: QueryAnalysis
    outcome: FilterOutcome
    top: list[Candidate]  # the lexical ranker's selection, best first


def run_lexical(query: Query, limit: int = 8) -> Run:
    """Filters then the lexical ranker, analysing the query after seed 001's cleaning."""
    # seed 001's own gates: its exact-token coverage rule, junk rules, geo guard, CJK gate and fallback (opt-in in
    # serpfuse now), not serpfuse's relevance guard
    seed = {
        "coverage_rule": "exact",
        "junk": True,
        "geo": True,
        "cjk_gate": True,
        "fallback_when_empty": True,
    }
    config = RankingConfig(
        strategy="lexical", lexical={"searxng_weights": CRW56_WEIGHTS}, filters=seed, experimental=True
    )
    request = SearchRequest(query=query.text, limit=limit)
    analysis = analyze_query(clean_query(query.text))
    outcome = apply_filters(candidates_of(query), FilterContext(request, analysis, config.filters, NOW))
    ctx = RankContext(request=request, query=analysis, config=config, now=NOW)
    selection = select(RANKER.rank(outcome.kept, ctx), RANKER, ctx)
    return Run(query, analysis, outcome, [s.candidate for s in selection.selected])


def baseline_top(query: Query, k: int = 5) -> list[dict]:
    seen, out = set(), []
    for row in sorted(query.rows, key=lambda r: -r["score"]):  # stable: ties keep the recorded order
        if row["url"] not in seen:
            seen.add(row["url"])
            out.append(row)
    return out[:k]


@pytest.fixture(scope="module")
def runs(crw56: tuple[Query, ...]) -> list[Run]:
    return [run_lexical(q) for q in crw56]


# --- tests ------------------------------------------------------------------------------------------------


def test_recording_shape(crw56: tuple[Query, ...]) -> None:
    assert len(crw56) == 56
    assert sum(len(q.rows) for q in crw56) == 827


def test_lexical_score_is_searxng_score(crw56: tuple[Query, ...]) -> None:
    # The ranker's order is only "upstream order" if its score is SearXNG's: recompute all 827 rows.
    for query in crw56:
        by_url = {c.url: c for c in candidates_of(query)}
        for row in query.rows:
            score, _ = sighting_score(by_url[row["url"]], CRW56_WEIGHTS)
            assert score == pytest.approx(row["score"], rel=1e-9), (query.text, row["url"])


def test_junk_at_5_is_zero(runs: list[Run]) -> None:
    # Seed 001's gate, junk meaning "fails the junk filter" (the shipped one). It holds through the fallback.
    offenders = [
        (run.query.text, c.url)
        for run in runs
        for c in run.top[:5]
        if junk_verdict(c.title, c.url, c.host, run.analysis)
    ]
    assert offenders == []


def test_seed_junk_list_only_reaches_top5_through_the_fallback(runs: list[Run]) -> None:
    # Against seed 001's own (corpus-tuned) host list: where the filters did select, none of its junk made
    # the top 5 although serpfuse ships no corpus-specific host. Rows the fallback shows are counted apart.
    leaked = [
        (r.query.text, c.url)
        for r in runs
        if not r.outcome.fallback_used
        for c in r.top[:5]
        if seed_is_junk(c.title, c.url)
    ]
    via_fallback = sum(
        seed_is_junk(c.title, c.url) for r in runs if r.outcome.fallback_used for c in r.top[:5]
    )
    print(
        f"\nseed-001-list Junk@5: {len(leaked)} where the filters selected, {via_fallback} via the fallback"
    )
    assert leaked == []


def test_belgrad_top5_is_belgrade_serbia(runs: list[Run]) -> None:
    run = next(r for r in runs if r.query.text == "top restaurants in belgrad")
    top5 = run.top[:5]
    for cand in top5:
        text = " ".join(seed_tokens(f"{cand.title} {cand.snippet} {cand.url}"))
        assert not [w for w in SEED_BELGRAD_COMPETITORS if w in text], cand.url
    domains = {c.domain for c in top5}
    assert {"tripadvisor.com", "michelin.com", "lepetitchef.com", "travelinsighter.com"} <= domains


# The committed recording holds no Istanbul or Maine row any more (seed 001 saw them live), so the two
# homonym rows it describes are added back, ranked first by every engine, and must still stay out.
BELGRAD_HOMONYMS = [
    {
        "url": "https://www.istanbul.example/belgrad-forest-restaurants",
        "title": "Restaurants near Belgrad Forest, Istanbul",
        "content": "Where to eat by the Belgrad Forest in Sariyer, Istanbul, Turkey.",
        "score": 99.0,
        "engines": ["google", "duckduckgo"],
        "positions": [1, 1],
    },
    {
        "url": "https://www.mainelakes.example/dining",
        "title": "Restaurants in Belgrade Lakes, Maine",
        "content": "Lakeside restaurants of Belgrade Lakes, Maine: lobster, diners and more.",
        "score": 98.0,
        "engines": ["google"],
        "positions": [1],
    },
]


def test_belgrad_competing_regions_are_cut(crw56: tuple[Query, ...]) -> None:
    original = next(q for q in crw56 if q.text == "top restaurants in belgrad")
    run = run_lexical(Query(original.index, original.text, BELGRAD_HOMONYMS + original.rows))
    for row in BELGRAD_HOMONYMS:
        assert run.outcome.cut[row["url"]].step == "geo"
    assert {c.url for c in run.top}.isdisjoint(r["url"] for r in BELGRAD_HOMONYMS)
    assert run.top[0].domain == "tripadvisor.com"


def test_python_snake_habitat_is_about_the_snake(runs: list[Run]) -> None:
    run = next(r for r in runs if r.query.text == "python snake habitat")
    domains = {c.domain for c in run.top}
    assert run.top
    assert not domains & {"python.org", "codecademy.com"}


def test_one_row_per_registrable_domain(runs: list[Run]) -> None:
    for run in runs:
        domains = [c.domain for c in run.top]
        assert len(domains) == len(set(domains)), run.query.text
        assert len(run.top) <= 8


def clean_rel_at_5(rows: list[tuple[str, str, str]], query: str) -> float:
    clean = sum(not seed_is_junk(t, u) and seed_covers(query, t, s) for t, u, s in rows[:5])
    return clean / 5


def test_clean_rel_beats_baseline(crw56: tuple[Query, ...], runs: list[Run], qrels: dict) -> None:
    base = [
        clean_rel_at_5([(r["title"], r["url"], r["content"]) for r in baseline_top(q)], q.text) for q in crw56
    ]
    lex = [clean_rel_at_5([(c.title, c.url, c.snippet) for c in r.top], r.query.text) for r in runs]
    base_mean, lex_mean = sum(base) / len(base), sum(lex) / len(lex)
    base_junk = sum(seed_is_junk(r["title"], r["url"]) for q in crw56 for r in baseline_top(q))
    judged_zero = Counter()
    for q, r in zip(crw56, runs, strict=True):
        judged_zero["baseline"] += sum(qrels.get((q.index, row["url"])) == 0 for row in baseline_top(q))
        judged_zero["lexical"] += sum(qrels.get((q.index, c.url)) == 0 for c in r.top[:5])
    fallbacks = sum(r.outcome.fallback_used for r in runs)
    empty = sum(not r.top for r in runs)
    print(
        f"\nCleanRel@5 baseline {base_mean:.3f} -> lexical {lex_mean:.3f}; seed-list Junk@5 baseline {base_junk};"
        f" rows judged 0 in top 5 (even queries) {judged_zero['baseline']} -> {judged_zero['lexical']};"
        f" fallback on {fallbacks} queries, empty answer on {empty}"
    )
    assert lex_mean >= base_mean + 0.03
    assert lex_mean >= 0.50


def test_which_rule_drops_what(crw56: tuple[Query, ...], runs: list[Run]) -> None:
    # The host list must not be what cleans this corpus: every row only a host entry catches would also
    # fail the coverage guard, so the structural rules and coverage do the work here.
    rules: Counter[str] = Counter()
    host_only_but_relevant = []
    for query in crw56:
        analysis = analyze_query(clean_query(query.text))
        for cand in candidates_of(query):
            verdict = junk_verdict(cand.title, cand.url, cand.host, analysis)
            if verdict is None:
                continue
            rules[verdict.rule] += 1
            if verdict.rule.startswith("host:") and seed_covers(query.text, cand.title, cand.snippet):
                host_only_but_relevant.append(cand.url)
    steps = Counter(cut.step for run in runs for cut in run.outcome.cut.values())
    print(f"\njunk rules (first match per row): {dict(rules)}; filter steps: {dict(steps)}")
    assert host_only_but_relevant == []
    assert rules["dictionary-title"] > rules.total() // 2  # the structural rule carries the load


# --- the ranker's mechanics on made-up candidates (no recording needed) -------------------------------------


def _cand(url: str, *sightings: tuple[str, int]) -> Candidate:
    obs = [Observation(engine=e, rank=r, url=url) for e, r in sightings]
    ranks: dict[str, int] = {}
    for e, r in sightings:
        ranks[e] = min(r, ranks.get(e, r))
    return Candidate(
        key=url,
        url=url,
        title="",
        snippet="",
        domain=registrable_domain(url),
        host=host_of(url),
        observations=obs,
        engine_ranks=ranks,
    )


def _ctx(limit: int = 8, min_score: float = 0.0, per_domain: int | None = None, **lexical) -> RankContext:
    config = RankingConfig(strategy="lexical", lexical=lexical, selection={"per_domain": per_domain})
    request = SearchRequest(query="q", limit=limit, min_score=min_score)
    return RankContext(request=request, query=analyze_query("q"), config=config, now=NOW)


def test_score_formula_and_default_weights() -> None:
    both = _cand("https://a.example/1", ("google", 1), ("duckduckgo", 3))
    # SearXNG: (3.0 x 1.0) x 2 sightings x (1/1 + 1/3) = 8.0, as the field notes' worked example
    assert sighting_score(both, CRW56_WEIGHTS)[0] == pytest.approx(8.0)
    # unknown engines weigh 1.0: 1 x 2 x (1 + 1/3)
    assert sighting_score(both, {})[0] == pytest.approx(2 + 2 / 3)
    scored = RANKER.rank([both], _ctx())
    assert scored[0].parts["sightings"] == 2 and scored[0].contributions == pytest.approx(
        {"google": 2.0, "duckduckgo": 2 / 3}
    )


def test_ties_keep_upstream_order() -> None:
    # equal scores: the better provider rank first, then the key
    first = _cand("https://z.example/", ("google", 1))  # 1.0 x 1 x 1/1 = 1.0, best rank 1
    second = _cand("https://a.example/", ("heavy", 2))  # 2.0 x 1 x 1/2 = 1.0, best rank 2
    third = _cand("https://b.example/", ("bing", 2))  # 0.5, best rank 2
    fourth = _cand("https://c.example/", ("yahoo", 2))  # 0.5, best rank 2, later key
    ranked = RANKER.rank([fourth, third, second, first], _ctx(searxng_weights={"heavy": 2.0}))
    assert [s.score for s in ranked] == [1.0, 1.0, 0.5, 0.5]
    assert [s.candidate for s in ranked] == [first, second, third, fourth]


def test_select_one_row_per_domain_up_to_limit() -> None:
    rows = [
        _cand("https://www.one.example/a", ("google", 1)),
        _cand("https://blog.one.example/b", ("google", 2)),  # same registrable domain
        _cand("https://two.example/", ("google", 3)),
        _cand("https://three.example/", ("google", 4)),
    ]
    ctx = _ctx(limit=2)
    selection = select(RANKER.rank(rows, ctx), RANKER, ctx)
    assert [s.candidate.url for s in selection.selected] == [rows[0].url, rows[2].url]
    assert selection.cut[rows[1].key].step == "per_domain"
    assert selection.cut[rows[1].key].reason == "already a row from one.example"
    assert selection.cut[rows[3].key].step == "limit" and selection.truncated
    assert all(s.selection_score == s.score for s in selection.selected)

    wide = _ctx(limit=8, per_domain=2)
    assert len(select(RANKER.rank(rows, wide), RANKER, wide).selected) == 4

    strict = _ctx(min_score=0.4)  # 1/3 and 1/4 are below
    kept = select(RANKER.rank(rows, strict), RANKER, strict)
    assert [s.candidate.url for s in kept.selected] == [rows[0].url]
    # the second one.example row passes the floor and is left out by the domain cap: truncated, as a diversity cut
    assert kept.cut[rows[2].key].step == "min_score" and kept.truncated
