"""Issue 12's fast paths give exactly what the plain paths they replace give, on every text of the crw56 recording:
the one-regex CJK scan, the remembered fold and words, the bigram-free match share of a query without CJK, the
single fold of consensus' lexical match, each row's text read once (text.RowForm) for every stage, ranking in a
worker thread. And the whole recording's responses, every strategy with its explanations, are the stored ones (tests/ranking_snapshot.py): a speed-up changes no ranking."""

from __future__ import annotations

import datetime as dt
import json
import re
import unicodedata
from urllib.parse import unquote

import pytest

from ranking_snapshot import digest, requests, responses, stored
from serpfuse import text
from serpfuse.config import RankingConfig
from serpfuse.models import SearchRequest
from serpfuse.pipeline import rank_answers, search
from serpfuse.ranking.candidates import _match_share
from serpfuse.ranking.query import analyze_query
from serpfuse.ranking.rankers.consensus import form_lexical_match, lexical_match, query_terms
from serpfuse.ranking.selection import row_shingles, shingles
from serpfuse.ranking.types import Candidate, Scored
from serpfuse.ranking.words import RowText, family_stem, light_stem, strip_date_stamp, word_stems
from serpfuse.sources.fanout import fan_out
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


def plain_shingle_tokens(value: str) -> list[str]:
    out: list[str] = []
    for tok in re.findall(r"[a-z0-9]+|[^\sa-z0-9]", value.lower()):
        if (tok[0].isascii() and tok[0].isalnum()) or (not tok[0].isascii() and plain_is_cjk(tok)):
            out.append(tok)
    return out


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


def test_each_rows_form_reads_as_the_plain_paths_do(recording, texts):
    rows = [
        (r.get("title") or "", r.get("content") or "", r.get("url") or "")
        for e in json.loads(recording.read_text(encoding="utf-8"))
        for r in e["results"]
    ]
    rows += [(t, t, "") for t in texts if text.has_cjk(t)]  # the recording's CJK texts, and the odd ones
    for title, snippet, url in rows:
        candidate = Candidate(key=url, url=url, title=title, snippet=snippet, domain="", host="")
        form = candidate.form
        assert form is candidate.form  # one form per candidate, read by every stage
        joined = f"{title} {snippet}"
        assert list(form.title_words) == plain_words(title)
        assert list(form.snippet_words) == plain_words(snippet)
        assert form.words == set(plain_words(joined))
        assert form.folded == plain_fold(joined)
        assert list(form.shingle_tokens) == plain_shingle_tokens(joined)
        assert text.shingle_tokens(joined) == plain_shingle_tokens(joined)
        assert text.word_set(title) == set(plain_words(title))
        assert text.clean_text(snippet) == re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", snippet)).strip()
        row = Scored(candidate, 1.0, 1.0)
        tokens = plain_shingle_tokens(joined)
        for n, min_tokens in ((3, 8), (2, 4)):
            want = None
            if len(tokens) >= min_tokens:
                want = frozenset(" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1))
            assert row_shingles(row, n, min_tokens) == shingles(joined, n, min_tokens) == want
    terms = ["python", "rust async", "北京", "node js"]
    for title, snippet, _ in rows:
        want = plain_lexical_match(terms, title, snippet)
        assert form_lexical_match(terms, text.RowForm(title, snippet, "")) == want


def test_a_rows_vocabulary_reads_as_the_plain_stems_do(recording, texts):
    """``RowText.of`` stems a word ending in none of -s, -g, -d, -e as itself and the others through their own
    memo: the same vocabulary as every word's ``word_stems`` and ``family_stem`` and every two adjacent words'
    ``light_stem``."""
    rows = [
        (r.get("title") or "", r.get("content") or "", r.get("url") or "")
        for e in json.loads(recording.read_text(encoding="utf-8"))
        for r in e["results"]
    ]
    rows += [(t, t, t) for t in texts] + [("gpus ss sses ies boxes is us", "run running ran used cake", "")]
    for title, snippet, url in rows:
        title_words, snippet_words = plain_words(title), plain_words(strip_date_stamp(snippet))
        want: set[str] = set()
        for w in (*title_words, *snippet_words, *plain_words(unquote(url))):
            want |= word_stems(w)
            if family := family_stem(w):
                want.add(family)
        for tokens in (title_words, snippet_words):
            want.update(light_stem(a + b) for a, b in zip(tokens, tokens[1:], strict=False))
        assert RowText.of(title, snippet, url).vocabulary == want, (title, snippet, url)


def test_every_crw56_response_is_the_stored_one(recording):
    """Every strategy (and the default one under a date window, a language, a longer list, one site), with
    explanations, on all 56 queries: equal to the digests the code before the speed-ups wrote."""
    queries = [e["query"] for e in json.loads(recording.read_text(encoding="utf-8"))]
    want = stored()
    assert set(want) == set(requests())
    changed = [
        f"{label}: {queries[i]!r}"
        for label, got in responses(recording).items()
        for i, response in enumerate(got)
        if digest(response) != want[label][i]
    ]
    assert not changed, (
        f"{len(changed)} responses differ from tests/fixtures/ranking/crw56_responses.json, e.g. {changed[:5]}. "
        "A speed-up must not change them; a change meant to change the ranking rewrites the digests with "
        "`SERPFUSE_DATA=../shared/data .venv/bin/python tests/ranking_snapshot.py` and says so in its commit."
    )


async def test_a_repeated_cache_hit_answers_as_decoding_the_stored_bytes_does(recording, tmp_path):
    """A cache hit is the stored row decoded afresh: a caller's change to its copy is not the next caller's,
    and a row rewritten behind the service's back (another worker) is what the next hit answers."""
    from serpfuse.service import SearchService
    from serpfuse.settings import Settings
    from serpfuse.state.cache import decode

    service = SearchService.from_settings(Settings(replay=recording, cache_dir=tmp_path))
    store = service.cache
    hot = 0
    try:
        for entry in json.loads(recording.read_text(encoding="utf-8")):
            request = service.make_request(query=entry["query"])
            first = await service.search(request)
            if not first.results:
                continue  # nothing stored
            key = service._cache_slot(request, explain=False, use_cache=True)[1]
            plain = decode(await store.get_body(key))
            for _ in range(2):
                hit = await service.search(request)
                assert hit.cached and hit.model_dump() == plain.model_dump(), entry["query"]
            hot += 1
            hit.took_ms = -1.0  # a caller's change to its copy is not the next caller's answer
            assert (await service.search(request)).took_ms == plain.took_ms
        assert hot > 10
        rewritten = plain.model_copy(update={"warnings": ["written by another worker"]})
        await store.set(key, rewritten, 60)
        assert (await service.search(request)).warnings == ["written by another worker"]
    finally:
        await service.aclose()
