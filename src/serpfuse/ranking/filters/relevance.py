"""The relevance guard: judge from a row's text whether it is about the query, and whether any row is.

An exact-token coverage guard counts query tokens in title + snippet. That is blind in both directions: it
loses "Restaurants in Belgrade" for "belgrad" and "Kyoto in the Fall" for "autumn", and it passes a row
that shares only the query's bait word ("fix", "install", "best"). This guard keeps its idea (a row must
mention enough of what the query is about) and fixes how terms are chosen, weighed and found:

- **Terms and matching** are ``ranking.words``': key and weak terms, found by light stems, compounds and
  regional variants; a key word no row has also counts as the pool's spelling of it (``ranking.pool``).
- **Row coverage.** Key terms count 1 and weak terms ``weak_term_weight``; a row needs ``min_coverage`` of
  the total, and covering every key term is always enough. For a long query (more than three key terms)
  the bar is ``min_coverage`` of what the pool's best row covers, as no snippet repeats a long query whole.
- **Pool gate.** When no row of the pool mentions the key terms together (all of up to three, 60 % of more),
  the engines answered a different question (Bing answering "how to install python on macos" with Chrome and
  WhatsApp downloads): every row is cut and nothing is shown. Weak terms never fire it, since a page that
  answers "jaguar top speed" need not say "speed". It stands down when the request names a language other
  than English (the tables are English) and when most rows have no snippet to judge by.

The pool's vocabulary, anchor and partial engines are read once per search in ``ranking.pool``; the
guard demotes the rows that lack them.

Every cut row gets one line saying which terms it has and lacks, or what no row mentions.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from serpfuse.config import DEFAULT_FILTERS, FilterConfig
from serpfuse.ranking.context import FilterContext
from serpfuse.ranking.pool import PoolTerms, analyze_pool
from serpfuse.ranking.words import RowText, Term, found_terms, query_terms

if TYPE_CHECKING:
    from serpfuse.ranking.types import Candidate


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


def other_forms(found: Iterable[Term], row: RowText | None) -> str:
    """How the row carries the terms it does not carry as typed ("reads 'anthropological' as
    'anthropology'"), or "": the form that matched (a word of its family, a regional variant, the pool's
    spelling or lemma), for the explanation."""
    if row is None:
        return ""
    read = []
    for term in found:
        if term.typed_stems and term.typed_stems.isdisjoint(row.vocabulary) and (word := row.word_for(term)):
            read.append(f"'{term.text}' as '{word}'")
    return f"reads {', '.join(read)}" if read else ""


def _names(terms: Iterable[Term]) -> str:
    return ", ".join(t.text for t in terms)


def coverage_reason(cov: Coverage) -> str:
    if not cov.found:
        return f"mentions none of {_names(cov.missing)}"
    return f"mentions {_names(cov.found)} but not {_names(cov.missing)}"


def gate_need(key_terms: int, cfg: FilterConfig = DEFAULT_FILTERS) -> int:
    """How many key terms the pool's best row must mention together: all of up to three, then three or
    ``gate_share`` of them, since a long query is rarely repeated whole in one snippet."""
    short = cfg.short_query_key_terms
    if key_terms <= short:
        return key_terms
    return max(short, math.ceil(cfg.gate_share * key_terms - 1e-9))


def pool_verdict(
    terms: Sequence[Term],
    rows: Sequence[RowText],
    found: Sequence[Iterable[str]] | None = None,
    cfg: FilterConfig = DEFAULT_FILTERS,
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
    if best >= gate_need(len(key_terms), cfg):
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
        cfg: FilterConfig | None = None,
    ):
        self.terms = terms
        self.verdict = verdict
        self.weak_weight = weak_weight
        self.min_coverage = min_coverage
        self.coverages = coverages or {}  # candidate key -> its coverage, for the rows of the pool
        self.pool = pool
        self.demoted: dict[str, str] = {}
        self.notes: dict[
            str, str
        ] = {}  # kept row -> what the explanation adds: a form matched, a rule held off
        self.cfg = cfg  # the evidence guard's thresholds; None: every row short of coverage is cut
        self.on_topic = pool.engine_content(cfg.on_topic_depth) if pool is not None and cfg else {}

    def check(self, candidate: Candidate, ctx: FilterContext) -> str | None:
        if not self.terms:
            return None
        agreed = self.agreed(candidate)
        if self.verdict:
            if agreed is None:
                return self.verdict
            self.notes[candidate.key] = f"kept against the pool gate: {agreed}"
            return None
        cov = self.coverages.get(candidate.key)
        row = None
        if cov is None:  # a row outside the pool: its coverage worked out now
            row = RowText.of_candidate(candidate)
            cov = coverage(self.terms, row, self.weak_weight)
        if not cov.passes(self.min_coverage):
            if agreed is not None:
                self.notes[candidate.key] = f"{coverage_reason(cov)} (kept: {agreed})"
                return None
            evidence = self.evidence_for(candidate)
            if evidence is None:
                return coverage_reason(cov) + self.against(candidate)
            self.demoted[candidate.key] = f"{coverage_reason(cov)} (kept: {evidence})"
            return None
        if self.pool is not None and (
            why := self.pool.lacks_anchor(candidate.key) or self.pool.lacks_engine_term(candidate.key)
        ):
            if agreed is None:
                self.demoted[candidate.key] = why
            else:
                self.notes[candidate.key] = f"{why} (not demoted: {agreed})"
        if forms := other_forms(cov.found, self.pool.rows.get(candidate.key) if self.pool else row):
            self.notes[candidate.key] = "; ".join(filter(None, [self.notes.get(candidate.key), forms]))
        return None

    def agreed(self, candidate: Candidate) -> str | None:
        """Why the engines' agreement vouches for the row, or None: at least ``agreement_engines`` engines
        rank it in their top ``agreement_depth``. Engines that agree on a page read the query alike; a word
        it lacks is one the engines, not the page, found unnecessary. One engine's bait never gets there."""
        cfg = self.cfg
        if cfg is None or not cfg.agreement_engines or len(candidate.engine_ranks) < cfg.agreement_engines:
            return None
        depth = cfg.agreement_depth
        engines = sorted(e for e, r in candidate.engine_ranks.items() if r <= depth)
        if len(engines) < cfg.agreement_engines:
            return None
        return f"{len(engines)} engines rank it in their top {depth} ({', '.join(engines)})"

    def evidence_for(self, candidate: Candidate) -> str | None:
        """Why a row short of coverage is kept, or None: it carries the query's specific meaning, or an
        engine whose list is on-topic for this query lists it."""
        if self.cfg is None or self.pool is None or not self.cfg.evidence_guard:
            return None
        meaning = self.pool.meaning(candidate.key)
        if meaning >= self.cfg.evidence_meaning:
            return f"it carries {meaning:.0%} of the query's specific meaning"
        on_topic = [
            e
            for e in sorted(candidate.engine_ranks)
            if self.on_topic.get(e, 0.0) >= self.cfg.evidence_on_topic
        ]
        if on_topic:
            return (
                f"{on_topic[0]}'s list is on-topic ({self.on_topic[on_topic[0]]:.0%} of the query's meaning)"
            )
        return None

    def against(self, candidate: Candidate) -> str:
        """The evidence behind a cut, for the explanation (empty where the evidence guard is off)."""
        if self.cfg is None or self.pool is None or not self.cfg.evidence_guard or not candidate.engine_ranks:
            return ""
        lists = ", ".join(f"{e} {self.on_topic.get(e, 0.0):.0%}" for e in sorted(candidate.engine_ranks))
        return f"; its engines' lists are off-topic ({lists})"


def relative_min_coverage(coverages: Iterable[Coverage], min_coverage: float) -> float:
    """``min_coverage`` of what the pool's best row covers: when even the best result of a long query
    repeats only part of it, the others are held to that, not to the whole query."""
    best = max((cov.score for cov in coverages), default=1.0)
    return min_coverage * best


class RelevanceFilter:
    """See the module doc. ``check`` alone judges one row against the whole query; the filter chain calls
    ``for_pool`` first so that the pool gate can see every candidate and rows are held to the pool's best.
    CJK and mixed queries are the CJK gate's business, as for the exact-token coverage guard."""

    name = "relevance"

    def terms_for(self, ctx: FilterContext) -> list[Term]:
        return [] if ctx.query.is_cjk else query_terms(ctx.query)

    def for_pool(self, candidates: Sequence[Candidate], ctx: FilterContext) -> PoolRelevance:
        cfg = ctx.config
        pool = ctx.pool or analyze_pool(candidates, ctx.query, ctx.request.language, cfg=cfg)
        if ctx.query.is_cjk or not pool.terms:
            return PoolRelevance([], None, cfg.weak_term_weight, cfg.min_coverage)
        rows = {c.key: pool.rows.get(c.key) or RowText.of_candidate(c) for c in candidates}
        terms = pool.terms
        gate = cfg.pool_gate and is_english(ctx.request.language)
        known = all(key in pool.found for key in rows)
        found = [pool.found[key] for key in rows] if known else None
        verdict = pool_verdict(terms, list(rows.values()), found, cfg) if gate else None
        if verdict:  # final, but for the rows the engines agree on (PoolRelevance.agreed)
            return PoolRelevance(terms, verdict, cfg.weak_term_weight, cfg.min_coverage, cfg=cfg)
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
        if gate and sum(not t.weak for t in terms) > cfg.short_query_key_terms:
            # Only where the gate vouches for the pool (a pool of bait must not lower the bar), and only
            # for long queries: a short one has a row with every key term, the bar for the rest.
            min_coverage = relative_min_coverage(coverages.values(), min_coverage)
        anchored = pool if cfg.anchor_demotion < 1 else None
        return PoolRelevance(terms, None, cfg.weak_term_weight, min_coverage, coverages, anchored, cfg)

    def check(self, candidate: Candidate, ctx: FilterContext) -> str | None:
        cfg = ctx.config
        return PoolRelevance(self.terms_for(ctx), None, cfg.weak_term_weight, cfg.min_coverage).check(
            candidate, ctx
        )


RELEVANCE = RelevanceFilter()
