"""consensus-v2.1's frozen fused baselines, replayed through serpfuse's consensus ranker.

../shared/data/consensus-v2.1/fused-baseline-v1.json and fused-baseline-community-v1.json freeze the final
lists (url, score, selectionScore) that the reference implementation produced from deterministic fake engines.
The inputs are rebuilt here from the fixture's description (SOURCE.txt):

- engines bing, ddg and exa (index e = 0, 1, 2), each called once per query variant, only when its engine pool
  (free or hybrid) holds it;
- each answers min(count, 10) rows, i = 0..: url reference.example/{common | <engine>}/i (common when i % 3 == 0),
  title "Node abort source i" for odd i and "Node fetch cancellation i" for even i, snippet
  "Node fetch abort implementation reference with evidence e-i: <query sent>", provider rank i + 1;
- count = min(20, max(4|8|10 by complexity, ceil(0.75 * maxResults))), variants 1|2|3 by complexity;
- the engines cannot filter domains, so a site: operator is sent back to them as "site:<domain> <variant>".

A page's displayed title/snippet is the sighting the reference picked: most query terms (its terms: every
2+-character word of the raw query, CJK bigrams; substring match), then best rank, then text order. That choice
decides the shingles, hence the selection scores, so it is reproduced here as input data.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from pathlib import Path

import pytest

from conftest import data_root, need
from serpfuse.candidates import build_candidates
from serpfuse.config import ConsensusConfig, RankingConfig, engine_table
from serpfuse.models import EngineAnswer, EngineRow, SearchRequest
from serpfuse.query import analyze_query
from serpfuse.rankers.base import Candidate, RankContext
from serpfuse.rankers.consensus import RANKER
from serpfuse.text import cjk_bigrams
from serpfuse.urls import dedup_key, host_of, registrable_domain

DIR = "consensus-v2.1"
FILES = ("fused-baseline-v1.json", "fused-baseline-community-v1.json")
FAKE_ENGINES = ("bing", "ddg", "exa")  # position = the evidence index e in the snippet
NOW = dt.datetime(2026, 9, 22, tzinfo=dt.UTC)


def _cases() -> list[tuple[str, int]]:
    out = []
    for name in FILES:
        path = data_root() / DIR / name
        if path.exists():
            out += [(name, i) for i in range(len(json.loads(path.read_text())["cases"]))]
    return out


@pytest.fixture(scope="module")
def tables(data_dir: Path) -> dict:
    def read(name: str) -> dict:
        return json.loads(need(data_dir / DIR / name).read_text())

    return {
        "score": read("score-config-consensus-v2.1.json"),
        "pools": read("shared-ranking-weights.json")["pools"],
        **{name: read(name) for name in FILES},
    }


def engine_answers(args: dict, tables: dict) -> list[EngineAnswer]:
    """The fake engines' answers for one baseline case."""
    qa = analyze_query(args["query"])
    complexity = args["complexity"]
    variants = qa.variants[: tables["score"]["variantsByComplexity"][complexity]]
    floor = tables["score"]["maxPerEngineByComplexity"][complexity]
    count = min(20, max(floor, math.ceil(args["maxResults"] * 0.75)))
    pool = tables["pools"][args["enginePool"]]
    answers = []
    for e, engine in enumerate(FAKE_ENGINES):
        if engine not in pool:
            continue
        for variant in variants:
            sent = f"site:{qa.include_domains[0]} {variant}" if qa.include_domains else variant
            rows = [
                EngineRow(
                    engine=engine,
                    rank=i + 1,
                    variant=variant,
                    url=f"https://reference.example/{'common' if i % 3 == 0 else engine}/{i}",
                    title=f"{'Node abort source' if i % 2 else 'Node fetch cancellation'} {i}",
                    snippet=f"Node fetch abort implementation reference with evidence {e}-{i}: {sent}",
                )
                for i in range(min(count, 10))
            ]
            answers.append(EngineAnswer(engine=engine, status="ok", rows=rows, variant=variant))
    return answers


def _reference_terms(query: str) -> list[str]:
    lower = query.lower()
    words = [w for w in re.findall(r"[a-z0-9][a-z0-9\-_.]+", lower) if not w.isdigit()]
    return list(dict.fromkeys([*words, *cjk_bigrams(lower)]))


def reference_candidates(query: str, answers: list[EngineAnswer]) -> list[Candidate]:
    """Pages with the title/snippet the reference displayed (see the module docstring)."""
    terms = _reference_terms(query)
    rows = [row for answer in answers for row in answer.rows]

    def preference(row: EngineRow) -> tuple:
        text = f"{row.title} {row.snippet}".lower()
        return (
            -sum(t in text for t in terms),
            row.rank,
            row.url.lower(),
            row.title.lower(),
            row.snippet.lower(),
        )

    pages: dict[str, Candidate] = {}
    for row in sorted(rows, key=preference):
        key = dedup_key(row.url)
        page = pages.get(key)
        if page is None:
            host = host_of(row.url)
            page = pages[key] = Candidate(
                key=key,
                url=row.url,
                title=row.title,
                snippet=row.snippet,
                domain=registrable_domain(host),
                host=host,
            )
        page.engine_ranks[row.engine] = min(row.rank, page.engine_ranks.get(row.engine, row.rank))
    return list(pages.values())


def context(args: dict) -> RankContext:
    weights = {**engine_table()["presets"][args["ranking"]], **args.get("engineWeights", {})}
    config = RankingConfig(consensus=ConsensusConfig(ranking=args["ranking"], weights=weights))
    request = SearchRequest(
        query=args["query"], limit=args["maxResults"], exclude_domains=args.get("excludeDomains", [])
    )
    return RankContext(request=request, query=analyze_query(args["query"]), config=config, now=NOW)


def _case(tables: dict, name: str, index: int) -> dict:
    case = tables[name]["cases"][index]
    if case.get("communityUsed"):
        pytest.skip(
            "community=true case: its list mixes in X posts scored by the reference's X pipeline "
            "(x-official/x-fallback votes, Snowflake dates, author caps), which serpfuse does not have"
        )
    return case


@pytest.mark.parametrize(("name", "index"), _cases())
def test_frozen_baseline(tables: dict, name: str, index: int) -> None:
    case = _case(tables, name, index)
    args = case["args"]
    ctx = context(args)
    candidates = reference_candidates(args["query"], engine_answers(args, tables))
    selection = RANKER.select(RANKER.rank(candidates, ctx), ctx)
    got = [(r.candidate.url, r.score, r.selection_score) for r in selection.selected]
    expected = [(r["url"], r["score"], r["selectionScore"]) for r in case["selected"]]
    assert [u for u, _, _ in got] == [u for u, _, _ in expected]
    for (url, score, sel), (_, want_score, want_sel) in zip(got, expected, strict=True):
        assert score == pytest.approx(want_score, abs=1e-9, rel=0), url
        assert sel == pytest.approx(want_sel, abs=1e-9, rel=0), url


@pytest.mark.parametrize(("name", "index"), _cases())
def test_frozen_baseline_scores_through_candidate_merge(tables: dict, name: str, index: int) -> None:
    """The same inputs through serpfuse's own merge give the same quality scores.

    Only scores: the merge may display another sighting's snippet than the reference did, which moves
    selection scores but not evidence or lexical match.
    """
    case = _case(tables, name, index)
    args = case["args"]
    ctx = context(args)
    candidates, invalid = build_candidates(engine_answers(args, tables), ctx.query)
    assert invalid == 0
    scores = {s.candidate.url: s.score for s in RANKER.rank(candidates, ctx)}
    for row in case["selected"]:
        assert scores[row["url"]] == pytest.approx(row["score"], abs=1e-9, rel=0), row["url"]
