"""scrapinghub's article-extraction benchmark: each candidate extractor's plain text scored by the benchmark's
own ``evaluate.py`` (4-gram shingle F1), side by side in one run, with pages per second.

The corpus is read from ``$SERPFUSE_DATA/article-extraction`` (html/ID.html.gz, ground-truth-dev.json,
evaluate.py); the scorer is imported from there, never copied. Candidates other than serpfuse's own reader,
trafilatura and readability-lxml come from the ``bench`` extra; a candidate whose library is missing is
reported as such, not silently dropped.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from serpfuse.bench.bootstrap import Bootstrap, paired_bootstrap

CORPUS_DIR = "article-extraction"
GROUND_TRUTH = "ground-truth-dev.json"
BASELINE = "trafilatura"  # the published extractor the reader is compared with: trafilatura.extract() as is

Extractor = Callable[[str, str], str]  # (html, url) -> plain text


class CorpusError(Exception):
    """The benchmark's files are missing or unreadable. One line."""


@dataclass(frozen=True)
class Page:
    id: str
    url: str
    html: str
    truth: str


@dataclass(frozen=True)
class Corpus:
    root: Path
    pages: list[Page]
    scorer: ModuleType  # the benchmark's evaluate.py


def load_corpus(data_root: Path) -> Corpus:
    root = data_root / CORPUS_DIR
    truth_path, scorer_path = root / GROUND_TRUTH, root / "evaluate.py"
    for path in (truth_path, scorer_path, root / "html"):
        if not path.exists():
            raise CorpusError(f"article-extraction corpus incomplete: {path} is missing (set SERPFUSE_DATA)")
    spec = importlib.util.spec_from_file_location("article_extraction_evaluate", scorer_path)
    if spec is None or spec.loader is None:
        raise CorpusError(f"cannot import the benchmark's scorer {scorer_path}")
    scorer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scorer)
    truth = json.loads(truth_path.read_text(encoding="utf-8"))
    pages = []
    for page_id in sorted(truth):
        html_path = root / "html" / f"{page_id}.html.gz"
        try:
            html = gzip.decompress(html_path.read_bytes()).decode("utf-8")
        except OSError as exc:
            raise CorpusError(f"unreadable page {html_path}: {exc}") from exc
        pages.append(
            Page(page_id, truth[page_id].get("url", ""), html, truth[page_id].get("articleBody", ""))
        )
    return Corpus(root, pages, scorer)


# --- candidates ---------------------------------------------------------------------------------------------


def _serpfuse(html: str, url: str) -> str:
    from serpfuse.reader.extract import ExtractionError, extract_html

    try:
        return extract_html(html, url, metadata=False).text
    except ExtractionError:
        return ""


def _trafilatura(**options: Any) -> Extractor:
    def run(html: str, url: str) -> str:
        import trafilatura

        return trafilatura.extract(html, url=url, **options) or ""

    return run


def _readability(html: str, url: str) -> str:
    import lxml.html
    from readability import Document

    summary = Document(html).summary(html_partial=True)
    return lxml.html.fromstring(summary).text_content() if summary.strip() else ""


def _resiliparse(html: str, url: str) -> str:
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    return extract_plain_text(HTMLTree.parse(html), main_content=True)


def _justext(html: str, url: str) -> str:
    import justext

    paragraphs = justext.justext(html.encode("utf-8"), justext.get_stoplist("English"))
    return "\n".join(p.text for p in paragraphs if not p.is_boilerplate)


def _boilerpy3(html: str, url: str) -> str:
    from boilerpy3 import extractors

    return extractors.ArticleExtractor(raise_on_failure=False).get_content(html)


def _goose3(html: str, url: str) -> str:
    from goose3 import Goose

    with Goose() as goose:
        return goose.extract(raw_html=html).cleaned_text or ""


def _newspaper4k(html: str, url: str) -> str:
    import newspaper

    article = newspaper.Article(url or "http://localhost/")
    article.download(input_html=html)
    article.parse()
    return article.text or ""


# name -> (extractor, the module it needs, one line on what it is)
CANDIDATES: dict[str, tuple[Extractor, str, str]] = {
    "serpfuse": (
        _serpfuse,
        "trafilatura",
        "the reader: readability's article, trafilatura's when that is short",
    ),
    "trafilatura": (_trafilatura(), "trafilatura", "trafilatura.extract() with its defaults"),
    "trafilatura-precision": (_trafilatura(favor_precision=True), "trafilatura", "favor_precision=True"),
    "trafilatura-recall": (_trafilatura(favor_recall=True), "trafilatura", "favor_recall=True"),
    "trafilatura-fast": (
        _trafilatura(fast=True, include_comments=False),
        "trafilatura",
        "fast=True, include_comments=False (the reader's first stage alone)",
    ),
    "trafilatura-notables": (_trafilatura(include_tables=False), "trafilatura", "include_tables=False"),
    "readability": (_readability, "readability", "readability-lxml's summary as text"),
    "resiliparse": (_resiliparse, "resiliparse", "resiliparse main_content=True"),
    "justext": (_justext, "justext", "jusText, English stoplist"),
    "boilerpy3": (_boilerpy3, "boilerpy3", "boilerpy3 ArticleExtractor"),
    "goose3": (_goose3, "goose3", "goose3 cleaned_text (slow)"),
    "newspaper4k": (_newspaper4k, "newspaper", "newspaper4k (very slow: about 3 s a page)"),
}
DEFAULT_CANDIDATES = [
    "serpfuse",
    "trafilatura",
    "trafilatura-precision",
    "trafilatura-fast",
    "readability",
    "resiliparse",
    "justext",
    "boilerpy3",
]


def available(name: str) -> bool:
    return importlib.util.find_spec(CANDIDATES[name][1]) is not None


# --- running and scoring ------------------------------------------------------------------------------------


@dataclass
class CandidateScore:
    name: str
    f1: float
    precision: float
    recall: float
    pages_per_s: float
    seconds: float
    errors: int
    per_page_f1: list[float] = field(repr=False, default_factory=list)
    missing: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "f1": self.f1,
            "precision": self.precision,
            "recall": self.recall,
            "pagesPerSecond": self.pages_per_s,
            "seconds": self.seconds,
            "errors": self.errors,
            "missing": self.missing,
        }


@dataclass
class ExtractionReport:
    pages: int
    scores: list[CandidateScore]
    baseline: str
    comparisons: dict[str, Bootstrap]  # candidate -> paired bootstrap of per-page F1 against the baseline
    speed_ratio: dict[str, float]  # candidate pages/s over the baseline's, same run

    def as_dict(self) -> dict[str, Any]:
        return {
            "corpus": CORPUS_DIR,
            "pages": self.pages,
            "baseline": self.baseline,
            "candidates": [s.as_dict() for s in self.scores],
            "compare": {name: b.as_dict() for name, b in self.comparisons.items()},
            "speedRatio": self.speed_ratio,
        }


def page_f1(scorer: ModuleType, tp_fp_fn: tuple[float, float, float]) -> float:
    """One page's F1 from the scorer's own precision and recall (the paired bootstrap's unit)."""
    p, r = scorer.precision_score(*tp_fp_fn), scorer.recall_score(*tp_fp_fn)
    return 2 * p * r / (p + r) if p + r else 0.0


def score_candidate(corpus: Corpus, name: str, extractor: Extractor, repeat: int = 1) -> CandidateScore:
    outputs: list[str] = []
    errors = 0
    started = time.perf_counter()
    for _ in range(repeat):
        outputs = []
        for page in corpus.pages:
            try:
                outputs.append(extractor(page.html, page.url))
            except Exception:  # a crashing extractor scores an empty page; the count is reported
                errors += 1
                outputs.append("")
    seconds = (time.perf_counter() - started) / repeat
    ev = corpus.scorer
    tp_fp_fns = [
        ev.string_shingle_matching(true=p.truth, pred=out)
        for p, out in zip(corpus.pages, outputs, strict=True)
    ]
    metrics = ev.metrics_from_tp_fp_fns(tp_fp_fns)
    return CandidateScore(
        name=name,
        f1=metrics["f1"],
        precision=metrics["precision"],
        recall=metrics["recall"],
        pages_per_s=len(corpus.pages) / seconds if seconds > 0 else 0.0,
        seconds=seconds,
        errors=errors // repeat,
        per_page_f1=[page_f1(ev, t) for t in tp_fp_fns],
    )


def run_benchmark(
    corpus: Corpus,
    names: Sequence[str],
    baseline: str = BASELINE,
    repeat: int = 1,
    on_candidate: Callable[[CandidateScore], None] | None = None,
) -> ExtractionReport:
    """Score every named candidate on every page, in turn, in this one process (speeds comparable)."""
    unknown = [n for n in names if n not in CANDIDATES]
    if unknown:
        raise KeyError(f"unknown extractor(s): {', '.join(unknown)} (known: {', '.join(CANDIDATES)})")
    order = list(dict.fromkeys([baseline, *names]))
    scores = []
    for name in order:
        if not available(name):
            score = CandidateScore(name, 0.0, 0.0, 0.0, 0.0, 0.0, 0, missing=True)
        else:
            score = score_candidate(corpus, name, CANDIDATES[name][0], repeat)
        scores.append(score)
        if on_candidate:
            on_candidate(score)
    base = scores[0]
    comparisons, ratios = {}, {}
    for s in scores[1:]:
        if s.missing or base.missing:
            continue
        comparisons[s.name] = paired_bootstrap(base.per_page_f1, s.per_page_f1)
        ratios[s.name] = s.pages_per_s / base.pages_per_s if base.pages_per_s else 0.0
    return ExtractionReport(len(corpus.pages), scores, baseline, comparisons, ratios)


# --- ``python -m benchmarks --corpus article-extraction`` --------------------------------------------------------


def _table_rows(report: ExtractionReport) -> tuple[list[str], list[list[str]]]:
    header = [
        "extractor",
        "F1",
        "precision",
        "recall",
        "pages/s",
        f"× {report.baseline}",
        f"ΔF1/page vs {report.baseline} [95 %]",
        "won/lost",
    ]
    rows = []
    for s in report.scores:
        if s.missing:
            rows.append([s.name, "not installed (pip install serpfuse[bench])", "", "", "", "", "", ""])
            continue
        b = report.comparisons.get(s.name)
        rows.append(
            [
                s.name + (f" ({s.errors} errors)" if s.errors else ""),
                f"{s.f1:.4f}",
                f"{s.precision:.4f}",
                f"{s.recall:.4f}",
                f"{s.pages_per_s:.1f}",
                f"{report.speed_ratio[s.name]:.2f}" if s.name in report.speed_ratio else "1.00",
                f"{b.delta:+.4f} [{b.low:+.4f}, {b.high:+.4f}]" if b else "",
                f"{b.wins}/{b.losses}" if b else "",
            ]
        )
    return header, rows


NOTE = (
    "F1/precision/recall: the benchmark's evaluate.py (4-gram shingles, mean precision and recall over pages); "
    "the interval: paired bootstrap of per-page F1 (10,000 resamples, fixed seed); pages/s: one pass each, "
    "in turn, in this process."
)


@dataclass
class ExtractionOutcome:
    report: ExtractionReport

    def to_json(self) -> Any:
        return self.report.as_dict()

    def markdown(self) -> str:
        from serpfuse.bench.report import markdown_table

        header, rows = _table_rows(self.report)
        return f"{markdown_table(header, rows)}\n\n{self.report.pages} pages. {NOTE}"

    def render(self, console) -> None:
        from rich.table import Table

        header, rows = _table_rows(self.report)
        table = Table(title=f"article-extraction · {self.report.pages} pages", title_justify="left")
        for i, name in enumerate(header):
            table.add_column(name, justify="left" if i == 0 else "right")
        for row in rows:
            table.add_row(*row)
        console.print(table)
        console.print(f"[dim]{NOTE}[/dim]")


def run_bench(options: Any) -> ExtractionOutcome:
    """``python -m benchmarks --corpus article-extraction [--extractors a,b] [--compare A B]``: the extractors side by
    side against the first of ``--compare`` (default trafilatura alone). Raises BenchError on bad input."""
    from benchmarks.setups import BenchError

    if options.sweep or options.settings or options.random_subsets is not None:
        raise BenchError("article-extraction takes --extractors and --compare A B, not ranking options")
    if options.compare:
        baseline, other = options.compare
        names = [baseline, other]
    else:
        baseline, names = BASELINE, list(options.extractors or DEFAULT_CANDIDATES)
    unknown = [n for n in [baseline, *names] if n not in CANDIDATES]
    if unknown:
        raise BenchError(f"unknown extractor {unknown[0]!r}; choose among: {', '.join(CANDIDATES)}")
    try:
        corpus = load_corpus(options.root)
    except CorpusError as exc:
        raise BenchError(str(exc)) from None
    return ExtractionOutcome(run_benchmark(corpus, names, baseline=baseline))
