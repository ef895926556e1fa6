"""The query's words as the relevance guard and the pool analysis read them: the word tables, a light stemmer,
the query's terms, and a row's text with the terms it mentions.

- **Terms.** The query's words minus the ranking stopwords and English function words; ``-word`` and
  operators such as ``lang:it`` ask for nothing. A word that says what kind of answer is wanted rather than
  what it is about (a year, "latest", "guide", "speed", "install"; ``data/relevance_words.txt``) is a *weak*
  term; the rest are the *key* terms. A "quoted phrase" is one key term.
- **Matching.** A term is found in a row (title, snippet and URL) when a light stem of it is (plurals, -ing,
  -ed, a final -e: "models" ~ "model", "belgrade" ~ "belgrad"), when a word of its family is (the same
  Snowball stem, the stemmer applied until it changes nothing: "anthropological" ~ "anthropology",
  "environmental" ~ "environment"), when two adjacent words are written as one on either side ("da nang" ~
  "danang"), or when a regional variant is (``data/relevance_variants.txt``: autumn ~ fall). A snippet's
  leading date stamp ("May 4, 2026 · ") is not text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache
from operator import add
from typing import TYPE_CHECKING
from urllib.parse import unquote

from serpfuse import data
from serpfuse.ranking.query import STOPWORDS
from serpfuse.ranking.tables import parse_sections
from serpfuse.text import words

if TYPE_CHECKING:
    from serpfuse.ranking.query import QueryAnalysis
    from serpfuse.ranking.types import Candidate

# A leading date stamp, as Google and Bing put before a snippet ("Oct 7, 2025 · ", "2 days ago — ").
DATE_STAMP = re.compile(
    r"^\s*(?P<date>\d{1,2}\s+(?:minute|hour|day|week|month|year)s?\s+ago"
    r"|[A-Za-z]{3,9}\.?\s+\d{1,2},\s+\d{4}"
    r"|\d{1,2}\s+[A-Za-z]{3,9}\.?\s+\d{4})\s*[·•—–-]\s*"
)
WEAK_SECTIONS = ("recency", "answer-type", "facet", "intent")
_YEAR = re.compile(r"^(19|20)\d\d$")
_QUOTED = re.compile(r'(-?)"([^"]*)"')


# --- tables --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WordTables:
    function_words: frozenset[str]
    weak_words: dict[str, str]  # word -> its section (recency, answer-type, facet, intent)
    variants: dict[str, frozenset[str]]  # stem of a word -> stems of every word of its class (itself too)
    operators: dict[str, bool]  # name of a name:value operator -> whether its value is a word asked for


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
    sections = parse_sections(data.lines("relevance_words.txt"))
    weak = {w: name for name in WEAK_SECTIONS for w in sections.get(name, ())}
    return WordTables(
        function_words=frozenset(sections.get("function", ())),
        weak_words=weak,
        variants=parse_variants(data.lines("relevance_variants.txt")),
        operators={
            name: section == "word"
            for section, names in parse_sections(data.lines("relevance_operators.txt")).items()
            for name in names
        },
    )


# --- words ---------------------------------------------------------------------------------------------------


@lru_cache(maxsize=1 << 16)  # the same few thousand words come back in every result list
def light_stem(word: str) -> str:
    """A conservative English suffix stripper: plural -s/-es/-ies, then -ing/-ed, then a final -e.

    It only has to map a query word and a row word of the same lemma to the same string, so it is applied
    to both sides; tokens with digits (4k, oauth2, 2026) and words of three letters or fewer stay as they are.
    """
    return _light_stem(word)


def _light_stem(word: str) -> str:
    """``light_stem`` without its memo, for words seen once (two adjacent words written as one). Each step
    looks at the last letter first: most words end in none of s, g, d and e, and keep their form."""
    if len(word) <= 3 or not word.isalpha():
        return word
    last = word[-1]
    if last == "s":
        if word.endswith("ies") and len(word) > 4:
            word = word[:-3] + "y"
        elif word.endswith("sses"):
            word = word[:-2]
        elif not word.endswith(("ss", "us", "is")):
            word = word[:-1]
        last = word[-1]
    if last == "g":
        if word.endswith("ing") and len(word) >= 6:
            word = word[:-3]
            last = word[-1]
    elif last == "d" and word.endswith("ed") and len(word) >= 5:
        word = word[:-2]
        last = word[-1]
    if last == "e" and len(word) >= 5:
        word = word[:-1]
    return word


FAMILY = "~"  # marks a family stem in a vocabulary, so it never meets a light stem of the same letters


@cache
def _snowball() -> Callable[[str], str]:
    import Stemmer  # PyStemmer: Snowball's C stemmers, about 2 µs a word

    return Stemmer.Stemmer("english").stemWord


@lru_cache(maxsize=1 << 16)
def family_stem(word: str) -> str | None:
    """The mark of a word's family: its English Snowball (Porter2) stem, the stemmer applied again until the
    stem stays ("environmental" -> "environment" -> "environ", as "environment" -> "environ"), or None for a
    word the stemmer should not read (shorter than four letters, digits, not ASCII)."""
    if len(word) <= 3 or not word.isascii() or not word.isalpha():  # as light_stem: "us", "new", "art" stay
        return None
    stem = _snowball()
    out = stem(word)
    for _ in range(3):
        again = stem(out)
        if again == out:
            break
        out = again
    return FAMILY + out


# light_stem changes only words ending in one of these letters (-s, -ing, -ed, a final -e)
_STEMMED_ENDINGS = frozenset("sgde")


def _compound_stems(tokens: Sequence[str]) -> list[str]:
    """``light_stem`` of every two adjacent words written as one: mostly new strings, so not memoised."""
    return [c if c[-1] not in _STEMMED_ENDINGS else _light_stem(c) for c in map(add, tokens, tokens[1:])]


def word_stems(word: str) -> set[str]:
    """The stems a word can stand for: its light stem, and for a word ending in -s also the stem without
    that -s, since the -us/-is guard of ``light_stem`` would otherwise keep "gpus" from "gpu"."""
    stems = {light_stem(word)}
    if len(word) > 3 and word.endswith("s"):
        stems.add(light_stem(word[:-1]))
    return stems


@lru_cache(maxsize=1 << 16)
def _stems(word: str) -> frozenset[str]:
    return frozenset(word_stems(word))


def _vocabulary(plain: Iterable[str]) -> set[str]:
    """The stems of distinct words: a word ending in none of -s, -g, -d, -e is its own only stem (most are),
    the others go through the memo of their stems; and each word's family mark (``family_stem``)."""
    out: set[str] = set()
    add_word = out.add
    for word in plain:
        if word[-1] in _STEMMED_ENDINGS:
            out |= _stems(word)
        else:
            add_word(word)
        if family := family_stem(word):
            add_word(family)
    return out


def is_year(word: str) -> bool:
    return bool(_YEAR.match(word))


def strip_date_stamp(snippet: str) -> str:
    """The snippet without a leading date stamp ("May 4, 2026 · Nvidia's ..." -> "Nvidia's ...")."""
    return DATE_STAMP.sub("", snippet, count=1)


@dataclass(frozen=True)
class Term:
    """One thing the query asks about: a word, or the words of a quoted phrase in order."""

    text: str  # as the explanation shows it
    forms: frozenset[tuple[str, ...]]  # stemmed word sequences, any of which counts as the term
    weak: bool

    @cached_property
    def _singles(self) -> frozenset[str]:
        return frozenset(f[0] for f in self.forms if len(f) == 1)

    @cached_property
    def _phrases(self) -> tuple[tuple[str, ...], ...]:
        return tuple(f for f in self.forms if len(f) != 1)

    @cached_property
    def typed_stems(self) -> frozenset[str]:
        """The light stems of the word as typed (empty for a phrase): what the row says when it says the word
        itself, not another form of it."""
        return frozenset() if " " in self.text else frozenset(word_stems(self.text))

    def in_vocabulary(self, vocabulary: frozenset[str]) -> bool:
        """Whether a row with this vocabulary mentions the term (``RowText.has`` of any of its forms): the
        one-word forms are one set test, worked out once per term rather than once per row."""
        if not self._singles.isdisjoint(vocabulary):
            return True
        return any(vocabulary.issuperset(f) for f in self._phrases) if self._phrases else False


def _word_forms(word: str) -> frozenset[tuple[str, ...]]:
    variants = word_tables().variants
    stems = set().union(*(variants.get(s, {s}) for s in word_stems(word)))
    if family := family_stem(word):
        stems.add(family)
    return frozenset((s,) for s in stems)


@lru_cache(maxsize=1024)  # one Term per query word, so its worked-out forms are kept across searches
def without_families(term: Term) -> Term:
    """The term found only as typed, its lemmas and variants: no word of its family counts."""
    return Term(term.text, frozenset(f for f in term.forms if not f[0].startswith(FAMILY)), term.weak)


def word_role(word: str) -> str:
    """'function', 'weak' or 'key' for one folded query word."""
    tables = word_tables()
    if word in STOPWORDS or word in tables.function_words:
        return "function"
    if is_year(word) or word in tables.weak_words:
        return "weak"
    return "key"


def asked_words(text: str) -> tuple[list[list[str]], list[str]]:
    """(quoted phrases, other words) the query asks for: ``-word`` and ``-"a phrase"`` ask for their absence,
    ``lang:xx``-style operators are not words, and ``intitle:word`` asks for ``word``."""
    phrases: list[list[str]] = []

    def pull(match: re.Match[str]) -> str:
        if not match.group(1):
            phrases.append(words(match.group(2)))
        return " "

    rest = _QUOTED.sub(pull, text)
    operators = word_tables().operators
    plain: list[str] = []
    for token in rest.split():
        if token.startswith("-"):
            continue
        name, colon, value = token.partition(":")
        if colon and name.lower() in operators:
            if operators[name.lower()]:
                plain.extend(words(value))
            continue
        plain.extend(words(token))
    return [p for p in phrases if p], plain


def query_terms(query: QueryAnalysis) -> list[Term]:
    """The terms of a query's text, in order: quoted phrases first as key terms, then the other words."""
    return list(_text_terms(query.text))


@lru_cache(maxsize=256)  # read once per query text, not once per stage and search
def _text_terms(text: str) -> tuple[Term, ...]:
    terms: list[Term] = []
    phrases, plain = asked_words(text)
    phrase_words: set[str] = set()
    for tokens in phrases:
        if len(tokens) == 1:
            plain.insert(0, tokens[0])
            continue
        terms.append(Term(" ".join(tokens), frozenset({tuple(map(light_stem, tokens))}), weak=False))
        phrase_words.update(tokens)
    for word in dict.fromkeys(plain):
        role = word_role(word)
        if role == "function" or word in phrase_words:
            continue
        terms.append(Term(word, _word_forms(word), weak=role == "weak"))
    return tuple(terms)


# --- rows ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RowText:
    """A row's words as the guard reads them: the stems of its title and snippet words, of every two adjacent
    words written as one, and of the words of its URL."""

    vocabulary: frozenset[str]
    plain_words: frozenset[str]  # unstemmed title and snippet words, where a misspelt query word is looked up
    has_snippet: bool

    @classmethod
    def of(cls, title: str, snippet: str, url: str = "") -> RowText:
        snippet = strip_date_stamp(snippet)
        title_words, snippet_words = words(title), words(snippet)
        plain_words = frozenset(title_words).union(snippet_words)
        # Each distinct word once (a snippet repeats its words), through a memo of its stems.
        vocabulary = _vocabulary(plain_words.union(words(unquote(url))))
        vocabulary.update(_compound_stems(title_words))
        vocabulary.update(_compound_stems(snippet_words))
        return cls(
            vocabulary=frozenset(vocabulary),
            plain_words=plain_words,
            has_snippet=bool(snippet_words),
        )

    @cached_property
    def alpha_by_initial(self) -> dict[str, tuple[str, ...]]:
        """The alphabetic ``plain_words`` by first letter: where ``learn_spellings`` looks for a query word's
        other spellings, so a pool's words are counted under the initials of the words to learn only."""
        out: dict[str, list[str]] = {}
        for w in self.plain_words:
            if w.isalpha():
                out.setdefault(w[0], []).append(w)
        return {k: tuple(v) for k, v in out.items()}

    @classmethod
    def of_candidate(cls, candidate: Candidate) -> RowText:
        """``of`` the candidate's title, snippet and URL, worked out once per row text (text.RowForm)."""
        return candidate.form.derived(cls, lambda f: cls.of(f.title, f.snippet, f.url))

    def word_for(self, term: Term) -> str | None:
        """The row's word that carries the one-word term in another form than typed (the first in
        alphabetical order), or None."""
        singles = term._singles
        return next(
            (w for w in sorted(self.plain_words) if light_stem(w) in singles or family_stem(w) in singles),
            None,
        )

    def has(self, form: tuple[str, ...]) -> bool:
        # A quoted phrase counts when all its words are there: the engines held the quote against the whole
        # page, and a snippet often shows its words apart ("Conflict: Middle East" -> "Conflict in the ...").
        return self.vocabulary.issuperset(form)


def adjacent_pairs(terms: Sequence[Term]) -> list[tuple[Term, Term, str]]:
    """Neighbouring one-word terms with the stem of the two written as one ("da nang" -> "danang")."""
    pairs = []
    for a, b in zip(terms, terms[1:], strict=False):
        if len(a.text.split()) == 1 and len(b.text.split()) == 1:
            pairs.append((a, b, light_stem(a.text + b.text)))
    return pairs


def found_terms(
    terms: Sequence[Term], row: RowText, pairs: Sequence[tuple[Term, Term, str]] | None = None
) -> list[Term]:
    """The terms the row mentions, in query order (``pairs``: ``adjacent_pairs(terms)``, worked out once
    for a whole pool)."""
    vocabulary = row.vocabulary
    found = {t.text for t in terms if t.in_vocabulary(vocabulary)}
    for a, b, compound in adjacent_pairs(terms) if pairs is None else pairs:
        if compound in row.vocabulary:
            found.update((a.text, b.text))
    return [t for t in terms if t.text in found]


def one_edit_apart(a: str, b: str) -> bool:
    """True when one insertion, deletion, substitution or swap of two neighbouring letters turns a into b."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        if len(diff) == 1:
            return True
        i, j = diff[0], diff[-1]
        return len(diff) == 2 and j == i + 1 and a[i] == b[j] and a[j] == b[i]
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    i = 0
    while i < len(short) and short[i] == long_[i]:
        i += 1
    return short[i:] == long_[i + 1 :]


def same_word_ending_aside(a: str, b: str, min_letters: int) -> bool:
    """True when one word is the other plus one or two letters ("bretonne"/"breton", "psychosen"/"psychose"):
    an inflection the English stemmer does not know."""
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return len(short) >= min_letters and 0 < len(long_) - len(short) <= 2 and long_.startswith(short)
