"""Echo pages: rows generated from the query rather than about it (an ideas board or Q&A farm titled with the
query, a results page repeating it, a page repeating a misspelling the engines corrected).

Read by the pool analysis (``ranking.pool``), which records every echo row once per search, and reported by
the junk filter as junk.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from serpfuse.config import DEFAULT_FILTERS, FilterConfig
from serpfuse.ranking.query import STOPWORDS
from serpfuse.ranking.tables import junk_rules
from serpfuse.text import fold, text_memo, words

if TYPE_CHECKING:
    from serpfuse.ranking.query import QueryAnalysis


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
    url: str = "",
) -> str | None:
    """Why a row is a page generated from the query rather than about it, or None.

    The signs, whatever the query's case and punctuation and in either spelling (as typed, or as the engines
    spell it): a part of its title is the query and the rest only words like "ideas" or "answers" (an ideas
    board, a Q&A farm); its title holds the query and its snippet says it ``echo_repeats`` times; its snippet
    says it twice or more with filler around it (the query's words are ``echo_density`` of the snippet or more); a
    segment of its URL's path, anywhere, is the query under a results or tag path, or is a misspelling of it;
    or it repeats, with the query's other key words, a misspelling that the engines' rows corrected
    (``spelled``: typed word -> the pool's spelling).
    """
    if query is None:
        return None
    typed = tuple(typed_words(query))
    fixed = tuple(spelled.get(w, w) for w in typed) if spelled else typed
    return (
        _title_echo(title, snippet, typed, fixed, cfg.echo_repeats, cfg.echo_min_words)
        or _snippet_echo(snippet, typed, fixed, cfg.echo_min_words, cfg.echo_density)
        or _slug_echo(url, typed, fixed)
        or _typo_echo(list(typed), query, row_words, spelled)
    )


def title_parts(title: str) -> list[list[str]]:
    """The title's words in the parts its separators make ("best raen in tokyo? | Answers" is two parts)."""
    parts = re.split(r"\s[|\-–—·•:]\s|[|?!:·•]", fold(title))
    return [w for w in (words(p) for p in parts) if w]


@text_memo()  # a row's text against the query's words: judged once while both come back
def _title_echo(
    title: str,
    snippet: str,
    typed: tuple[str, ...],
    fixed: tuple[str, ...],
    repeats: int,
    min_words: int,
) -> str | None:
    """The first two signs of ``echo_verdict``: the query in the title, with echo words or repeated."""
    folded = fold(title)
    if not all(w in folded for w in typed) and not all(w in folded for w in fixed):
        return None  # the quick test: most titles lack some query word
    # whole words: "restaurants in belgrad" is not in "... restaurants in belgrade"
    if len(typed) >= min_words:
        title_words, snippet_words = words(title), words(snippet)
        for query_words in dict.fromkeys((typed, fixed)):
            if (
                _contains_in_order(title_words, list(query_words)) >= 0
                and _occurrences(snippet_words, list(query_words)) >= repeats
            ):
                return f"repeats the query in its title and {repeats} times or more in its snippet"
    if len(typed) < 2:
        return None
    echo_words = junk_rules().echo_title_words
    parts = title_parts(title)
    for query_words in dict.fromkeys((typed, fixed)):
        for i, part in enumerate(parts):
            at = _contains_in_order(part, list(query_words))
            if at < 0:
                continue
            rest = (
                part[:at] + part[at + len(query_words) :] + [w for p in parts[:i] + parts[i + 1 :] for w in p]
            )
            if rest and all(w in echo_words for w in rest):
                return f"echoes the query in its title ('{title}')"
    return None


@text_memo()
def _snippet_echo(
    snippet: str, typed: tuple[str, ...], fixed: tuple[str, ...], min_words: int, density: float
) -> str | None:
    """The snippet sign of ``echo_verdict``: it says the query (either spelling) twice or more, and the query's
    words are ``density`` of its words or more, and every other word is filler (a stopword or one of the table's
    ``echo_filler_words``): words around the query, not a page about it ("Find X answers here"). A real page that
    says the query twice says much else (crw56: a sixth to a quarter), or at least one word of its own ("The
    best ramen in Tokyo ... Fuunji is one of the best ramen in Tokyo")."""
    if len(typed) < min_words:
        return None
    tokens = words(snippet)
    for query_words in dict.fromkeys((typed, fixed)):
        said = _occurrences(tokens, list(query_words))
        dense = said >= 2 and said * len(query_words) >= density * len(tokens) - 1e-9
        if dense and _only_filler(_without(tokens, list(query_words))):
            return f"says the query {said} times in a snippet of {len(tokens)} words, with filler around it"
    return None


def _without(tokens: list[str], phrase: list[str]) -> list[str]:
    """``tokens`` with every occurrence of ``phrase`` taken out."""
    n, out, i = len(phrase), [], 0
    while i < len(tokens):
        if tokens[i : i + n] == phrase:
            i += n
        else:
            out.append(tokens[i])
            i += 1
    return out


def _only_filler(rest: list[str]) -> bool:
    rules = junk_rules()
    return all(
        w in STOPWORDS or w in rules.echo_filler_words or w in rules.echo_title_words or w.isdigit()
        for w in rest
    )


# Path segments under which a page is a listing made for whatever was asked (a results, tag or Q&A page).
_LISTING_SEGMENTS = frozenset({"search", "results", "tag", "tags", "topic", "topics", "questions", "q", "s"})


@text_memo()  # a row's URL against the query's words: judged once while both come back
def _slug_echo(url: str, typed: tuple[str, ...], fixed: tuple[str, ...]) -> str | None:
    """The URL sign of ``echo_verdict``: a path segment, anywhere, is the query under a listing path, or is the
    query with its misspelling (a page no one would name so unless it was made from the query)."""
    if not url or len(typed) < 2:
        return None
    low = fold(unquote(url))
    if typed[-1] not in low and fixed[-1] not in low:
        return None  # the quick test: most addresses lack the query's last word
    path = [unquote(seg) for seg in urlsplit(url).path.lower().split("/") if seg]
    for i, segment in enumerate(path):
        slug = tuple(words(segment.replace("_", " ").replace("+", " ")))
        if slug == typed and typed != fixed:
            return f"its address repeats the query's misspelling ('{segment}')"
        if slug in (typed, fixed) and _LISTING_SEGMENTS.intersection(path[:i]):
            return f"its address is a listing made for the query ('{'/'.join(path)}')"
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
