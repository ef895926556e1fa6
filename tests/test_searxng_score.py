"""The `searxng` ranker recomputes SearXNG's own score on real recordings (the score oracle)."""

from __future__ import annotations

import json

import pytest

from conftest import need
from serpfuse.ranking.rankers.searxng import searxng_score
from serpfuse.sources.replay import load_recording

CRW56_WEIGHTS = {"google": 3.0, "duckduckgo": 1.0, "bing": 0.3}


def test_api_json_searxng_scores_with_default_weights(data_dir):
    data = json.loads(need(data_dir / "api-json" / "searxng.json").read_text())
    rows = data["results"]
    assert len(rows) == 30
    for row in rows:
        assert searxng_score(row["engines"], row["positions"], {}) == pytest.approx(row["score"], rel=1e-12)


def test_crw56_scores_with_the_instance_weights(data_dir):
    data = json.loads(need(data_dir / "crw56" / "searxng_raw.json").read_text())
    rows = [row for q in data for row in q["results"]]
    assert len(rows) == 827
    for row in rows:
        assert searxng_score(row["engines"], row["positions"], CRW56_WEIGHTS) == pytest.approx(
            row["score"], rel=1e-9
        )


def test_default_weights_do_not_fit_crw56(data_dir):
    """The oracle is sharp: with neutral weights the recorded scores are not reproduced."""
    data = json.loads(need(data_dir / "crw56" / "searxng_raw.json").read_text())
    rows = [row for q in data for row in q["results"]]
    misses = sum(searxng_score(r["engines"], r["positions"], {}) != pytest.approx(r["score"]) for r in rows)
    assert misses > 700


def test_searxng_ranker_reproduces_recorded_order_through_replay(data_dir):
    """Rebuilding per-engine lists from engines/positions and scoring them gives back the recorded scores."""
    path = need(data_dir / "crw56" / "searxng_raw.json")
    raw = json.loads(path.read_text())
    recording = load_recording(path)
    for entry in raw:
        rec = recording[" ".join(entry["query"].split()).casefold()]
        positions: dict[str, list[tuple[str, int]]] = {}
        for answer in rec.variants[""].values():
            for row in answer.rows:
                positions.setdefault(row.url, []).append((row.engine, row.rank))
        for row in entry["results"]:
            got = positions[row["url"]]
            assert sorted(e for e, _ in got) == sorted(row["engines"])
            assert sorted(p for _, p in got) == sorted(row["positions"])
            score = searxng_score([e for e, _ in got], [p for _, p in got], CRW56_WEIGHTS)
            assert score == pytest.approx(row["score"], rel=1e-9)
