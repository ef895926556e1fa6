"""Issue 43: the relevance guard reads meaning, not spelling. Word families (Snowball stems), the guard following
the engines' agreement, the explanation naming the form that matched, and the trec-dl-passages corpus."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import cand, filter_ctx
from serpfuse.config import FilterConfig, RankingConfig
from serpfuse.ranking.filters import apply_filters
from serpfuse.ranking.query import analyze_query
from serpfuse.ranking.words import RowText, family_stem, found_terms, query_terms

DATA = Path(os.environ.get("SERPFUSE_DATA", "../shared/data"))


def found(query: str, title: str, snippet: str = "") -> list[str]:
    return [t.text for t in found_terms(query_terms(analyze_query(query)), RowText.of(title, snippet))]


# --- word families ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("anthropological", "anthropology", True),
        ("environmental", "environment", True),  # the stem taken again: environment -> environ
        ("economic", "economics", True),
        ("definition", "define", False),  # Porter2 keeps these apart
        ("police", "policy", False),
        ("university", "universe", False),
    ],
)
def test_family_stem(a: str, b: str, same: bool) -> None:
    assert (family_stem(a) == family_stem(b)) is same


@pytest.mark.parametrize("word", ["us", "ww1", "new", "zürich", "4k"])
def test_short_or_not_plain_words_have_no_family(word: str) -> None:
    assert family_stem(word) is None


def test_a_row_covers_a_word_by_its_family() -> None:
    query = "anthropological definition of environment"
    row = "Environmental anthropology studies the relationships between humans and their environment"
    assert found(query, "", row) == ["anthropological", "environment"]


def test_the_families_switch_off() -> None:
    rows = [
        cand("https://a.example/", "", "Environmental anthropology: humans and their environment"),
        cand("https://b.example/", "", "Anthropological definition of environment, explained"),
    ]
    query = "anthropological definition of environment"
    on = apply_filters(rows, filter_ctx(query, FilterConfig(word_families=True)))
    off = apply_filters(rows, filter_ctx(query))  # opt-in: earned nowhere once agreement is on
    assert [c.key for c in on.kept] == [rows[0].key, rows[1].key]
    assert rows[0].key in off.cut and [c.key for c in off.kept] == [rows[1].key]


def test_the_explanation_names_the_form_that_matched() -> None:
    rows = [
        cand("https://a.example/", "", "Environmental anthropology: humans and their environment"),
        cand("https://b.example/", "", "Anthropological definition of environment, explained"),
    ]
    query = "anthropological definition of environment"
    outcome = apply_filters(rows, filter_ctx(query, FilterConfig(word_families=True)))
    assert outcome.notes == {rows[0].key: "reads 'anthropological' as 'anthropology'"}


# --- agreement -------------------------------------------------------------------------------------------------


def ranked(url: str, snippet: str, **ranks: int):
    c = cand(url, "", snippet)
    c.engine_ranks.update(ranks)
    return c


AGREED = ranked("https://a.example/", "Famciclovir treats cold sores and shingles", x=1, y=2, z=1)
ONE = ranked("https://b.example/", "Famciclovir is an antiviral", x=3)
BAIT = ranked("https://c.example/", "What is prescribed for a cold", x=2, y=1)


def test_a_row_three_engines_rank_high_is_not_cut_for_a_missing_word() -> None:
    outcome = apply_filters([AGREED, ONE, BAIT], filter_ctx("what is famvir prescribed for"))
    # no row says famvir: the gate would empty the list; the row three engines agree on stays, alone
    assert [c.key for c in outcome.kept] == [AGREED.key]
    assert (
        outcome.notes[AGREED.key] == "kept against the pool gate: 3 engines rank it in their top 10 (x, y, z)"
    )
    assert outcome.warnings == [
        "no result mentions famvir: the engines answered another question; 1 results the engines agree on are shown"
    ]
    off = apply_filters(
        [AGREED, ONE, BAIT], filter_ctx("what is famvir prescribed for", FilterConfig(agreement_engines=0))
    )
    assert off.kept == []


def test_agreement_needs_the_engines_top_ranks() -> None:
    deep = ranked("https://d.example/", "Famciclovir treats cold sores", x=11, y=2, z=1)
    outcome = apply_filters([deep, BAIT], filter_ctx("what is famvir prescribed for"))
    assert outcome.kept == []


def test_an_agreed_row_is_not_demoted_for_lacking_the_anchor() -> None:
    rows = [
        ranked("https://a.example/", "Who sings the Monk theme song? Randy Newman sings it", x=1),
        ranked(
            "https://b.example/", "Monk theme song: It's a Jungle Out There by Randy Newman", x=2, y=1, z=1
        ),
        ranked("https://c.example/", "Who sings the Monk theme? Randy Newman sings", y=2),
        ranked("https://d.example/", "Monk theme song, by Randy Newman", z=2),
    ]
    outcome = apply_filters(rows, filter_ctx("who sings monk theme song"))
    assert len(outcome.kept) == 4
    assert rows[1].key not in outcome.demoted and rows[3].key in outcome.demoted
    assert "not demoted: 3 engines rank it in their top 10" in outcome.notes[rows[1].key]


# --- the trec-dl-passages corpus -----------------------------------------------------------------------------

needs_trecdl = pytest.mark.skipif(
    not (DATA / "trec-dl-passages").is_dir(), reason=f"trec-dl-passages not in {DATA} (set SERPFUSE_DATA)"
)


@needs_trecdl
def test_trecdl_loads_as_a_replay_each_passage_its_own_host() -> None:
    from benchmarks import trecdl

    corpus = trecdl.load_trecdl(DATA)
    assert len(corpus.queries) == 76
    first = corpus.queries[0]
    assert first.query == "anthropological definition of environment"
    assert set(first.lists) == set(trecdl.SYSTEMS.values())
    answers = corpus.replay["anthropological definition of environment"].variants[""]
    row = answers["bm25"].rows[1]
    assert row.title == "" and row.url == "https://p3175481.msmarco-passage.example/" and row.rank == 2
    assert sum(first.judged.values()) > 0 and {q.fold for q in corpus.queries} == {0, 1, 2, 3}


@needs_trecdl
def test_trecdl_the_default_loses_nothing_to_its_rules_and_empties_no_query() -> None:
    """Issue 43's target on the half given: the default at least CombMNZ with the text rules off, none emptied."""
    from benchmarks import trecdl

    corpus = trecdl.load_trecdl(DATA)
    runner = trecdl.PipelineRunner(corpus)
    default = trecdl.run(corpus, RankingConfig(), "default", runner)
    base = RankingConfig()
    off = base.model_copy(
        update={"filters": base.filters.model_copy(update={"coverage": False, "echo": False})}
    )
    plain = trecdl.run(corpus, off, "rules off", runner)
    assert trecdl.emptied(default) == 0
    assert default.summary["nDCG@8"] >= plain.summary["nDCG@8"]


# --- CombMNZ's scale (issue 43, item 5) -----------------------------------------------------------------------


def test_combmnz_short_list_scale_weighs_a_short_list_less() -> None:
    from serpfuse.ranking.fusion import fuse_lists

    lists = {"long": [f"d{i}" for i in range(1, 11)], "short": ["s1", "d9"]}
    plain = dict(fuse_lists(lists, "combmnz"))
    common = dict(
        fuse_lists(
            lists,
            "combmnz",
            RankingConfig.model_validate({"combmnz": {"short_list_scale": 1.0}, "experimental": True}),
        )
    )
    assert plain["s1"] == plain["d1"] == 1.0  # the textbook scale: each list's first row scores 1
    assert common["s1"] == pytest.approx(2 / 10) and common["d1"] == 1.0
    assert common["d9"] == pytest.approx(2 * (2 / 10 + 1 / 10))  # (n - r + 1) / longest, times two lists
    quarter = RankingConfig.model_validate({"combmnz": {"short_list_scale": 0.25}, "experimental": True})
    floored = dict(
        fuse_lists(lists, "combmnz", quarter)
    )  # the list of 2 scored over 2.5 rows, the long over 10
    assert floored["s1"] == pytest.approx(2 / 2.5) and floored["d1"] == 1.0
    lists["short"] = [f"s{i}" for i in range(1, 4)]  # 3 rows: above a quarter of 10, its own scale
    assert dict(fuse_lists(lists, "combmnz", quarter))["s1"] == 1.0
