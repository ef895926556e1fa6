"""How well each unit of a page answers the query, and why.

A unit's score is the share of the query's meaning it holds, plus a prior for its place in the page, plus a small
bonus when it holds the kind of thing the question asks for:

- **The query's words.** The relevance guard's terms (``ranking.words``: function words dropped, "quoted
  phrases" kept whole). A term is found in a unit by any of its forms: the light stem the guard uses, its
  dictionary lemma (simplemma: "works" ~ "worked" ~ "working", "mice" ~ "mouse"), its regional variants (colour ~
  color), and, for a term the page never writes, the page's own words one edit away from it (its spelling:
  "belgrad" ~ "belgrade"). Each term weighs its specificity (9 - Zipf, wordfreq) times how rare it is among
  the page's units (a word every sentence has, the page's own subject, tells the units apart least).
- **Context.** A term found in the unit's heading, or a table row's header, counts at ``CONTEXT`` of its weight;
  one found in the unit before it in the same block at ``NEIGHBOUR`` (a pronoun's antecedent).
- **Position.** Pages put their answer first more often than not: ``LEAD / (1 + index) ** DECAY`` by the unit's
  rank among the page's units.
- **Answer type.** A question that asks when, how many or who gets ``TYPED`` when the unit holds a year or date,
  a number, or a name the query does not.

The constants were chosen on the dev half of WikiQA and checked on the NQ articles (``benchmarks/passages.py``).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from serpfuse.passages.split import Unit
from serpfuse.ranking.query import STOPWORDS
from serpfuse.ranking.specificity import lemma, specificity
from serpfuse.ranking.words import (
    asked_words,
    light_stem,
    one_edit_apart,
    word_role,
    word_stems,
    word_tables,
)
from serpfuse.text import cjk_bigrams, has_cjk

LEAD = 0.35  # the prior of a page's first unit, in shares of the query's meaning
DECAY = 0.5
CONTEXT = 0.5
NEIGHBOUR = 0.3
TYPED = 0.45
WEAK = 0.5  # a weak term's (a year, "latest", "guide") share of a key term's weight
MIN_SPECIFICITY = 1.5
FAMILY = True
PROSE_MIN_WORDS = 12
PROSE = 0.15  # a unit whose words are fewer than this share of function words is a menu or a list of names

_WORD = re.compile(r"[a-z0-9]+")
_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")
_NUMBER = re.compile(
    r"[$€£¥]\s?\d|\b\d[\d,.]*\b|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|hundred|thousand|million|billion)\b"
)
_MONTH = re.compile(
    r"\b(?:january|february|march|april|may|june|july|august|september|october|november|december)\b"
)
_PLACE = re.compile(r"\b(?:in|at|near|from|was|is) ([A-Z][a-z]{2,})")
_NAME = re.compile(r"\b[A-Z][a-z]+(?:\s+(?:``|\"|')?[A-Z][a-z]+(?:''|\"|')?)+")


def fold(text: str) -> str:
    """Lowercase, diacritics dropped (not memoised: page text is seen once)."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def tokens(text: str) -> list[str]:
    """The words of a text: its Latin-script words folded, and for CJK text its character bigrams."""
    found = _WORD.findall(fold(text))
    if has_cjk(text):
        found.extend(cjk_bigrams(text))
    return found


@lru_cache(maxsize=1 << 16)
def word_keys(word: str) -> frozenset[str]:
    """What a page word can match: its light stems and its dictionary lemma's."""
    keys = set(word_stems(word))
    lem = lemma(word)
    if lem != word:
        keys.add(light_stem(lem))
    return frozenset(keys)


@dataclass
class QueryTerm:
    word: str
    keys: frozenset[str]
    weight: float
    weak: bool
    phrase: tuple[frozenset[str], ...] = ()  # a quoted phrase: each word's keys, all needed

    def found(self, vocabulary: set[str]) -> bool:
        if self.phrase:
            return all(not k.isdisjoint(vocabulary) for k in self.phrase)
        return not self.keys.isdisjoint(vocabulary)


def _keys_of(word: str) -> frozenset[str]:
    variants = word_tables().variants
    keys = set(word_keys(word))
    for stem in list(keys):
        keys |= variants.get(stem, frozenset())
    return frozenset(keys)


def query_terms(query: str) -> list[QueryTerm]:
    """The query's terms with their forms and specificity (before the page's own spellings and rarity)."""
    phrases, plain = asked_words(query)
    terms: list[QueryTerm] = []
    for phrase in phrases:
        if len(phrase) == 1:
            plain.insert(0, phrase[0])
            continue
        weight = max(max(specificity(w) for w in phrase), MIN_SPECIFICITY)
        keys = tuple(_keys_of(w) for w in phrase)
        terms.append(QueryTerm(" ".join(phrase), frozenset().union(*keys), weight, False, keys))
    plain = [w for w in plain if len(w) > 1 or w.isdigit()]  # the "s" of "bill's" asks for nothing
    for word in dict.fromkeys(plain):
        role = word_role(word)
        if role == "function":
            continue
        weight = max(specificity(word), MIN_SPECIFICITY) * (WEAK if role == "weak" else 1.0)
        terms.append(QueryTerm(word, _keys_of(word), weight, role == "weak"))
    for bigram in dict.fromkeys(cjk_bigrams(query)):  # a CJK query's words are its character bigrams
        terms.append(QueryTerm(bigram, frozenset({bigram}), MIN_SPECIFICITY, False))
    if not terms:  # a query of function words only ("who is it"): its words are all it has
        for word in dict.fromkeys(plain):
            terms.append(QueryTerm(word, _keys_of(word), MIN_SPECIFICITY, False))
    return terms


@lru_cache(maxsize=1)
def _function_words() -> frozenset[str]:
    return frozenset(STOPWORDS) | word_tables().function_words


def _prose(words: Sequence[str], function: frozenset[str]) -> float:
    """1 for a unit that reads as sentences, towards 0 for a long one with few function words (a menu, a list
    of names or links); a short unit is not judged."""
    if len(words) < PROSE_MIN_WORDS or not PROSE:
        return 1.0
    return min(1.0, sum(w in function for w in words) / (PROSE * len(words)))


def question_kind(query: str) -> str | None:
    """What a question asks for: "when" (a date), "number" (how many, how much), "who" (a name), "where" (a
    place), or None."""
    q = fold(query).split()
    if not q:
        return None
    first, second = q[0], q[1] if len(q) > 1 else ""
    if first == "when" or (first == "what" and second in ("year", "date", "day", "century")):
        return "when"
    if first == "how" and second in ("many", "much", "old", "long", "far", "big", "tall", "high", "large"):
        return "number"
    if first in ("who", "whom", "whose"):
        return "who"
    if first == "where":
        return "where"
    return None


def _typed(kind: str | None, raw: str, folded: str, query_words: set[str]) -> bool:
    if kind == "when":
        return bool(_YEAR.search(raw) or _MONTH.search(folded))
    if kind == "number":
        return bool(_NUMBER.search(folded))
    if kind == "who":
        function = _function_words()
        for m in _NAME.finditer(raw):
            name = [w for w in tokens(m.group()) if w not in function]
            if len(name) >= 2 and not set(name) <= query_words:
                return True
        return False
    if kind == "where":  # a place: a capitalised word the query does not have, after the unit's first word
        return any(w.lower() not in query_words for w in _PLACE.findall(raw, 1))
    return False


@dataclass
class ScoredUnit:
    """A unit's score and its parts, for the explanation."""

    unit: Unit
    score: float
    index: int = 0  # the unit's place among the page's units
    matched: list[str] = field(default_factory=list)  # terms found in the unit itself
    context: list[str] = field(default_factory=list)  # found in its heading, header or the unit before
    lead: float = 0.0
    typed: bool = False
    prose: float = 1.0  # how much it reads as sentences (1) rather than a menu or a list (towards 0)

    def why(self) -> str:
        parts = []
        if self.matched:
            parts.append("has " + ", ".join(self.matched))
        if self.context:
            parts.append("under or after " + ", ".join(self.context))
        if self.typed:
            parts.append("holds the kind of answer asked for")
        if self.prose < 0.75:
            parts.append(f"reads like a list or menu (x{self.prose:.2f})")
        if self.lead >= 0.05:
            parts.append(f"early in the page (+{self.lead:.2f})")
        return "; ".join(parts) or "fills the budget"


FAMILY_PREFIX = 5  # letters two words of one family share at least ("immigrated" ~ "immigration")
FAMILY_SLACK = 4  # and the shorter word's letters past the shared beginning are at most this many


def same_family(a: str, b: str) -> bool:
    """Whether two words are of one family by their shared beginning: "transmitted" ~ "transmission",
    "presidents" ~ "presidency" (a derivation the lemma dictionary does not know)."""
    if a[:FAMILY_PREFIX] != b[:FAMILY_PREFIX]:
        return False
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n >= max(FAMILY_PREFIX, min(len(a), len(b)) - FAMILY_SLACK)


def learn_spellings(terms: Sequence[QueryTerm], page_words: set[str]) -> None:
    """A term takes the page's words of its family (``same_family``) as its own and, when the page never writes
    it, the page's words one edit away (5 letters or more)."""
    long_words = [w for w in page_words if len(w) >= FAMILY_PREFIX and w.isalpha()]
    for term in terms:
        if term.phrase or len(term.word) < FAMILY_PREFIX:
            continue
        prefix = term.word[:FAMILY_PREFIX]
        near = (
            {w for w in long_words if w.startswith(prefix) and same_family(term.word, w)} if FAMILY else set()
        )
        if not near and not any(not word_keys(w).isdisjoint(term.keys) for w in page_words):
            near = {
                w for w in long_words if abs(len(w) - len(term.word)) <= 1 and one_edit_apart(term.word, w)
            }
        if near:
            term.keys = term.keys | frozenset(k for w in near for k in word_keys(w))


Matching = frozenset[str] | tuple[frozenset[str], ...]


def _matching(term: QueryTerm, page_words: set[str]) -> Matching:
    """The page's words that count as the term: a set, or for a quoted phrase a set a word (all needed). Worked
    out once per distinct word of the page, so a unit is then matched by set intersection."""
    if term.phrase:
        return tuple(frozenset(w for w in page_words if not word_keys(w).isdisjoint(k)) for k in term.phrase)
    return frozenset(w for w in page_words if not word_keys(w).isdisjoint(term.keys))


def _has(matching: Matching, words: set[str]) -> bool:
    if isinstance(matching, frozenset):
        return not matching.isdisjoint(words)
    return all(not m.isdisjoint(words) for m in matching)


def score_units(text: str, units: Sequence[Unit], query: str) -> list[ScoredUnit]:
    """Every unit of ``text`` scored against ``query``, in page order."""
    if not units:
        return []
    terms = query_terms(query)
    words_of = [tokens(text[u.start : u.end]) for u in units]
    sets = [set(ws) for ws in words_of]
    page_words: set[str] = set().union(*sets)
    learn_spellings(terms, page_words)
    matching = [_matching(t, page_words) for t in terms]
    n = len(units)
    singles = all(isinstance(m, frozenset) for m in matching)
    found = [
        [not m.isdisjoint(ws) for m in matching] if singles else [_has(m, ws) for m in matching]  # type: ignore[union-attr]
        for ws in sets
    ]
    function = _function_words()
    prose = [_prose(ws, function) for ws in words_of]
    weights = []
    for i, term in enumerate(terms):
        df = sum(1 for row in found if row[i])
        weights.append(term.weight * math.log(1.0 + (n + 1) / (df + 0.5)))
    total = sum(weights) or 1.0
    kind = question_kind(query)
    query_words = set(tokens(query))
    contexts: dict[str, set[str]] = {}
    out: list[ScoredUnit] = []
    for index, (unit, hits) in enumerate(zip(units, found, strict=True)):
        context_text = " ".join(x for x in (unit.heading, unit.header) if x)
        context = contexts.get(context_text)
        if context is None:
            context = contexts[context_text] = set(tokens(context_text))
        before = sets[index - 1] if index and units[index - 1].block == unit.block else None
        matched, around, value = [], [], 0.0
        for term, m, weight, hit in zip(terms, matching, weights, hits, strict=True):
            if hit:
                matched.append(term.word)
                value += weight
            elif context and _has(m, context):
                around.append(term.word)
                value += CONTEXT * weight
            elif before and _has(m, before):
                around.append(term.word)
                value += NEIGHBOUR * weight
        lead = LEAD / (1.0 + index) ** DECAY
        typed = False
        if kind is not None and unit.kind != "heading":
            raw = text[unit.start : unit.end]
            typed = _typed(kind, raw, fold(raw), query_words)
        score = prose[index] * (value / total + (TYPED if typed else 0.0)) + lead
        out.append(ScoredUnit(unit, score, index, matched, around, lead, typed, prose[index]))
    return out
