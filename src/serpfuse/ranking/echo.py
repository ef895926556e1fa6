"""Echo pages: rows generated from the query rather than about it (an ideas board or Q&A farm titled with the
query, a results page repeating it, a page repeating a misspelling the engines corrected).

Read by the pool analysis (``ranking.pool``), which records every echo row once per search, and reported by
the junk filter as junk.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING

from serpfuse.config import DEFAULT_FILTERS, FilterConfig
from serpfuse.ranking.tables import junk_rules
from serpfuse.text import fold, words

if TYPE_CHECKING:
    from serpfuse.ranking.query import QueryAnalysis

_ROW_MEMO = 16384  # a row's title against the query's words is judged once while both keep coming back


def page_title_words(title: str) -> list[str]:
    """Words of the title without its trailing site name ("BEST meaning | Collins English Dictionary")."""
    cut = max((title.rfind(sep) for sep in junk_rules().title_site_separators), default=-1)
    own = title[:cut] if cut > 0 else title
    return words(own)


# A page titled with the query as typed whose snippet says it this many times was generated from the query
# (a results page, a tag page, an "everything about X" farm): real listicles say it once or twice ("the best
# rooftop bars in Singapore ... one of the best rooftop bars in Singapore"). Queries of this many words or
# more only, as a short phrase ("java island") recurs naturally in a page about it.


@lru_cache(maxsize=64)
def typed_words(query: QueryAnalysis) -> list[str]:
    """The query's words as typed (folded), once per query rather than once per row."""
    return words(query.text)


def _occurrences(tokens: list[str], phrase: list[str]) -> int:
    n = len(phrase)
    return sum(tokens[i : i + n] == phrase for i in range(len(tokens) - n + 1)) if n else 0


def _contains_in_order(tokens: list[str], phrase: list[str]) -> int:
    """Where ``phrase`` starts as consecutive words of ``tokens``, or -1."""
    n = len(phrase)
    return next((i for i in range(len(tokens) - n + 1) if tokens[i : i + n] == phrase), -1) if n else -1


def echo_verdict(
    title: str,
    snippet: str,
    query: QueryAnalysis | None,
    row_words: Iterable[str] = (),
    spelled: Mapping[str, str] | None = None,
    cfg: FilterConfig = DEFAULT_FILTERS,
) -> str | None:
    """Why a row is a page generated from the query rather than about it, or None.

    Three signs, whatever the query's spelling: its title is the query's words in order plus only words like
    "ideas" or "answers" (an ideas board, a Q&A farm); its title holds the query as typed and its snippet
    says it ``echo_repeats`` times; or it repeats, with the query's other key words, a misspelling that
    the engines' rows corrected (``spelled``: typed word -> the pool's spelling).
    """
    if query is None:
        return None
    typed = typed_words(query)
    echo = _title_echo(title, snippet, tuple(typed), cfg.echo_repeats, cfg.echo_min_words)
    return echo or _typo_echo(typed, query, row_words, spelled)


@lru_cache(maxsize=_ROW_MEMO)  # a row's text against the query's words: judged once while both come back
def _title_echo(
    title: str, snippet: str, query_words: tuple[str, ...], repeats: int, min_words: int
) -> str | None:
    """The first two signs of ``echo_verdict``: the query in the title, with echo words or repeated."""
    typed = list(query_words)
    folded = fold(title)
    if not all(w in folded for w in typed):  # the quick test: most titles lack some query word
        return None
    # whole words: "restaurants in belgrad" is not in "... restaurants in belgrade"
    if (
        len(typed) >= min_words
        and _contains_in_order(words(title), typed) >= 0
        and _occurrences(words(snippet), typed) >= repeats
    ):
        return f"repeats the query in its title and {repeats} times or more in its snippet"
    echo_words = junk_rules().echo_title_words
    for tokens in (page_title_words(title), words(title)):  # "<query> Ideas" and "<query> - Answers"
        at = _contains_in_order(tokens, typed)
        rest = tokens[:at] + tokens[at + len(typed) :] if at >= 0 and len(typed) >= 2 else []
        if rest and all(w in echo_words for w in rest):
            return f"echoes the query in its title ('{title}')"
    return None


def _typo_echo(
    typed: list[str], query: QueryAnalysis, row_words: Iterable[str], spelled: Mapping[str, str] | None
) -> str | None:
    if not spelled:
        return None
    present = set(row_words)
    typo = next((w for w in typed if w in spelled and w in present), None)
    others = [w for w in query.terms if w != typo]
    if typo and sum(w in present for w in others) >= len(others) - 1:
        return f"repeats the query's misspelling '{typo}' (the other results write '{spelled[typo]}')"
    return None
