"""Properties of everything after the fan-out, over generated engine answers (hypothesis)."""

from __future__ import annotations

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from serpfuse.config import RankingConfig
from serpfuse.models import EngineAnswer, EngineRow, SearchRequest
from serpfuse.pipeline import rank_answers
from serpfuse.ranking.rankers import available
from serpfuse.urls import dedup_key, domain_matches

NOW = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)
HOSTS = [
    "docs.example.org",
    "www.example.org",
    "blog.example.com",
    "sub.example.com",
    "news.example.net",
    "a.io",
]
WORDS = ["rust", "async", "runtime", "tokio", "guide", "best", "the", "of", "executor", "future"]

row_st = st.builds(
    lambda host, path, title, snippet, utm: (
        f"https://{host}/{path}" + ("?utm_source=x" if utm else ""),
        " ".join(title),
        " ".join(snippet),
    ),
    st.sampled_from(HOSTS),
    st.sampled_from(["", "a", "b", "c/d", "e"]),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=6),
    st.lists(st.sampled_from(WORDS), min_size=0, max_size=12),
    st.booleans(),
)
answers_st = st.dictionaries(
    st.sampled_from(["ddg", "bing", "brave", "exa", "tavily"]),
    st.lists(row_st, max_size=8),
    min_size=1,
    max_size=5,
)


def to_answers(raw: dict) -> list[EngineAnswer]:
    out = []
    for engine, rows in raw.items():
        rows = [
            EngineRow(engine=engine, rank=i, url=u, title=t, snippet=s) for i, (u, t, s) in enumerate(rows, 1)
        ]
        out.append(EngineAnswer(engine=engine, status="ok" if rows else "empty", rows=rows))
    return out


def run(answers, strategy: str, **request):
    req = SearchRequest(query="rust async runtime", strategy=strategy, **request)
    return rank_answers(answers, req, config=RankingConfig(), now=NOW, explain=True)


@settings(max_examples=60, deadline=None)
@given(raw=answers_st, strategy=st.sampled_from(available()), limit=st.integers(1, 20))
def test_limit_unique_pages_and_provenance(raw, strategy, limit):
    resp = run(to_answers(raw), strategy, limit=limit)
    assert len(resp.results) <= limit
    keys = [dedup_key(r.url) for r in resp.results]
    assert len(keys) == len(set(keys)), "the same page twice"
    for r in resp.results:
        assert r.provenance and all(dedup_key(o.url) == dedup_key(r.url) for o in r.provenance)
        assert r.engine_ranks == {e: min(o.rank for o in r.provenance if o.engine == e) for e in r.engines}
    shown = [c for c in resp.candidates if c.selected]
    assert [c.url for c in shown] == [r.url for r in resp.results]
    assert all(c.cut_by and c.cut_reason for c in resp.candidates if not c.selected)


@settings(max_examples=60, deadline=None)
@given(raw=answers_st, strategy=st.sampled_from(available()))
def test_the_order_engines_answered_in_does_not_matter(raw, strategy):
    answers = to_answers(raw)
    a = run(answers, strategy).to_json_dict()
    b = run(list(reversed(answers)), strategy).to_json_dict()
    for resp in (a, b):
        resp.pop("tookMs")
        resp["engines"].sort(key=lambda e: e["engine"])
    assert a == b


@settings(max_examples=40, deadline=None)
@given(raw=answers_st, strategy=st.sampled_from(available()))
def test_an_excluded_domain_never_appears(raw, strategy):
    resp = run(to_answers(raw), strategy, exclude_domains=["example.com"])
    assert not any(domain_matches(r.url.split("/")[2], "example.com") for r in resp.results)
