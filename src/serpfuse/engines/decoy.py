"""The decoy check: does an engine's list answer the query, or only its first word?

A blocked engine is easy to see (a CAPTCHA, a 403, no rows). The failure this module is for looks like success:
Bing, asked without the cookies its home page sets, answers HTTP 200 with ten well-formed results about the
query's *first* word ("rust async runtime" gives the game Rust). free-search-mcp 0.16.0 (PyPI, 2026-10;
``coherence.py``, measured 2026-09-21) found healthy lists with 0.5-1.0 of their rows mentioning some query term
past the first and decoy lists with 0.0-0.2, nothing between; DDDMUC/dsh-free-search#38 (2026-09-21) met the
same with an overlap check. One row that does not echo the query says little (a good page often does not); a
whole list that never mentions anything past the first word is an engine answering another question.

So: the query's content terms (words without the ranking's stopwords and operators; CJK runs as bigrams), the
first one set aside; a row "mentions" the rest when its title, snippet or URL holds one of them (a word, or a
longer word it starts: "runtime" finds "runtimes"; a bigram as a substring). A list of at least ``MIN_ROWS`` rows
of which fewer than ``DECOY_SHARE`` mention the rest is a decoy. Lists too short, and queries with fewer than
two terms past the first, are never judged (free-search-mcp judges them the same way: "a one- or two-word query
... cannot tell"). Pure and engine-agnostic: the live source asks it of every engine's answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

from serpfuse import data
from serpfuse.models import EngineRow
from serpfuse.text import cjk_bigrams, fold, words

DECOY_SHARE = 0.3  # in the empty gap between healthy (>= 0.5) and decoy (<= 0.2) lists, measured 2026-09-21
MIN_ROWS = 4  # below this the share is noise
# A two-word query's second word is too thin a thread: a real engine's honest best for "volt bulgarie" or a
# misspelt "what does god do to tratorirs" is pages about the first word (AQL captures, qwant and ecosia).
MIN_REST_TERMS = 2
# Tokens no row is expected to echo: search operators and boolean words.
_OPERATOR = re.compile(r"^[-+]?[a-z]+:", re.IGNORECASE)
_BOOLEANS = frozenset({"OR", "AND", "NOT", "|"})
# Function words beyond the ranking's own stopwords: a decoy page holds "on" and "why" like any page.
_MORE_STOPWORDS = frozenset(
    [
        "about",
        "as",
        "at",
        "be",
        "by",
        "can",
        "did",
        "get",
        "has",
        "have",
        "i",
        "if",
        "into",
        "it",
        "its",
        "me",
        "my",
        "not",
        "on",
        "our",
        "so",
        "than",
        "that",
        "this",
        "was",
        "we",
        "were",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
    ]
)
_SUFFIXES = ("ing", "ed", "s")


@cache
def _stopwords() -> frozenset[str]:
    listed = (line.strip() for line in data.lines("query_stopwords.txt"))
    return frozenset(w for w in listed if w and not w.startswith("#")) | _MORE_STOPWORDS


def _stem(word: str) -> str:
    """The crudest stem that lets "borrowing" find "borrow": never below four letters, never on digits."""
    if not word.isalpha() or word.endswith("ss"):
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def query_terms(text: str) -> list[str]:
    """The query's content terms in order, each once: folded words (stemmed) and CJK bigrams."""
    out: list[str] = []
    for token in text.split():
        if token in _BOOLEANS or _OPERATOR.match(token):
            continue
        stop = _stopwords()
        out.extend(cjk_bigrams(token))
        out.extend(_stem(w) for w in words(token) if w not in stop and (len(w) > 1 or w.isdigit()))
    return list(dict.fromkeys(out))


def _mentions(row: EngineRow, rest: Sequence[str]) -> bool:
    haystack = fold(f"{row.title} {row.snippet} {row.url}")
    row_words = words(haystack)
    for term in rest:
        if term.isascii():
            if any(w.startswith(term) for w in row_words):
                return True
        elif term in haystack:
            return True
    return False


def on_topic_share(rows: Sequence[EngineRow], text: str) -> float | None:
    """The share of rows mentioning a query term past the first; None where the list cannot be judged."""
    terms = query_terms(text)
    if not terms or len(rows) < MIN_ROWS:
        return None
    first = terms[0]
    # What the first term already holds proves nothing ("postgresql" once "postgres" leads).
    rest = [t for t in terms[1:] if t not in first and first not in t]
    if len(rest) < MIN_REST_TERMS:
        return None
    return sum(_mentions(row, rest) for row in rows) / len(rows)


def decoy_reason(rows: Sequence[EngineRow], text: str) -> str | None:
    """Why this list is a decoy (a sentence for the engine's status line), or None when it is not one."""
    share = on_topic_share(rows, text)
    if share is None or share >= DECOY_SHARE:
        return None
    mentioning = round(share * len(rows))
    return (
        f"decoy list: {mentioning} of {len(rows)} rows mention the query past its first word; "
        "its rows are kept out of the results"
    )
