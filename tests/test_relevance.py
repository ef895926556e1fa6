"""The relevance guard (filters/relevance.py): each rule on a small table of cases, the chain's handling of
the pool verdict, and issue 4's crw56 target through the real bench code path."""

from __future__ import annotations

import pytest

from benchmarks import crw56
from conftest import cand, filter_ctx, need
from serpfuse.config import DEFAULT_FILTERS, FilterConfig, RankingConfig
from serpfuse.ranking.filters import apply_filters
from serpfuse.ranking.filters.relevance import (
    RELEVANCE,
    coverage,
    gate_need,
    is_english,
    pool_verdict,
    relative_min_coverage,
)
from serpfuse.ranking.pool import with_spelling_fixes
from serpfuse.ranking.query import analyze_query
from serpfuse.ranking.tables import parse_sections
from serpfuse.ranking.words import (
    RowText,
    asked_words,
    found_terms,
    light_stem,
    one_edit_apart,
    parse_variants,
    query_terms,
    same_word_ending_aside,
    strip_date_stamp,
    word_role,
    word_stems,
    word_tables,
)


def terms_of(query: str):
    return query_terms(analyze_query(query))


def found(query: str, title: str, snippet: str = "") -> list[str]:
    return [t.text for t in found_terms(terms_of(query), RowText.of(title, snippet))]


# --- words ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("restaurants", "restaurant"),
        ("restaurant", "restaurant"),
        ("beaches", "beach"),  # -es then the final -e
        ("beach", "beach"),
        ("belgrade", "belgrad"),  # a final -e: the German spelling of the query meets the English one
        ("belgrad", "belgrad"),
        ("explained", "explain"),
        ("explains", "explain"),
        ("leaking", "leak"),
        ("releases", "releas"),
        ("released", "releas"),
        ("cities", "city"),
        ("gpus", "gpus"),  # the -us guard; word_stems adds "gpu"
        ("ingress", "ingress"),  # -ss is not a plural
        ("virus", "virus"),  # nor -us
        ("analysis", "analysis"),  # nor -is
        ("gpu", "gpu"),  # three letters stay
        ("4k", "4k"),  # tokens with digits stay
        ("oauth2", "oauth2"),
        ("2026", "2026"),
    ],
)
def test_light_stem(word: str, stem: str) -> None:
    assert light_stem(word) == stem


@pytest.mark.parametrize(
    ("word", "stems"),
    [("gpus", {"gpus", "gpu"}), ("virus", {"virus", "viru"}), ("viruses", {"virus"}), ("gpu", {"gpu"})],
)
def test_word_stems(word: str, stems: set[str]) -> None:
    assert word_stems(word) == stems


@pytest.mark.parametrize(
    ("a", "b", "apart"),
    [
        ("hisotry", "history", True),  # two neighbouring letters swapped
        ("brittney", "britney", True),  # one letter too many
        ("diver", "driver", True),  # one too few
        ("vienna", "vienne", True),  # one changed
        ("history", "history", False),  # the same word is no fix
        ("tratorirs", "traitors", False),  # two slips
        ("react", "reactor", False),
    ],
)
def test_one_edit_apart(a: str, b: str, apart: bool) -> None:
    assert one_edit_apart(a, b) is apart and one_edit_apart(b, a) is apart


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("bretonne", "breton", True),
        ("psychosen", "psychose", True),
        ("paris", "parisian", False),  # three letters more
        ("tour", "tours", False),  # the shorter word is under five letters
        ("breton", "breton", False),
    ],
)
def test_same_word_ending_aside(a: str, b: str, same: bool) -> None:
    assert same_word_ending_aside(a, b, DEFAULT_FILTERS.min_fixable) is same


@pytest.mark.parametrize(
    ("snippet", "left"),
    [
        ("May 4, 2026 · Nvidia's earnings beat", "Nvidia's earnings beat"),
        ("Oct 7, 2025 · 8 Best Beaches", "8 Best Beaches"),
        ("2 days ago · Download free apps", "Download free apps"),
        ("1 day ago · The meaning of TOP", "The meaning of TOP"),
        ("17 April 2026 - Vienna museums", "Vienna museums"),
        ("The 2026 AI Index Report", "The 2026 AI Index Report"),  # a year in the text is text
        ("Released May 4, 2026 · notes", "Released May 4, 2026 · notes"),  # only a leading stamp
    ],
)
def test_strip_date_stamp(snippet: str, left: str) -> None:
    assert strip_date_stamp(snippet) == left


@pytest.mark.parametrize(
    ("word", "role"),
    [
        ("the", "function"),
        ("on", "function"),  # not in seed 001's stopwords, but a function word
        ("best", "function"),  # seed 001's ranking words stay out
        ("2026", "weak"),  # years by rule
        ("1999", "weak"),
        ("latest", "weak"),  # recency
        ("explained", "weak"),  # answer type
        ("speed", "weak"),  # facet
        ("install", "weak"),  # intent
        ("python", "key"),
        ("kyoto", "key"),
        ("3000", "key"),  # a number that is no year
    ],
)
def test_word_role(word: str, role: str) -> None:
    assert word_role(word) == role


@pytest.mark.parametrize(
    ("text", "phrases", "plain"),
    [
        ("kyoto autumn", [], ["kyoto", "autumn"]),
        ('"Atalanta Bergamasca" -wikipedia', [["atalanta", "bergamasca"]], []),  # -word asks for its absence
        ('tomato -"green tomato" recipes', [], ["tomato", "recipes"]),
        ("diaframma lang:IT", [], ["diaframma"]),  # an operator that names no word
        ("intitle:esbuild syntaxerror", [], ["esbuild", "syntaxerror"]),  # one that does
        ("why: a question", [], ["why", "a", "question"]),  # a colon alone is no operator
    ],
)
def test_asked_words(text: str, phrases: list[list[str]], plain: list[str]) -> None:
    assert asked_words(text) == (phrases, plain)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("how to install python on macos", [("install", True), ("python", False), ("macos", False)]),
        (
            "latest ai model releases 2026",
            [("latest", True), ("ai", False), ("model", False), ("releases", False), ("2026", True)],
        ),
        ("jaguar top speed", [("jaguar", False), ("speed", True)]),
        ('"server components" in react', [("server components", False), ("react", False)]),
        ("site:example.com kyoto autumn", [("kyoto", False), ("autumn", False)]),  # operators are not terms
        ("how to do it", []),
    ],
)
def test_query_terms(query: str, expected: list[tuple[str, bool]]) -> None:
    assert [(t.text, t.weak) for t in terms_of(query)] == expected


# --- matching ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "title", "snippet", "expected"),
    [
        # stems on both sides
        ("top restaurants in belgrad", "THE 10 BEST Restaurants in Belgrade", "", ["restaurants", "belgrad"]),
        ("cheapest 4k monitors for programming", "Best Monitor", "a 4K display", ["4k", "monitors"]),
        ("nvidia gpu benchmarks", "GeForce", "the world's fastest GPUs", ["gpu"]),
        # two words written as one, either way round
        ("best beaches near da nang", "Top Danang Beaches", "", ["beaches", "da", "nang"]),
        ("danang beaches", "Da Nang beaches", "", ["danang", "beaches"]),
        ("ebook reader", "The best e-book readers", "", ["ebook", "reader"]),
        # a regional variant
        ("things to do in kyoto in autumn", "Kyoto in the Fall", "", ["kyoto", "autumn"]),
        ("kyoto fall colours", "Autumn colors in Kyoto", "", ["kyoto", "fall", "colours"]),
        # a quoted phrase is one term: its words in order ...
        (
            '"server components" react',
            "React Server Components explained",
            "",
            ["server components", "react"],
        ),
        # ... or all of them apart, since the engines held the quote against the whole page
        (
            '"server components" react',
            "React components",
            "render on the server",
            ["server components", "react"],
        ),
        ('"server components" react', "React components", "", ["react"]),
        # the URL is text of the row too
        ("bc gov", "BC Parks", "Parks of British Columbia", ["bc"]),
        # a leading date stamp is not text
        (
            "nvidia earnings 2026",
            "Nvidia earnings",
            "May 20, 2026 · Nvidia's earnings beat",
            ["nvidia", "earnings"],
        ),
        # no prefix guessing: "react" is not found in "reached", one-letter words match whole words only
        ("react hooks", "We reached the hook", "", ["hooks"]),
        ("vitamin d deficiency", "Vitamin deficiency", "dietary advice", ["vitamin", "deficiency"]),
    ],
)
def test_found_terms(query: str, title: str, snippet: str, expected: list[str]) -> None:
    assert found(query, title, snippet) == expected


# --- row coverage ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "title", "snippet", "reason"),
    [
        # the bait word alone is not enough ("fix" is weak)
        (
            "how to fix a leaking kitchen faucet",
            "Fix (2021) - IMDb",
            "A film",
            "mentions fix but not leaking, kitchen, faucet",
        ),
        ("how to fix a leaking kitchen faucet", "Fix a leaky kitchen faucet", "stop the leak", None),
        # every key term is always enough, whatever the weak terms
        ("jaguar top speed", "Jaguar - Wikipedia", "The jaguar is a large cat", None),
        ("latest ai model releases 2026", "AI Models in 2026", "Which model to use", None),
        # half the weighted terms pass: 1 + 0.5 of 3
        ("java island population", "Java Island", "home to 150 million people", None),
        # a key term alone out of two key terms and a weak one fails: 1 of 2.5
        (
            "java island population",
            "Java | Oracle",
            "The programming language",
            "mentions java but not island, population",
        ),
        (
            "kubernetes ingress controller tutorial",
            "Kubernetes",
            "A container orchestrator",
            "mentions kubernetes but not ingress, controller, tutorial",
        ),
        (
            "street food in oaxaca",
            "Google Maps",
            "Find local businesses",
            "mentions none of street, food, oaxaca",
        ),
        # no terms: everything passes; CJK and mixed queries are the CJK gate's business
        ("how to do it", "Anything", "", None),
        ("如何配置 postgres 逻辑复制", "逻辑复制配置", "", None),
    ],
)
def test_row_coverage(query: str, title: str, snippet: str, reason: str | None) -> None:
    assert RELEVANCE.check(cand("https://a.example/x", title, snippet), filter_ctx(query)) == reason


@pytest.mark.parametrize(
    ("weak_weight", "min_coverage", "passes"),
    [(0.5, 0.5, False), (1.0, 0.5, False), (0.5, 0.35, True), (1.0, 0.4, True), (0.0, 0.3, True)],
)
def test_coverage_knobs(weak_weight: float, min_coverage: float, passes: bool) -> None:
    # "ai" + "2026" of latest(weak), ai, model, releases, 2026(weak): 1.5/4 of the weight when weak terms count
    # half, 2/5 when they count fully, 1/3 when they count nothing
    terms = terms_of("latest ai model releases 2026")
    cov = coverage(terms, RowText.of("The 2026 AI Index Report", "generative AI tools"), weak_weight)
    assert [t.text for t in cov.found] == ["ai", "2026"]
    assert cov.passes(min_coverage) is passes
    row = cand("https://a.example/x", "The 2026 AI Index Report", "generative AI tools")
    config = FilterConfig(weak_term_weight=weak_weight, min_coverage=min_coverage)
    assert (RELEVANCE.check(row, filter_ctx("latest ai model releases 2026", config)) is None) is passes


# --- the pool gate ---------------------------------------------------------------------------------------------


def rows_of(*pairs: tuple[str, str]) -> list[RowText]:
    return [RowText.of(t, s) for t, s in pairs]


@pytest.mark.parametrize(
    ("query", "rows", "verdict"),
    [
        # a key term no row mentions
        (
            "how to install python on macos",
            rows_of(("Download and install Google Chrome", "for Windows, macOS"), ("Git - Install", "")),
            "no result mentions python: the engines answered another question",
        ),
        # every key term somewhere, but never together
        (
            "react server components explained",
            rows_of(("React", "components in JavaScript"), ("React (software)", "server-rendered apps")),
            "no result mentions react, server, components together (the best has 2 of 3): "
            "the engines answered another question",
        ),
        # a missing weak term never fires it
        ("jaguar top speed", rows_of(("Jaguar - Wikipedia", "a large cat"), ("Jaguar USA", "cars")), None),
        ("react server components explained", rows_of(("React Server Components", "a guide")), None),
        # four key terms: three together are enough
        ("best exercises for lower back pain relief", rows_of(("Exercises for lower back pain", "")), None),
        # nothing to judge
        ("how to do it", rows_of(("Anything", "")), None),
        ("python", [], None),
    ],
)
def test_pool_verdict(query: str, rows: list[RowText], verdict: str | None) -> None:
    assert pool_verdict(terms_of(query), rows) == verdict


@pytest.mark.parametrize(
    ("query", "rows", "fixed"),
    [
        # the engines corrected the spelling: the pool has a word one slip away
        ("hisotry of tomato", rows_of(("Tomato History", "From poison to obsession")), ["history"]),
        ("musique bretonne", rows_of(("Musique celtique", "rock breton")), ["breton"]),
        # nothing to fix when the word is there, it is short, weak, or the pool has nothing close
        ("react hooks", rows_of(("React reach", "hooks")), []),
        ("gpu benchmark", rows_of(("GPU", "bench marks")), []),
        ("python install", rows_of(("Python", "installer")), []),
        ("python install", rows_of(("Chrome", "install it")), []),
    ],
)
def test_with_spelling_fixes(query: str, rows: list[RowText], fixed: list[str]) -> None:
    before = terms_of(query)
    after = with_spelling_fixes(before, rows)
    added = sorted(f[0] for b, a in zip(before, after, strict=True) for f in a.forms - b.forms)
    assert added == sorted(light_stem(w) for w in fixed)


def test_a_corrected_spelling_passes_the_gate_and_the_row() -> None:
    rows = [cand("https://a.example/1", "Tomato History", "How the tomato came to India")]
    outcome = apply_filters(rows, filter_ctx("hisotry of tomato in india"))
    assert outcome.kept == rows


def test_the_gate_wants_snippets_to_judge() -> None:
    titles_only = rows_of(("Pen Pals", ""), ("Prison Pen Pals", ""), ("German Food", "sausages"))
    assert pool_verdict(terms_of("german pen pals"), titles_only) is None
    with_snippets = rows_of(("Pen Pals", "write letters"), ("Prison Pen Pals", "inmates"), ("Food", "x"))
    assert pool_verdict(terms_of("german pen pals"), with_snippets) is not None


def test_long_queries_hold_rows_to_the_pools_best() -> None:
    query = "martin buber hidden dialogue dan avnon rowman littlefield lanham boulder oxford"
    terms = terms_of(query)
    rows = rows_of(
        ("Martin Buber: The Hidden Dialogue, by Dan Avnon", "Rowman & Littlefield"),
        ("Martin Buber: The Hidden Dialogue", "a book by Avnon"),
        ("Martin Buber", "philosopher"),
    )
    best = coverage(terms, rows[0], 0.5).score
    assert best == pytest.approx(8 / 11)
    assert relative_min_coverage([coverage(terms, row, 0.5) for row in rows], 0.5) == pytest.approx(
        0.5 * best
    )
    cands = [
        cand(
            "https://a.example/1", "Martin Buber: The Hidden Dialogue, by Dan Avnon", "Rowman & Littlefield"
        ),
        cand("https://b.example/2", "Martin Buber: The Hidden Dialogue", "a book by Avnon"),
        cand("https://c.example/3", "Martin Buber", "philosopher"),
    ]
    outcome = apply_filters(cands, filter_ctx(query))
    # 5 of 11 key terms is under half the query, but over half of what the best row has (8)
    assert outcome.kept == cands[:2]
    assert outcome.cut[cands[2].key].reason.startswith("mentions martin, buber but not hidden")
    # a row alone is held to the whole query
    assert RELEVANCE.check(cands[1], filter_ctx(query)) is not None


@pytest.mark.parametrize(
    ("key_terms", "need"), [(1, 1), (2, 2), (3, 3), (4, 3), (5, 3), (6, 4), (8, 5), (10, 6)]
)
def test_gate_need(key_terms: int, need: int) -> None:
    assert gate_need(key_terms) == need


@pytest.mark.parametrize(
    ("language", "english"),
    [(None, True), ("", True), ("en", True), ("en-US", True), ("EN_gb", True), ("all", True), ("de", False)],
)
def test_is_english(language: str | None, english: bool) -> None:
    assert is_english(language) is english


# --- the chain -------------------------------------------------------------------------------------------------

BAIT = [
    cand("https://www.merriam-webster.com/dictionary/install", "INSTALL Definition & Meaning"),
    cand("https://www.google.com/chrome/", "Download and install Google Chrome", "on Windows and macOS"),
    cand("https://git-scm.com/install", "Git - Install", "Windows macOS Linux"),
]


def test_pool_verdict_is_final_no_fallback() -> None:
    outcome = apply_filters(BAIT, filter_ctx("how to install python on macos", FilterConfig(junk=True)))
    assert outcome.kept == [] and not outcome.fallback_used
    assert outcome.cut[BAIT[0].key].step == "junk"
    verdict = "no result mentions python: the engines answered another question"
    assert {k: (c.step, c.reason) for k, c in outcome.cut.items() if k != BAIT[0].key} == {
        BAIT[1].key: ("relevance", verdict),
        BAIT[2].key: ("relevance", verdict),
    }
    assert outcome.warnings == [f"{verdict}; none of 2 results is shown"]


THINGS = [
    cand("https://www.thingiverse.com/", "Thingiverse - open hardware", "Find and print things"),
    cand("https://culturedcode.com/things/", "Things - To-Do List App", "plan your day"),
]


def test_seed_001_rule_still_falls_back() -> None:
    query = "things to do in kyoto in autumn"
    seed = apply_filters(
        THINGS, filter_ctx(query, FilterConfig(coverage_rule="exact", fallback_when_empty=True))
    )
    assert seed.fallback_used and seed.kept == THINGS
    ours = apply_filters(THINGS, filter_ctx(query))
    assert ours.kept == [] and not ours.fallback_used
    assert ours.warnings == [
        "no result mentions kyoto, autumn: the engines answered another question; none of 2 results is shown"
    ]


def test_without_the_gate_rows_are_judged_alone() -> None:
    # "install" (weak) + "macos" of install, python, macos is 1.5 of 2.5: the Chrome row passes on its own
    outcome = apply_filters(BAIT, filter_ctx("how to install python on macos", FilterConfig(pool_gate=False)))
    assert [c.url for c in outcome.kept] == [BAIT[1].url, BAIT[2].url]
    german = apply_filters(BAIT, filter_ctx("how to install python on macos", language="de"))
    assert [c.url for c in german.kept] == [BAIT[1].url, BAIT[2].url]


def test_relevant_pool_keeps_its_relevant_rows_in_order() -> None:
    rows = [
        cand("https://a.example/1", "How to Install Python on Mac", "Use the official installer"),
        cand("https://b.example/2", "Download and install Google Chrome", "on Windows and macOS"),
        cand("https://c.example/3", "Python releases for macOS", "Download Python"),
        cand("https://d.example/4", "Python (programming language)", "A language"),
    ]
    outcome = apply_filters(rows, filter_ctx("how to install python on macos"))
    assert [c.url for c in outcome.kept] == [rows[0].url, rows[1].url, rows[2].url]
    assert outcome.cut[rows[3].key].reason == "mentions python but not install, macos"
    assert outcome.warnings == []


def test_switched_off_coverage_runs_neither_guard() -> None:
    outcome = apply_filters(
        BAIT, filter_ctx("how to install python on macos", FilterConfig(coverage=False, junk=True))
    )
    assert [c.url for c in outcome.kept] == [BAIT[1].url, BAIT[2].url]


# --- tables ----------------------------------------------------------------------------------------------------


def test_table_parsers() -> None:
    sections = parse_sections(["", "[function]", "a", "the", "", "[facet]", "speed"])
    assert sections == {"function": {"a", "the"}, "facet": {"speed"}}
    variants = parse_variants(["autumn fall", "colours colors"])  # keyed and valued by stems
    assert variants["fall"] == {"autumn", "fall"} and variants["colour"] == {"colour", "color"}


def test_shipped_tables_are_consistent() -> None:
    tables = word_tables()
    assert {"the", "of", "on", "which"} <= tables.function_words
    assert set(tables.weak_words.values()) == {"recency", "answer-type", "facet", "intent"}
    # a word has one role, and every table word is a single lowercase token
    assert not tables.function_words & tables.weak_words.keys()
    for word in [*tables.function_words, *tables.weak_words, *tables.variants, *tables.operators]:
        assert word == word.lower() and word.isalnum(), word
    assert tables.operators["intitle"] is True and tables.operators["lang"] is False


# --- crw56: issue 4's target through the bench code ------------------------------------------------------------

BASELINE_NDCG = 0.8926  # SearXNG's own order on the dev queries (issue 4)
INSTANCE_WEIGHTS = {"google": 3.0, "duckduckgo": 1.0, "bing": 0.3}  # the recording's engine weights


@pytest.fixture(scope="module")
def corpus(data_dir):
    need(data_dir / crw56.RECORDING)
    need(data_dir / crw56.QRELS_DEV)
    return crw56.load_crw56(data_dir)


@pytest.fixture(scope="module")
def runner(corpus):
    return crw56.PipelineRunner(corpus)


def summary(corpus, runner, config: RankingConfig) -> dict[str, float]:
    return crw56.run(corpus, config, split="dev", per_engine=False, runner=runner).summary


@pytest.fixture(scope="module")
def default(corpus, runner):
    return summary(corpus, runner, RankingConfig())


@pytest.fixture(scope="module")
def seed_001(corpus, runner):
    return summary(corpus, runner, RankingConfig(filters=FilterConfig(coverage_rule="exact")))


def test_crw56_default_shows_fewer_than_5_irrelevant_rows(default):
    assert default["Irrelevant@5"] < 5  # SearXNG's order: 73
    assert default["Junk@5"] == 0


def test_crw56_default_ranks_at_least_as_well_as_searxng(default):
    assert default["nDCG@8:n"] == 14
    assert default["nDCG@8"] >= BASELINE_NDCG


def test_crw56_default_beats_seed_001_on_both(default, seed_001):
    assert default["Irrelevant@5"] < seed_001["Irrelevant@5"]
    assert default["kept@8"] > seed_001["kept@8"]
    assert default["nDCG@8"] > seed_001["nDCG@8"]


def test_crw56_the_filter_loses_at_most_2_relevant_rows(corpus, runner):
    # In SearXNG's own order (its score at the instance's weights) nothing is reordered, so every relevant
    # row of the baseline's top 8 that goes missing was cut by a filter: at most 2 of 104 may be (98 %).
    config = RankingConfig(strategy="searxng", searxng={"weights": INSTANCE_WEIGHTS})
    result = summary(corpus, runner, config)
    assert result["keptOf"] == 104
    assert result["kept"] >= 102
    assert result["Irrelevant@5"] < 5


def test_crw56_default_shows_98_percent_of_what_it_could(default):
    # issue 8's RelShown@8 target; it replaces issue 4's kept@8, which measured agreement with SearXNG's
    # google-3x order rather than relevance (SearXNG's own order: 0.9911)
    assert default["RelShown@8:n"] == 14
    assert default["RelShown@8"] >= 0.98
