"""The whole pipeline on recorded data: fields, limits, explanations, determinism, errors."""

from __future__ import annotations

import json

import pytest

from conftest import need
from serpfuse.api import search
from serpfuse.config import RankingConfig
from serpfuse.models import SearchRequest
from serpfuse.ranking.rankers import UnknownStrategy, available
from serpfuse.sources.fanout import UnknownEngine
from serpfuse.sources.replay import ReplayError, ReplaySource

BELGRAD = "top restaurants in belgrad"


@pytest.fixture(scope="module")
def crw56(data_dir):
    return ReplaySource(need(data_dir / "crw56" / "searxng_raw.json"))


def test_every_field_of_the_response_is_there(crw56):
    resp = search(BELGRAD, source=crw56)
    data = resp.to_json_dict()
    assert 1 <= len(data["results"]) <= 8
    for key in ("results", "engines", "warnings", "truncated", "tookMs", "scoreVersion", "configFingerprint"):
        assert key in data
    for row in data["results"]:
        for key in (
            "url",
            "title",
            "snippet",
            "domain",
            "published",
            "dateStatus",
            "score",
            "evidenceScore",
            "selectionScore",
            "metadataDelta",
            "engineRanks",
            "contributions",
            "provenance",
            "reason",
            "engines",
        ):
            assert key in row, key
        assert row["provenance"], "every result keeps the observations it came from"
        assert all(r >= 1 for r in row["engineRanks"].values())
        assert row["dateStatus"] in ("known", "unknown", "conflicting")
    statuses = {e["engine"]: e["status"] for e in data["engines"]}
    assert statuses["brave"] == "rate-limited" and statuses["startpage"] == "challenge"
    assert statuses["google"] == "ok"
    assert data["configFingerprint"] == RankingConfig().fingerprint()


def test_scores_are_ordered_by_selection_and_results_are_unique(crw56):
    resp = search(BELGRAD, source=crw56)
    sel = [r.selection_score for r in resp.results]
    assert len({r.url for r in resp.results}) == len(resp.results)
    assert sel == sorted(sel, reverse=True)


@pytest.mark.parametrize("strategy", available())
def test_every_strategy_runs_and_respects_limit(crw56, strategy):
    resp = search(BELGRAD, source=crw56, strategy=strategy, limit=5)
    assert 0 < len(resp.results) <= 5
    assert resp.strategy == strategy
    assert resp.score_version.endswith(
        __import__("serpfuse.ranking.rankers", fromlist=["x"]).get_ranker(strategy).score_version
    )


def test_explain_lists_every_candidate_and_why_cut(crw56):
    resp = search(BELGRAD, source=crw56, explain=True)
    cands = resp.candidates
    assert cands is not None and len(cands) > len(resp.results)
    selected = [c for c in cands if c.selected]
    assert [c.url for c in selected] == [r.url for r in resp.results]
    cut = [c for c in cands if not c.selected]
    assert all(c.cut_by and c.cut_reason for c in cut)
    # the dictionary page for "top" is cut by the relevance guard (the junk rules are opt-in), with its reason
    mw = [c for c in cut if "merriam-webster" in c.url]
    assert mw and mw[0].cut_by == "relevance" and "belgrad" in mw[0].cut_reason


def test_deterministic(crw56):
    a = search(BELGRAD, source=crw56).to_json_dict()
    b = search(BELGRAD, source=crw56).to_json_dict()
    a.pop("tookMs"), b.pop("tookMs")
    assert a == b


def test_query_absent_from_recording_is_an_error(crw56):
    with pytest.raises(ReplayError, match="not in the recording"):
        search("a query nobody recorded", source=crw56)


def test_unknown_engine_and_strategy_are_errors_not_fallbacks(crw56):
    with pytest.raises(UnknownEngine, match="choose from"):
        search(BELGRAD, source=crw56, engines=["nosuchengine"])
    with pytest.raises(UnknownStrategy):
        search(BELGRAD, source=crw56, strategy="magic")


def test_engine_selection_restricts_the_voters(crw56):
    resp = search(BELGRAD, source=crw56, engines=["google"])
    assert {e.engine for e in resp.engines} == {"google"}
    assert all(r.engines == ["google"] for r in resp.results)


def test_exclude_domain_removes_subdomains_too(crw56):
    resp = search(BELGRAD, source=crw56, exclude_domains=["tripadvisor.com"])
    assert not any("tripadvisor.com" in r.url for r in resp.results)


def test_min_score_floor(crw56):
    full = search(BELGRAD, source=crw56)
    floor = full.results[2].score
    resp = search(BELGRAD, source=crw56, min_score=floor)
    assert resp.results and all(r.score >= floor for r in resp.results)
    assert len(resp.results) < len(full.results)


def test_serpfuse_recording_format_round_trip(tmp_path):
    rec = {
        "format": "serpfuse-replay/1",
        "queries": [
            {
                "query": "rust async runtime",
                "engines": {
                    "ddg": {
                        "status": "ok",
                        "rows": [
                            {
                                "engine": "ddg",
                                "rank": 1,
                                "url": "https://tokio.rs/?utm_source=x",
                                "title": "Tokio - async runtime for Rust",
                                "snippet": "An asynchronous runtime for the Rust programming language.",
                            },
                            {
                                "engine": "ddg",
                                "rank": 2,
                                "url": "https://docs.rs/async-std",
                                "title": "async-std",
                                "snippet": "Async version of the Rust standard library runtime.",
                            },
                        ],
                    },
                    "bing": {
                        "status": "ok",
                        "rows": [
                            {
                                "engine": "bing",
                                "rank": 1,
                                "url": "http://www.tokio.rs/",
                                "title": "Tokio",
                                "snippet": "Rust async runtime",
                            },
                        ],
                    },
                    "brave": {"status": "timeout", "reason": "no answer within 15 s"},
                },
            }
        ],
    }
    path = tmp_path / "rec.json"
    path.write_text(json.dumps(rec))
    resp = search(SearchRequest(query="rust async runtime"), source=ReplaySource(path))
    top = resp.results[0]
    assert top.url == "https://tokio.rs/" and top.engine_ranks == {"bing": 1, "ddg": 1}
    assert len(top.provenance) == 2
    assert {e.engine: e.status for e in resp.engines}["brave"] == "timeout"


def test_unreadable_recording(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ReplayError, match="cannot read replay file"):
        ReplaySource(bad)
    with pytest.raises(ReplayError, match="not found"):
        ReplaySource(tmp_path / "missing.json")


def test_an_entry_is_read_when_first_asked_for_and_a_broken_one_fails_alone(tmp_path):
    good = {"query": "rust async runtime", "results": [{"url": "https://tokio.rs/", "title": "Tokio",
            "content": "Rust async runtime", "engines": ["bing"], "positions": [1]}]}  # fmt: skip
    broken = {
        "query": "broken entry",
        "results": [{"title": "no url", "engines": ["bing"], "positions": [1]}],
    }
    path = tmp_path / "rec.json"
    path.write_text(json.dumps([good, broken]))
    source = ReplaySource(path)
    assert sorted(source.recording) == ["broken entry", "rust async runtime"]
    assert search("rust async runtime", source=source).results[0].url == "https://tokio.rs/"
    with pytest.raises(ReplayError, match=r"^cannot read replay file .*KeyError: 'url'$"):
        search("broken entry", source=source)
    with pytest.raises(ReplayError, match="not in the recording"):
        search("never recorded", source=source)
