"""Issue 12's fast paths give exactly what the plain paths they replace give, on every text of the crw56 recording:
the one-regex CJK scan, the remembered fold and words, the bigram-free match share of a query without CJK, the
single fold of consensus' lexical match, and ranking in a worker thread."""

from __future__ import annotations

import datetime as dt
import json
import unicodedata

import pytest

from serpfuse import text
from serpfuse.candidates import _match_share
from serpfuse.config import RankingConfig
from serpfuse.fanout import fan_out
from serpfuse.models import SearchRequest
from serpfuse.pipeline import rank_answers, search
from serpfuse.query import analyze_query
from serpfuse.rankers.consensus import lexical_match, query_terms
from serpfuse.sources.replay import ReplaySource

NOW = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


# --- the plain paths, as they were written before (the reference) -----------------------------------------------


def plain_is_cjk(ch: str) -> bool:
    return any(lo <= ord(ch) <= hi for lo, hi in text._CJK_RANGES)


def plain_cjk_runs(value: str) -> list[str]:
    runs, cur = [], []
    for c in value:
        if plain_is_cjk(c):
            cur.append(c)
        elif cur:
            runs.append("".join(cur))
            cur = []
    if cur:
        runs.append("".join(cur))
    return runs


def plain_fold(value: str) -> str:
    decomposed = unicodedata.normalize("NFKD", value)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def plain_words(value: str) -> list[str]:
    return text._WORD.findall(plain_fold(value))


def plain_bigrams(value: str) -> list[str]:
    out: list[str] = []
    for run in plain_cjk_runs(value):
        out.extend([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
    return out


def plain_match_share(value: str, query) -> float:
    terms = set(query.terms) | set(query.cjk_tokens)
    if not terms:
        return 0.0
    return len(terms & (set(plain_words(value)) | set(plain_bigrams(value)))) / len(terms)


def plain_lexical_match(terms: list[str], title: str, snippet: str) -> float:
    if not terms:
        return 0.0
    joined = f"{title} {snippet}"
    folded, tokens = plain_fold(joined), set(plain_words(joined))
    hits = sum(
        (t in folded)
        if any(map(plain_is_cjk, t))
        else bool(plain_words(t)) and all(p in tokens for p in plain_words(t))
        for t in terms
    )
    return hits / len(terms)


# --- the recording -------------------------------------------------------------------------------------------------

CJK_QUERIES = ["北京 烤鸭 推荐", "東京 ラーメン", "서울 맛집", "rust 异步 运行时"]


@pytest.fixture(scope="module")
def texts(recording) -> list[str]:
    entries = json.loads(recording.read_text(encoding="utf-8"))
    out = [e["query"] for e in entries] + CJK_QUERIES
    for e in entries:
        for r in e["results"]:
            out += [r.get("title") or "", r.get("content") or "", r.get("url") or ""]
    out += ["混合 text 中文", "ｆｕｌｌｗｉｄｔｈ", "café déjà vu", "𠀀𠀁 rare ideographs", "ㄱ", "한"]
    return out


def test_the_cjk_scan_and_the_remembered_fold_and_words_match_the_plain_ones(texts):
    assert any(plain_cjk_runs(t) for t in texts)  # the recording has CJK rows: the comparison has teeth
    for t in texts:
        assert text.cjk_runs(t) == plain_cjk_runs(t), t
        assert text.has_cjk(t) == any(map(plain_is_cjk, t)), t
        assert text.cjk_bigrams(t) == plain_bigrams(t), t
        assert [text.is_cjk(c) for c in t] == [plain_is_cjk(c) for c in t], t
        assert text.fold(t) == plain_fold(t), t
        assert text.words(t) == plain_words(t), t
        assert text.folded_words(text.fold(t)) == plain_words(t), t


def test_match_share_without_bigrams_for_ascii_queries_matches_the_plain_one(recording, texts):
    pairs = [
        (analyze_query(e["query"]), r.get(field) or "")
        for e in json.loads(recording.read_text(encoding="utf-8"))
        for r in e["results"]
        for field in ("title", "content")
    ]  # every query against its own rows, as candidates are built
    cjk_rows = [t for t in texts if text.has_cjk(t)]
    pairs += [(analyze_query(q), row) for q in CJK_QUERIES for row in cjk_rows]
    for query, row in pairs:
        assert _match_share(row, query) == plain_match_share(row, query), (query.raw, row)


def test_consensus_lexical_match_folding_once_matches_the_plain_one(recording):
    for entry in json.loads(recording.read_text(encoding="utf-8")):
        terms = query_terms(analyze_query(entry["query"]))
        for r in entry["results"]:
            title, snippet = r.get("title") or "", r.get("content") or ""
            assert lexical_match(terms, title, snippet) == plain_lexical_match(terms, title, snippet)


async def test_ranking_in_a_worker_thread_answers_as_inline_ranking_does(recording):
    source = ReplaySource(recording)
    config = RankingConfig()
    for entry in json.loads(recording.read_text(encoding="utf-8")):
        request = SearchRequest(query=entry["query"])
        threaded = await search(request, source=source, config=config, now=NOW, explain=True)
        query = analyze_query(request.query)
        answers = (await fan_out(source, request, query)).answers
        inline = rank_answers(answers, request, config=config, query=query, now=NOW, explain=True)
        got, want = threaded.to_json_dict(), inline.to_json_dict()
        got.pop("tookMs"), want.pop("tookMs")
        assert got == want, entry["query"]
