"""The query read against one pool of candidates, once per search (``analyze_pool``), and handed to the filters
and the ranker: nothing here is computed twice.

- **The pool's vocabulary.** A query word also counts as a pool word one or two typing slips away that the
  engines' rows use at least twice as often (rapidfuzz edit distance): engines correct spelling, the guard
  must not be literal. A typed word wordfreq finds much rarer than the pool's spelling is a typo: it is judged
  by that spelling, and a page repeating it is an echo of the query (``ranking.echo``).
- **Anchor.** The query's most specific key word (highest 9 - Zipf in wordfreq, alphabetic), when at least a
  third of the rows mentioning any key term mention it. A kept row that mentions the query's other words
  but not the anchor matched only its generic words ("professional signs" for "signs of professional
  burnout"): the relevance guard demotes it, and its explanation names the missing word.
- **An engine that answered part of the query.** A key term at most a third of one engine's rows mention
  while two thirds of the other engines' rows do is a term that engine left out ("museums in Da Nang" for
  "beaches near Da Nang"). Its rows lacking the term are demoted the same way, unless an engine that carries
  the term lists them too. When each engine carries a term the other leaves out, only the one that left out
  the more specific term is partial: bait pages repeat the query's generic words, good pages need not.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from itertools import chain
from typing import TYPE_CHECKING
from urllib.parse import unquote

from serpfuse.config import DEFAULT_FILTERS, FilterConfig
from serpfuse.ranking.candidates import engine_lists
from serpfuse.ranking.echo import echo_verdict
from serpfuse.ranking.specificity import language_of, lemma, specificity, zipf
from serpfuse.ranking.words import (
    RowText,
    Term,
    adjacent_pairs,
    found_terms,
    light_stem,
    query_terms,
    same_word_ending_aside,
    without_families,
)
from serpfuse.text import fold

if TYPE_CHECKING:
    from serpfuse.ranking.query import QueryAnalysis
    from serpfuse.ranking.types import Candidate


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
    cfg: FilterConfig = field(default_factory=lambda: DEFAULT_FILTERS)  # the thresholds it was read with

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
        their rows)} for the key terms at most ``partial_own_share`` of the engine's rows mention while at
        least ``partial_others_share`` of the other engines' rows do: the engine answered part of the query (its
        generic words, or its subject without what was asked about it). Rows are the non-junk, non-echo
        rows mentioning some key term; each side needs ``partial_min_rows`` of them for a share to mean much."""
        key_terms = [t.text for t in self.terms if not t.weak]
        if len(key_terms) < 2 or len(self.engine_lists) < 2:
            return {}
        texts = set(key_terms)
        rows = {
            e: [k for k in keys if k not in self.echoes and not texts.isdisjoint(self.found.get(k, ()))]
            for e, keys in self.engine_lists.items()
        }
        out: dict[str, dict[str, tuple[int, int, int, int]]] = {}
        own_share, others_share, min_rows = (
            self.cfg.partial_own_share,
            self.cfg.partial_others_share,
            self.cfg.partial_min_rows,
        )
        for engine, own in rows.items():
            if len(own) < min_rows:
                continue
            mine_keys = set(own)
            others = {k for e, keys in rows.items() if e != engine for k in keys} - mine_keys
            if len(others) < min_rows:
                continue
            missed: dict[str, tuple[int, int, int, int]] = {}
            # the specificity of the most specific key term this engine carries and the others lack
            alone = 0.0
            for term in key_terms:
                mine = sum(term in self.found[k] for k in own)
                theirs = sum(term in self.found[k] for k in others)
                if mine <= own_share * len(own) and theirs >= others_share * len(others):
                    missed[term] = (mine, len(own), theirs, len(others))
                elif theirs <= own_share * len(others) and mine >= others_share * len(own):
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


@cache
def spelling_distance():
    """rapidfuzz's optimal string alignment, imported on first use (about 25 ms): a search imports it with the
    word tables, while the engines are asked (``pipeline.load_tables_for``), not in its first ranking."""
    from rapidfuzz.distance import OSA

    return OSA


def learn_spellings(
    terms: Sequence[Term], rows: Sequence[RowText], lang: str, cfg: FilterConfig = DEFAULT_FILTERS
) -> tuple[list[Term], dict[str, str]]:
    """The terms, where a one-word key term also counts as a pool word one or two typing slips away
    (rapidfuzz's optimal string alignment: a dropped, doubled, swapped or wrong letter) that the pool's
    rows use at least ``spelling_majority`` times as often, or, when no row has the word, as one inflection away
    ("bretonne" ~ "breton"): the engines corrected or normalised it. Also returns the typed words that are
    typos of the pool's spelling, so that they are judged by it and pages repeating them are seen as echoes.
    A word most rows lack also counts as the pool words of the same lemma (simplemma's dictionary), which
    the light stemmer cannot see ("mice" ~ "mouse"). Words of four letters or more only, and the pool word
    starts with the same letter."""
    osa = spelling_distance()
    if not cfg.pool_spellings:
        return list(terms), {}
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
            if n >= max(1, cfg.spelling_majority * own)
            and abs(len(w) - len(word)) <= slips
            and osa.distance(word, w, score_cutoff=slips) <= slips
            and light_stem(w) not in own_stems
        ]
        if not own and not near:
            near = [(n, w) for w, n in same_initial if same_word_ending_aside(word, w, cfg.min_fixable)]
        if near:
            term = Term(term.text, term.forms | {(light_stem(w),) for _, w in near}, term.weak)
            best = max(near)[1]
            if zipf(word, lang) < zipf(best, lang) - cfg.typo_zipf_gap:
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
    terms: Sequence[Term],
    found: Mapping[str, frozenset[str]],
    spec: Mapping[str, float],
    share: float = DEFAULT_FILTERS.anchor_share,
) -> tuple[Term | None, int, int]:
    """(anchor, rows mentioning it, rows mentioning any key term): the most specific one-word key term of a
    query with two key terms or more, when the pool carries it (``share`` of the judged rows, two at
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
    if carried < max(2, share * len(judged)):
        return None, carried, len(judged)
    return anchor, carried, len(judged)


def analyze_pool(
    candidates: Sequence[Candidate],
    query: QueryAnalysis,
    language: str | None = None,
    listed: Sequence[Candidate] | None = None,
    cfg: FilterConfig = DEFAULT_FILTERS,
) -> PoolTerms:
    """Read the query against the pool (see PoolTerms): ``candidates`` are the rows to read (the filter chain
    passes the non-junk ones), ``listed`` every row the engines' lists hold (default: the same), so a junk
    row counts in its engine's content as a row carrying nothing. Pure; called once per search."""
    lang = language_of(language)
    lists = engine_lists(listed if listed is not None else candidates)
    if query.is_cjk:  # the CJK gate judges these rows; the pool only measures each engine's content
        return PoolTerms(
            lang, [], {}, {}, {}, {}, lists,
            cjk_tokens=tuple(dict.fromkeys((*query.cjk_tokens, *query.terms))),
            cjk_text={c.key: fold(f"{c.title} {c.snippet} {unquote(c.url)}") for c in candidates},
            cfg=cfg,
        )  # fmt: skip
    rows = {c.key: RowText.of_candidate(c) for c in candidates}
    terms = query_terms(query)
    if not cfg.word_families:
        terms = [without_families(t) for t in terms]
    terms, spelled = learn_spellings(terms, list(rows.values()), lang, cfg)
    pairs = adjacent_pairs(terms)
    found = {key: frozenset(t.text for t in found_terms(terms, row, pairs)) for key, row in rows.items()}
    spec = {t.text: max(specificity(spelled.get(w, w), lang) for w in t.text.split()) for t in terms}
    pool = PoolTerms(lang, terms, rows, found, spec, spelled, lists, cfg=cfg)
    if spelled:
        for c in candidates:
            if why := echo_verdict(c.title, c.snippet, query, rows[c.key].plain_words, spelled, cfg, c.url):
                pool.echoes[c.key] = why
    genuine = {k: f for k, f in found.items() if k not in pool.echoes}
    pool.anchor, pool.anchor_rows, pool.judged_rows = choose_anchor(terms, genuine, spec, cfg.anchor_share)
    return pool
