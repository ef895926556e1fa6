"""The shared selection pieces: shingles, Jaccard, greedy MMR with the sparse domain cap, min_score, top-k."""

from __future__ import annotations

import pytest

from serpfuse.ranking.selection import (
    jaccard,
    min_score_floor,
    mmr_select,
    row_shingles,
    select_top,
    shingles,
    single_site,
)
from serpfuse.ranking.types import Candidate, Scored


def row(key: str, score: float, text: str = "", domain: str | None = None) -> Scored:
    domain = domain or key.split("/")[0]
    cand = Candidate(key=key, url=f"https://{key}", title="", snippet=text, domain=domain, host=domain)
    return Scored(candidate=cand, score=score, evidence=score)


LONG_A = "the official update enables concurrent tasks with bounded memory usage"
LONG_C = "another documented aspect includes release dates migration rules and supported versions"


def mmr(rows: list[Scored], limit: int, cap: int | None = 2):
    return mmr_select(rows, limit=limit, penalty=0.15, shingles_of=row_shingles, sparse_domain_cap=cap)


def test_shingles_are_word_trigrams_and_none_below_min_tokens() -> None:
    assert shingles("One two three four five six seven eight") == frozenset(
        {
            "one two three",
            "two three four",
            "three four five",
            "four five six",
            "five six seven",
            "six seven eight",
        }
    )
    assert shingles("one two three four five six seven") is None  # 7 tokens < 8
    assert shingles("a b c d", n=2, min_tokens=4) == frozenset({"a b", "b c", "c d"})


def test_cjk_characters_are_single_tokens() -> None:
    got = shingles("中文语义检索很有用的方法")  # 12 CJK characters
    assert got is not None and "中 文 语" in got and len(got) == 10


def test_punctuation_is_not_a_token() -> None:
    assert shingles("Node, fetch: abort! (cancel) - a b c d") == shingles("node fetch abort cancel a b c d")


def test_jaccard() -> None:
    a, b = frozenset({"x", "y", "z"}), frozenset({"y", "z", "w"})
    assert jaccard(a, b) == pytest.approx(2 / 4)
    assert jaccard(a, a) == 1.0
    assert jaccard(a, None) == 0.0 and jaccard(None, None) == 0.0 and jaccard(frozenset(), a) == 0.0


def test_single_site() -> None:
    assert single_site(["example.org"]) and single_site(["Example.org", "example.org"])
    assert not single_site([]) and not single_site(["a.org", "b.org"])


def test_mmr_penalises_only_against_selected_rows() -> None:
    rows = [row("a.org/1", 1.0, LONG_A), row("b.org/1", 0.98, LONG_A), row("c.org/1", 0.95, LONG_C)]
    sel = mmr(rows, 2)
    assert [r.candidate.key for r in sel.selected] == ["a.org/1", "c.org/1"]
    assert [r.selection_score for r in sel.selected] == [1.0, 0.95]
    assert sel.truncated and sel.cut == {"b.org/1": sel.cut["b.org/1"]} and sel.cut["b.org/1"].step == "limit"
    # the input rows are not modified: selection scores live on copies
    assert all(r.selection_score is None for r in rows)


def test_mmr_partial_overlap_uses_the_exact_jaccard() -> None:
    a = row("a.org/1", 1.0, LONG_A)
    b = row("b.org/1", 0.9, LONG_A.replace("usage", "limits"))  # shares 7 of 8 trigrams
    sel = mmr([a, b], 2)
    assert sel.selected[1].selection_score == pytest.approx(0.9 - 0.15 * 7 / 9)


def test_mmr_ties_go_to_the_smaller_key_whatever_the_input_order() -> None:
    rows = [row(f"example.org/{i}", 1.0, "alpha") for i in range(5)]
    for ordering in (rows, rows[::-1], rows[2:] + rows[:2]):
        sel = mmr(ordering, 5, cap=None)
        assert [r.candidate.key for r in sel.selected] == [f"example.org/{i}" for i in range(5)]


def test_sparse_cap_counts_selected_rows_of_the_domain_and_cut_rows_take_no_quota() -> None:
    rows = [
        row("example.org/rich", 2.0, LONG_A),
        row("example.org/s1", 1.5, "short"),
        row("example.org/s2", 1.4, "short too"),
        row("other.org/s", 1.0, "short"),
    ]
    sel = mmr(rows, 4, cap=2)
    # the rich row counts towards example.org, so only one sparse row of it fits; the capped row does not
    # use a slot, and other.org still gets in
    assert [r.candidate.key for r in sel.selected] == ["example.org/rich", "example.org/s1", "other.org/s"]
    assert sel.cut["example.org/s2"].step == "diversity"
    assert sel.truncated
    assert len(mmr(rows, 4, cap=None).selected) == 4


def test_mmr_not_truncated_when_everything_fits() -> None:
    sel = mmr([row("a.org/1", 1.0, LONG_A), row("c.org/1", 0.9, LONG_C)], 5)
    assert len(sel.selected) == 2 and not sel.truncated and sel.cut == {}


def test_min_score_floor() -> None:
    rows = [row("a.org/1", 1.0), row("b.org/1", 0.5), row("c.org/1", 0.0), row("d.org/1", float("nan"))]
    kept, cut = min_score_floor(rows, 0.5)
    assert [r.candidate.key for r in kept] == ["a.org/1", "b.org/1"]
    assert set(cut) == {"c.org/1", "d.org/1"} and all(c.step == "min_score" for c in cut.values())
    kept, _ = min_score_floor(rows, 0)
    assert len(kept) == 2  # zero and non-finite scores never qualify


def test_select_top_keeps_order_and_caps_domains() -> None:
    rows = [
        row("a.org/1", 3.0),
        row("a.org/2", 2.5),
        row("a.org/3", 2.0),
        row("b.org/1", 1.0),
        row("c.org/1", 0.5),
    ]
    sel = select_top(rows, 3, per_domain=2)
    assert [r.candidate.key for r in sel.selected] == ["a.org/1", "a.org/2", "b.org/1"]
    assert [r.selection_score for r in sel.selected] == [3.0, 2.5, 1.0]
    assert sel.cut["a.org/3"].step == "per_domain" and sel.cut["c.org/1"].step == "limit"
    assert sel.truncated
    uncapped = select_top(rows, 10)
    assert len(uncapped.selected) == 5 and not uncapped.truncated
