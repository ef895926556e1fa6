"""Text primitives shared by query analysis, filters and rankers: folding, tokens, CJK bigrams, shingles."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import cache, cached_property, lru_cache
from typing import Any, Literal, TypeVar
from urllib.parse import unquote

Script = Literal["cjk", "ascii", "mixed"]

# CJK Unified Ideographs (+ext A, compatibility), kana and hangul: the scripts with no spaces between words.
_CJK_RANGES = (
    (0x3040, 0x30FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7AF),
    (0xF900, 0xFAFF),
    (0x20000, 0x2FA1F),
)
# One character class of all the ranges: a regex scan is ~50x faster than testing every character in Python.
_CJK_CLASS = "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _CJK_RANGES)
# No CJK character comes before this one: a text whose characters all do (max() scans it in C) needs no CJK
# scan, and the CJK patterns are compiled on first need (their character class takes 11 ms to compile).
_CJK_FIRST = chr(_CJK_RANGES[0][0])
_WORD = re.compile(r"[a-z0-9]+")


@cache
def _cjk_pattern(form: str) -> re.Pattern[str]:
    return re.compile(form.format(cjk=_CJK_CLASS))


def _may_have_cjk(text: str) -> bool:
    return bool(text) and max(text) >= _CJK_FIRST


_TAG = re.compile(r"<[^>]+>")
_SPACE = re.compile(r"\s+")
# The same titles and snippets are folded and split by every stage of a search (candidates, filters, rankers,
# selection): both are pure, so each text is worked out once and then looked up. 8192 texts hold a 32-engine flood's
# titles and snippets (6400); past that a memo grew a process by memory (~0.6 KB a text), not speed. The ranking's
# per-row memos keep as many.
TEXT_MEMO = 8192
_TEXT_MEMOS: list[Any] = []  # every memo made by ``text_memo``, for ``forget_texts``
F = TypeVar("F", bound=Callable[..., Any])


def text_memo(size: int = TEXT_MEMO) -> Callable[[F], F]:
    """A memo of ``size`` entries for a function of one row's texts (title, snippet, URL, host), which
    ``forget_texts`` empties."""

    def memoised(fn: F) -> F:
        memo = lru_cache(maxsize=size)(fn)
        _TEXT_MEMOS.append(memo)
        return memo  # type: ignore[return-value]

    return memoised


def forget_texts() -> None:
    """Empty every ``text_memo``. Their use is within a search (its rows' texts meet every stage, and several
    engines), not across searches: crw56's queries ranked in turn in one process took 1.82 ms a query with them
    emptied before each, 1.87 with them kept (``python -m benchmarks.text_memos``), while each worker of a server
    that kept them held 27 MB more after 1,100 searches (``benchmarks.serve_memory --soak 10``: 94 against
    67 MB). Words' memos (stems, frequencies) are not texts' and stay."""
    for memo in _TEXT_MEMOS:
        memo.cache_clear()


def is_cjk(ch: str) -> bool:
    return _may_have_cjk(ch) and _cjk_pattern("[{cjk}]").fullmatch(ch) is not None


def has_cjk(text: str) -> bool:
    return _may_have_cjk(text) and _cjk_pattern("[{cjk}]").search(text) is not None


@text_memo()
def fold(text: str) -> str:
    """Lowercase and strip diacritics (café -> cafe), keeping CJK untouched."""
    if text.isascii():  # most titles and snippets: NFKD leaves ASCII as it is and it has no combining marks
        return text.lower()
    return unicodedata.normalize("NFKD", text).translate(_MARKS).lower()


class _CombiningMarks(dict):
    """``str.translate`` table dropping combining marks (code point -> None) and keeping every other character
    (-> itself): filled in as characters are met, so the scan runs in C rather than character by character."""

    def __missing__(self, code: int) -> int | None:
        value = self[code] = None if unicodedata.combining(chr(code)) else code
        return value


_MARKS = _CombiningMarks()


@text_memo()
def _words(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(fold(text)))


@text_memo()
def word_set(text: str) -> frozenset[str]:
    """The distinct ``words`` of a text."""
    return frozenset(_words(text))


def words(text: str) -> list[str]:
    """ASCII word tokens of the folded text."""
    return list(_words(text))


def folded_words(folded: str) -> list[str]:
    """``words`` of a text already ``fold``-ed: no second fold."""
    return _WORD.findall(folded)


def cjk_runs(text: str) -> list[str]:
    return _cjk_pattern("[{cjk}]+").findall(text) if _may_have_cjk(text) else []


def cjk_bigrams(text: str) -> list[str]:
    """Overlapping two-character tokens of every CJK run; a lone character stands for itself."""
    out: list[str] = []
    for run in cjk_runs(text):
        if len(run) == 1:
            out.append(run)
        else:
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
    return out


def script_of(text: str) -> Script:
    cjk = has_cjk(text)
    latin = bool(_WORD.search(fold(text)))
    if cjk and latin:
        return "mixed"
    return "cjk" if cjk else "ascii"


def shingle_tokens(text: str) -> list[str]:
    """consensus-v2.1's shingle tokens: [a-z0-9]+ runs and single CJK characters, lowercased."""
    low = text.lower()
    return _cjk_pattern("[a-z0-9]+|[{cjk}]").findall(low) if _may_have_cjk(low) else _WORD.findall(low)


def clean_text(text: str | None) -> str:
    """Strip tags, unescape nothing, collapse whitespace (SearXNG's normalisation)."""
    if not text:
        return ""
    return _clean(text)


@text_memo()
def _clean(text: str) -> str:
    # str.split() splits on exactly the characters \s matches (Unicode whitespace) and drops the ends
    return " ".join((_TAG.sub("", text) if "<" in text else text).split())


# What a terminal acts on instead of showing: C0 controls (ESC, BEL, NUL...), DEL, the C1 controls (CSI
# is 0x9b, an ESC on its own), and the bidi embeddings, overrides and isolates that reorder what follows them
# on screen. Tab, newline and carriage return are whitespace: a one-line field gets a space for them.
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_LINE_BREAKS = str.maketrans("\t\n\r", "   ")


def without_controls(text: str) -> str:
    """``text`` as one line with nothing a terminal would act on (``_CONTROLS`` dropped, tab and line breaks
    made spaces): engine text is shown as it is, never obeyed."""
    if text.isprintable():  # most text: C's scan says there is nothing to drop (controls are not printable)
        return text
    return _CONTROLS.sub("", text.translate(_LINE_BREAKS))


def url_without_controls(url: str) -> str:
    """``url`` as a browser sends it: tab and line breaks removed, any other control percent-encoded, so the
    link still leads where it did and nothing in it reaches a terminal raw."""
    if url.isprintable():
        return url
    url = url.replace("\t", "").replace("\n", "").replace("\r", "")
    return _CONTROLS.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), url)


class RowForm:
    """A row's title, snippet and URL as the stages read them (candidates, filters, rankers, selection): each
    piece is worked out on first use and then kept, so no stage folds or splits the same text again. A candidate
    holds its form (``Candidate.form``); ``row_form`` keeps the last few searches' forms besides."""

    def __init__(self, title: str, snippet: str, url: str) -> None:
        self.title, self.snippet, self.url = title, snippet, url
        self._memo: dict[Any, Any] = {}

    @cached_property
    def title_words(self) -> tuple[str, ...]:
        return _words(self.title)

    @cached_property
    def snippet_words(self) -> tuple[str, ...]:
        return _words(self.snippet)

    @cached_property
    def words(self) -> frozenset[str]:
        """The distinct words of title and snippet (as ``words(f"{title} {snippet}")``)."""
        return frozenset(self.title_words).union(self.snippet_words)

    @cached_property
    def folded(self) -> str:
        """Title and snippet folded, where a CJK term is looked up as a substring."""
        return fold(f"{self.title} {self.snippet}")

    @cached_property
    def url_words(self) -> tuple[str, ...]:
        return _words(unquote(self.url))

    @cached_property
    def shingle_tokens(self) -> tuple[str, ...]:
        return tuple(shingle_tokens(f"{self.title} {self.snippet}"))

    def derived(self, key: Any, compute: Callable[[RowForm], Any]) -> Any:
        """What ``compute`` makes of this row, computed once: ``key`` names it (and its parameters), so a
        stage can keep its own reading of the row here (the relevance guard's stems, the shingles)."""
        try:
            return self._memo[key]
        except KeyError:
            value = self._memo[key] = compute(self)
            return value


# A form holds about 9 KB (the relevance guard's stems): 4,096 of them made 37 MB of a server's ranking worker,
# for rows a live search seldom meets again. 1,024 serve a replay ranked again; a server's worker forgets them
# after each search (``forget_texts``).
@text_memo(1024)
def row_form(title: str, snippet: str, url: str) -> RowForm:
    """The form of a row's text, shared with recent searches that met the same row."""
    return RowForm(title, snippet, url)
