"""The relevance guard: judge from a row's text whether it is about the query, and whether any row is.

Seed 001's coverage guard counts exact query tokens in title + snippet. That is blind in both directions: it
loses "Restaurants in Belgrade" for "belgrad" and "Kyoto in the Fall" for "autumn", and it passes a row
that shares only the query's bait word ("fix", "install", "best"). This guard keeps its idea (a row must
mention enough of what the query is about) and fixes how terms are chosen, weighed and found:

- **Terms.** The query's words minus seed 001's stopwords and English function words. A word that says what
  kind of answer is wanted rather than what it is about (a year, "latest", "guide", "speed", "install"; the
  table ``data/relevance_words.txt``) is a *weak* term; the rest are the *key* terms. A "quoted phrase" is
  one key term whose words must appear in order.
- **Matching.** A term is found in a row when a light stem of it is (plurals, -ing, -ed, a final -e:
  "models" ~ "model", "belgrade" ~ "belgrad"), when two adjacent words are written as one on either side
  ("da nang" ~ "danang"), or when a regional variant is (``data/relevance_variants.txt``: autumn ~ fall).
  A snippet's leading date stamp ("May 4, 2026 · ") is not text and is skipped.
- **Row coverage.** Key terms count 1 and weak terms ``weak_term_weight``; a row needs ``min_coverage`` of
  the total, and covering every key term is always enough.
- **Pool gate.** When no row of the pool mentions the key terms together (all of up to three, three in
  four of more), the engines answered a different question (Bing answering "how to install python on macos"
  with Chrome and WhatsApp downloads): every row is cut and nothing is shown. Weak terms never fire it, since
  a page that answers "jaguar top speed" need not say "speed". The tables are English, so the gate stands
  down when the request names another language.

Every cut row gets one line saying which terms it has and lacks, or what no row mentions.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

from ..query import STOPWORDS
from ..text import words
from .base import FilterContext

if TYPE_CHECKING:
    from ..query import QueryAnalysis
    from ..rankers.base import Candidate

WEAK_SECTIONS = ("recency", "answer-type", "facet", "intent")
# The pool gate wants some row with this share of the key terms (rounded up): all of up to three, then one
# in four may be missing, since a long query is rarely repeated whole in one snippet.
GATE_SHARE = 0.75
_YEAR = re.compile(r"^(19|20)\d\d$")
# A leading date stamp, as Google and Bing put before a snippet ("Oct 7, 2025 · ", "2 days ago · ").
_DATE_STAMP = re.compile(
    r"^\s*(?:\d{1,2}\s+(?:minute|hour|day|week|month|year)s?\s+ago"
    r"|[A-Za-z]{3,9}\.?\s+\d{1,2},\s+\d{4}"
    r"|\d{1,2}\s+[A-Za-z]{3,9}\.?\s+\d{4})\s*[·•—–-]\s*"
)


# --- tables --------------------------------------------------------------------------------------------------


def _data_lines(name: str) -> list[str]:
    text = resources.files("serpfuse.data").joinpath(name).read_text(encoding="utf-8")
    return [line.split("#", 1)[0].strip().lower() for line in text.splitlines()]


@dataclass(frozen=True)
class WordTables:
    function_words: frozenset[str]
    weak_words: dict[str, str]  # word -> its section (recency, answer-type, facet, intent)
    variants: dict[str, frozenset[str]]  # stem of a word -> stems of every word of its class (itself too)


def parse_word_sections(lines: Iterable[str]) -> dict[str, set[str]]:
    """``[section]`` headers followed by one word per line -> {section: words}; blank lines are skipped."""
    sections: dict[str, set[str]] = {}
    current = ""
    for line in lines:
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1].strip()
            sections.setdefault(current, set())
        else:
            sections.setdefault(current, set()).add(line)
    return sections


def parse_variants(lines: Iterable[str]) -> dict[str, frozenset[str]]:
    """One class of words per line -> {stem: stems of its class}, so "colours" finds "colors" too."""
    out: dict[str, frozenset[str]] = {}
    for line in lines:
        group = frozenset(light_stem(w) for w in line.split())
        for stem in group:
            out[stem] = out.get(stem, frozenset()) | group
    return out


@cache
def word_tables() -> WordTables:
    sections = parse_word_sections(_data_lines("relevance_words.txt"))
    weak = {w: name for name in WEAK_SECTIONS for w in sections.get(name, ())}
    return WordTables(
        function_words=frozenset(sections.get("function", ())),
        weak_words=weak,
        variants=parse_variants(line for line in _data_lines("relevance_variants.txt") if line),
    )


# --- words ---------------------------------------------------------------------------------------------------


def light_stem(word: str) -> str:
    """A conservative English suffix stripper: plural -s/-es/-ies, then -ing/-ed, then a final -e.

    It only has to map a query word and a row word of the same lemma to the same string, so it is applied
    to both sides; tokens with digits (4k, oauth2, 2026) and words of three letters or fewer stay as they are.
    """
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("ing") and len(word) >= 6:
        word = word[:-3]
    elif word.endswith("ed") and len(word) >= 5:
        word = word[:-2]
    if word.endswith("e") and len(word) >= 5:
        word = word[:-1]
    return word


def word_stems(word: str) -> set[str]:
    """The stems a word can stand for: its light stem, and for a word ending in -s also the stem without
    that -s, since the -us/-is guard of ``light_stem`` would otherwise keep "gpus" from "gpu"."""
    stems = {light_stem(word)}
    if len(word) > 3 and word.endswith("s"):
        stems.add(light_stem(word[:-1]))
    return stems


def is_year(word: str) -> bool:
    return bool(_YEAR.match(word))


def strip_date_stamp(snippet: str) -> str:
    """The snippet without a leading date stamp ("May 4, 2026 · Nvidia's ..." -> "Nvidia's ...")."""
    return _DATE_STAMP.sub("", snippet, count=1)


@dataclass(frozen=True)
class Term:
    """One thing the query asks about: a word, or the words of a quoted phrase in order."""

    text: str  # as the explanation shows it
    forms: frozenset[tuple[str, ...]]  # stemmed word sequences, any of which counts as the term
    weak: bool


def _word_forms(word: str) -> frozenset[tuple[str, ...]]:
    variants = word_tables().variants
    stems = set().union(*(variants.get(s, {s}) for s in word_stems(word)))
    return frozenset((s,) for s in stems)


def word_role(word: str) -> str:
    """'function', 'weak' or 'key' for one folded query word."""
    tables = word_tables()
    if word in STOPWORDS or word in tables.function_words:
        return "function"
    if is_year(word) or word in tables.weak_words:
        return "weak"
    return "key"


def query_terms(query: QueryAnalysis) -> list[Term]:
    """The terms of a query's text, in order: quoted phrases first as key terms, then the other words."""
    terms: list[Term] = []
    phrase_words: set[str] = set()
    for phrase in query.phrases:
        tokens = words(phrase)
        if len(tokens) > 1:
            terms.append(Term(" ".join(tokens), frozenset({tuple(map(light_stem, tokens))}), weak=False))
            phrase_words.update(tokens)
    for word in dict.fromkeys(words(query.text)):
        role = word_role(word)
        if role == "function" or word in phrase_words:
            continue
        terms.append(Term(word, _word_forms(word), weak=role == "weak"))
    return terms


# --- rows ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RowText:
    """A row's title and snippet as stemmed words, plus every two adjacent words written as one."""

    stems: tuple[str, ...]
    vocabulary: frozenset[str]

    @classmethod
    def of(cls, title: str, snippet: str) -> RowText:
        fields = [words(title), words(strip_date_stamp(snippet))]
        stems = tuple(light_stem(t) for tokens in fields for t in tokens)
        vocabulary = {s for tokens in fields for t in tokens for s in word_stems(t)}
        vocabulary |= {
            light_stem(a + b) for tokens in fields for a, b in zip(tokens, tokens[1:], strict=False)
        }
        return cls(stems=stems, vocabulary=frozenset(vocabulary))

    def has(self, form: tuple[str, ...]) -> bool:
        if len(form) == 1:
            return form[0] in self.vocabulary
        n = len(form)
        return any(self.stems[i : i + n] == form for i in range(len(self.stems) - n + 1))


def _adjacent_pairs(terms: Sequence[Term]) -> list[tuple[Term, Term, str]]:
    """Neighbouring one-word terms with the stem of the two written as one ("da nang" -> "danang")."""
    pairs = []
    for a, b in zip(terms, terms[1:], strict=False):
        if len(a.text.split()) == 1 and len(b.text.split()) == 1:
            pairs.append((a, b, light_stem(a.text + b.text)))
    return pairs


def found_terms(terms: Sequence[Term], row: RowText) -> list[Term]:
    """The terms the row mentions, in query order."""
    found = {t.text for t in terms if any(row.has(f) for f in t.forms)}
    for a, b, compound in _adjacent_pairs(terms):
        if compound in row.vocabulary:
            found.update((a.text, b.text))
    return [t for t in terms if t.text in found]


@dataclass(frozen=True)
class Coverage:
    found: tuple[Term, ...]
    missing: tuple[Term, ...]
    score: float  # weighted share of the terms found
    all_key_terms: bool

    def passes(self, min_coverage: float) -> bool:
        return self.all_key_terms or self.score >= min_coverage - 1e-9


def coverage(terms: Sequence[Term], row: RowText, weak_weight: float) -> Coverage:
    found = found_terms(terms, row)
    found_texts = {t.text for t in found}
    missing = tuple(t for t in terms if t.text not in found_texts)

    def weight(ts: Iterable[Term]) -> float:
        return sum(weak_weight if t.weak else 1.0 for t in ts)

    total = weight(terms)
    key_terms = [t for t in terms if not t.weak]
    return Coverage(
        found=tuple(found),
        missing=missing,
        score=weight(found) / total if total else 1.0,
        all_key_terms=bool(key_terms) and all(t.text in found_texts for t in key_terms),
    )


def _names(terms: Iterable[Term]) -> str:
    return ", ".join(t.text for t in terms)


def coverage_reason(cov: Coverage) -> str:
    if not cov.found:
        return f"mentions none of {_names(cov.missing)}"
    return f"mentions {_names(cov.found)} but not {_names(cov.missing)}"


def gate_need(key_terms: int) -> int:
    """How many key terms the pool's best row must mention together."""
    return math.ceil(GATE_SHARE * key_terms - 1e-9)


def pool_verdict(terms: Sequence[Term], rows: Sequence[RowText]) -> str | None:
    """Why no row of the pool is about the query, or None when some row mentions its key terms together."""
    key_terms = [t for t in terms if not t.weak]
    if not key_terms or not rows:
        return None
    per_row = [{t.text for t in found_terms(key_terms, row)} for row in rows]
    best = max(len(found) for found in per_row)
    if best >= gate_need(len(key_terms)):
        return None
    nowhere = [t for t in key_terms if not any(t.text in found for found in per_row)]
    if nowhere:
        return f"no result mentions {_names(nowhere)}: the engines answered another question"
    return (
        f"no result mentions {_names(key_terms)} together (the best has {best} of {len(key_terms)}): "
        "the engines answered another question"
    )


# --- the filter ----------------------------------------------------------------------------------------------


def is_english(language: str | None) -> bool:
    """True when the request asks for English or names no language (the word tables are English)."""
    return not language or language.lower().replace("_", "-").split("-")[0] in ("en", "all", "auto")


class PoolRelevance:
    """The relevance guard bound to one pool of candidates: the pool verdict is decided once, up front."""

    name = "relevance"

    def __init__(self, terms: list[Term], verdict: str | None, weak_weight: float, min_coverage: float):
        self.terms = terms
        self.verdict = verdict
        self.weak_weight = weak_weight
        self.min_coverage = min_coverage

    def check(self, candidate: Candidate, ctx: FilterContext) -> str | None:
        if not self.terms:
            return None
        if self.verdict:
            return self.verdict
        cov = coverage(self.terms, RowText.of(candidate.title, candidate.snippet), self.weak_weight)
        return None if cov.passes(self.min_coverage) else coverage_reason(cov)


class RelevanceFilter:
    """See the module doc. ``check`` alone judges one row; the filter chain calls ``for_pool`` first so the
    pool gate can see every candidate. CJK and mixed queries are the CJK gate's business, as for seed 001's
    coverage guard."""

    name = "relevance"

    def terms_for(self, ctx: FilterContext) -> list[Term]:
        return [] if ctx.query.is_cjk else query_terms(ctx.query)

    def for_pool(self, candidates: Sequence[Candidate], ctx: FilterContext) -> PoolRelevance:
        terms = self.terms_for(ctx)
        verdict = None
        if terms and ctx.config.pool_gate and is_english(ctx.request.language):
            verdict = pool_verdict(terms, [RowText.of(c.title, c.snippet) for c in candidates])
        return PoolRelevance(terms, verdict, ctx.config.weak_term_weight, ctx.config.min_coverage)

    def check(self, candidate: Candidate, ctx: FilterContext) -> str | None:
        terms = self.terms_for(ctx)
        return PoolRelevance(terms, None, ctx.config.weak_term_weight, ctx.config.min_coverage).check(
            candidate, ctx
        )


RELEVANCE = RelevanceFilter()
