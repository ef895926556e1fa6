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
