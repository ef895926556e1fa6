"""The robustness benches without judgments: what the injected rows do, on either half of crw56.

The judged benches (``robustness``) score the dev half. The unseen half (odd qids) is judged elsewhere, but its
engine responses are in the recording, and what the robustness benches inject is junk by construction: an echo
row, a generic row and an off-topic engine's row are irrelevant to the query whatever a judge would say. So
these counts need no judgment, and they are run on each half the same way, after the rules were fixed on dev:

- ``--misspelled``: echo rows in the misspelled query's top 8 and top 5, and how much its top 8 keeps of the
  correctly spelled run's top 8 (the share of the same results, and rank-biased overlap).
- ``--generic-rows NAME``: generic rows in the top 8 and top 5, in each of the three variants, and the share of
  the clean run's top 8 kept.
- ``--garbage-engine NAME``: the off-topic engine's rows (those not in the query's own pool) in the top 8 and
  top 5, apart for the queries another engine answered too and those it answered alone, and the share of the
  top 8 with the engine removed that the garbage run keeps.

Nothing here is tuned: the injections are the judged benches' own (same seeds, same rules), applied per half.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

from benchmarks import crw56, robustness
from benchmarks.tables import Tables
from serpfuse.urls import dedup_key

HALVES = {"dev": ("dev",), "test": ("test",), "all": ("dev", "test")}
RBO_P = 0.9  # rank-biased overlap's persistence: the top 8 carries ~57 % of the weight at depth 8
TOP = crw56.K
TOP_SHOWN = crw56.K_SHOWN


# --- comparing two top 8s ------------------------------------------------------------------------------------


def keys_of(row: crw56.Shown) -> frozenset[str]:
    """Every dedup key a shown row answers to (its own URL and each engine's URL for it)."""
    return frozenset(dedup_key(u) for u in row.urls)


def _same(a: frozenset[str], b: frozenset[str]) -> bool:
    return not a.isdisjoint(b)


def kept_share(reference: Sequence[frozenset[str]], other: Sequence[frozenset[str]]) -> float | None:
    """The share of ``reference``'s rows that ``other`` shows too (None when ``reference`` is empty)."""
    if not reference:
        return None
    return sum(any(_same(r, o) for o in other) for r in reference) / len(reference)


def rank_biased_overlap(a: Sequence[frozenset[str]], b: Sequence[frozenset[str]], p: float = RBO_P) -> float:
    """Rank-biased overlap (Webber et al. 2010) of two short lists, down to the longer one's depth and
    normalised by the weights used there, so identical lists score 1 and disjoint ones 0; two empty lists
    agree (1)."""
    depth = max(len(a), len(b))
    if depth == 0:
        return 1.0
    total = weight = 0.0
    for d in range(1, depth + 1):
        top_a, top_b = a[:d], b[:d]
        common = sum(any(_same(x, y) for y in top_b) for x in top_a)
        w = p ** (d - 1)
        total += w * common / d
        weight += w
    return total / weight


def hits(shown: Sequence[frozenset[str]], injected: Collection[str], k: int) -> int:
    """How many of the first ``k`` rows are injected ones."""
    return sum(1 for row in shown[:k] if not row.isdisjoint(injected))


@dataclass
class Tally:
    """One ranker on one half: sums of injected rows shown, and the per-query agreement with the reference."""

    queries: int = 0
    injected: int = 0
    top8: int = 0
    top5: int = 0
    queries_top5: int = 0  # queries with an injected row in the top 5
    kept: list[float] = field(default_factory=list)  # per query whose reference shows something
    rbo: list[float] = field(default_factory=list)
    shown_reference: int = 0
    shown_altered: int = 0
    per_query: list[dict] = field(default_factory=list)  # the queries with an injected row in the top 8

    def add(self, qid: int, reference, altered, injected: Collection[str], n_injected: int) -> None:
        self.queries += 1
        self.injected += n_injected
        top5 = hits(altered, injected, TOP_SHOWN)
        self.top8 += hits(altered, injected, TOP)
        self.top5 += top5
        self.queries_top5 += top5 > 0
        if hits(altered, injected, TOP):
            ranks = [i for i, row in enumerate(altered[:TOP], start=1) if not row.isdisjoint(injected)]
            self.per_query.append({"qid": qid, "ranks": ranks})
        share = kept_share(reference, altered)
        if share is not None:
            self.kept.append(share)
        self.rbo.append(rank_biased_overlap(reference, altered))
        self.shown_reference += len(reference)
        self.shown_altered += len(altered)

    def summary(self) -> dict[str, float]:
        def mean(values: list[float]) -> float:
            return sum(values) / len(values) if values else 0.0

        return {
            "queries": self.queries,
            "injected": self.injected,
            "top8": self.top8,
            "top5": self.top5,
            "queriesTop5": self.queries_top5,
            "kept@8": mean(self.kept),
            "kept@8:n": len(self.kept),
            "rbo": mean(self.rbo),
            "shownReference": self.shown_reference,
            "shownAltered": self.shown_altered,
            "reached": self.per_query,
        }


def _cells(summary: Mapping[str, float]) -> list[str]:
    return [
        str(int(summary["queries"])),
        str(int(summary["injected"])),
        str(int(summary["top8"])),
        str(int(summary["top5"])),
        str(int(summary["queriesTop5"])),
        f"{summary['kept@8']:.3f}" if summary["kept@8:n"] else "–",
        f"{summary['rbo']:.3f}" if summary["queries"] else "–",
        f"{summary['shownReference']}/{summary['shownAltered']}",
    ]


def _table(results, default: str, injected: str, reference: str) -> tuple[list[str], list[list[str]]]:
    """results: [(label, half, summary)] -> (head, rows)."""
    head = [
        "ranker",
        "half",
        "queries",
        f"{injected} injected",
        "in top 8",
        "in top 5",
        "queries with one in top 5",
        f"{reference} top 8 kept",
        "RBO",
        f"rows shown {reference}/altered",
    ]
    rows = [[robustness._bold_default(label, default), half, *_cells(s)] for label, half, s in results]
    return head, rows


# --- the three benches ---------------------------------------------------------------------------------------


def _load(root, split: str):
    from benchmarks.setups import load_crw56
    from serpfuse.sources.replay import load_recording

    corpus = load_crw56(root)
    return corpus, load_recording(corpus.recording), HALVES[split]


def _half(corpus: crw56.Crw56Corpus, half: str, only: Collection[int] | None) -> list[crw56.Crw56Query]:
    return [q for q in corpus.split(half) if only is None or q.qid in only]


def _shown(runner: crw56.PipelineRunner, query: crw56.Crw56Query, config) -> list[frozenset[str]]:
    return [keys_of(row) for row in runner(query, config)]


def _answers(recording: Mapping[str, object], query: crw56.Crw56Query):
    from serpfuse.sources.replay import normalise_query

    return recording[normalise_query(query.query)].variants.get("", {})


def run_misspelled(
    root, split: str, runs, default: str, progress, only: Collection[int] | None = None
) -> Tables:
    """Every run on each half's correctly spelled queries and their misspelled twins with echo rows (the judged
    bench's typos and echo rows), counted without judgments (``only``: just these qids, for tests)."""
    from serpfuse.sources.replay import RecordedQuery, normalise_query

    corpus, recording, halves = _load(root, split)
    plans = {}  # half -> [(query, misspelled twin, echo keys)]
    altered: dict[str, RecordedQuery] = {}
    for half in halves:
        plans[half] = []
        for query in _half(corpus, half, only):
            spelling = robustness.misspell_query(query)
            if spelling is None:
                continue
            answers, echoes = robustness.misspelled_answers(
                _answers(recording, query),
                spelling.misspelled,
                random.Random(f"{robustness.MISSPELL_SEED}:{query.qid}:echo"),
            )
            altered[normalise_query(spelling.misspelled)] = RecordedQuery(spelling.misspelled, {"": answers})
            keys = {dedup_key(r.url) for r in echoes}
            plans[half].append((query, replace(query, query=spelling.misspelled), keys, len(echoes)))
    clean_runner = crw56.PipelineRunner(corpus, recording=recording)
    typo_runner = crw56.PipelineRunner(corpus, recording=altered)
    results = []
    n = sum(len(p) for p in plans.values())
    with progress(2 * n * len(runs)) as tracker:
        tracker.describe(f"{len(runs)} rankers, {n} queries twice")
        for label, config in runs:
            for half in halves:
                tally = Tally()
                for query, typed, keys, count in plans[half]:
                    spelled = _shown(clean_runner, query, config)
                    tracker.step()
                    wrong = _shown(typo_runner, typed, config)
                    tracker.step()
                    tally.add(query.qid, spelled, wrong, keys, count)
                results.append((label, half, tally.summary()))
    head, rows = _table(results, default, "echo rows", "spelled")
    note = (
        f"Label-free (no judgments used): crw56 {' and '.join(halves)} half, each query with the judged bench's "
        f"typo and echo rows (seed {robustness.MISSPELL_SEED}). Echo rows are junk by construction. Spelled top "
        f"8 kept: the share of the correctly spelled run's results that the misspelled run shows too (mean over "
        f"the queries where the spelled run shows any); RBO: rank-biased overlap of the two, p = {RBO_P}. Bold: "
        f"the default ranker."
    )
    payload = {
        "corpus": "crw56",
        "labelFree": True,
        "halves": list(halves),
        "seed": robustness.MISSPELL_SEED,
        "default": default,
        "queries": {half: [q.qid for q, _, _, _ in plans[half]] for half in halves},
        "rankers": _by_ranker(results),
    }
    return Tables(payload, [("crw56: misspelled queries, label-free", head, rows, 2)], note)


def _by_ranker(results) -> dict:
    out: dict = {}
    for label, half, summary in results:
        out.setdefault(label, {})[half] = summary
    return out


def run_generic(
    root, engine: str, split: str, runs, default: str, progress, only: Collection[int] | None = None
) -> Tables:
    """Every run clean and with the judged bench's generic rows in ``engine``'s lists (each variant), on each
    half, counted without judgments (``only``: just these qids, for tests)."""
    from benchmarks.setups import BenchError

    corpus, recording, halves = _load(root, split)
    _check_engine(corpus, engine, "--generic-rows")
    variants = {}  # half -> [(variant name, altered recording, plans)]
    for half in halves:
        queries = _half(corpus, half, only)
        variants[half] = [
            (name, *robustness.generic_recording(recording, queries, engine, whole, nth))
            for name, whole, nth in robustness.GENERIC_VARIANTS
        ]
    if not any(plans for vs in variants.values() for _, _, plans in vs):
        raise BenchError(f"--generic-rows {engine}: no query that {engine} and another engine both answered")
    by_qid = {q.qid: q for q in corpus.queries}
    clean_runner = crw56.PipelineRunner(corpus, recording=recording)
    results: dict[str, list] = {name: [] for name, _, _ in robustness.GENERIC_VARIANTS}
    steps = len(runs) * sum(
        len({p.qid for _, _, plans in vs for p in plans}) + sum(len(plans) for _, _, plans in vs)
        for vs in variants.values()
    )
    with progress(steps) as tracker:
        tracker.describe(f"{len(runs)} rankers, clean and {len(robustness.GENERIC_VARIANTS)} ways")
        for label, config in runs:
            for half in halves:
                clean = {}
                for qid in sorted({p.qid for _, _, plans in variants[half] for p in plans}):
                    clean[qid] = _shown(clean_runner, by_qid[qid], config)
                    tracker.step()
                for name, altered, plans in variants[half]:
                    runner = crw56.PipelineRunner(corpus, recording=altered)
                    tally = Tally()
                    for plan in plans:
                        shown = _shown(runner, by_qid[plan.qid], config)
                        tracker.step()
                        keys = {dedup_key(r.url) for r in plan.rows}
                        tally.add(plan.qid, clean[plan.qid], shown, keys, len(plan.rows))
                    results[name].append((label, half, tally.summary()))
    tables = []
    for name, rows in results.items():
        head, cells = _table(rows, default, "generic rows", "clean")
        tables.append((f"crw56, {engine}, {name}: generic rows, label-free", [f"ranker ({name})", *head[1:]],
                       cells, 2))  # fmt: skip
    note = (
        f"Label-free (no judgments used): crw56 {' and '.join(halves)} half, the queries that {engine} and "
        f"another engine both answered, with the judged bench's generic rows (rows matching only the query's "
        f"generic words, donors drawn within the half) in {engine}'s lists. Generic rows are junk by "
        f"construction. Clean top 8 kept: the share of the clean run's results the run with generic rows shows "
        f"too; RBO: rank-biased overlap of the two, p = {RBO_P}. Bold: the default ranker."
    )
    payload = {
        "corpus": "crw56",
        "labelFree": True,
        "engine": engine,
        "halves": list(halves),
        "default": default,
        "plans": {
            half: {name: [p.qid for p in plans] for name, _, plans in vs} for half, vs in variants.items()
        },
        "variants": {name: _by_ranker(rows) for name, rows in results.items()},
    }
    return Tables(payload, tables, note)


def _check_engine(corpus: crw56.Crw56Corpus, engine: str, option: str) -> None:
    from benchmarks.setups import BenchError

    known = crw56.engines_of(corpus.queries)
    if engine not in known:
        raise BenchError(f"{option} {engine!r}: crw56's engines are {', '.join(known)}")


def run_garbage(
    root, engine: str, split: str, runs, default: str, progress, only: Collection[int] | None = None
) -> Tables:
    """Every run with ``engine`` off-topic (the judged bench's derangement, within each half) and with it
    removed, on each half, counted without judgments (``only``: just these qids, for tests)."""
    from benchmarks.setups import BenchError

    corpus, recording, halves = _load(root, split)
    _check_engine(corpus, engine, "--garbage-engine")
    setups = {}  # half -> (queries, garbage recording, removed recording, off-topic keys per qid, shared qids)
    for half in halves:
        queries = _half(corpus, half, only)
        try:
            garbage, swap = robustness.garbage_recording(recording, queries, engine)
        except ValueError as exc:
            raise BenchError(f"--garbage-engine {engine}: {exc}") from None
        removed, shared = robustness.removed_recording(recording, queries, engine)
        off_topic = {}
        for query in queries:
            if query.qid not in swap.donor:
                continue
            own = {dedup_key(r.url) for a in _answers(recording, query).values() for r in a.rows}
            rows = _answers(garbage, query)[engine].rows
            off_topic[query.qid] = {dedup_key(r.url) for r in rows} - own
        setups[half] = (queries, garbage, removed, off_topic, shared)
    results: dict[str, list] = {"shared": [], "alone": []}
    steps = len(runs) * sum(2 * len(s[3]) for s in setups.values())
    with progress(steps) as tracker:
        tracker.describe(f"{len(runs)} rankers, garbage and removed")
        for label, config in runs:
            for half in halves:
                queries, garbage, removed, off_topic, shared = setups[half]
                garbage_runner = crw56.PipelineRunner(corpus, recording=garbage)
                removed_runner = crw56.PipelineRunner(corpus, recording=removed)
                tallies = {"shared": Tally(), "alone": Tally()}
                for query in queries:
                    if query.qid not in off_topic:
                        continue
                    reference = _shown(removed_runner, query, config)
                    tracker.step()
                    shown = _shown(garbage_runner, query, config)
                    tracker.step()
                    keys = off_topic[query.qid]
                    where = "shared" if query.qid in shared else "alone"
                    tallies[where].add(query.qid, reference, shown, keys, len(keys))
                for where, tally in tallies.items():
                    results[where].append((label, half, tally.summary()))
    wheres = {"shared": "another engine answered too", "alone": f"{engine} answered alone"}
    tables = []
    for where, rows in results.items():
        if not any(summary["queries"] for _, _, summary in rows):
            continue  # e.g. no query google answered alone
        head, cells = _table(rows, default, "off-topic rows", "removed")
        title = f"crw56, the queries {wheres[where]}: {engine}'s off-topic rows, label-free"
        tables.append((title, [f"ranker ({wheres[where]})", *head[1:]], cells, 2))
    note = (
        f"Label-free (no judgments used): crw56 {' and '.join(halves)} half; {engine} answers each query it "
        f"answered with its list for the next one of the same half (qid order, cyclic). Off-topic rows: that "
        f"list's rows not in the query's own pool, junk by construction. Removed top 8 kept: the share of the "
        f"run without {engine} that the garbage run shows too; RBO: rank-biased overlap of the two, p = "
        f"{RBO_P}. Where {engine} answered alone nothing else is left to show. Bold: the default ranker."
    )
    payload = {
        "corpus": "crw56",
        "labelFree": True,
        "engine": engine,
        "halves": list(halves),
        "default": default,
        "queries": {
            half: {
                "shared": sorted(q for q in s[3] if q in s[4]),
                "alone": sorted(q for q in s[3] if q not in s[4]),
            }
            for half, s in setups.items()
        },
        "rankers": {where: _by_ranker(rows) for where, rows in results.items()},
    }
    return Tables(payload, tables, note)
