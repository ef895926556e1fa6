"""The page reader's text against the plain extractors, out of sample: three dev corpora, one run, side by side.

Corpora, read from ``$SERPFUSE_DATA`` (default ``../shared/data`` beside the repository), never shipped:

- ``scrapinghub``: article-extraction/, the benchmark's dev half (91 pages), scored by the benchmark's own
  ``evaluate.py``, imported from there: 4-gram shingle F1 of the corpus's mean precision and mean recall.
- ``dragnet`` and ``l3s-gn1``: extraction-wceb-dev/, the pages with ``gt_tokens >= 10``, scored as WCEB scores
  them: bag-of-words F1 per page, then the mean. The scorer here is checked page by page against the reference
  ``bow_f1.py`` beside the data, and the run stops if the two ever differ.

Extractors: ``serpfuse`` (the shipped reader: ``extract_html(...).text``, what ``serpfuse read --format text``
prints), ``trafilatura`` (``trafilatura.extract`` with its defaults) and ``readability`` (readability-lxml's
summary as text; the ``bench`` extra). For each corpus: F1, precision, recall, pages per second and its ratio to
the reader's (same run, one process), and the reader's gain over each other extractor, as the pooled metric of
the reader minus the other's, with a paired bootstrap over pages (both scored on the same resample; 95 %
percentile interval) and the pages each wins.

    python -m benchmarks.reader_suite [--corpus NAME]... [--offset N] [--limit N] [--jobs N] [--json] [--save FILE]

``reader-or-readability`` is a per-page choice between the reader's text and readability's, scored from the
two runs' outputs (no third extraction): measured beside them, not shipped.
"""

from __future__ import annotations

import argparse
import collections
import gzip
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

Extractor = Callable[[str, str | None], str]  # (html, url) -> plain text
_WORD = re.compile(r"\w+", re.UNICODE)


class SuiteError(Exception):
    """The data or an extractor is missing. One line."""


# --- the extractors -----------------------------------------------------------------------------------------


def _reader(html: str, url: str | None) -> str:
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
}


def _words(text: str) -> collections.Counter[str]:
    return collections.Counter(t.lower() for t in _WORD.findall(text))


def readability_when_inside(reader_text: str, readability_text: str) -> str:
    """A per-page choice between two texts already extracted: readability's when nearly all of its words are
    in the reader's (the same article, cut more tightly) and it keeps at least a third of the reader's words
    (it did not lose the article); the reader's otherwise."""
    mine, theirs = _words(reader_text), _words(readability_text)
    n_mine, n_theirs = sum(mine.values()), sum(theirs.values())
    if n_theirs and sum((theirs & mine).values()) >= INSIDE * n_theirs and n_theirs >= KEEPS * n_mine:
        return readability_text
    return reader_text


INSIDE, KEEPS = 0.8, 1 / 3
# Choices between extractors already run on the page: name -> (the extractors it needs, the choice). Its time is
# the sum of theirs. Measured, not shipped: it is here to be compared with the reader on the same pages.
CHOICES: dict[str, tuple[tuple[str, str], Callable[[str, str], str]]] = {
    "reader-or-readability": ((READER, "readability"), readability_when_inside),
}


# --- the corpora and their scorers --------------------------------------------------------------------------


@dataclass(frozen=True)
class Page:
    id: str
    url: str | None
    html: str
    truth: str


@dataclass
class Corpus:
    name: str
    metric: str
    pages: list[Page]
    score_page: Callable[[str, str], Any]  # (truth, prediction) -> what the pooled metric is made of
    pooled: Callable[[Sequence[Any]], tuple[float, float, float]]  # -> (F1, precision, recall)
    page_f1: Callable[[Any], float] = lambda score: score[2]  # one page's own F1 from its score


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


def load_scrapinghub(root: Path, limit: int | None = None, offset: int = 0) -> Corpus:
    base = root / SHINGLE_DIR
    evaluate = _import(base / "evaluate.py", "article_extraction_evaluate")
    truth_path = base / "ground-truth-dev.json"
    if not truth_path.is_file():
        raise SuiteError(f"{truth_path} is missing (set SERPFUSE_DATA)")
    truth = json.loads(truth_path.read_text(encoding="utf-8"))
    ids = sorted(truth)[offset:][:limit]
    pages = [
        Page(i, truth[i].get("url") or None, _gunzip(base / "html" / f"{i}.html.gz"), truth[i].get("articleBody", ""))
        for i in ids
    ]  # fmt: skip

    def pooled(tp_fp_fns: Sequence[tuple[float, float, float]]) -> tuple[float, float, float]:
        m = evaluate.metrics_from_tp_fp_fns(list(tp_fp_fns))
        return m["f1"], m["precision"], m["recall"]

    def score_page(true: str, pred: str) -> tuple[float, float, float]:
        return evaluate.string_shingle_matching(true=true, pred=pred)

    def page_f1(tp_fp_fn: tuple[float, float, float]) -> float:
        p, r = evaluate.precision_score(*tp_fp_fn), evaluate.recall_score(*tp_fp_fn)
        return 2 * p * r / (p + r) if p + r else 0.0

    return Corpus("scrapinghub", "shingle F1 (evaluate.py)", pages, score_page, pooled, page_f1)


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


def load_wceb(root: Path, source: str, limit: int | None = None, offset: int = 0) -> Corpus:
    base = root / WCEB_DIR
    truth_path = base / "ground-truth.jsonl"
    if not truth_path.is_file():
        raise SuiteError(f"{truth_path} is missing (set SERPFUSE_DATA)")
    pages = []
    with truth_path.open(encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            if row["source"] != source or row["gt_tokens"] < MIN_GT_TOKENS:
                continue
            html = _gunzip(base / "html" / source / f"{row['id']}.html.gz")
            pages.append(Page(row["id"], row.get("url") or None, html, row["plaintext"]))
    pages.sort(key=lambda p: p.id)
    return Corpus(source, "bag-of-words F1 (WCEB)", pages[offset:][:limit], bow, _mean_bow)


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
    per_page: list[Any] = field(repr=False, default_factory=list)
    f1: float = 0.0
    precision: float = 0.0
    recall: float = 0.0

    @property
    def pages_per_s(self) -> float:
        return len(self.outputs) / self.seconds if self.seconds > 0 else 0.0


def _timed(name: str, html: str, url: str | None) -> tuple[str, float, bool]:
    """One page through one extractor: its text, the seconds it took, and whether it crashed (an empty page)."""
    started = time.perf_counter()
    try:
        text, crashed = EXTRACTORS[name][0](html, url), False
    except Exception:  # a crash scores as an empty page, and is counted
        text, crashed = "", True
    return text, time.perf_counter() - started, crashed


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
    outputs = [text for text, _, _ in results]
    seconds = sum(t for _, t, _ in results)
    errors = sum(crashed for _, _, crashed in results)
    per_page = [corpus.score_page(p.truth, out) for p, out in zip(corpus.pages, outputs, strict=True)]
    f1, precision, recall = corpus.pooled(per_page)
    return Run(name, outputs, seconds, errors, per_page, f1, precision, recall)


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


def paired_gain(
    corpus: Corpus, a: Run, b: Run, page_f1: Callable[[Any], float], resamples: int, seed: int
) -> Gain:
    n = len(corpus.pages)
    rng = random.Random(seed)
    deltas = []
    for _ in range(resamples):
        picks = [rng.randrange(n) for _ in range(n)]
        deltas.append(
            corpus.pooled([a.per_page[i] for i in picks])[0]
            - corpus.pooled([b.per_page[i] for i in picks])[0]
        )
    deltas.sort()
    mine, theirs = [page_f1(x) for x in a.per_page], [page_f1(x) for x in b.per_page]
    return Gain(
        delta=a.f1 - b.f1,
        low=_percentile(deltas, 0.025),
        high=_percentile(deltas, 0.975),
        wins=sum(x > y for x, y in zip(mine, theirs, strict=True)),
        losses=sum(x < y for x, y in zip(mine, theirs, strict=True)),
    )


@dataclass
class CorpusResult:
    corpus: Corpus
    runs: dict[str, Run]
    gains: dict[str, Gain]  # other extractor -> the reader's gain over it
    bow_checked: int = 0

    def as_dict(self) -> dict[str, Any]:
        reader = self.runs.get(READER)
        return {
            "corpus": self.corpus.name,
            "metric": self.corpus.metric,
            "pages": len(self.corpus.pages),
            "bowPairsChecked": self.bow_checked,
            "extractors": {
                name: {
                    "f1": run.f1,
                    "precision": run.precision,
                    "recall": run.recall,
                    "pagesPerSecond": run.pages_per_s,
                    "speedVsReader": run.pages_per_s / reader.pages_per_s
                    if reader and reader.pages_per_s
                    else None,
                    "errors": run.errors,
                }
                for name, run in self.runs.items()
            },
            "readerGain": {name: g.as_dict() for name, g in self.gains.items()},
        }


def run_corpus(
    corpus: Corpus, extractors: Sequence[str], root: Path, resamples: int, seed: int, jobs: int = 1
) -> CorpusResult:
    for name in extractors:  # imports and first-call setup are not timed
        EXTRACTORS[name][0](corpus.pages[0].html, corpus.pages[0].url)
    runs = {name: run_extractor(corpus, name, jobs) for name in extractors}
    for name, (needs, choose) in CHOICES.items():
        if all(n in runs for n in needs):
            a, b = (runs[n] for n in needs)
            outputs = [choose(x, y) for x, y in zip(a.outputs, b.outputs, strict=True)]
            per_page = [corpus.score_page(p.truth, out) for p, out in zip(corpus.pages, outputs, strict=True)]
            f1, precision, recall = corpus.pooled(per_page)
            runs[name] = Run(name, outputs, a.seconds + b.seconds, 0, per_page, f1, precision, recall)
    checked = 0
    if corpus.name != "scrapinghub":
        checked = check_bow_against_reference(
            root, [(p.truth, run.outputs[i]) for run in runs.values() for i, p in enumerate(corpus.pages)]
        )
    gains = {}
    if READER in runs:
        for name, run in runs.items():
            if name != READER:
                gains[name] = paired_gain(corpus, runs[READER], run, corpus.page_f1, resamples, seed)
    return CorpusResult(corpus, runs, gains, checked)


# --- the table ----------------------------------------------------------------------------------------------


def markdown(results: Sequence[CorpusResult]) -> str:
    lines = [
        "| corpus (metric, pages) | extractor | F1 | precision | recall | pages/s | speed vs reader | reader's gain [95 % CI] | pages won/lost by the reader |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |",
    ]  # fmt: skip
    for result in results:
        reader = result.runs.get(READER)
        label = f"{result.corpus.name} ({result.corpus.metric}, {len(result.corpus.pages)})"
        for name, run in result.runs.items():
            ratio = f"{run.pages_per_s / reader.pages_per_s:.2f}×" if reader and reader.pages_per_s else ""
            gain = result.gains.get(name)
            interval = f"{gain.delta:+.4f} [{gain.low:+.4f}, {gain.high:+.4f}]" if gain else ""
            record = f"{gain.wins}/{gain.losses}" if gain else ""
            lines.append(
                f"| {label} | {name} | {run.f1:.4f} | {run.precision:.4f} | {run.recall:.4f} | "
                f"{run.pages_per_s:.1f} | {ratio} | {interval} | {record} |"
            )
            label = ""
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
    args = parser.parse_args(argv)
    extractors = args.extractor or list(EXTRACTORS)
    try:
        if args.limit is not None and args.limit < 1:
            raise SuiteError("--limit must be at least 1")
        if args.resamples < 1:
            raise SuiteError("--resamples must be at least 1")
        if args.jobs < 1:
            raise SuiteError("--jobs must be at least 1")
        if args.offset < 0:
            raise SuiteError("--offset must not be negative")
        for name in extractors:
            if importlib.util.find_spec(EXTRACTORS[name][1]) is None:
                raise SuiteError(f"{name} needs the module {EXTRACTORS[name][1]} (pip install -e '.[bench]')")
        root = data_root()
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
    except SuiteError as exc:
        print(f"reader_suite: error: {exc}", file=sys.stderr)
        return 2
    document = json.dumps([r.as_dict() for r in results], indent=2)
    if args.save:
        args.save.write_text(document + "\n", encoding="utf-8")
    if args.json:
        print(document)
    else:
        print(markdown(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
