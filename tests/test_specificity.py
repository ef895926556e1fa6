"""Issue 8, items 1-3: term specificity (wordfreq), lemmas (simplemma), the query's vocabulary learned from the
pool (misspellings), echo pages, the anchor demotion and each engine's content reliability."""

from __future__ import annotations

import datetime as dt

import pytest

from serpfuse.config import RankingConfig
from serpfuse.models import EngineAnswer, EngineRow, SearchRequest
from serpfuse.pipeline import rank_answers
from serpfuse.ranking.candidates import build_candidates
from serpfuse.ranking.echo import echo_verdict
from serpfuse.ranking.pool import analyze_pool, learn_spellings
from serpfuse.ranking.query import analyze_query
from serpfuse.ranking.specificity import language_of, lemma, load_tables, specificity, tables_loaded, zipf
from serpfuse.ranking.words import RowText, query_terms

NOW = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)


def answer(engine: str, rows: list[tuple[str, str, str]]) -> EngineAnswer:
    """An engine's answer from (url, title, snippet) rows, ranked in order."""
    return EngineAnswer(
        engine=engine,
        status="ok",
        rows=[
            EngineRow(engine=engine, rank=i, url=url, title=title, snippet=snippet)
            for i, (url, title, snippet) in enumerate(rows, start=1)
        ],
    )


def search(query: str, answers: list[EngineAnswer], **config):
    return rank_answers(
        answers, SearchRequest(query=query, limit=8), config=RankingConfig(**config), now=NOW, explain=True
    )


# --- the word tables -----------------------------------------------------------------------------------------


def test_a_place_or_a_rare_word_is_more_specific_than_the_words_around_it() -> None:
    assert specificity("burnout") > specificity("professional") > specificity("the")
    assert specificity("zurich") > specificity("near")
    assert zipf("the") > 6 and zipf("qxzvbnk") == 0.0  # unknown: as specific as a word can be


@pytest.mark.parametrize(
    ("word", "lemma_of"),
    [("hikes", "hike"), ("hiking", "hike"), ("mice", "mouse"), ("unknownish", "unknownish")],
)
def test_lemmas(word: str, lemma_of: str) -> None:
    assert lemma(word) == lemma_of


@pytest.mark.parametrize(
    ("requested", "lang"), [(None, "en"), ("de-CH", "de"), ("fr_FR", "fr"), ("xx", "en"), ("all", "en")]
)
def test_language_of(requested: str | None, lang: str) -> None:
    assert language_of(requested) == lang


# --- the query's vocabulary, learned from what engines returned ----------------------------------------------

TAIL_PAGES = [
    (
        "https://stackoverflow.com/q/33923",
        "What is tail recursion? - Stack Overflow",
        "How to tell if a function is tail recursive: the recursive call is the last thing it does.",
    ),
    (
        "https://en.wikipedia.org/wiki/Tail_call",
        "Tail call - Wikipedia",
        "A tail call is a subroutine call performed as the final action; tail recursive functions ...",
    ),
    (
        "https://www.geeksforgeeks.org/tail-recursion/",
        "Tail Recursion - GeeksforGeeks",
        "A recursive function is tail recursive when the recursive call is the last thing executed.",
    ),
    (
        "https://cs.stackexchange.com/q/6230",
        "How to tell whether a function is tail recursive",
        "To tell if a recursive function is tail recursive, check that nothing follows the recursive call.",
    ),
]
ECHO_PAGES = [
    ("https://ideas.example.org/how-tot-ell", "How Tot Ell If Tail Recurssive - Ideas", "Ideas for how tot ell if tail recurssive."),
    ("https://qa.example.net/q/1", "how tot ell if tail recurssive? - Answers", "how tot ell if tail recurssive? Answer it now."),
]  # fmt: skip


def test_a_misspelled_query_shows_the_real_pages_not_the_echoes() -> None:
    """Issue 8's case: engines answer with real tail-recursion pages plus pages repeating the misspelt query;
    the default must show the real ones (engines corrected the spelling) and cut the echoes as junk."""
    query = "how tot ell if tail recurssive"
    answers = [
        answer("google", [TAIL_PAGES[0], TAIL_PAGES[1], ECHO_PAGES[0], TAIL_PAGES[2]]),
        answer("bing", [TAIL_PAGES[3], TAIL_PAGES[1], ECHO_PAGES[1], TAIL_PAGES[0]]),
    ]
    response = search(query, answers)
    shown = {r.url for r in response.results}
    assert shown == {p[0] for p in TAIL_PAGES}
    cuts = {c.url: (c.cut_by, c.cut_reason) for c in response.candidates if not c.selected}
    assert cuts["https://ideas.example.org/how-tot-ell"][0] == "junk"
    assert "echoes the query" in cuts["https://ideas.example.org/how-tot-ell"][1]
    assert cuts["https://qa.example.net/q/1"][0] == "junk"


def test_the_pool_teaches_the_spelling_and_a_typo_never_anchors() -> None:
    query = analyze_query("jaguuar top speed record")
    rows = [
        RowText.of(title, snippet)
        for title, snippet in [
            ("Jaguar XJ220 top speed", "The Jaguar XJ220 set a speed record of 217 mph."),
            ("Jaguar top speed - how fast can a jaguar run", "A jaguar can run at 50 mph."),
            ("Fastest Jaguar cars", "Jaguar's fastest road cars and their records."),
        ]
    ]
    terms, spelled = learn_spellings(query_terms(query), rows, "en")
    assert spelled == {"jaguuar": "jaguar"}
    jaguuar = next(t for t in terms if t.text == "jaguuar")
    assert ("jaguar",) in jaguuar.forms
    # A misspelling is rare to wordfreq; it is judged by the pool's spelling, so it keeps jaguar's rarity.
    candidates, _ = build_candidates(
        [answer("google", [(f"https://e{i}.com/", t, s) for i, (t, s) in enumerate(
            [("Jaguar XJ220 top speed record", "217 mph"), ("Jaguar top speed record", "50 mph"), ("Jaguar record", "x")]
        )])],
        query,
    )  # fmt: skip
    pool = analyze_pool(candidates, query)
    assert pool.spec["jaguuar"] == pytest.approx(specificity("jaguar"))
    assert pool.anchor is not None and pool.anchor.text == "jaguuar"  # standing for "jaguar", found as it


def test_the_pool_teaches_the_lemma_the_stemmer_misses() -> None:
    query = analyze_query("mice in the attic")
    rows = [
        RowText.of("How to get rid of a mouse in the attic", "A mouse nest"),
        RowText.of("Attic", "insulation"),
    ]
    terms, spelled = learn_spellings(query_terms(query), rows, "en")
    mice = next(t for t in terms if t.text == "mice")
    assert ("mous",) in mice.forms and not spelled  # light_stem("mouse"): the row's form counts


def test_an_uncorrected_rare_word_nobody_carries_does_not_anchor() -> None:
    query = analyze_query("professional qxzvbnk signs")
    candidates, _ = build_candidates(
        [answer("google", [(f"https://s{i}.com/", "Professional signs", "Custom signs for professionals") for i in range(4)])],
        query,
    )  # fmt: skip
    pool = analyze_pool(candidates, query)
    assert pool.anchor is None


# --- echo pages ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "snippet", "echo"),
    [
        ("Top Restaurants In Belgrad Ideas", "Save ideas", True),
        ("top restaurants in belgrad? - Answers", "", True),
        ("Top restaurants in Belgrad | Tripadvisor", "The 10 best restaurants in Belgrade", False),
        ("Top restaurants in belgrad", "Where to eat in Belgrade: Skadarlija, Dorćol ...", False),
        ("Restaurant ideas for Belgrade", "", False),
    ],
)
def test_echo_titles(title: str, snippet: str, echo: bool) -> None:
    assert (echo_verdict(title, snippet, analyze_query("top restaurants in belgrad")) is not None) is echo


def test_a_page_repeating_the_query_in_title_and_snippet_is_an_echo_whatever_the_spelling() -> None:
    """No pool spelling to learn from (nobody else answered): the repetition alone tells a generated page."""
    query = analyze_query("best raen in tokyo")
    snippet = "Results for best raen in tokyo. Find best raen in tokyo and best raen in tokyo searches."
    assert echo_verdict("best raen in tokyo - Search Results", snippet, query) is not None
    # a real listicle titled with the query that says it twice is no echo
    twice = "The best raen in tokyo ... Fuunji is one of the best raen in tokyo."
    assert echo_verdict("8 of the best raen in tokyo - Lonely Planet", twice, query) is None
    # nor a two-word query, whose phrase recurs naturally
    assert (
        echo_verdict("Java island", "Java island is ... Java island has", analyze_query("java island"))
        is None
    )


def test_a_page_repeating_a_corrected_misspelling_is_an_echo() -> None:
    query = analyze_query("jaguuar top speed")
    why = echo_verdict(
        "Jaguuar top speed facts", "", query, {"jaguuar", "top", "speed", "facts"}, {"jaguuar": "jaguar"}
    )
    assert why is not None and "jaguuar" in why and "jaguar" in why
    # the correct spelling is no echo, whatever the spelled table says
    assert (
        echo_verdict("Jaguar top speed facts", "", query, {"jaguar", "top", "speed"}, {"jaguuar": "jaguar"})
        is None
    )


# --- the anchor: a row with only the query's generic words ranks below those carrying its specific one --------

BURNOUT = [
    (
        "https://www.helpguide.org/burnout",
        "Burnout prevention and treatment",
        "Signs of burnout at work and how professionals recover.",
    ),
    (
        "https://www.mayoclinic.org/job-burnout",
        "Job burnout: how to spot it",
        "Job burnout is work-related stress; signs include exhaustion.",
    ),
    (
        "https://hbr.org/burnout-signs",
        "The signs of professional burnout",
        "Professional burnout shows in cynicism and exhaustion.",
    ),
    (
        "https://www.apa.org/burnout",
        "Burnout and stress are everywhere",
        "Professional psychologists on the signs of burnout.",
    ),
]
SIGNS = [
    ("https://www.signshop.example/professional", "Professional Signs | Custom Signage", "Professional signs for your business: banners, boards."),
    ("https://www.fastsigns.example/", "Professional signs and graphics", "Signs made by professionals, delivered fast."),
    ("https://www.signs.example/pro", "Pro signs for professionals", "Professional sign makers near you."),
]  # fmt: skip


def test_a_row_lacking_the_specific_word_is_demoted_and_explained() -> None:
    """Two engine groups, one answering from the query's generic words: its rows come after every row that
    carries "burnout", and the explanation names the missing word."""
    answers = [answer("bing", [SIGNS[0], SIGNS[1], BURNOUT[3]]), answer("google", BURNOUT[:3])]
    response = search("signs of professional burnout", answers)
    urls = [r.url for r in response.results]
    assert set(urls[-2:]) == {s[0] for s in SIGNS[:2]}
    assert set(urls[:4]) == {b[0] for b in BURNOUT}
    demoted = next(r for r in response.results if r.url == SIGNS[0][0])
    assert "lacks 'burnout', the query's most specific word" in demoted.reason
    assert "demoted" in demoted.reason


def test_the_demotion_can_be_switched_off() -> None:
    answers = [answer("bing", SIGNS), answer("google", BURNOUT[:3])]
    off = search(
        "signs of professional burnout", answers, filters={"anchor_demotion": 1}, agree={"content_power": 0}
    )
    urls = [r.url for r in off.results]
    assert urls.index(SIGNS[0][0]) < urls.index(
        BURNOUT[2][0]
    )  # bing's first row, as plain consensus ranks it
    assert all("lacks" not in r.reason for r in off.results)


def test_an_off_topic_engine_loses_weight_from_content_alone() -> None:
    """With two independent groups agreement says nothing; content does: the engine whose top rows carry
    less of the query's specific meaning weighs less."""
    answers = [answer("bing", [SIGNS[0], SIGNS[1], BURNOUT[3]]), answer("google", BURNOUT[:3])]
    response = search("signs of professional burnout", answers, strategy="adaptive")  # content is adaptive's
    by_url = {c.url: c.score_parts for c in response.candidates}
    assert by_url[BURNOUT[0][0]]["content:google"] == pytest.approx(1.0)
    assert 0 < by_url[BURNOUT[3][0]]["content:bing"] < 0.8


MERCURY = [
    (
        "https://science.nasa.gov/mercury/facts/",
        "Mercury: Facts - NASA Science",
        "Mercury is the smallest planet; facts about it.",
    ),
    (
        "https://www.nhm.ac.uk/planet-mercury",
        "Planet Mercury | Natural History Museum",
        "Mercury is the planet closest to the Sun.",
    ),
    ("https://www.almanac.com/mercury-facts", "Planet Mercury: fun facts", "Facts about the planet Mercury."),
]
MERCURY_NO_FILLER = [
    (
        "https://en.wikipedia.org/wiki/Mercury_(planet)",
        "Mercury (planet) - Wikipedia",
        "Mercury is the first planet from the Sun.",
    ),
    (
        "https://www.britannica.com/place/Mercury-planet",
        "Mercury | Size, Color, Symbol",
        "Mercury, the innermost planet of the Solar System.",
    ),
]
PLANET_FACTS = [
    ("https://www.space.example/planet-facts", "Planet facts for kids", "Facts about every planet of the Solar System."),
    ("https://www.facts.example/planets", "100 planet facts", "Fun facts about the planets."),
]  # fmt: skip


def test_a_list_with_the_subject_and_without_the_filler_is_not_held_back() -> None:
    """Content reliability weighs a term by how much more specific it is than the query's commonest one: a list
    whose rows say "Mercury" and "planet" but not "facts" is as on-topic as one that says all three, and a list
    of "planet facts" without "Mercury" carries almost none of the query's meaning."""
    with_subject = search(
        "mercury planet facts",
        [answer("bing", MERCURY_NO_FILLER), answer("google", MERCURY)],
        strategy="adaptive",
    )
    by_url = {c.url: c.score_parts for c in with_subject.candidates}
    assert by_url[MERCURY_NO_FILLER[0][0]]["content:bing"] == pytest.approx(1.0)
    generic = search(
        "mercury planet facts", [answer("bing", PLANET_FACTS), answer("google", MERCURY)], strategy="adaptive"
    )
    by_url = {c.url: c.score_parts for c in generic.candidates}
    assert by_url[PLANET_FACTS[0][0]]["content:bing"] < 0.1
    assert by_url[MERCURY[0][0]]["content:google"] == pytest.approx(1.0)


def test_a_one_term_query_weighs_its_term_whole() -> None:
    query = analyze_query("burnout")
    candidates, _ = build_candidates([answer("google", [*BURNOUT[:2], SIGNS[0]])], query)
    pool = analyze_pool(candidates, query)
    keys = {c.url: c.key for c in candidates}
    assert pool.meaning(keys[BURNOUT[0][0]]) == 1.0 and pool.meaning(keys[SIGNS[0][0]]) == 0.0


# --- an engine that answered part of the query: its rows lacking the term the others carry rank lower ---------

VEGAN = [
    (
        "https://www.happycow.example/lisbon",
        "Vegan restaurants in Lisbon",
        "The best vegan places to eat in Lisbon.",
    ),
    (
        "https://www.timeout.example/lisbon-vegan",
        "Lisbon's best vegan restaurants",
        "Plant-based restaurants across Lisbon.",
    ),
    (
        "https://www.veggie.example/lisbon",
        "Where to eat vegan in Lisbon",
        "Vegan restaurants and cafés in Lisbon.",
    ),
    (
        "https://www.blog.example/lisbon-vegan-guide",
        "A vegan guide to Lisbon",
        "Vegan bakeries and restaurants in Lisbon.",
    ),
]
LISBON = [
    ("https://www.tripadvisor.example/lisbon", "THE 10 BEST Restaurants in Lisbon", "Restaurants in Lisbon, ranked by travellers."),
    ("https://www.michelin.example/lisbon", "Lisbon restaurants - MICHELIN Guide", "Starred restaurants in Lisbon."),
    ("https://www.eater.example/lisbon", "The 38 essential Lisbon restaurants", "Where to eat in Lisbon right now: restaurants."),
]  # fmt: skip


def test_rows_of_an_engine_that_left_out_a_key_term_rank_lower_and_say_which() -> None:
    """Bing's rows carry the anchor (Lisbon) but none carries "vegan", which every row of the other engine
    does: bing answered part of the query, so its rows rank after the rows that carry the whole of it, and the
    explanation names the term they lack."""
    answers = [answer("bing", LISBON), answer("google", VEGAN[:3])]
    on = search("vegan restaurants in lisbon", answers)
    urls = [r.url for r in on.results]
    assert urls[:3] == [v[0] for v in VEGAN[:3]] and set(urls[3:]) == {r[0] for r in LISBON}
    demoted = next(r for r in on.results if r.url == LISBON[0][0])
    assert (
        "lacks 'vegan', which 3 of the other engines' 3 results mention and 0 of bing's 3" in demoted.reason
    )
    assert "demoted" in demoted.reason
    # The demotion alone does it (content reliability off), and without it bing's first row ranks higher.
    alone = search("vegan restaurants in lisbon", answers, agree={"content_power": 0})
    assert [r.url for r in alone.results][:3] == [v[0] for v in VEGAN[:3]]
    off = search(
        "vegan restaurants in lisbon", answers, filters={"anchor_demotion": 1}, agree={"content_power": 0}
    )
    off_urls = [r.url for r in off.results]
    assert off_urls.index(LISBON[0][0]) < off_urls.index(VEGAN[2][0])
    assert all("lacks" not in r.reason for r in off.results)


def test_a_row_lacking_a_term_its_own_engine_mostly_carries_is_not_demoted() -> None:
    """One row of an engine whose other rows carry the term is a page that says it in other words
    ("plant-based"), not an engine that answered part of the query."""
    plant = (
        "https://www.plants.example/lisbon",
        "Plant-based eating in Lisbon",
        "Restaurants in Lisbon, no meat.",
    )
    query = analyze_query("vegan restaurants in lisbon")
    candidates, _ = build_candidates(
        [answer("bing", [VEGAN[3], plant, VEGAN[0], VEGAN[1]]), answer("google", VEGAN[:3])], query
    )
    pool = analyze_pool(candidates, query)
    keys = {c.url: c.key for c in candidates}
    assert pool.partial_engines == {}
    assert pool.lacks_engine_term(keys[plant[0]]) is None


def test_the_engine_that_left_out_the_more_specific_term_is_the_partial_one() -> None:
    """Bait pages repeat the query's generic words; a good list need not ("burnout" pages that never say
    "professional"). When each engine carries a term the other leaves out, only the one that left out the more
    specific term has its rows demoted."""
    burnout = [
        ("https://www.helpguide.example/burnout", "Burnout: signs and symptoms", "Signs of burnout and how to recover."),
        ("https://www.mayo.example/job-burnout", "Job burnout: how to spot it", "Job burnout is work-related stress."),
        ("https://www.who.example/burnout", "Burn-out an occupational phenomenon", "Burnout results from chronic stress."),
    ]  # fmt: skip
    query = analyze_query("signs of professional burnout")
    candidates, _ = build_candidates([answer("bing", SIGNS), answer("google", burnout)], query)
    pool = analyze_pool(candidates, query)
    keys = {c.url: c.key for c in candidates}
    assert "google" not in pool.partial_engines
    assert set(pool.partial_engines.get("bing", {})) == {"burnout"}
    assert all(pool.lacks_engine_term(keys[b[0]]) is None for b in burnout)


def test_rows_in_another_form_are_not_demoted() -> None:
    """A row that carries none of the query's words (a translation) is not judged by the anchor rule."""
    zurich = [
        (
            "https://www.zuerich.com/hiking",
            "Hiking trails near Zurich",
            "The best hiking trails around Zurich.",
        ),
        ("https://www.alltrails.com/zurich", "Best trails near Zurich", "Hiking near Zurich: 120 trails."),
        ("https://www.myswitzerland.com/zurich-hikes", "Hikes near Zurich", "Hiking trails close to Zurich."),
    ]
    german = (
        "https://www.wandern.ch/",
        "Wanderwege rund um Zürich",
        "Die schönsten Wanderungen am Uetliberg.",
    )
    french = ("https://www.randos.ch/", "Randonnées au bord du lac", "Sentiers pédestres du canton.")
    query = analyze_query("hiking trails near zurich")
    candidates, _ = build_candidates([answer("google", [*zurich, german, french])], query)
    pool = analyze_pool(candidates, query)
    assert pool.anchor is not None and pool.anchor.text == "zurich"
    keys = {c.url: c.key for c in candidates}
    assert pool.lacks_anchor(keys[german[0]]) is None  # Zürich folds to zurich
    assert pool.lacks_anchor(keys[french[0]]) is None  # no query word at all: another form, not judged


def test_cjk_queries_are_not_demoted_and_keep_their_rows() -> None:
    rows = [
        ("https://www.gov.cn/a", "东数西算工程 国家枢纽节点", "东数西算 八个国家算力枢纽节点的定位"),
        (
            "https://baike.baidu.com/b",
            "东数西算_百度百科",
            "东数西算是指通过构建数据中心、云计算、大数据一体化的新型算力网络体系",
        ),
        ("https://www.example.cn/c", "国家枢纽节点建设进展", "全国一体化算力网络国家枢纽节点"),
    ]
    query = "东数西算 八个国家枢纽节点 定位"
    response = search(query, [answer("bing-cn", rows), answer("anysearch", rows[::-1])])
    assert {r.url for r in response.results} == {r[0] for r in rows}
    assert all("lacks" not in r.reason for r in response.results)
    candidates, _ = build_candidates([answer("bing-cn", rows)], analyze_query(query))
    pool = analyze_pool(candidates, analyze_query(query))
    assert pool.anchor is None
    assert all(pool.meaning(c.key) > 0 for c in candidates)


def test_tables_loaded_answers_for_the_tables_that_judge_the_request() -> None:
    load_tables("de")
    assert tables_loaded("de-AT") and tables_loaded("DE")
    load_tables(None)
    # a language without tables is judged as English
    assert tables_loaded(None) and tables_loaded("xx-unknown")
