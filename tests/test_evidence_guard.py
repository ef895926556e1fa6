"""The relevance guard follows the engines' evidence: a row short of the query's words is cut only when it
lacks the query's specific meaning and every engine listing it is off-topic; otherwise it is kept, demoted,
and its explanation says which evidence kept it."""

from __future__ import annotations

from conftest import cand, filter_ctx
from serpfuse.config import FilterConfig
from serpfuse.ranking.filters import apply_filters

QUERY = "signs of professional burnout"


def listed(url: str, title: str, snippet: str, engine: str, rank: int):
    row = cand(url, title, snippet)
    row.engine_ranks[engine] = rank
    return row


def pool():
    """The strong engine answers about burnout (its top row names neither "signs" nor "professional"); the
    weak one answers with shop pages for "professional signs"."""
    strong = [
        listed(
            "https://clinic.example/burnout",
            "Job burnout: how to spot it",
            "Burnout is a state of exhaustion at work. Symptoms include fatigue and cynicism.",
            "google",
            1,
        ),
        listed(
            "https://ccohs.example/burnout",
            "Signs of professional burnout",
            "Professional burnout signs: exhaustion, detachment, reduced performance.",
            "google",
            2,
        ),
        listed(
            "https://review.example/burnout",
            "Burnout in professionals: a review",
            "Professional burnout and its signs in clinicians.",
            "google",
            3,
        ),
    ]
    weak = [
        listed("https://shop.example/signs", "Professional Signs", "Custom professional signs for your "
               "shop front, delivered fast.", "bing", 1),
        listed("https://print.example/stickers/custom", "Custom stickers", "Banners and stickers printed today.", "bing", 2),
        listed("https://sign.example/", "Sign makers", "Neon and metal signage.", "bing", 3),
    ]  # fmt: skip
    return strong + weak


def test_an_on_topic_engines_row_lacking_generic_words_is_demoted_not_cut() -> None:
    outcome = apply_filters(pool(), filter_ctx(QUERY))
    kept = {c.url for c in outcome.kept}
    assert "https://clinic.example/burnout" in kept
    why = outcome.demoted["https://clinic.example/burnout"]
    assert "burnout" in why and "kept:" in why and ("google's list is on-topic" in why or "meaning" in why)


def test_an_off_topic_row_of_an_off_topic_engine_is_cut_with_the_evidence() -> None:
    outcome = apply_filters(pool(), filter_ctx(QUERY))
    cut = outcome.cut["https://print.example/stickers/custom"]
    assert cut.step == "relevance" and "off-topic" in cut.reason and "bing" in cut.reason


def test_without_the_evidence_guard_the_strong_engines_row_is_cut() -> None:
    outcome = apply_filters(pool(), filter_ctx(QUERY, FilterConfig(evidence_guard=False)))
    assert outcome.cut["https://clinic.example/burnout"].step == "relevance"
