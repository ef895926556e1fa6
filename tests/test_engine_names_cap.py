"""An answer cannot bring voters without bound: a broker's rows that name more engines than
``engine_names_per_answer`` keep the best-ranked names and fold the rest into one voter, so the ranking's cost
follows the rows, not the names (agreement weighs every voter against every other)."""

from __future__ import annotations

import time

import pytest

from serpfuse.config import RankingConfig
from serpfuse.models import EngineAnswer, EngineRow, SearchRequest
from serpfuse.pipeline import rank_answers
from serpfuse.ranking.candidates import fold_engine_names
from serpfuse.ranking.query import analyze_query

QUERY = "rust async runtime"


def broker_answer(results: int = 100, names: int = 32) -> list[EngineAnswer]:
    """A SearXNG-like answer: every result seen by ``names`` engines of its own."""
    rows = [
        EngineRow(
            engine=f"searxng:e{i}-{j}",
            rank=j + 1,
            url=f"https://site{i}.example/page",
            title=f"rust async runtime page {i}",
            snippet="tokio and async-std compared for the rust async runtime",
        )
        for i in range(results)
        for j in range(names)
    ]
    return [EngineAnswer(engine="searxng", status="ok", rows=rows)]


def test_names_past_the_cap_are_one_voter() -> None:
    (folded,) = fold_engine_names(broker_answer(), cap=16)
    names = {r.engine for r in folded.rows}
    assert len(names) == 17 and "searxng:other" in names
    other = [r for r in folded.rows if r.engine == "searxng:other"]
    assert len(other) == len({r.url for r in other}) == 100  # one sighting per page for the folded voter
    # its best rank for each page: 1, or 2 where the page's rank-1 engine kept its own name
    assert {r.rank for r in other} == {1, 2}


def test_an_answer_within_the_cap_is_untouched() -> None:
    answers = broker_answer(results=5, names=3)
    assert fold_engine_names(answers, cap=16) == answers


@pytest.mark.parametrize("strategy", ["adaptive", "agree"])
def test_ranking_cost_follows_rows_not_names(strategy: str) -> None:
    config, query = RankingConfig(), analyze_query(QUERY)
    request = SearchRequest(query=QUERY, strategy=strategy)
    rank_answers(broker_answer(names=1), request, config=config, query=query)  # tables loaded, memos warm

    def best_of_three(answers: list[EngineAnswer]) -> float:
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            rank_answers(answers, request, config=config, query=query)
            times.append(time.perf_counter() - t0)
        return min(times)

    one, many = best_of_three(broker_answer(names=1)), best_of_three(broker_answer(names=32))
    # 32 times the rows to read, but as many voters as a capped answer has: not 32 x 32 times the work
    assert many / one < 8, f"{many * 1000:.1f} ms against {one * 1000:.1f} ms"
