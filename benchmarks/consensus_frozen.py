"""consensus-v2.1's frozen fused baselines as a corpus: how closely a ranker reproduces the reference lists.

``<data>/consensus-v2.1/fused-baseline-v1.json`` and ``fused-baseline-community-v1.json`` freeze the final lists
(url, score, selectionScore) that the reference implementation produced from deterministic fake engines. The
inputs are rebuilt from the fixture's description (SOURCE.txt there):

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

Each case then goes through the configured ranker's ``rank`` and ``select`` (for ``consensus``, serpfuse's
consensus-v2.1 ranker), with the case's own ranking preset and engine weights, and is scored against the frozen
list. Cases whose list mixes in X posts (``communityUsed``) cannot be rebuilt and are left out, with the reason.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from serpfuse.bench.report import BenchReport, MetricSpec, QueryScore, ShownRow, aggregate, by_group
from serpfuse.config import RankingConfig, engine_table
from serpfuse.models import EngineAnswer, EngineRow, SearchRequest
from serpfuse.ranking.context import RankContext
from serpfuse.ranking.query import analyze_query
from serpfuse.ranking.rankers import get_ranker
from serpfuse.ranking.selection import select
from serpfuse.ranking.types import Candidate
from serpfuse.text import cjk_bigrams
from serpfuse.urls import dedup_key, host_of, registrable_domain

BASELINE_FILES = ("fused-baseline-v1.json", "fused-baseline-community-v1.json")
SCORE_CONFIG_FILE = "score-config-consensus-v2.1.json"
POOLS_FILE = "shared-ranking-weights.json"
FAKE_ENGINES = ("bing", "ddg", "exa")  # position = the evidence index e in the snippet
FAKE_ROWS_MAX = 10  # the fixture answers at most 10 rows whatever count it is asked for
NOW = dt.datetime(2026, 9, 22, tzinfo=dt.UTC)  # the fixture's rows carry no dates; any fixed clock will do
TOLERANCE = 1e-9  # room for summation-order rounding (today the match is bit for bit)
COMMUNITY_REASON = (
    "community=true case: its list mixes in X posts scored by the reference's X pipeline "
    "(x-official/x-fallback votes, Snowflake dates, author caps), which serpfuse does not have"
)

PRIMARY = "exact"
# Named for --metric; the two differences are summed up as the largest over the cases, not a mean.
MAX_METRICS = ("maxScoreDiff", "maxSelDiff")
METRICS: list[MetricSpec] = [
    MetricSpec("exact", doc=f"share of cases: same urls in the same order, every score within {TOLERANCE:g}"),
    MetricSpec("positions", doc="share of positions holding the same url (over the longer list)"),
    MetricSpec("tau", doc="Kendall tau of the shared urls' order (cases sharing 2+ urls)"),
    MetricSpec("overlap", doc="shared urls / the longer list's length"),
    MetricSpec(
        "maxScoreDiff",
        higher_is_better=False,
        fmt=".1e",
        doc="max |score diff| over shared urls; overall: max",
    ),
    MetricSpec(
        "maxSelDiff",
        higher_is_better=False,
        fmt=".1e",
        doc="max |selectionScore diff| over shared urls; overall: max",
    ),
]


@dataclass(frozen=True)
class ListedRow:
    url: str
    score: float
    selection_score: float


@dataclass(frozen=True)
class FrozenCase:
    """One frozen list with the arguments that produced it, and the fake engines' setup resolved from tables."""

    qid: str  # "<baseline>#<index>", e.g. "v1#3"
    baseline: str  # "v1" or "community-v1"
    args: dict[str, Any]
    expected: tuple[ListedRow, ...]
    engines: tuple[str, ...]  # the fake engines the case's pool holds
    variant_count: int
    rows_per_engine: int
    skip_reason: str | None = None

    @property
    def label(self) -> str:
        a = self.args
        return f"{a['query']} ({a['complexity']}, {a['ranking']}, {a['enginePool']}, {a['maxResults']})"


# --- loading -------------------------------------------------------------------------------------------------


def _read(path: Path) -> Any:
    if not path.is_file():
        raise ValueError(f"consensus-v2.1 file not found: {path}")
    return json.loads(path.read_text(encoding="utf-8"))


def _frozen_case(raw: dict, qid: str, baseline: str, score_config: dict, pools: dict) -> FrozenCase:
    args = raw["args"]
    complexity = args["complexity"]
    floor = score_config["maxPerEngineByComplexity"][complexity]
    count = min(20, max(floor, math.ceil(args["maxResults"] * 0.75)))  # what the reference asked each engine
    pool = pools[args["enginePool"]]
    return FrozenCase(
        qid=qid,
        baseline=baseline,
        args=args,
        expected=tuple(ListedRow(r["url"], r["score"], r["selectionScore"]) for r in raw["selected"]),
        engines=tuple(e for e in FAKE_ENGINES if e in pool),
        variant_count=score_config["variantsByComplexity"][complexity],
        rows_per_engine=min(count, FAKE_ROWS_MAX),
        skip_reason=COMMUNITY_REASON if raw.get("communityUsed") else None,
    )


def load_cases(folder: Path) -> list[FrozenCase]:
    """Every case of the baseline files present in ``folder`` (``<data>/consensus-v2.1``), in file order."""
    score_config = _read(folder / SCORE_CONFIG_FILE)
    pools = _read(folder / POOLS_FILE)["pools"]
    cases: list[FrozenCase] = []
    present = [name for name in BASELINE_FILES if (folder / name).is_file()]
    if not present:
        raise ValueError(f"no frozen baseline ({', '.join(BASELINE_FILES)}) in {folder}")
    for name in present:
        baseline = name.removeprefix("fused-baseline-").removesuffix(".json")
        for index, raw in enumerate(_read(folder / name)["cases"]):
            cases.append(_frozen_case(raw, f"{baseline}#{index}", baseline, score_config, pools))
    return cases


# --- rebuilding the inputs -----------------------------------------------------------------------------------


def engine_answers(case: FrozenCase) -> list[EngineAnswer]:
    """The fake engines' answers for one case."""
    qa = analyze_query(case.args["query"])
    answers = []
    for engine in case.engines:
        e = FAKE_ENGINES.index(engine)
        for variant in qa.variants[: case.variant_count]:
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
                for i in range(case.rows_per_engine)
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


def case_context(case: FrozenCase, config: RankingConfig | None = None) -> RankContext:
    """The case's request and its ranking preset and engine weights over ``config``'s other knobs."""
    base = config or RankingConfig(strategy="consensus")
    ranking = case.args["ranking"]
    weights = {**engine_table()["presets"][ranking], **case.args.get("engineWeights", {})}
    consensus = base.consensus.model_copy(update={"ranking": ranking, "weights": weights})
    request = SearchRequest(
        query=case.args["query"],
        limit=case.args["maxResults"],
        exclude_domains=case.args.get("excludeDomains", []),
    )
    return RankContext(
        request=request,
        query=analyze_query(case.args["query"]),
        config=base.model_copy(update={"consensus": consensus}),
        now=NOW,
    )


def replay(case: FrozenCase, config: RankingConfig | None = None) -> list[ListedRow]:
    """The case's final list as ``config``'s ranker (default: consensus) ranks and selects it."""
    ctx = case_context(case, config)
    ranker = get_ranker(ctx.config.strategy)
    candidates = reference_candidates(case.args["query"], engine_answers(case))
    selection = select(ranker.rank(candidates, ctx), ranker, ctx)
    return [
        ListedRow(s.candidate.url, s.score, s.score if s.selection_score is None else s.selection_score)
        for s in selection.selected
    ]


# --- agreement -----------------------------------------------------------------------------------------------


def kendall_tau(first: Sequence[str], second: Sequence[str]) -> float | None:
    """Kendall tau of the items both orders hold (no ties in a list); None when fewer than two are shared."""
    position = {item: i for i, item in enumerate(second)}
    shared = [item for item in first if item in position]
    n = len(shared)
    if n < 2:
        return None
    concordant = sum(
        1 if position[shared[i]] < position[shared[j]] else -1 for i in range(n) for j in range(i + 1, n)
    )
    return concordant / (n * (n - 1) / 2)


def agreement(expected: Sequence[ListedRow], got: Sequence[ListedRow]) -> dict[str, float]:
    """The per-case metrics (see ``METRICS``); a metric without meaning for the pair is absent."""
    longest = max(len(expected), len(got))
    by_url = {r.url: r for r in got}
    shared = [(want, by_url[want.url]) for want in expected if want.url in by_url]
    same_position = sum(a.url == b.url for a, b in zip(expected, got, strict=False))
    values: dict[str, float] = {
        "positions": same_position / longest if longest else 1.0,
        "overlap": len(shared) / longest if longest else 1.0,
    }
    tau = kendall_tau([r.url for r in expected], [r.url for r in got])
    if tau is not None:
        values["tau"] = tau
    if shared:
        values["maxScoreDiff"] = max(abs(a.score - b.score) for a, b in shared)
        values["maxSelDiff"] = max(abs(a.selection_score - b.selection_score) for a, b in shared)
    same_urls = [r.url for r in expected] == [r.url for r in got]
    close = all(values.get(name, 0.0) <= TOLERANCE for name in MAX_METRICS)
    values["exact"] = 1.0 if same_urls and close else 0.0
    return values


# --- the corpus as a bench -----------------------------------------------------------------------------------


def summarise(scores: Sequence[QueryScore]) -> dict[str, float]:
    """``aggregate``, except that the largest differences are summed up as the largest over the cases."""
    out = aggregate(scores, METRICS)
    for name in MAX_METRICS:
        values = [q.values[name] for q in scores if name in q.values]
        if values:
            out[name] = max(values)
    return out


def _groups_summary(scores: Sequence[QueryScore]) -> dict[str, dict[str, dict[str, float]]]:
    groups = by_group(scores, METRICS)
    for kind, values in groups.items():
        for value in values:
            values[value] = summarise([q for q in scores if q.groups.get(kind) == value])
    return groups


def score_case(case: FrozenCase, config: RankingConfig) -> QueryScore:
    got = replay(case, config)
    frozen = {r.url for r in case.expected}
    return QueryScore(
        qid=case.qid,
        query=case.label,
        values=agreement(case.expected, got),
        groups={"case": case.qid, "baseline": case.baseline},
        # grade 1 = the frozen list holds the url too, so the worst-cases table shows what went astray
        shown=[ShownRow(docid=r.url, url=r.url, grade=int(r.url in frozen)) for r in got],
    )


def run(
    cases: Sequence[FrozenCase],
    config: RankingConfig,
    label: str | None = None,
    progress: Callable[[], None] | None = None,
) -> BenchReport:
    """Every reproducible case through ``config``'s ranker, scored against its frozen list."""
    scores: list[QueryScore] = []
    notes: list[str] = []
    for case in cases:
        if case.skip_reason is None:
            scores.append(score_case(case, config))
        else:
            notes.append(f"{case.qid} not scored: {case.skip_reason}")
        if progress is not None:
            progress()
    notes.append(f"scores and selectionScores count as equal within {TOLERANCE:g}")
    notes.append("a shown row's grade is 1 when the frozen list holds its url, else 0")
    return BenchReport(
        corpus="consensus-v2.1",
        split=f"frozen fused lists · {len(scores)} of {len(cases)} cases",
        label=label or config.strategy,
        fingerprint=config.fingerprint(),
        metrics=METRICS,
        per_query=scores,
        summary=summarise(scores),
        by_group=_groups_summary(scores),
        worst=[q for q in scores if q.values["exact"] < 1.0][:5],
        notes=notes,
        worst_columns=("exact", "positions", "maxScoreDiff"),
    )
