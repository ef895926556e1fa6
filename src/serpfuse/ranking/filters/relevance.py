"""The relevance guard: judge from a row's text whether it is about the query, and whether any row is.

Seed 001's coverage guard counts exact query tokens in title + snippet. That is blind in both directions: it
loses "Restaurants in Belgrade" for "belgrad" and "Kyoto in the Fall" for "autumn", and it passes a row
that shares only the query's bait word ("fix", "install", "best"). This guard keeps its idea (a row must
mention enough of what the query is about) and fixes how terms are chosen, weighed and found:

- **Terms.** The query's words minus seed 001's stopwords and English function words; ``-word`` and
  operators such as ``lang:it`` ask for nothing. A word that says what kind of answer is wanted rather than
  what it is about (a year, "latest", "guide", "speed", "install"; ``data/relevance_words.txt``) is a *weak*
  term; the rest are the *key* terms. A "quoted phrase" is one key term.
- **Matching.** A term is found in a row (title, snippet and URL) when a light stem of it is (plurals, -ing,
  -ed, a final -e: "models" ~ "model", "belgrade" ~ "belgrad"), when two adjacent words are written as one
  on either side ("da nang" ~ "danang"), or when a regional variant is (``data/relevance_variants.txt``:
  autumn ~ fall). A snippet's leading date stamp ("May 4, 2026 · ") is not text. A key word that no row of
  the pool has also counts as a pool word one typing slip or one inflection away ("hisotry" ~ "history"):
  the engines corrected it.
- **Row coverage.** Key terms count 1 and weak terms ``weak_term_weight``; a row needs ``min_coverage`` of
  the total, and covering every key term is always enough. For a long query (more than three key terms)
  the bar is ``min_coverage`` of what the pool's best row covers, as no snippet repeats a long query whole.
- **Pool gate.** When no row of the pool mentions the key terms together (all of up to three, 60 % of more),
  the engines answered a different question (Bing answering "how to install python on macos" with Chrome and
  WhatsApp downloads): every row is cut and nothing is shown. Weak terms never fire it, since a page that
  answers "jaguar top speed" need not say "speed". It stands down when the request names a language other
  than English (the tables are English) and when most rows have no snippet to judge by.

- **The pool's vocabulary** (``analyze_pool``, once per search, shared with the junk filter and the ranker).
  A query word also counts as a pool word one or two typing slips away that the engines' rows use at least
  twice as often (rapidfuzz edit distance): engines correct spelling, the guard must not be literal. A
  typed word wordfreq finds much rarer than the pool's spelling is a typo: it is judged by that spelling,
  and a page repeating it is an echo of the query (junk), like a page titled with the query plus "ideas".
- **Anchor.** The query's most specific key word (highest 9 - Zipf in wordfreq, alphabetic), when at least a
  third of the rows mentioning any key term mention it. A kept row that mentions the query's other words
  but not the anchor matched only its generic words ("professional signs" for "signs of professional
  burnout"): its score is multiplied by ``anchor_demotion``, and its explanation names the missing word.
- **An engine that answered part of the query.** A key term at most a third of one engine's rows mention
  while two thirds of the other engines' rows do is a term that engine left out ("museums in Da Nang" for
  "beaches near Da Nang": the anchor is there, the rest of the question is not). Its rows lacking the term
  are demoted the same way, unless an engine that carries the term lists them too. When each engine carries
  a term the other leaves out, only the one that left out the more specific term is partial: bait pages
  repeat the query's generic words, good pages need not.

Every cut row gets one line saying which terms it has and lacks, or what no row mentions.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property, lru_cache
from itertools import chain
from operator import add
from typing import TYPE_CHECKING
from urllib.parse import unquote

from serpfuse import data
from serpfuse.ranking.filters.base import FilterContext
from serpfuse.ranking.filters.tables import parse_sections
from serpfuse.ranking.filters.timerange import DATE_STAMP
from serpfuse.ranking.query import STOPWORDS
from serpfuse.ranking.rankers.agreement import engine_lists
from serpfuse.ranking.specificity import language_of, lemma, specificity, zipf
from serpfuse.text import fold, words

if TYPE_CHECKING:
    from serpfuse.ranking.query import QueryAnalysis
    from serpfuse.ranking.rankers.base import Candidate

WEAK_SECTIONS = ("recency", "answer-type", "facet", "intent")
# A query with up to this many key terms is short: the pool gate wants a row with all of them, and every
# row is held to min_coverage of the whole query. Past it, the gate wants GATE_SHARE of them (rounded up, at
# least three) and rows are held to min_coverage of what the pool's best row covers.
SHORT_QUERY_KEY_TERMS = 3
GATE_SHARE = 0.6
MIN_FIXABLE = 5  # the shortest query word whose misspelling the guard looks for in the pool
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

    def in_vocabulary(self, vocabulary: frozenset[str]) -> bool:
        """Whether a row with this vocabulary mentions the term (``RowText.has`` of any of its forms): the
        one-word forms are one set test, worked out once per term rather than once per row."""
        if not self._singles.isdisjoint(vocabulary):
            return True
        return any(vocabulary.issuperset(f) for f in self._phrases) if self._phrases else False


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
        vocabulary = set().union(*map(_stems, plain_words.union(words(unquote(url)))))
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

    def has(self, form: tuple[str, ...]) -> bool:
        # A quoted phrase counts when all its words are there: the engines held the quote against the whole
        # page, and a snippet often shows its words apart ("Conflict: Middle East" -> "Conflict in the ...").
        return self.vocabulary.issuperset(form)


def _adjacent_pairs(terms: Sequence[Term]) -> list[tuple[Term, Term, str]]:
    """Neighbouring one-word terms with the stem of the two written as one ("da nang" -> "danang")."""
    pairs = []
    for a, b in zip(terms, terms[1:], strict=False):
        if len(a.text.split()) == 1 and len(b.text.split()) == 1:
            pairs.append((a, b, light_stem(a.text + b.text)))
    return pairs


def found_terms(
    terms: Sequence[Term], row: RowText, pairs: Sequence[tuple[Term, Term, str]] | None = None
) -> list[Term]:
    """The terms the row mentions, in query order (``pairs``: ``_adjacent_pairs(terms)``, worked out once
    for a whole pool)."""
    vocabulary = row.vocabulary
    found = {t.text for t in terms if t.in_vocabulary(vocabulary)}
    for a, b, compound in _adjacent_pairs(terms) if pairs is None else pairs:
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
    return coverage_of(terms, {t.text for t in found_terms(terms, row)}, weak_weight)


def coverage_of(terms: Sequence[Term], found_texts: Iterable[str], weak_weight: float) -> Coverage:
    """The coverage of a row that mentions the terms named ``found_texts``."""
    found_texts = set(found_texts)
    found = [t for t in terms if t.text in found_texts]
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
    """How many key terms the pool's best row must mention together: all of up to three, then three or
    ``GATE_SHARE`` of them, since a long query is rarely repeated whole in one snippet."""
    if key_terms <= SHORT_QUERY_KEY_TERMS:
        return key_terms
    return max(SHORT_QUERY_KEY_TERMS, math.ceil(GATE_SHARE * key_terms - 1e-9))


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


def same_word_ending_aside(a: str, b: str) -> bool:
    """True when one word is the other plus one or two letters ("bretonne"/"breton", "psychosen"/"psychose"):
    an inflection the English stemmer does not know."""
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return len(short) >= MIN_FIXABLE and 0 < len(long_) - len(short) <= 2 and long_.startswith(short)


# --- the pool's vocabulary, and the query's most specific word ------------------------------------------------

# The query's rarest word anchors it when at least this share of the rows that mention any key term mention
# it (and two rows do): then a row without it is demoted, since it matched only the query's generic words.
ANCHOR_SHARE = 1 / 3
# A key term at most PARTIAL_OWN_SHARE of an engine's rows mention while at least PARTIAL_OTHERS_SHARE of
# the other engines' rows do is one that engine left out: it answered part of the query, and its rows
# lacking the term are demoted (PoolTerms.partial_engines). Each side needs PARTIAL_MIN_ROWS rows.
PARTIAL_OWN_SHARE = 1 / 3
PARTIAL_OTHERS_SHARE = 2 / 3
PARTIAL_MIN_ROWS = 3
# A typed word is read as a pool word one or two slips away when the pool uses that word at least this many
# times as often: several engines agreeing on a spelling outvote a page that repeats the query's.
SPELLING_MAJORITY = 2
# A typed word the engines spelled otherwise is a typo when wordfreq finds it this much rarer (in Zipf units)
# than their spelling; "colour" against "color" is not.
TYPO_ZIPF_GAP = 1.0


def slips_allowed(word: str) -> int:
    """Typing slips tolerated in a word: one up to seven letters, two from eight."""
    return 1 if len(word) < 8 else 2


def row_count(rows: Iterable[RowText], forms: Iterable[tuple[str, ...]]) -> int:
    # one-word forms are a set test against the row's vocabulary; phrases need every word (RowText.has)
    forms = tuple(forms)
    singles = frozenset(f[0] for f in forms if len(f) == 1)
    phrases = [f for f in forms if len(f) != 1]
    if not phrases:
        return sum(1 for row in rows if not singles.isdisjoint(row.vocabulary))
    return sum(
        1 for row in rows if not singles.isdisjoint(row.vocabulary) or any(row.has(f) for f in phrases)
    )


@dataclass
class PoolTerms:
    """The query read against one pool of candidates, once per search: every candidate's text, the query's
    terms with the spellings and lemmas the engines' rows taught, each term's specificity (wordfreq), the
    anchor (the most specific term the pool carries), the rows that echo the query, and how much of the
    query's specific meaning each row carries. The relevance guard, the junk filter's echo rule and the
    adaptive ranker's content reliability all read it; nothing here is computed twice."""

    lang: str
    terms: list[Term]
    rows: dict[str, RowText]  # candidate key -> its text
    found: dict[str, frozenset[str]]  # candidate key -> texts of the terms it mentions
    spec: dict[str, float]  # term text -> specificity (9 - Zipf of the word, or of the pool's spelling)
    spelled: dict[str, str]  # typed word -> the pool's spelling, when the typed one is a typo of it
    engine_lists: dict[str, list[str]]  # engine -> candidate keys, best rank first
    echoes: dict[str, str] = field(default_factory=dict)  # candidate key -> why it echoes the query
    anchor: Term | None = None
    anchor_rows: int = 0
    judged_rows: int = 0  # rows mentioning any key term (echoes aside): the anchor's denominator
    cjk_tokens: tuple[str, ...] = ()
    cjk_text: dict[str, str] = field(default_factory=dict)  # candidate key -> folded text, CJK queries only

    def meaning(self, key: str) -> float:
        """Share of the query's specific meaning the row carries, in 0..1: the weight of the terms it mentions
        over that of all terms (``_weight``). An echo of the query carries none."""
        if key in self.echoes:
            return 0.0
        if self.cjk_tokens:
            text = self.cjk_text.get(key, "")
            return sum(t in text for t in self.cjk_tokens) / len(self.cjk_tokens)
        if not self.terms:
            return 1.0
        weights, total = self._weights
        if not total:
            return 1.0
        return math.fsum(weights[t] for t in self.found.get(key, ()) if t in weights) / total

    @cached_property
    def _weights(self) -> tuple[dict[str, float], float]:
        """Each term's weight (``_weight``) by its text, and their sum: the same for every row."""
        weights = {t.text: self._weight(t) for t in self.terms}
        return weights, math.fsum(weights.values())

    def _weight(self, term: Term) -> float:
        """How much of the query's specific meaning a term holds: how much more specific (wordfreq) it is than
        the query's commonest term, weak terms at half. The words every page near the topic shares ("signs",
        "professional", "trails") say nothing about whether a row is on it, so they weigh nothing; a query of
        one term weighs it whole."""
        return (self.spec.get(term.text, 1.0) - self._commonest) * (0.5 if term.weak else 1.0)

    @cached_property
    def _commonest(self) -> float:
        """The specificity of the query's commonest term (0 for a query of one term)."""
        return min(self.spec.get(t.text, 1.0) for t in self.terms) if len(self.terms) > 1 else 0.0

    def lacks_anchor(self, key: str) -> str | None:
        """Why the row is demoted, or None: it mentions the query's other words but lacks the anchor that
        the rest of the pool carries. A row that mentions none of them (a translation, a page in another
        script) is not judged here: the meaning may be there in another form."""
        found = self.found.get(key, frozenset())
        if self.anchor is None or key in self.echoes or self.anchor.text in found or not found:
            return None
        return (
            f"lacks '{self.anchor.text}', the query's most specific word, which "
            f"{self.anchor_rows} of {self.judged_rows} results mention"
        )

    def lacks_engine_term(self, key: str) -> str | None:
        """Why the row is demoted, or None: it lacks a key term that most of the other engines' rows carry
        while its own engine's rows mostly lack it (``partial_engines``), and no engine that carries the
        term lists it. A row that mentions none of the key terms is not judged here (another form)."""
        found = self.found.get(key)
        if not found or key in self.echoes or not self.partial_engines:
            return None
        engines = self._engines_of.get(key, ())
        missing = [t for t in self.terms if not t.weak and t.text not in found]
        for term in sorted(missing, key=lambda t: -self.spec.get(t.text, 0.0)):
            if engines and all(term.text in self.partial_engines.get(e, {}) for e in engines):
                engine = engines[0]
                mine, own, theirs, others = self.partial_engines[engine][term.text]
                return (
                    f"lacks '{term.text}', which {theirs} of the other engines' {others} results mention "
                    f"and {mine} of {engine}'s {own}: {engine} matched only part of the query"
                )
        return None

    @cached_property
    def _engines_of(self) -> dict[str, tuple[str, ...]]:
        out: dict[str, list[str]] = {}
        for engine, keys in self.engine_lists.items():
            for k in keys:
                out.setdefault(k, []).append(engine)
        return {k: tuple(v) for k, v in out.items()}

    @cached_property
    def partial_engines(self) -> dict[str, dict[str, tuple[int, int, int, int]]]:
        """engine -> {key term: (its rows mentioning it, its rows, the other engines' rows mentioning it,
        their rows)} for the key terms at most PARTIAL_OWN_SHARE of the engine's rows mention while at least
        PARTIAL_OTHERS_SHARE of the other engines' rows do: the engine answered part of the query (its
        generic words, or its subject without what was asked about it). Rows are the non-junk, non-echo
        rows mentioning some key term; each side needs PARTIAL_MIN_ROWS of them for a share to mean much."""
        key_terms = [t.text for t in self.terms if not t.weak]
        if len(key_terms) < 2 or len(self.engine_lists) < 2:
            return {}
        texts = set(key_terms)
        rows = {
            e: [k for k in keys if k not in self.echoes and not texts.isdisjoint(self.found.get(k, ()))]
            for e, keys in self.engine_lists.items()
        }
        out: dict[str, dict[str, tuple[int, int, int, int]]] = {}
        for engine, own in rows.items():
            if len(own) < PARTIAL_MIN_ROWS:
                continue
            mine_keys = set(own)
            others = {k for e, keys in rows.items() if e != engine for k in keys} - mine_keys
            if len(others) < PARTIAL_MIN_ROWS:
                continue
            missed: dict[str, tuple[int, int, int, int]] = {}
            # the specificity of the most specific key term this engine carries and the others lack
            alone = 0.0
            for term in key_terms:
                mine = sum(term in self.found[k] for k in own)
                theirs = sum(term in self.found[k] for k in others)
                if mine <= PARTIAL_OWN_SHARE * len(own) and theirs >= PARTIAL_OTHERS_SHARE * len(others):
                    missed[term] = (mine, len(own), theirs, len(others))
                elif theirs <= PARTIAL_OWN_SHARE * len(others) and mine >= PARTIAL_OTHERS_SHARE * len(own):
                    alone = max(alone, self.spec.get(term, 0.0))
            # When the engines each carry a term the other leaves out, they answered different parts of the
            # query: the partial one is the one that left out the more specific term ("burnout" against
            # "professional"), not a good list that leaves out a word every bait page repeats.
            missed = {t: v for t, v in missed.items() if self.spec.get(t, 0.0) > alone}
            if missed:
                out[engine] = missed
        return out

    def engine_content(self, depth: int) -> dict[str, float]:
        """Each engine's on-topic share: the meaning its top ``depth`` rows carry, discounted by position
        (1/log2(j + 1)) and averaged over the rows it has."""
        out = {}
        for engine, keys in self.engine_lists.items():
            top = keys[:depth]
            discounts = [1.0 / math.log2(j + 2) for j in range(len(top))]
            out[engine] = math.fsum(self.meaning(k) * d for k, d in zip(top, discounts, strict=True)) / (
                math.fsum(discounts) or 1.0
            )
        return out


def learn_spellings(
    terms: Sequence[Term], rows: Sequence[RowText], lang: str
) -> tuple[list[Term], dict[str, str]]:
    """The terms, where a one-word key term also counts as a pool word one or two typing slips away
    (rapidfuzz's optimal string alignment: a dropped, doubled, swapped or wrong letter) that the pool's
    rows use at least SPELLING_MAJORITY times as often, or, when no row has the word, as one inflection away
    ("bretonne" ~ "breton"): the engines corrected or normalised it. Also returns the typed words that are
    typos of the pool's spelling, so that they are judged by it and pages repeating them are seen as echoes.
    A word most rows lack also counts as the pool words of the same lemma (simplemma's dictionary), which
    the light stemmer cannot see ("mice" ~ "mouse"). Words of four letters or more only, and the pool word
    starts with the same letter."""
    from rapidfuzz.distance import OSA

    owns = [
        row_count(rows, t.forms) if not t.weak and len(t.text) >= 4 and t.text.isalpha() else len(rows)
        for t in terms
    ]
    # the pool's alphabetic words by first letter, counted once, for the initials of the words to learn only
    initials = {t.text[0] for t, own in zip(terms, owns, strict=True) if 2 * own <= len(rows)}
    by_initial: dict[str, list[tuple[str, int]]] = {
        i: list(Counter(chain.from_iterable(row.alpha_by_initial.get(i, ()) for row in rows)).items())
        for i in initials
    }
    out: list[Term] = []
    spelled: dict[str, str] = {}
    for term, own in zip(terms, owns, strict=True):
        word = term.text
        if 2 * own > len(rows):  # most rows have the word as typed: nothing to learn
            out.append(term)
            continue
        slips = slips_allowed(word)
        own_stems = {f[0] for f in term.forms}
        same_initial = by_initial.get(word[0], [])
        near = [
            (n, w)
            for w, n in same_initial
            if n >= max(1, SPELLING_MAJORITY * own)
            and abs(len(w) - len(word)) <= slips
            and OSA.distance(word, w, score_cutoff=slips) <= slips
            and light_stem(w) not in own_stems
        ]
        if not own and not near:
            near = [(n, w) for w, n in same_initial if same_word_ending_aside(word, w)]
        if near:
            term = Term(term.text, term.forms | {(light_stem(w),) for _, w in near}, term.weak)
            best = max(near)[1]
            if zipf(word, lang) < zipf(best, lang) - TYPO_ZIPF_GAP:
                spelled[word] = best
        if 2 * own < len(rows):
            # Most rows lack the word as the stemmer sees it: look for its dictionary forms ("mice" ~
            # "mouse", "ran" ~ "run"), among the pool's words with the same first letter only.
            own_lemma = lemma(word, lang)
            same_initial = [(w, n) for w, n in same_initial if abs(len(w) - len(word)) <= 3]
            same = {light_stem(w) for w, _ in same_initial if w != word and lemma(w, lang) == own_lemma}
            if same - own_stems:
                term = Term(term.text, term.forms | {(s,) for s in same}, term.weak)
        out.append(term)
    return out, spelled


def with_spelling_fixes(terms: Sequence[Term], rows: Sequence[RowText]) -> list[Term]:
    """``learn_spellings`` without the typo table (English)."""
    return learn_spellings(terms, rows, "en")[0]


def choose_anchor(
    terms: Sequence[Term], found: Mapping[str, frozenset[str]], spec: Mapping[str, float]
) -> tuple[Term | None, int, int]:
    """(anchor, rows mentioning it, rows mentioning any key term): the most specific one-word key term of a
    query with two key terms or more, when the pool carries it (ANCHOR_SHARE of the judged rows, two at
    least). A word with digits (4k, 2026) is a specification, not a subject, and never anchors."""
    key_terms = [t for t in terms if not t.weak]
    judged = [f for f in found.values() if any(t.text in f for t in key_terms)]
    if len(key_terms) < 2 or not judged:
        return None, 0, len(judged)
    candidates = [t for t in key_terms if t.text.isalpha()]
    if not candidates:
        return None, 0, len(judged)
    anchor = max(candidates, key=lambda t: spec[t.text])
    carried = sum(1 for f in judged if anchor.text in f)
    if carried < max(2, ANCHOR_SHARE * len(judged)):
        return None, carried, len(judged)
    return anchor, carried, len(judged)


def analyze_pool(
    candidates: Sequence[Candidate],
    query: QueryAnalysis,
    language: str | None = None,
    listed: Sequence[Candidate] | None = None,
) -> PoolTerms:
    """Read the query against the pool (see PoolTerms): ``candidates`` are the rows to read (the filter chain
    passes the non-junk ones), ``listed`` every row the engines' lists hold (default: the same), so a junk
    row counts in its engine's content as a row carrying nothing. Pure; called once per search."""
    from serpfuse.ranking.filters.junk import echo_verdict

    lang = language_of(language)
    lists = engine_lists(listed if listed is not None else candidates)
    if query.is_cjk:  # the CJK gate judges these rows; the pool only measures each engine's content
        return PoolTerms(
            lang, [], {}, {}, {}, {}, lists,
            cjk_tokens=tuple(dict.fromkeys((*query.cjk_tokens, *query.terms))),
            cjk_text={c.key: fold(f"{c.title} {c.snippet} {unquote(c.url)}") for c in candidates},
        )  # fmt: skip
    rows = {c.key: RowText.of_candidate(c) for c in candidates}
    terms, spelled = learn_spellings(query_terms(query), list(rows.values()), lang)
    pairs = _adjacent_pairs(terms)
    found = {key: frozenset(t.text for t in found_terms(terms, row, pairs)) for key, row in rows.items()}
    spec = {t.text: max(specificity(spelled.get(w, w), lang) for w in t.text.split()) for t in terms}
    pool = PoolTerms(lang, terms, rows, found, spec, spelled, lists)
    if spelled:
        for c in candidates:
            if why := echo_verdict(c.title, c.snippet, query, rows[c.key].plain_words, spelled):
                pool.echoes[c.key] = why
    genuine = {k: f for k, f in found.items() if k not in pool.echoes}
    pool.anchor, pool.anchor_rows, pool.judged_rows = choose_anchor(terms, genuine, spec)
    return pool


def pool_verdict(
    terms: Sequence[Term], rows: Sequence[RowText], found: Sequence[Iterable[str]] | None = None
) -> str | None:
    """Why no row of the pool is about the query, or None when some row mentions its key terms together.
    ``found`` (the term texts each row mentions, in the order of ``rows``) spares finding them again.

    The gate stands down when most rows have no snippet: a title alone is too little text to judge by."""
    key_terms = [t for t in terms if not t.weak]
    if not key_terms or not rows or 2 * sum(r.has_snippet for r in rows) < len(rows):
        return None
    if found is None:
        per_row = [{t.text for t in found_terms(key_terms, row)} for row in rows]
    else:
        key_texts = {t.text for t in key_terms}
        per_row = [key_texts.intersection(f) for f in found]
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


def is_english(language: str | None) -> bool:
    """True when the request asks for English or names no language (the word tables are English)."""
    return not language or language.lower().replace("_", "-").split("-")[0] in ("en", "all", "auto")


class PoolRelevance:
    """The relevance guard bound to one pool of candidates: the pool verdict, the coverage a row needs and
    each pool row's coverage are decided once, up front, and so are the rows it demotes (``demoted``: kept,
    but lacking the anchor the rest of the pool carries)."""

    name = "relevance"

    def __init__(
        self,
        terms: list[Term],
        verdict: str | None,
        weak_weight: float,
        min_coverage: float,
        coverages: dict[str, Coverage] | None = None,
        pool: PoolTerms | None = None,
    ):
        self.terms = terms
        self.verdict = verdict
        self.weak_weight = weak_weight
        self.min_coverage = min_coverage
        self.coverages = coverages or {}  # candidate key -> its coverage, for the rows of the pool
        self.pool = pool
        self.demoted: dict[str, str] = {}

    def check(self, candidate: Candidate, ctx: FilterContext) -> str | None:
        if not self.terms:
            return None
        if self.verdict:
            return self.verdict
        cov = self.coverages.get(candidate.key) or coverage(
            self.terms, RowText.of_candidate(candidate), self.weak_weight
        )
        if not cov.passes(self.min_coverage):
            return coverage_reason(cov)
        if self.pool is not None and (
            why := self.pool.lacks_anchor(candidate.key) or self.pool.lacks_engine_term(candidate.key)
        ):
            self.demoted[candidate.key] = why
        return None


def relative_min_coverage(coverages: Iterable[Coverage], min_coverage: float) -> float:
    """``min_coverage`` of what the pool's best row covers: when even the best result of a long query
    repeats only part of it, the others are held to that, not to the whole query."""
    best = max((cov.score for cov in coverages), default=1.0)
    return min_coverage * best


class RelevanceFilter:
    """See the module doc. ``check`` alone judges one row against the whole query; the filter chain calls
    ``for_pool`` first so that the pool gate can see every candidate and rows are held to the pool's best.
    CJK and mixed queries are the CJK gate's business, as for seed 001's coverage guard."""

    name = "relevance"

    def terms_for(self, ctx: FilterContext) -> list[Term]:
        return [] if ctx.query.is_cjk else query_terms(ctx.query)

    def for_pool(self, candidates: Sequence[Candidate], ctx: FilterContext) -> PoolRelevance:
        cfg = ctx.config
        pool = ctx.pool or analyze_pool(candidates, ctx.query, ctx.request.language)
        if ctx.query.is_cjk or not pool.terms:
            return PoolRelevance([], None, cfg.weak_term_weight, cfg.min_coverage)
        rows = {c.key: pool.rows.get(c.key) or RowText.of_candidate(c) for c in candidates}
        terms = pool.terms
        gate = cfg.pool_gate and is_english(ctx.request.language)
        known = all(key in pool.found for key in rows)
        found = [pool.found[key] for key in rows] if known else None
        verdict = pool_verdict(terms, list(rows.values()), found) if gate else None
        if verdict:
            return PoolRelevance(terms, verdict, cfg.weak_term_weight, cfg.min_coverage)
        shared: dict[frozenset[str], Coverage] = {}  # rows mentioning the same terms share one coverage

        def covered(found: frozenset[str]) -> Coverage:
            if found not in shared:
                shared[found] = coverage_of(terms, found, cfg.weak_term_weight)
            return shared[found]

        coverages = {
            key: covered(pool.found[key]) if key in pool.found else coverage(terms, row, cfg.weak_term_weight)
            for key, row in rows.items()
        }
        min_coverage = cfg.min_coverage
        if gate and sum(not t.weak for t in terms) > SHORT_QUERY_KEY_TERMS:
            # Only where the gate vouches for the pool (a pool of bait must not lower the bar), and only
            # for long queries: a short one has a row with every key term, the bar for the rest.
            min_coverage = relative_min_coverage(coverages.values(), min_coverage)
        anchored = pool if cfg.anchor_demotion < 1 else None
        return PoolRelevance(terms, None, cfg.weak_term_weight, min_coverage, coverages, anchored)

    def check(self, candidate: Candidate, ctx: FilterContext) -> str | None:
        cfg = ctx.config
        return PoolRelevance(self.terms_for(ctx), None, cfg.weak_term_weight, cfg.min_coverage).check(
            candidate, ctx
        )


RELEVANCE = RelevanceFilter()
