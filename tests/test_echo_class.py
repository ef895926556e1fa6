"""Echo pages as a class, in shapes the robustness generator does not make: a title that is the query in any
case or punctuation, with a site or Q&A label before or after it, or with the engines' spelling; a URL whose
last segment is the query (a misspelling, or under a results or tag path); a page repeating a misspelling."""

from __future__ import annotations

import pytest

from conftest import cand
from serpfuse.ranking.echo import echo_verdict
from serpfuse.ranking.pool import analyze_pool
from serpfuse.ranking.query import analyze_query

TYPO_QUERY = "best raen in tokyo"
GOOD = [  # the engines' own rows: they spell it "ramen"
    ("https://guide.example/tokyo-ramen", "The 12 best ramen shops in Tokyo", "Where to eat ramen in Tokyo: "
     "tonkotsu, shoyu and miso ramen from Shinjuku to Ikebukuro."),
    ("https://food.example/ramen/tokyo", "Tokyo ramen guide", "Our favourite ramen bowls in Tokyo, by area."),
    ("https://travel.example/eat/ramen", "Best ramen in Tokyo (2026)", "A local's list of the best ramen "
     "restaurants in Tokyo."),
    ("https://blog.example/noodles", "Ramen nights in Tokyo", "Slurping ramen across Tokyo for a month."),
]  # fmt: skip
ECHOES = {
    "upper case, a label after a question mark": ("https://askaround.example/t/991", "BEST RAEN IN TOKYO? | "
                                                  "Answers", "Ask the community."),
    "a Q&A label before the query": ("https://qa.example/post/5", "Questions: Best Raen in Tokyo",
                                     "Members discuss it."),
    "the engines' spelling with echo words": ("https://pins.example/b/77", "Best ramen in Tokyo - Ideas",
                                              "Save pins to your board."),
    "a misspelt slug": ("https://listicle.example/best_raen_in_tokyo", "Top picks this week",
                        "Our editors' choices."),
    "a results path": ("https://finder.example/search/best-ramen-in-tokyo", "Finder", "Related searches."),
    "the misspelling repeated with the other words": ("https://farm.example/x", "Tokyo eats",
                                                      "Looking for the best raen in tokyo? Best raen picks."),
    "the query and a site name": ("https://boards.example/q/best-raen", "best raen in tokyo - AskBoards",
                                  "A thread."),
    "the query as typed, repeated in the snippet": ("https://mirror.example/p/1", "Best Raen in Tokyo",
                                                    "best raen in tokyo. Best raen in Tokyo: best raen in tokyo."),
    "the query as the slug, no listing path": ("https://www.pages.example/best-raen-in-tokyo",
                                               "Tokyo ideas", "Collections."),
    # issue 43: the class, not the shapes tested before
    "the engines' spelling before a site name, said twice with filler": (
        "https://askboards.example/t/12", "Best Ramen in Tokyo - AskBoards",
        "Best ramen in Tokyo? Find best ramen in Tokyo answers here."),
    "a misspelt slug in the middle of the path": ("https://forum.example/q/best-raen-in-tokyo/answers",
                                                  "Community answers", "Join the discussion."),
    "the query's slug under a listing path, then a page number": (
        "https://finder.example/search/best-ramen-in-tokyo/page/2", "Finder", "More results."),
    "a snippet of filler around the engines' spelling, no title": (
        "https://hub.example/7", "", "best ramen in tokyo: all about best ramen in tokyo and more"),
}  # fmt: skip


@pytest.mark.parametrize("shape", sorted(ECHOES))
def test_each_shape_is_an_echo(shape: str) -> None:
    query = analyze_query(TYPO_QUERY)
    rows = [cand(*r) for r in GOOD] + [cand(*ECHOES[shape])]
    pool = analyze_pool(rows, query)
    assert pool.spelled == {"raen": "ramen"}  # the pool taught the spelling
    assert rows[-1].key in pool.echoes, shape
    assert not any(r.key in pool.echoes for r in rows[:-1])


@pytest.mark.parametrize(
    ("title", "url"),
    [
        ("Things to Do in Kyoto in Autumn | Japan Guide", "https://www.japan-guide.example/kyoto-autumn"),
        ("Kyoto in autumn: things to do", "https://travel.example/things-to-do-in-kyoto-in-autumn"),
        ("Best ramen in Tokyo (2026)", "https://travel.example/best-ramen-in-tokyo"),
    ],
)
def test_a_real_page_named_like_the_query_is_not_an_echo(title: str, url: str) -> None:
    """Correctly spelt and outside a listing path, a title or slug that says the query is an article's."""
    for q in ("things to do in kyoto in autumn", "best ramen in tokyo"):
        assert echo_verdict(title, "A guide by a local writer.", analyze_query(q), url=url) is None


def test_a_real_page_saying_the_query_twice_among_its_own_words_is_not_an_echo() -> None:
    snippet = (
        "From tonkotsu in Shinjuku to tsukemen in Ikebukuro, the best ramen in Tokyo is cheap; here is where "
        "the best ramen in Tokyo hides."
    )
    query = analyze_query("best ramen in tokyo")
    assert echo_verdict("Best Ramen in Tokyo | Time Out", snippet, query) is None
    filler = "the best ramen in Tokyo, the best ramen in Tokyo: see more"
    assert echo_verdict("Time Out", filler, query) is not None


def test_no_relevant_crw56_row_is_cut_by_the_echo_rule(data_dir) -> None:
    """Every judged crw56 query (dev and test) through the filters, with the echo rule on and off: the rows it
    cuts (cut as junk only while it is on) hold none judged relevant."""
    import asyncio

    from benchmarks.crw56 import RECORDED_AT
    from benchmarks.setups import load_crw56
    from serpfuse.config import FilterConfig, RankingConfig
    from serpfuse.models import SearchRequest
    from serpfuse.pipeline import ranking_inputs
    from serpfuse.sources.fanout import fan_out
    from serpfuse.sources.replay import ReplaySource

    corpus = load_crw56(data_dir)
    source = ReplaySource(corpus.recording)
    on, off = RankingConfig(), RankingConfig(filters=FilterConfig(echo=False))
    relevant = 0
    for q in (q for q in corpus.split("all") if q.judged):
        request, query = SearchRequest(query=q.query), analyze_query(q.query)
        answers = asyncio.run(fan_out(source, request, query)).answers

        def junk(config: RankingConfig, answers=answers, request=request, query=query) -> set[str]:
            outcome = ranking_inputs(answers, request, config=config, query=query, now=RECORDED_AT).outcome
            return {key for key, c in outcome.cut.items() if c.step == "junk"}

        good = {key for key, grade in q.judged.items() if grade >= 1}
        relevant += len(good)
        assert not (junk(on) - junk(off)) & good, q.query
    assert relevant > 100  # the judged relevant rows were all looked at
