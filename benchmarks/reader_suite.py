"""The page reader's text against the plain extractors, out of sample: three dev corpora, one run, side by side.

Corpora, read from ``$SERPFUSE_DATA`` (default ``../shared/data`` beside the repository), never shipped:

- ``scrapinghub``: article-extraction/, the benchmark's dev half (91 pages).
- ``dragnet`` and ``l3s-gn1``: extraction-wceb-dev/, the pages with ``gt_tokens >= 10``.

Every corpus is scored both ways: WCEB's bag-of-words F1 per page, then the mean (checked page by page against
the reference ``bow_f1.py`` beside the data; the run stops if the two ever differ), and the 4-gram shingle F1 of
scrapinghub's own ``evaluate.py``, imported from there (F1 of the mean precision and the mean recall).

Extractors: ``serpfuse`` (the shipped reader's text, metadata off as trafilatura.extract() reads none),
``trafilatura`` (``trafilatura.extract`` with its defaults) and ``readability`` (readability-lxml's summary as
text). For each corpus and metric: F1, pages per second and its ratio to the reader's, and the reader's gain over
each other extractor with a paired bootstrap over pages (95 % percentile interval) and the pages each wins.

Held out (``--folds``, default 5, by page id): the reader's one threshold (``SHORT_ARTICLE``) is chosen from
``GRID`` on the other folds of all three corpora and applied to each fold in turn; the held-out rows score that.
``--speed`` times the extractors page by page in turn instead (no scores), the fair ratio on a busy machine.

    python -m benchmarks.reader_suite [--corpus NAME]... [--offset N] [--limit N] [--jobs N] [--json] [--save FILE]
    python -m benchmarks.reader_suite --speed [--extractor NAME]... [--limit N]
"""

from __future__ import annotations

import argparse
import collections
import gzip
import hashlib
import importlib.util
import json
import os
import random
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SHINGLE_DIR = "article-extraction"
WCEB_DIR = "extraction-wceb-dev"
MIN_GT_TOKENS = 10  # WCEB scores only pages whose ground truth has at least this many tokens
CORPORA = ("scrapinghub", "dragnet", "l3s-gn1")
READER = "serpfuse"
RESAMPLES = 2000
SEED = 20261202  # fixed: an interval printed today is the interval printed tomorrow

Extractor = Callable[[str, str | None], Any]  # (html, url) -> plain text, or (text, which reading)
_WORD = re.compile(r"\w+", re.UNICODE)


class SuiteError(Exception):
    """The data or an extractor is missing. One line."""


# --- the extractors -----------------------------------------------------------------------------------------


def _reader(html: str, url: str | None) -> tuple[str, str]:
    """The reader's text and which reading it kept. Metadata off: trafilatura.extract() reads none either."""
    from serpfuse.reader.extract import ExtractionError, extract_html

    try:
        page = extract_html(html, url, metadata=False)
    except ExtractionError:
        return "", ""
    return page.text, page.extractor


def _reader_with_metadata(html: str, url: str | None) -> str:
    """What ``serpfuse read`` does per page: the reader with title, author, date and the rest."""
    from serpfuse.reader.extract import ExtractionError, extract_html

    try:
        return extract_html(html, url).text
    except ExtractionError:
        return ""


def _trafilatura(html: str, url: str | None) -> str:
    import trafilatura

    return trafilatura.extract(html, url=url) or ""


def _readability(html: str, url: str | None) -> str:
    import lxml.html
    from readability import Document

    summary = Document(html).summary(html_partial=True)
    return lxml.html.fromstring(summary).text_content() if summary.strip() else ""


# name -> (extractor, the module it needs, what it is)
EXTRACTORS: dict[str, tuple[Extractor, str, str]] = {
    READER: (_reader, "trafilatura", "the shipped reader's text"),
    "trafilatura": (_trafilatura, "trafilatura", "trafilatura.extract() with its defaults"),
    "readability": (_readability, "readability", "readability-lxml's summary as text"),
    "serpfuse-metadata": (
        _reader_with_metadata,
        "trafilatura",
        "the reader with its metadata (not by default)",
    ),
}
DEFAULT_EXTRACTORS = [READER, "trafilatura", "readability"]


# --- the corpora and their scorers --------------------------------------------------------------------------


@dataclass(frozen=True)
class Page:
    id: str
    url: str | None
    html: str
    truth: str


@dataclass(frozen=True)
class Metric:
    name: str
    score_page: Callable[[str, str], Any]  # (truth, prediction) -> what the pooled metric is made of
    pooled: Callable[[Sequence[Any]], tuple[float, float, float]]  # -> (F1, precision, recall)
    page_f1: Callable[[Any], float]  # one page's own F1 from its score (wins and losses)


@dataclass
class Corpus:
    name: str
    pages: list[Page]
    metrics: list[Metric]  # every corpus is scored both ways: bag-of-words and shingle F1


def data_root() -> Path:
    return Path(os.environ.get("SERPFUSE_DATA") or REPO.parent / "shared" / "data").resolve()


def _import(path: Path, name: str) -> ModuleType:
    if not path.is_file():
        raise SuiteError(f"{path} is missing (set SERPFUSE_DATA)")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SuiteError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _gunzip(path: Path) -> str:
    try:
        return gzip.decompress(path.read_bytes()).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError(f"unreadable page {path}: {exc}") from None


def bow(truth: str, pred: str) -> tuple[float, float, float]:
    """WCEB's bag-of-words precision, recall and F1 of one page: lower-cased ``\\w+`` tokens as multisets."""
    gold = collections.Counter(t.lower() for t in _WORD.findall(truth))
    got = collections.Counter(t.lower() for t in _WORD.findall(pred))
    n_gold, n_got = sum(gold.values()), sum(got.values())
    if n_gold == 0 and n_got == 0:
        return 1.0, 1.0, 1.0
    if n_gold == 0 or n_got == 0:
        return (0.0, 0.0, 0.0) if n_gold else (0.0, 1.0, 0.0)
    hit = sum((gold & got).values())
    precision, recall = hit / n_got, hit / n_gold
    return precision, recall, (2 * precision * recall / (precision + recall) if hit else 0.0)


def _mean_bow(scores: Sequence[tuple[float, float, float]]) -> tuple[float, float, float]:
    n = len(scores) or 1
    return (sum(s[2] for s in scores) / n, sum(s[0] for s in scores) / n, sum(s[1] for s in scores) / n)


BOW = Metric("BoW", bow, _mean_bow, lambda score: score[2])


def shingle_metric(root: Path) -> Metric:
    """scrapinghub's evaluate.py, imported from beside its data: 4-gram shingle F1 of the mean precision and the
    mean recall over pages."""
    evaluate = _import(root / SHINGLE_DIR / "evaluate.py", "article_extraction_evaluate")

    def pooled(tp_fp_fns: Sequence[tuple[float, float, float]]) -> tuple[float, float, float]:
        if not any(tp + fp > 0 for tp, fp, _ in tp_fp_fns) or not any(tp + fn > 0 for tp, _, fn in tp_fp_fns):
            return (
                0.0,
                0.0,
                0.0,
            )  # nothing extracted (or nothing to find) on any page: evaluate.py has no mean
        try:
            m = evaluate.metrics_from_tp_fp_fns(list(tp_fp_fns))
        except ZeroDivisionError:  # precision and recall both 0: so is F1
            return 0.0, 0.0, 0.0
        return m["f1"], m["precision"], m["recall"]

    def score_page(true: str, pred: str) -> tuple[float, float, float]:
        return evaluate.string_shingle_matching(true=true, pred=pred)

    def page_f1(tp_fp_fn: tuple[float, float, float]) -> float:
        p, r = evaluate.precision_score(*tp_fp_fn), evaluate.recall_score(*tp_fp_fn)
        return 2 * p * r / (p + r) if p + r else 0.0

    return Metric("shingle", score_page, pooled, page_f1)


def load_scrapinghub(root: Path, limit: int | None = None, offset: int = 0) -> Corpus:
    base = root / SHINGLE_DIR
    metric = shingle_metric(root)
    truth_path = base / "ground-truth-dev.json"
    if not truth_path.is_file():
        raise SuiteError(f"{truth_path} is missing (set SERPFUSE_DATA)")
    truth = json.loads(truth_path.read_text(encoding="utf-8"))
    ids = sorted(truth)[offset:][:limit]
    pages = [
        Page(i, truth[i].get("url") or None, _gunzip(base / "html" / f"{i}.html.gz"), truth[i].get("articleBody", ""))
        for i in ids
    ]  # fmt: skip
    return Corpus("scrapinghub", pages, [metric, BOW])


def load_wceb(root: Path, source: str, limit: int | None = None, offset: int = 0) -> Corpus:
    base = root / WCEB_DIR
    truth_path = base / "ground-truth.jsonl"
    if not truth_path.is_file():
        raise SuiteError(f"{truth_path} is missing (set SERPFUSE_DATA)")
    metric = shingle_metric(root)
    pages = []
    with truth_path.open(encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            if row["source"] != source or row["gt_tokens"] < MIN_GT_TOKENS:
                continue
            html = _gunzip(base / "html" / source / f"{row['id']}.html.gz")
            pages.append(Page(row["id"], row.get("url") or None, html, row["plaintext"]))
    pages.sort(key=lambda p: p.id)
    return Corpus(source, pages[offset:][:limit], [BOW, metric])


def load(name: str, root: Path, limit: int | None = None, offset: int = 0) -> Corpus:
    """The corpus's pages sorted by id, from the ``offset``-th, at most ``limit`` of them."""
    corpus = (
        load_scrapinghub(root, limit, offset)
        if name == "scrapinghub"
        else load_wceb(root, name, limit, offset)
    )
    if not corpus.pages:
        raise SuiteError(f"no {name} pages to score (offset {offset})")
    return corpus


def check_bow_against_reference(root: Path, pairs: Sequence[tuple[str, str]]) -> int:
    """Score every (truth, prediction) pair with this module's ``bow`` and the reference ``bow_f1.py``;
    ``SuiteError`` on the first difference. Returns how many pairs agreed."""
    reference = _import(root / WCEB_DIR / "bow_f1.py", "wceb_bow_f1")
    for truth, pred in pairs:
        mine, theirs = bow(truth, pred), reference.bow(truth, pred)
        if any(abs(a - b) > 1e-12 for a, b in zip(mine, theirs, strict=True)):
            raise SuiteError(f"the BoW scorer disagrees with bow_f1.py: {mine} vs {theirs}")
    return len(pairs)


# --- running, the bootstrap ---------------------------------------------------------------------------------


@dataclass
class Run:
    extractor: str
    outputs: list[str]
    seconds: float
    errors: int
    labels: list[str] = field(repr=False, default_factory=list)  # the reader's: which reading each page kept
    per_page: dict[str, list[Any]] = field(repr=False, default_factory=dict)  # metric -> page scores
    scores: dict[str, tuple[float, float, float]] = field(default_factory=dict)  # metric -> (F1, P, R)

    @property
    def pages_per_s(self) -> float:
        return len(self.outputs) / self.seconds if self.seconds > 0 else 0.0


def _timed(name: str, html: str, url: str | None) -> tuple[str, str, float, bool]:
    """One page through one extractor: its text, which reading (the reader's), the seconds it took, and whether
    it crashed (an empty page)."""
    started = time.perf_counter()
    try:
        out, crashed = EXTRACTORS[name][0](html, url), False
    except Exception:  # a crash scores as an empty page, and is counted
        out, crashed = "", True
    text, label = out if isinstance(out, tuple) else (out, "")
    return text, label, time.perf_counter() - started, crashed


def scored(corpus: Corpus, name: str, outputs: list[str], seconds: float = 0.0, errors: int = 0,
           labels: list[str] | None = None) -> Run:  # fmt: skip
    run = Run(name, outputs, seconds, errors, labels or [])
    for metric in corpus.metrics:
        run.per_page[metric.name] = [
            metric.score_page(p.truth, o) for p, o in zip(corpus.pages, outputs, strict=True)
        ]
        run.scores[metric.name] = metric.pooled(run.per_page[metric.name])
    return run


def run_extractor(corpus: Corpus, name: str, jobs: int = 1) -> Run:
    """Every page through ``name``; with ``jobs`` > 1 in that many processes. Speed is pages over the sum of
    the per-page times, so it does not depend on ``jobs`` (on an idle machine)."""
    args = ([name] * len(corpus.pages), [p.html for p in corpus.pages], [p.url for p in corpus.pages])
    if jobs > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(jobs) as pool:
            results = list(pool.map(_timed, *args, chunksize=8))
    else:
        results = list(map(_timed, *args))
    return scored(
        corpus,
        name,
        [r[0] for r in results],
        sum(r[2] for r in results),
        sum(r[3] for r in results),
        [r[1] for r in results],
    )


@dataclass(frozen=True)
class Gain:
    """The pooled metric of ``a`` minus ``b``'s, and its paired-bootstrap percentile interval."""

    delta: float
    low: float
    high: float
    wins: int  # pages where a's own score beats b's
    losses: int

    def as_dict(self) -> dict[str, float | int]:
        return {
            "delta": self.delta,
            "low": self.low,
            "high": self.high,
            "wins": self.wins,
            "losses": self.losses,
        }


def _percentile(ordered: Sequence[float], q: float) -> float:
    pos = q * (len(ordered) - 1)
    lower = int(pos)
    upper = min(lower + 1, len(ordered) - 1)
    return ordered[lower] + (ordered[upper] - ordered[lower]) * (pos - lower)


def paired_gain(metric: Metric, a: Run, b: Run, resamples: int, seed: int) -> Gain:
    mine_scores, theirs_scores = a.per_page[metric.name], b.per_page[metric.name]
    n = len(mine_scores)
    rng = random.Random(seed)
    deltas = []
    for _ in range(resamples):
        picks = [rng.randrange(n) for _ in range(n)]
        deltas.append(
            metric.pooled([mine_scores[i] for i in picks])[0]
            - metric.pooled([theirs_scores[i] for i in picks])[0]
        )
    deltas.sort()
    mine, theirs = [metric.page_f1(x) for x in mine_scores], [metric.page_f1(x) for x in theirs_scores]
    return Gain(
        delta=a.scores[metric.name][0] - b.scores[metric.name][0],
        low=_percentile(deltas, 0.025),
        high=_percentile(deltas, 0.975),
        wins=sum(x > y for x, y in zip(mine, theirs, strict=True)),
        losses=sum(x < y for x, y in zip(mine, theirs, strict=True)),
    )


@dataclass
class CorpusResult:
    corpus: Corpus
    runs: dict[str, Run]
    gains: dict[str, dict[str, Gain]]  # other extractor -> metric -> the reader's gain over it
    bow_checked: int = 0

    def as_dict(self) -> dict[str, Any]:
        reader = self.runs.get(READER)
        return {
            "corpus": self.corpus.name,
            "metrics": [m.name for m in self.corpus.metrics],
            "pages": len(self.corpus.pages),
            "bowPairsChecked": self.bow_checked,
            "extractors": {
                name: {
                    "scores": {
                        m: {"f1": f, "precision": p, "recall": r} for m, (f, p, r) in run.scores.items()
                    },
                    "pagesPerSecond": run.pages_per_s,
                    "speedVsReader": run.pages_per_s / reader.pages_per_s
                    if reader and reader.pages_per_s and run.seconds
                    else None,
                    "errors": run.errors,
                }
                for name, run in self.runs.items()
            },
            "readerGain": {name: {m: g.as_dict() for m, g in by.items()} for name, by in self.gains.items()},
        }


def run_corpus(
    corpus: Corpus, extractors: Sequence[str], root: Path, resamples: int, seed: int, jobs: int = 1
) -> CorpusResult:
    for name in extractors:  # imports and first-call setup are not timed
        EXTRACTORS[name][0](corpus.pages[0].html, corpus.pages[0].url)
    runs = {name: run_extractor(corpus, name, jobs) for name in extractors}
    checked = 0
    if any(m is BOW for m in corpus.metrics):
        checked = check_bow_against_reference(
            root, [(p.truth, run.outputs[i]) for run in runs.values() for i, p in enumerate(corpus.pages)]
        )
    return CorpusResult(corpus, runs, reader_gains(corpus, runs, resamples, seed), checked)


def reader_gains(
    corpus: Corpus, runs: dict[str, Run], resamples: int, seed: int
) -> dict[str, dict[str, Gain]]:
    if READER not in runs:
        return {}
    return {
        name: {m.name: paired_gain(m, runs[READER], run, resamples, seed) for m in corpus.metrics}
        for name, run in runs.items()
        if name != READER
    }


# --- held out: the short-article threshold chosen on the other folds ----------------------------------------

GRID = (0, 25, 50, 100)  # SHORT_ARTICLE's candidates; 0 is readability alone


def short_article_texts(corpus: Corpus, reader: Run) -> dict[int, list[str]]:
    """The reader's text of every page under each threshold of GRID, from the shipped run's own outputs: the
    other reading is made (untimed) only on pages where some threshold could have asked for it."""
    import lxml.html  # noqa: F401  (trafilatura's loader needs it loaded)
    from trafilatura.utils import load_html

    from serpfuse.reader.extract import longer, readability_reading, tokens, trafilatura_reading

    texts: dict[int, list[str]] = {n: [] for n in GRID}
    for page, text, label in zip(corpus.pages, reader.outputs, reader.labels, strict=True):
        if label == "readability" and len(tokens(text)) >= max(GRID):
            first = second = text
        else:
            first = text if label == "readability" else readability_reading(page.html, page.url)[1]
            tree = load_html(page.html)
            second = (
                text
                if label == "trafilatura"
                else (trafilatura_reading(tree, page.url)[1] if tree is not None else "")
            )
        for n in GRID:
            texts[n].append(second if longer(first, second, n) else first)
    return texts


def fold_of(page_id: str, folds: int) -> int:
    return int(hashlib.sha1(page_id.encode()).hexdigest(), 16) % folds  # by id: the same folds in every run


WITHOUT_RULE = "without the short-article rule"


def held_out(
    results: Sequence[CorpusResult], folds: int, resamples: int, seed: int
) -> tuple[dict[str, Run], list[int], dict[str, Run]]:
    """For each fold, the threshold that scores best on the other folds of all the corpora (the mean over
    corpora and metrics), applied to that fold: the reader's held-out text of every page, per corpus. Also,
    per corpus, the reader without the rule (readability's article alone), for the rule's own effect."""
    grids = [short_article_texts(r.corpus, r.runs[READER]) for r in results]
    fold_ids = [[fold_of(p.id, folds) for p in r.corpus.pages] for r in results]
    # every page scored once per threshold and metric; a fold's training score pools the other folds' pages
    page_scores = [
        {(n, m.name): [m.score_page(p.truth, t) for p, t in zip(r.corpus.pages, grid[n], strict=True)]
         for n in GRID for m in r.corpus.metrics}
        for r, grid in zip(results, grids, strict=True)
    ]  # fmt: skip
    chosen = []
    for k in range(folds):

        def train_score(n: int, k: int = k) -> float:
            total = 0.0
            for r, scores, ids in zip(results, page_scores, fold_ids, strict=True):
                for m in r.corpus.metrics:
                    total += m.pooled([x for x, f in zip(scores[n, m.name], ids, strict=True) if f != k])[0]
            return total

        chosen.append(max(GRID, key=lambda n: (train_score(n), -n)))
    runs, without = {}, {}
    for r, grid, ids in zip(results, grids, fold_ids, strict=True):
        outputs = [grid[chosen[f]][i] for i, f in enumerate(ids)]
        runs[r.corpus.name] = scored(r.corpus, f"{READER} (held out)", outputs)
        without[r.corpus.name] = scored(r.corpus, WITHOUT_RULE, grid[0])
    return runs, chosen, without


def pooled_gain(results: Sequence[CorpusResult], held: dict[str, Run], resamples: int, seed: int) -> Gain:
    """The held-out reader's gain over the better plain extractor of each corpus and metric (the one with the
    higher score on all its pages), averaged over every corpus and metric, with a bootstrap that resamples the
    pages of each corpus (stratified) and scores all of them on the same draw."""
    cells = []  # (corpus result, metric, the better other run)
    for r in results:
        others = [run for name, run in r.runs.items() if name != READER]
        for m in r.corpus.metrics:
            cells.append((r, m, max(others, key=lambda run, m=m: run.scores[m.name][0])))

    def mean_gain(draws: dict[str, list[int]]) -> float:
        total = 0.0
        for r, m, other in cells:
            idx = draws[r.corpus.name]
            mine, theirs = held[r.corpus.name].per_page[m.name], other.per_page[m.name]
            total += m.pooled([mine[i] for i in idx])[0] - m.pooled([theirs[i] for i in idx])[0]
        return total / len(cells)

    rng = random.Random(seed)
    full = {r.corpus.name: list(range(len(r.corpus.pages))) for r in results}
    deltas = sorted(
        mean_gain({name: [rng.randrange(len(idx)) for _ in idx] for name, idx in full.items()})
        for _ in range(resamples)
    )
    wins = sum(held[r.corpus.name].scores[m.name][0] > other.scores[m.name][0] for r, m, other in cells)
    return Gain(
        mean_gain(full), _percentile(deltas, 0.025), _percentile(deltas, 0.975), wins, len(cells) - wins
    )


# --- speed side by side -------------------------------------------------------------------------------------


def interleaved_speed(corpus: Corpus, names: Sequence[str], rounds: int = 1) -> dict[str, float]:
    """Pages per second of each extractor timed page by page in turn (the order rotating each page), in this one
    process: load from other work on the machine falls on all of them alike."""
    for name in names:
        EXTRACTORS[name][0](corpus.pages[0].html, corpus.pages[0].url)
    seconds = dict.fromkeys(names, 0.0)
    for _ in range(rounds):
        for i, page in enumerate(corpus.pages):
            for name in names[i % len(names) :] + names[: i % len(names)]:
                seconds[name] += _timed(name, page.html, page.url)[2]
    return {name: rounds * len(corpus.pages) / t if t else 0.0 for name, t in seconds.items()}


# --- the table ----------------------------------------------------------------------------------------------


def markdown(
    results: Sequence[CorpusResult],
    held: dict[str, Run] | None = None,
    held_gains: dict[str, dict[str, dict[str, Gain]]] | None = None,
) -> str:
    lines = []
    for result in results:
        corpus, reader = result.corpus, result.runs.get(READER)
        metrics = [m.name for m in corpus.metrics]
        lines += [
            f"\n{corpus.name} ({len(corpus.pages)} pages)\n",
            "| extractor | "
            + " | ".join(f"{m} F1" for m in metrics)
            + " | pages/s | speed vs reader | "
            + " | ".join(f"reader's {m} gain [95 %], won/lost" for m in metrics)
            + " |",
            "| --- |" + " ---: |" * (len(metrics) + 2) + " --- |" * len(metrics),
        ]
        rows = [(name, run, result.gains.get(name, {})) for name, run in result.runs.items()]
        if held and corpus.name in held:
            run = held[corpus.name]
            rows += [(run.extractor, run, {})]
            rows += [
                (f"held out vs {other}", run, g)
                for other, g in (held_gains or {}).get(corpus.name, {}).items()
            ]
        for name, run, gains in rows:
            ratio = (
                f"{run.pages_per_s / reader.pages_per_s:.2f}×"
                if reader and reader.pages_per_s and run.seconds
                else ""
            )
            speed = f"{run.pages_per_s:.1f}" if run.seconds else ""
            shown = "" if name.startswith("held out vs") else None
            cells = [
                f"{g.delta:+.4f} [{g.low:+.4f}, {g.high:+.4f}], {g.wins}/{g.losses}"
                if (g := gains.get(m))
                else ""
                for m in metrics
            ]
            lines.append(
                f"| {name} | "
                + " | ".join(shown if shown is not None else f"{run.scores[m][0]:.4f}" for m in metrics)
                + f" | {speed} | {ratio} | "
                + " | ".join(cells)
                + " |"
            )
    checked = sum(r.bow_checked for r in results)
    if checked:
        lines.append(f"\nBoW scorer checked against bow_f1.py on {checked:,} page scores: identical.")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.reader_suite", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--corpus", action="append", choices=CORPORA, help="one corpus (repeatable; default all)"
    )
    parser.add_argument("--extractor", action="append", choices=list(EXTRACTORS), help="default: all three")
    parser.add_argument("--limit", type=int, help="at most N pages of each corpus (by id), for a quick look")
    parser.add_argument("--offset", type=int, default=0, help="skip the first N pages of each corpus (by id)")
    parser.add_argument("--resamples", type=int, default=RESAMPLES)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--json", action="store_true", help="the results as JSON instead of the table")
    parser.add_argument("--save", type=Path, help="also write the results as JSON to this file")
    parser.add_argument(
        "--outputs", type=Path, help="write every extractor's text of every page (JSON lines)"
    )
    parser.add_argument("--jobs", type=int, default=1, help="extract in this many processes")
    parser.add_argument(
        "--speed", action="store_true", help="only time the extractors page by page in turn (no scores)"
    )
    parser.add_argument(
        "--folds",
        type=int,
        default=5,
        help="held-out folds for the reader's threshold (0: none; needs the reader)",
    )
    args = parser.parse_args(argv)
    extractors = args.extractor or DEFAULT_EXTRACTORS
    try:
        if args.limit is not None and args.limit < 1:
            raise SuiteError("--limit must be at least 1")
        if args.resamples < 1:
            raise SuiteError("--resamples must be at least 1")
        if args.jobs < 1:
            raise SuiteError("--jobs must be at least 1")
        if args.offset < 0:
            raise SuiteError("--offset must not be negative")
        if args.folds == 1 or args.folds < 0:
            raise SuiteError("--folds must be 0 or at least 2")
        for name in extractors:
            if importlib.util.find_spec(EXTRACTORS[name][1]) is None:
                raise SuiteError(f"{name} needs the module {EXTRACTORS[name][1]} (pip install -e '.[bench]')")
        root = data_root()
        if args.speed:
            lines = ["| corpus (pages) | " + " | ".join(f"{n} pages/s" for n in extractors) + " | reader ÷ trafilatura |",
                     "| --- |" + " ---: |" * (len(extractors) + 1)]  # fmt: skip
            for name in args.corpus or CORPORA:
                corpus = load(name, root, args.limit, args.offset)
                speed = interleaved_speed(corpus, extractors)
                ratio = speed.get(READER, 0) / speed["trafilatura"] if speed.get("trafilatura") else 0
                cells = " | ".join(f"{speed[n]:.1f}" for n in extractors)
                lines.append(f"| {name} ({len(corpus.pages)}) | {cells} | {ratio:.2f} |")
            print("\n".join(lines))
            return 0
        results = []
        for name in args.corpus or CORPORA:
            corpus = load(name, root, args.limit, args.offset)
            results.append(run_corpus(corpus, extractors, root, args.resamples, args.seed, args.jobs))
            print(f"{name}: {len(corpus.pages)} pages scored", file=sys.stderr)
            if args.outputs:
                with args.outputs.open("a", encoding="utf-8") as out:
                    for run in results[-1].runs.values():
                        for page, text in zip(corpus.pages, run.outputs, strict=True):
                            row = {"corpus": name, "id": page.id, "extractor": run.extractor, "text": text}
                            out.write(json.dumps(row, ensure_ascii=False) + "\n")
        held, held_gains, chosen = {}, {}, []
        if args.folds and READER in extractors:
            held, chosen, without = held_out(results, args.folds, args.resamples, args.seed)
            for r in results:
                others = {n: run for n, run in r.runs.items() if n != READER}
                others[WITHOUT_RULE] = without[r.corpus.name]
                held_gains[r.corpus.name] = reader_gains(
                    r.corpus, {READER: held[r.corpus.name], **others}, args.resamples, args.seed
                )
    except SuiteError as exc:
        print(f"reader_suite: error: {exc}", file=sys.stderr)
        return 2
    document = [r.as_dict() for r in results]
    for r in document:
        if r["corpus"] in held:
            r["heldOut"] = {
                "foldThresholds": chosen,
                "scores": {
                    m: {"f1": f, "precision": p, "recall": q}
                    for m, (f, p, q) in held[r["corpus"]].scores.items()
                },
                "gain": {
                    o: {m: g.as_dict() for m, g in by.items()} for o, by in held_gains[r["corpus"]].items()
                },
            }
    document = json.dumps(document, indent=2)
    if args.save:
        args.save.write_text(document + "\n", encoding="utf-8")
    if args.json:
        print(document)
    else:
        print(markdown(results, held, held_gains))
        if held and len(results) > 1:
            g = pooled_gain(results, held, args.resamples, args.seed)
            print(
                f"\nHeld out, pooled over corpora and metrics, minus the better plain extractor of each: "
                f"{g.delta:+.4f} [{g.low:+.4f}, {g.high:+.4f}] ({g.wins} of {g.wins + g.losses} cells above it)."
            )
        if chosen:
            print(
                f"\nHeld out: {args.folds} folds by page id; the short-article threshold each fold's other folds chose: {chosen}."
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
