"""The ablation of the default: every rule and knob it uses, each switched off alone, on every corpus here.

    python -m benchmarks.ablation --markdown               # MQ2008 + crw56 dev + its robustness variants
    python -m benchmarks.ablation --subsets 17 --seeds 1,7,2026 --rules agreement,echo --json

A row is the default with one rule off (or, for "fusion: X", the default's filters and selection with another
fusion; for a rule the default has off, "(opt-in)", the default with it on). Each Δ is with the rule minus
without it, paired by query, with a paired bootstrap 95 % interval (``RESAMPLES`` resamples), so a positive Δ is
what the rule adds (for "fusion: X": the default's fusion minus X). Where it is measured:
- MQ2008 (no text: only the fusion reads it): the three fixed setups, the random subsets of each seed (Δ per
  query averaged over the seed's setups; the mean and worst gap of the row to the best plain method), and each
  standard subset S1-S5 as an independent fold (Δ per query averaged over every setup).
- crw56 dev through the pipeline, in four query folds (by qid): nDCG@8, RelShown@8, Irrelevant@5 per fold.
- crw56's robustness variants (benchmarks/robustness.py): misspelled queries with echo rows, bing answering off
  topic (garbage), bing carrying generic rows (three ways).
- trec-dl-passages through the pipeline (benchmarks/trecdl.py: six retrieval systems, passages without titles),
  in four query folds (the query's position in the file, mod 4): nDCG@8 and Irrelevant@5 per fold.

The bar (``verdict``): a rule stays in the default only if it helps on at least two independent corpora and
loses on none beyond its interval. A rule that reads text has two judged corpora with text, crw56 (web rows) and
trec-dl (passages): it must help on at least ``MIN_FOLDS`` of the four folds of crw56 dev, of the crw56 variant
built for its case, or of trec-dl, and hurt on no crw56 fold, not hurt a robustness variant beyond its interval
(nor add irrelevant rows there), not lose on trec-dl beyond its interval overall or on any fold, and MQ2008 must
not move. The reason says whether it helped on both text corpora or on one (the other lacking its case: trec-dl
has no titles, echo pages or typos; crw56's engines rarely list one page). A fusion rule must help on MQ2008 (on at least four of
five subsets, none below beyond its interval) and on crw56 dev by the same test. Everything else is opt-in.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import crw56, trecdl
from benchmarks import mq2008 as mq
from benchmarks import robustness as rb
from benchmarks.setups import load_crw56, load_mq2008_queries
from benchmarks.suite import PLAIN, method_config, plain_config
from serpfuse.bench.bootstrap import paired_bootstrap
from serpfuse.config import RankingConfig

RESAMPLES = (
    2000  # per interval; about 200 intervals a run, and 2,000 moves a 95 % bound by < 5 % of its width
)
MIN_FOLDS = 2  # crw56 dev folds a text rule must help on (of four), hurting on none
FOLDS = ("S1", "S2", "S3", "S4", "S5")
ENGINE = "bing"  # the engine the garbage and generic-rows variants alter (crw56's second-longest lists)
Change = Callable[[RankingConfig], RankingConfig]


def knob(section: str, **values: object) -> Change:
    """The config with ``section``'s knobs set to ``values`` (``section`` "" : top-level fields)."""

    def change(config: RankingConfig) -> RankingConfig:
        if not section:
            return config.model_copy(update=values)
        return config.model_copy(update={section: getattr(config, section).model_copy(update=values)})

    return change


def both(*changes: Change) -> Change:
    def change(config: RankingConfig) -> RankingConfig:
        for c in changes:
            config = c(config)
        return config

    return change


def fusion(name: str) -> Change:
    """The default's filters and selection knobs with another fusion method."""

    def change(config: RankingConfig) -> RankingConfig:
        other = method_config(name)
        return other.model_copy(update={"filters": config.filters, "selection": config.selection})

    return change


@dataclass(frozen=True)
class Rule:
    name: str
    kind: str  # "fusion": reads ranks (MQ2008 and crw56); "text": reads rows or engine names (crw56 only)
    defence: str
    off: Change
    strategies: frozenset[str] | None = None  # the default strategies that use it (None: every one)
    # Switching it off adds a rule (the evidence guard off is a hard cut): the bar judges that added rule, with
    # the default as the row without it, and this one stays when the added rule does not pass.
    relaxes: bool = False
    on: Change | None = None  # how to switch it on, when the default has it off (an opt-in rule)

    def change(self, base: RankingConfig) -> tuple[RankingConfig, bool]:
        """The base with this rule flipped, and whether it was on in the base (False: it is opt-in there)."""
        off = self.off(base)
        if off.fingerprint() != base.fingerprint() or self.on is None:
            return off, True
        return self.on(base), False


_CONSENSUS = frozenset({"adaptive", "consensus"})
_RRF = frozenset({"rrf"})

RULES: tuple[Rule, ...] = (
    Rule("agreement weight", "fusion", "an engine whose top rows no other engine group returns is likely noise",
         knob("agree", power=0.0), frozenset({"adaptive", "agree"})),
    Rule("list-length weight", "fusion", "an engine that showed fewer rows gave less evidence",
         knob("agree", coverage=0.0), frozenset({"adaptive", "agree"})),
    Rule("content reliability", "text", "an engine whose top rows lack the query's specific words is off topic",
         knob("agree", content_power=0.0), frozenset({"adaptive"})),
    Rule("engine priors (preset)", "text", "engines with a better index deserve more weight",
         knob("consensus", weights={}), _CONSENSUS),
    Rule("correlated-engine groups", "text", "engines reading one index agree by copying, not by confirming",
         knob("consensus", groups={}, retention={}), _CONSENSUS),
    Rule("lexical correction", "text", "a row carrying more of the query's words is more likely on topic",
         knob("consensus", lexical=0.0), _CONSENSUS),
    Rule("MMR diversity", "text", "a near-duplicate of a row already shown adds nothing",
         knob("selection", diversity_penalty=0.0), _CONSENSUS),
    Rule("sparse-row domain cap", "text", "rows too short to compare should not all come from one site",
         knob("selection", sparse_domain_cap=1000), _CONSENSUS),
    Rule("short-list scale", "fusion", "a list under a quarter of the longest vouches for its rows as that quarter would",
         knob("combmnz", short_list_scale=0.0), frozenset({"combmnz"}), on=knob("combmnz", short_list_scale=0.25)),
    Rule("authority boost", "text", "official domains answer their own questions",
         knob("rrf", authority_boost=0.0), _RRF),
    Rule("interleave tie-break", "fusion", "ties go to the engine not yet looked at",
         knob("rrf", interleave=False), _RRF),
    Rule("junk rules", "text", "dictionary, block, asset and shop pages are never an answer",
         knob("filters", junk=False), on=knob("filters", junk=True)),
    Rule("echo pages", "text", "a page generated from the query says nothing about it",
         knob("filters", echo=False), on=knob("filters", echo=True)),
    Rule("CJK gate", "text", "a row with no CJK overlap cannot answer a CJK query",
         knob("filters", cjk_gate=False), on=knob("filters", cjk_gate=True)),
    Rule("coverage guard", "text", "a row about none of the query's key terms is off topic",
         knob("filters", coverage=False), on=knob("filters", coverage=True)),
    Rule("pool gate", "text", "when no row carries the query's key terms together, none answers it",
         knob("filters", pool_gate=False), on=knob("filters", pool_gate=True)),
    Rule("evidence guard", "text", "a row an on-topic engine lists lacks only generic words: demote, don't cut",
         knob("filters", evidence_guard=False), relaxes=True),
    Rule("word families", "text", "a page about a word's family is about the word (anthropology, anthropological)",
         knob("filters", word_families=False), on=knob("filters", word_families=True)),
    Rule("engine agreement", "text", "a page three engines rank in their top ten is about the query as they read it",
         knob("filters", agreement_engines=0), on=knob("filters", agreement_engines=3)),
    Rule("anchor demotion", "text", "a row lacking the query's most specific word ranks below those carrying it",
         knob("filters", anchor_demotion=1.0), on=knob("filters", anchor_demotion=0.2)),
    Rule("weak terms count half", "text", "years and words like 'guide' say less about a row than its subject",
         knob("filters", weak_term_weight=1.0), on=knob("filters", weak_term_weight=0.5)),
    Rule("pool spellings", "text", "engines correct spelling, so the guard must read the query as they do",
         knob("filters", pool_spellings=False), on=knob("filters", pool_spellings=True)),
    Rule("geo guard", "text", "a row about another place than the query's is off topic",
         knob("filters", geo=False), on=knob("filters", geo=True)),
    Rule("non-junk fallback", "text", "when the guards leave nothing, non-junk rows beat an empty answer",
         knob("filters", fallback_when_empty=False), on=knob("filters", fallback_when_empty=True)),
)  # fmt: skip

ALTERNATIVES = ("adaptive", "consensus", "agree", "combmnz", "rrf (plain)", "borda")


def rules_for(config: RankingConfig) -> list[Rule]:
    return [r for r in RULES if r.strategies is None or config.strategy in r.strategies]


def alternatives_for(config: RankingConfig) -> list[str]:
    own = "rrf (plain)" if config.strategy == "rrf" and not config.rrf.interleave else config.strategy
    return [a for a in ALTERNATIVES if a != own]


# --- measuring one configuration ------------------------------------------------------------------------------


@dataclass
class Measured:
    """One configuration's per-query scores on every setup."""

    mq_fixed: dict[str, dict[str, float]] = field(default_factory=dict)  # setup -> qid -> nDCG@8
    mq_seeded: dict[int, dict[str, dict[str, float]]] = field(default_factory=dict)  # seed -> setup -> ...
    dev: dict[str, dict[str, float]] = field(default_factory=dict)  # qid -> metric -> value
    robust: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)  # variant -> qid -> metric
    trec: dict[str, dict[str, float]] = field(default_factory=dict)  # trec-dl qid -> metric -> value
    trec_folds: dict[str, int] = field(default_factory=dict)  # trec-dl qid -> its fold


@dataclass
class Corpora:
    queries: dict[str, mq.QueryData]
    fixed: list[mq.Setup]
    seeded: dict[int, list[mq.Setup]]
    root: Path
    best_plain: dict[tuple[int | None, str], float] = field(default_factory=dict)  # (seed, setup) -> nDCG@8


def _mq_scores(corpora: Corpora, config: RankingConfig, measured: Measured) -> None:
    fuser = mq.strategy_fuser(config.strategy, config)
    for s in corpora.fixed:
        measured.mq_fixed[s.name] = mq.metasearch(corpora.queries, fuser, s.rankers, s.depth).ndcg
    for seed, setups in corpora.seeded.items():
        measured.mq_seeded[seed] = {
            s.name: mq.metasearch(corpora.queries, fuser, s.rankers, s.depth).ndcg for s in setups
        }


@contextmanager
def _quiet(total: int):
    class Tracker:
        def step(self) -> None: ...
        def describe(self, text: str) -> None: ...

    yield Tracker()


def _values(scores) -> dict[str, dict[str, float]]:
    return {str(s.qid): dict(s.values) for s in scores}


def measure_crw56(root: Path, runs: Sequence[tuple[str, RankingConfig]]) -> dict[str, Measured]:
    """crw56 dev and its robustness variants, every run at once (the altered recordings are built once)."""
    corpus = load_crw56(root)
    out = {label: Measured() for label, _ in runs}
    clean = crw56.PipelineRunner(corpus)
    dev = corpus.split("dev")
    for label, config in runs:
        out[label].dev = _values(crw56.score_run(dev, lambda q, c=config: clean(q, c), None))
    misspelled = rb.run_misspelled(root, runs, "", _quiet).payload["rankers"]
    for label, _ in runs:
        out[label].robust["misspelled"] = {
            str(p["qid"]): p["misspelled"] for p in misspelled[label]["perQuery"]
        }
    _, queries, recording = rb._dev_recording(root, ENGINE, "--garbage-engine", None)
    garbage = crw56.PipelineRunner(corpus, recording=rb.garbage_recording(recording, queries, ENGINE)[0])
    for label, config in runs:
        out[label].robust["garbage"] = _values(
            crw56.score_run(queries, lambda q, c=config: garbage(q, c), None)
        )
    generic = rb.run_generic_crw56(root, ENGINE, runs, "", _quiet).payload["rankers"]
    for label, _ in runs:
        for i, (variant, _, _) in enumerate(rb.GENERIC_VARIANTS, start=1):
            out[label].robust[f"generic {i}"] = {
                str(p["qid"]): p["values"] for p in generic[label][variant]["perQuery"]
            }
    return out


def measure_trecdl(
    root: Path, runs: Sequence[tuple[str, RankingConfig]], measured: Mapping[str, Measured]
) -> None:
    """trec-dl-passages through the pipeline, each run's per-query values and the query folds into ``measured``."""
    corpus = trecdl.load_trecdl(root)
    runner = trecdl.PipelineRunner(corpus)
    folds = {str(q.qid): q.fold for q in corpus.split("dev")}
    for label, config in runs:
        measured[label].trec = _values(trecdl.run(corpus, config, label, runner).per_query)
        measured[label].trec_folds = folds


# --- comparing a row with the default -------------------------------------------------------------------------


@dataclass(frozen=True)
class Delta:
    delta: float
    low: float
    high: float
    n: int

    @property
    def below(self) -> bool:  # a loss beyond the interval
        return self.high < 0

    @property
    def above(self) -> bool:
        return self.low > 0

    def cell(self, digits: int = 4) -> str:
        if self.n == 0:
            return "–"
        if self.delta == self.low == self.high == 0:
            return "0"
        return f"{self.delta:+.{digits}f} [{self.low:+.{digits}f}, {self.high:+.{digits}f}]"


def delta(default: Sequence[float], off: Sequence[float]) -> Delta:
    """default − off, paired, with its bootstrap interval (no resampling when nothing moved)."""
    n = len(default)
    if n == 0:
        return Delta(0.0, 0.0, 0.0, 0)
    if all(a == b for a, b in zip(default, off, strict=True)):
        return Delta(0.0, 0.0, 0.0, n)
    b = paired_bootstrap(list(off), list(default), resamples=RESAMPLES)
    return Delta(b.delta, b.low, b.high, n)


def _per_query_mean(tables: Sequence[Mapping[str, float]], qids: Sequence[str]) -> list[float]:
    return [sum(t[q] for t in tables) / len(tables) for q in qids]


def _metric(table: Mapping[str, Mapping[str, float]], metric: str, qids: Sequence[str]) -> list[float]:
    return [table[q][metric] for q in qids]


def crw56_folds(qids: Sequence[str]) -> list[list[str]]:
    """The four query folds of crw56 dev (its qids are even), as the suite makes them."""
    return [[q for q in qids if int(q) // 2 % 4 == f] for f in range(4)]


def folds_by(fold_of: Mapping[str, int]) -> Callable[[Sequence[str]], list[list[str]]]:
    """The four query folds ``fold_of`` (qid -> 0..3) names, e.g. trec-dl's ``TrecDlQuery.fold``."""
    return lambda qids: [[q for q in qids if fold_of[q] == f] for f in range(4)]


def setup_folds(
    default: Mapping[str, Mapping[str, float]],
    off: Mapping[str, Mapping[str, float]],
    folds_of: Callable[[Sequence[str]], list[list[str]]] = crw56_folds,
):
    """Per query fold of one judged setup: the row's ΔnDCG@8 and ΔRelShown@8 (over the queries with a relevant
    row) and ΔIrrelevant@5 (summed over every query), each the row's minus the default's."""
    judged = [q for q in default if "nDCG@8" in default[q]]
    every = list(default)
    out = []
    for fold, fold_all in zip(folds_of(judged), folds_of(every), strict=True):
        out.append(
            (
                _mean(_metric(off, "nDCG@8", fold)) - _mean(_metric(default, "nDCG@8", fold)),
                _mean(_metric(off, "RelShown@8", fold)) - _mean(_metric(default, "RelShown@8", fold)),
                int(sum(_metric(off, "Irrelevant@5", fold_all)) - sum(_metric(default, "Irrelevant@5", fold_all))),
            )
        )  # fmt: skip
    return out


@dataclass
class Row:
    name: str
    kind: str
    defence: str
    mq_fixed: dict[str, Delta]
    mq_seeds: dict[int, Delta]
    mq_gaps: dict[int, tuple[float, float]]  # seed -> (mean, worst) gap (%) of the row to the best plain
    mq_folds: dict[str, Delta]
    dev: Delta  # nDCG@8
    dev_relshown: Delta
    dev_irrelevant: (
        int  # Irrelevant@5 summed: the row's minus the default's (positive: the rule removes them)
    )
    # crw56 setup ("dev" or a robustness variant) -> per query fold: ΔnDCG@8, ΔRelShown@8, ΔIrrelevant@5, each
    # the row's minus the default's
    folds: dict[str, list[tuple[float, float, int]]]
    robust: dict[str, Delta]
    robust_irrelevant: dict[str, int]
    trec: Delta = field(default_factory=lambda: Delta(0.0, 0.0, 0.0, 0))  # trec-dl nDCG@8
    trec_irrelevant: int = 0  # trec-dl Irrelevant@5, the row's minus the default's
    trec_folds: list[tuple[float, float, int]] = field(default_factory=list)  # as ``folds``, on trec-dl
    trec_fold_deltas: list[Delta] = field(
        default_factory=list
    )  # each trec-dl fold's ΔnDCG@8 with its interval
    verdict: str = ""
    why: str = ""

    @property
    def mq_moved(self) -> bool:
        return any(d.delta or d.low or d.high for d in [*self.mq_fixed.values(), *self.mq_folds.values()])


def compare(name: str, kind: str, defence: str, default: Measured, off: Measured, corpora: Corpora) -> Row:
    qids = sorted(next(iter(default.mq_fixed.values())))  # the queries with a relevant document
    mq_fixed = {
        s: delta(_metric_flat(default.mq_fixed[s], qids), _metric_flat(off.mq_fixed[s], qids)) for s in default.mq_fixed
    }  # fmt: skip
    mq_seeds, gaps = {}, {}
    for seed, setups in default.mq_seeded.items():
        mq_seeds[seed] = delta(
            _per_query_mean(list(setups.values()), qids), _per_query_mean(list(off.mq_seeded[seed].values()), qids)
        )  # fmt: skip
        g = [mq.gap_percent(_mean(off.mq_seeded[seed][s]), corpora.best_plain[(seed, s)]) for s in setups]
        gaps[seed] = (sum(g) / len(g), min(g))
    every_default = [*default.mq_fixed.values(), *(t for s in default.mq_seeded.values() for t in s.values())]
    every_off = [*off.mq_fixed.values(), *(t for s in off.mq_seeded.values() for t in s.values())]
    mq_folds = {}
    for fold in FOLDS:
        these = [q for q in qids if corpora.queries[q].subset == fold]
        mq_folds[fold] = delta(_per_query_mean(every_default, these), _per_query_mean(every_off, these))
    judged = sorted((q for q in default.dev if "nDCG@8" in default.dev[q]), key=int)
    every = sorted(default.dev, key=int)
    folds = {"dev": setup_folds(default.dev, off.dev)}
    robust, robust_irr = {}, {}
    for variant, table in default.robust.items():
        scored = sorted((q for q in table if "nDCG@8" in table[q]), key=int)
        robust[variant] = delta(
            _metric(table, "nDCG@8", scored), _metric(off.robust[variant], "nDCG@8", scored)
        )
        robust_irr[variant] = int(
            sum(v["Irrelevant@5"] for v in off.robust[variant].values()) - sum(v["Irrelevant@5"] for v in table.values())
        )  # fmt: skip
        folds[variant] = setup_folds(table, off.robust[variant])
    row = Row(
        name, kind, defence, mq_fixed, mq_seeds, gaps, mq_folds,
        delta(_metric(default.dev, "nDCG@8", judged), _metric(off.dev, "nDCG@8", judged)),
        delta(_metric(default.dev, "RelShown@8", judged), _metric(off.dev, "RelShown@8", judged)),
        int(sum(_metric(off.dev, "Irrelevant@5", every)) - sum(_metric(default.dev, "Irrelevant@5", every))),
        folds, robust, robust_irr,
    )  # fmt: skip
    if default.trec:
        by_fold = folds_by(default.trec_folds)
        scored = [q for q in default.trec if "nDCG@8" in default.trec[q]]
        row.trec = delta(_metric(default.trec, "nDCG@8", scored), _metric(off.trec, "nDCG@8", scored))
        row.trec_irrelevant = int(
            sum(v["Irrelevant@5"] for v in off.trec.values()) - sum(v["Irrelevant@5"] for v in default.trec.values())
        )  # fmt: skip
        row.trec_folds = setup_folds(default.trec, off.trec, by_fold)
        row.trec_fold_deltas = [
            delta(_metric(default.trec, "nDCG@8", f), _metric(off.trec, "nDCG@8", f)) for f in by_fold(scored)
        ]
    return row


def _metric_flat(table: Mapping[str, float], qids: Sequence[str]) -> list[float]:
    return [table[q] for q in qids]


def _mean(values) -> float:
    values = list(values.values()) if isinstance(values, Mapping) else list(values)
    return sum(values) / len(values) if values else 0.0


# --- the bar ---------------------------------------------------------------------------------------------------


EPS = 1e-9


def fold_helps(fold: tuple[float, float, int]) -> bool:
    """With the rule on, a higher nDCG@8, or fewer irrelevant rows in the top 5 at no cost in nDCG@8."""
    n, _, irr = fold
    return n < -EPS or (irr > 0 and n <= EPS)


def fold_hurts(fold: tuple[float, float, int]) -> bool:
    """With the rule on, a lower nDCG@8 or RelShown@8, or more irrelevant rows at no gain in nDCG@8 (an empty
    answer shows no irrelevant row, so rows alone are not a loss when they bring relevant ones with them)."""
    n, r, irr = fold
    return n > EPS or r > EPS or (irr < 0 and n >= -EPS)


def crw56_verdict(row: Row) -> tuple[dict[str, int], dict[str, int]]:
    """Per crw56 setup: (folds the rule helps on, folds it hurts on)."""
    helps = {s: sum(map(fold_helps, f)) for s, f in row.folds.items()}
    hurts = {s: sum(map(fold_hurts, f)) for s, f in row.folds.items()}
    return helps, hurts


def trec_verdict(row: Row) -> tuple[str, bool]:
    """trec-dl's part of the bar: the rule may not lose there beyond its interval, overall or on any fold; the
    folds it helps on (higher nDCG@8, or fewer irrelevant rows at no cost) are reported, since a rule built for
    a case the corpus lacks (echo pages: passages have no title; typos) cannot help there."""
    if not row.trec_folds:
        return "trec-dl not measured", True
    helps = sum(map(fold_helps, row.trec_folds))
    below = [str(i) for i, d in enumerate(row.trec_fold_deltas) if d.below]
    ok = not row.trec.below and not below
    text = f"trec-dl: helps on {helps} of 4 folds"
    if row.trec.below:
        text += ", below beyond its interval overall"
    if below:
        text += f", below beyond its interval on fold {', '.join(below)}"
    return text, ok


def judge(row: Row) -> Row:
    helps, hurts = crw56_verdict(row)
    best = max(helps, key=lambda s: (helps[s], s == "dev"))
    hurt = [s for s, n in hurts.items() if n] + [v for v, d in row.robust.items() if d.below]
    if row.dev.below:
        hurt.append("dev (beyond its interval)")
    crw_ok = helps[best] >= MIN_FOLDS and not hurt
    crw_text = f"crw56: helps on {helps['dev']} of 4 dev folds"
    if best != "dev":
        crw_text += f", on {helps[best]} of 4 {best} folds"
    crw_text += f"; hurts on {', '.join(sorted(set(hurt)))}" if hurt else "; hurts on none"
    mq_losses = [n for n, d in [*row.mq_fixed.items(), *row.mq_folds.items()] if d.below]
    mq_losses += [f"seed {s}" for s, d in row.mq_seeds.items() if d.below]
    trec_text, trec_ok = trec_verdict(row)
    crw_text += f"; {trec_text}"
    if row.kind == "text":
        # helps on two folds of one text corpus where its case is (crw56 dev or its variant, or trec-dl), hurts
        # on no fold of crw56 and on none of trec-dl beyond its interval; "both" when it helps on each
        trec_helps = sum(map(fold_helps, row.trec_folds)) >= MIN_FOLDS
        crw_helps = helps[best] >= MIN_FOLDS
        mq_text = "MQ2008 moves" if row.mq_moved else "MQ2008 unmoved"
        kept = (crw_helps or trec_helps) and not hurt and trec_ok and not row.mq_moved
        if kept:
            mq_text += (
                "; earned on both text corpora" if crw_helps and trec_helps else "; earned on one text corpus"
            )
    else:
        mq_helps = sum(1 for d in row.mq_folds.values() if d.delta > 0)
        mq_text = f"MQ2008: helps on {mq_helps} of 5 subsets"
        if mq_losses:
            mq_text += f", below beyond its interval on {', '.join(mq_losses)}"
        kept = mq_helps >= 4 and not mq_losses and crw_ok and trec_ok
    row.verdict = "kept" if kept else "opt-in"
    row.why = f"{crw_text}; {mq_text}"
    return row


# --- the run and its tables ------------------------------------------------------------------------------------


def run(
    root: Path,
    base: RankingConfig,
    subsets: int,
    seeds: Sequence[int],
    only: Sequence[str] | None = None,
    log: Callable[[str], None] = lambda s: print(s, file=sys.stderr),
) -> tuple[list[Row], dict]:
    queries = load_mq2008_queries(root)
    corpora = Corpora(
        queries, list(mq.REFERENCE_SETUPS), {s: mq.random_setups(subsets, s) for s in seeds}, root
    )
    for seed, setups in corpora.seeded.items():
        for s in setups:
            corpora.best_plain[(seed, s.name)] = max(
                _mean(mq.metasearch(queries, mq.strategy_fuser(c.strategy, c), s.rankers, s.depth).ndcg)
                for c in (plain_config(p) for p in PLAIN)
            )
    log(f"best plain method on {sum(map(len, corpora.seeded.values()))} random subsets: done")
    rules = [r for r in rules_for(base) if only is None or r.name in only]
    others = [a for a in alternatives_for(base) if only is None or f"fusion: {a}" in only]
    flipped = {r.name: r.change(base) for r in rules}
    runs = [
        ("default", base),
        *((r.name, flipped[r.name][0]) for r in rules),
        *((f"fusion: {a}", fusion(a)(base)) for a in others),
    ]
    measured = measure_crw56(root, runs)
    log("crw56 dev and its robustness variants: done")
    if (root / trecdl.FOLDER).is_dir():
        measure_trecdl(root, runs, measured)
        log("trec-dl-passages: done")
    # Bare lists never reach the filters or the selection (ranking/fusion.py): a rule that changes only those
    # is scored on the default's MQ2008 runs, which is why such a rule cannot move MQ2008.
    cache: dict[str, Measured] = {}
    for label, config in runs:
        key = config.model_copy(update={"filters": base.filters, "selection": base.selection}).fingerprint()
        if key not in cache:
            cache[key] = Measured()
            _mq_scores(corpora, config, cache[key])
            log(f"MQ2008: {label} done")
        measured[label].mq_fixed, measured[label].mq_seeded = cache[key].mq_fixed, cache[key].mq_seeded
    default = measured["default"]
    rows = []
    for r in rules:
        if not flipped[r.name][1]:  # opt-in in the base: measured switched on, and judged as a candidate
            row = judge(compare(f"{r.name} (opt-in)", r.kind, r.defence, measured[r.name], default, corpora))
            row.verdict = "would be earned" if row.verdict == "kept" else "opt-in"
            rows.append(row)
            continue
        row = judge(compare(r.name, r.kind, r.defence, default, measured[r.name], corpora))
        if r.relaxes:  # the bar is the added rule's: kept when that rule, measured against the default, fails
            added = judge(compare(r.name, r.kind, r.defence, measured[r.name], default, corpora))
            row.verdict = "kept" if added.verdict == "opt-in" else "opt-in"
            row.why = f"the rule it replaces ({added.why}) is {'not ' if row.verdict == 'kept' else ''}earned"
        rows.append(row)
    for a in others:
        row = compare(f"fusion: {a}", "fusion", "the default's fusion against this one", default,
                      measured[f"fusion: {a}"], corpora)  # fmt: skip
        ahead, behind = crw56_verdict(row)
        row.why = "; ".join(
            [f"crw56 dev: ahead on {ahead['dev']} folds, behind on {behind['dev']}",
             "crw56 variants: ahead on " + ", ".join(f"{s} {n}" for s, n in ahead.items() if s != "dev" and n)
             + "; behind on " + ", ".join(f"{s} {n}" for s, n in behind.items() if s != "dev" and n),
             f"MQ2008: ahead on {sum(d.delta > 0 for d in row.mq_folds.values())} of 5 subsets, "
             f"beyond its interval on {sum(d.above for d in row.mq_folds.values())}, behind beyond it on "
             f"{sum(d.below for d in row.mq_folds.values())}"]
        )  # fmt: skip
        rows.append(row)
    summary = {
        "strategy": base.strategy,
        "gaps": {seed: _gaps(default, corpora, seed) for seed in seeds},
        "fixed": {s: _mean(t) for s, t in default.mq_fixed.items()},
        "dev": {m: _mean(_metric(default.dev, m, [q for q in default.dev if m in default.dev[q]]))
                for m in ("nDCG@8", "RelShown@8")} | {"Irrelevant@5": sum(v["Irrelevant@5"] for v in default.dev.values())},
    }  # fmt: skip
    if default.trec:
        summary["trec"] = {
            "nDCG@8": _mean([v["nDCG@8"] for v in default.trec.values() if "nDCG@8" in v]),
            "Irrelevant@5": sum(v["Irrelevant@5"] for v in default.trec.values()),
            "emptied": sum(1 for v in default.trec.values() if "nDCG@8" in v and v.get("shown", 0) == 0),
        }
    return rows, summary


def _gaps(measured: Measured, corpora: Corpora, seed: int) -> tuple[float, float]:
    g = [mq.gap_percent(_mean(t), corpora.best_plain[(seed, s)]) for s, t in measured.mq_seeded[seed].items()]
    return sum(g) / len(g), min(g)


def markdown(rows: Sequence[Row], summary: dict) -> str:
    seeds = sorted(summary["gaps"])
    head = ["rule", "defence", "MQ2008 fixed Δ (3 setups)", "MQ2008 S1–S5 Δ", "random subsets Δ per seed",
            "row's gap mean / worst %", "crw56 dev ΔnDCG@8", "folds ΔnDCG / ΔIrr@5", "misspelled", "garbage",
            "generic 1 / 2 / 3", "trec-dl ΔnDCG@8", "trec-dl folds ΔnDCG / ΔIrr@5", "verdict"]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|---|---|" + "---:|" * (len(head) - 3) + "---|"]
    for r in rows:
        fixed = " ".join(f"{d.delta:+.4f}{'*' if d.below or d.above else ''}" for d in r.mq_fixed.values())
        folds = " ".join(f"{d.delta:+.4f}{'*' if d.below or d.above else ''}" for d in r.mq_folds.values())
        seeds_cell = " ".join(
            f"{r.mq_seeds[s].delta:+.4f}{'*' if r.mq_seeds[s].below or r.mq_seeds[s].above else ''}"
            for s in seeds
        )
        gaps = " ".join(f"{r.mq_gaps[s][0]:+.2f}/{r.mq_gaps[s][1]:+.2f}" for s in seeds)
        dev_folds = " ".join(f"{-n:+.3f}/{irr:+d}" for n, _, irr in r.folds["dev"])
        generic = " / ".join(r.robust[f"generic {i}"].cell(3) for i in (1, 2, 3))
        trec = r.trec.cell(4) + f", Irr@5 {r.trec_irrelevant:+d}" if r.trec_folds else "–"
        trec_folds = " ".join(f"{-n:+.3f}/{irr:+d}" for n, _, irr in r.trec_folds) or "–"
        lines.append(
            "| " + " | ".join([r.name, r.defence, fixed, folds, seeds_cell, gaps, r.dev.cell(4) + f", Irr@5 {r.dev_irrelevant:+d}",
                               dev_folds, r.robust["misspelled"].cell(3), r.robust["garbage"].cell(3), generic,
                               trec, trec_folds, f"**{r.verdict}**" if r.verdict else r.why]) + " |"
        )  # fmt: skip
    gap = ", ".join(f"seed {s}: {m:+.2f} % / {w:+.2f} %" for s, (m, w) in summary["gaps"].items())
    lines += [
        "",
        f"Default `{summary['strategy']}`: MQ2008 fixed "
        + ", ".join(f"{k} {v:.4f}" for k, v in summary["fixed"].items())
        + f"; random subsets, gap to the best plain method mean / worst: {gap}; crw56 dev nDCG@8 "
        f"{summary['dev']['nDCG@8']:.4f}, RelShown@8 {summary['dev']['RelShown@8']:.4f}, Irrelevant@5 "
        f"{summary['dev']['Irrelevant@5']:.0f}"
        + (
            f"; trec-dl nDCG@8 {summary['trec']['nDCG@8']:.4f}, Irrelevant@5 {summary['trec']['Irrelevant@5']:.0f}, "
            f"emptied {summary['trec']['emptied']:.0f}."
            if summary.get("trec")
            else "."
        ),
        "",
        "Δ = with the rule − without it (fusion: X, the default − X), paired by query; * the 95 % interval excludes 0. Folds: "
        "ΔnDCG@8 / Δ Irrelevant@5 (rows the rule keeps out of the top 5) on crw56 dev's four query folds.",
    ]
    lines += ["", "Why each verdict:", ""] + [
        f"- {r.name}: {r.verdict or 'alternative'}; {r.why}" for r in rows
    ]
    return "\n".join(lines)


def as_json(rows: Sequence[Row], summary: dict) -> str:
    def d(x: Delta) -> dict:
        return {"delta": x.delta, "low": x.low, "high": x.high, "n": x.n}

    return json.dumps(
        {
            "summary": summary,
            "rows": [
                {
                    "rule": r.name, "kind": r.kind, "defence": r.defence, "verdict": r.verdict, "why": r.why,
                    "mqFixed": {k: d(v) for k, v in r.mq_fixed.items()},
                    "mqSeeds": {str(k): d(v) for k, v in r.mq_seeds.items()},
                    "mqGaps": {str(k): v for k, v in r.mq_gaps.items()},
                    "mqFolds": {k: d(v) for k, v in r.mq_folds.items()},
                    "dev": d(r.dev), "devRelShown": d(r.dev_relshown), "devIrrelevant": r.dev_irrelevant,
                    "folds": r.folds,
                    "robust": {k: d(v) for k, v in r.robust.items()}, "robustIrrelevant": r.robust_irrelevant,
                    "trec": d(r.trec), "trecIrrelevant": r.trec_irrelevant, "trecFolds": r.trec_folds,
                    "trecFoldDeltas": [d(x) for x in r.trec_fold_deltas],
                }
                for r in rows
            ],
        },
        default=str,
    )  # fmt: skip


def main(argv: Sequence[str] | None = None, echo: Callable[[str], None] = print) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.ablation", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("SERPFUSE_DATA", "../shared/data")))
    ap.add_argument("--subsets", type=int, default=17, help="random subsets per seed")
    ap.add_argument("--seeds", default="1,7,2026")
    ap.add_argument("--rules", default="", help="comma-separated rule names (default: every one)")
    ap.add_argument(
        "--strategy", default="", help="ablate this fusion with the default's filters (default: the default)"
    )
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    if not (args.data / "mq2008-agg").is_dir() or not (args.data / "crw56").is_dir():
        print(f"data directory not found or incomplete: {args.data} (set SERPFUSE_DATA)", file=sys.stderr)
        return 2
    only = [r.strip() for r in args.rules.split(",") if r.strip()] or None
    known = {r.name for r in RULES} | {f"fusion: {a}" for a in ALTERNATIVES}
    if only and (unknown := [r for r in only if r not in known]):
        print(f"unknown rule {unknown[0]!r}; choose from: {', '.join(sorted(known))}", file=sys.stderr)
        return 2
    base = fusion(args.strategy)(RankingConfig()) if args.strategy else RankingConfig()
    rows, summary = run(args.data, base, args.subsets, [int(s) for s in args.seeds.split(",") if s], only)
    echo(as_json(rows, summary) if args.json else markdown(rows, summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
