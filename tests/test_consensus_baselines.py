"""consensus-v2.1's frozen fused baselines, replayed through serpfuse's consensus ranker.

The fake engines' inputs are rebuilt by ``benchmarks.consensus_frozen`` (its docstring says how, from the
fixture's SOURCE.txt); here every reproducible case must come out exactly: same urls in the same order, score and
selectionScore to 1e-9. The cases whose lists mix in X posts are skipped with the module's reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import consensus_frozen as frozen
from conftest import data_root, need
from serpfuse.ranking.candidates import build_candidates
from serpfuse.ranking.rankers.consensus import RANKER

DIR = "consensus-v2.1"


def _cases() -> list[frozen.FrozenCase]:
    folder = data_root() / DIR
    try:
        return frozen.load_cases(folder)
    except ValueError:
        return []  # no data: the parametrized tests are skipped (empty parameter set)


CASES = _cases()


@pytest.fixture(scope="module")
def folder(data_dir: Path) -> Path:
    return need(data_dir / DIR)


def _reproducible(case: frozen.FrozenCase) -> frozen.FrozenCase:
    if case.skip_reason:
        pytest.skip(case.skip_reason)
    return case


@pytest.mark.parametrize("case", CASES, ids=[c.qid for c in CASES])
def test_frozen_baseline(folder: Path, case: frozen.FrozenCase) -> None:
    case = _reproducible(case)
    got = frozen.replay(case)
    assert [r.url for r in got] == [r.url for r in case.expected]
    for row, want in zip(got, case.expected, strict=True):
        assert row.score == pytest.approx(want.score, abs=frozen.TOLERANCE, rel=0), row.url
        assert row.selection_score == pytest.approx(want.selection_score, abs=frozen.TOLERANCE, rel=0), (
            row.url
        )


@pytest.mark.parametrize("case", CASES, ids=[c.qid for c in CASES])
def test_frozen_baseline_scores_through_candidate_merge(folder: Path, case: frozen.FrozenCase) -> None:
    """The same inputs through serpfuse's own merge give the same quality scores.

    Only scores: the merge may display another sighting's snippet than the reference did, which moves
    selection scores but not evidence or lexical match.
    """
    case = _reproducible(case)
    ctx = frozen.case_context(case)
    candidates, invalid = build_candidates(frozen.engine_answers(case), ctx.query)
    assert invalid == 0
    scores = {s.candidate.url: s.score for s in RANKER.rank(candidates, ctx)}
    for want in case.expected:
        assert scores[want.url] == pytest.approx(want.score, abs=frozen.TOLERANCE, rel=0), want.url


def test_every_file_and_the_community_cases_are_loaded(folder: Path) -> None:
    """12 frozen lists; only the two whose reference used X posts are out of reach."""
    for name in frozen.BASELINE_FILES:
        need(folder / name)
    cases = frozen.load_cases(folder)
    assert [c.qid for c in cases if c.skip_reason] == ["community-v1#1", "community-v1#3"]
    assert len(cases) == 12
    assert {c.baseline for c in cases} == {"v1", "community-v1"}
