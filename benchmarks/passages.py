"""Passage selection under a budget: does the selected text contain the answer? (``make bench-passages``)

On ``$SERPFUSE_DATA/passages/`` (default ../shared/data): WikiQA's dev half (621 Bing queries over Wikipedia lead
sections; an answer is a whole answer sentence), the 25 Natural Questions over whole articles (an answer is a
short answer), and the 10 CRAG questions with 5 real result pages each, run end to end from their HTML through the
reader's extraction. "Contains" is the dataset's own rule: one of the answers, whitespace-normalised and
case-folded, inside the selected text (passages joined by a space), at 300, 500 and 1,500 characters a page.

Beside serpfuse's selection (``serpfuse.passages``):

- ``first-N``: the page's first N characters, cut at the last whole word (what an agent reading the top gets);
- ``bm25``: plain BM25 (``bm25s``, Lucene's variant, k1 1.5, b 0.75, English stopwords) over the same units,
  best first while they fit, shown in page order: the same splitter and budget, only the scoring differs;
- ``snippet``: the engine's snippet, where the data has one (CRAG).

WikiQA is reported on all its queries and on those whose answer is not the page's first sentence. ``--folds K``
also reports serpfuse's WikiQA score on each of K folds of the queries (ids sorted), the spread to expect on the
half kept out. ``--json`` prints every number as one object.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from serpfuse.passages import passages as select_passages
from serpfuse.passages.select import passages_of
from serpfuse.passages.split import Unit, split

BUDGETS = (300, 500, 1500)
Selector = Callable[[str, str, int], list[str]]


def norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def contains(selected: Sequence[str], answers: Sequence[str]) -> bool:
    hay = norm(" ".join(selected))
    return any(norm(a) and norm(a) in hay for a in answers)


def load(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


# --- the selectors ------------------------------------------------------------------------------------------


def serpfuse_select(text: str, query: str, budget: int, headings: Sequence[str] = ()) -> list[str]:
    return [p.text for p in select_passages(text, query, budget, headings=headings)]


def first_n(text: str, query: str, budget: int) -> list[str]:
    if len(text) <= budget:
        return [text]
    cut = text[:budget]
    space = cut.rfind(" ")
    return [cut[:space] if space > 0 and not text[budget].isspace() else cut]


class Bm25:
    """Plain BM25 over a page's units (the library's defaults), taken best first while they fit."""

    def __init__(self) -> None:
        import bm25s  # the bench extra
        import Stemmer  # noqa: F401  # PyStemmer, when installed, is bm25s's stemmer

        self.bm25s = bm25s

    def __call__(self, text: str, query: str, budget: int) -> list[str]:
        from serpfuse.passages.score import ScoredUnit

        units = [u for u in split(text) if u.kind != "heading"]
        if not units:
            return []
        corpus = [text[u.start : u.end] for u in units]
        scores = self._scores(corpus, query)
        scored = [ScoredUnit(u, float(s), i) for i, (u, s) in enumerate(zip(units, scores, strict=True))]
        from serpfuse.passages.select import choose

        return [p.text for p in passages_of(text, choose(scored, budget))]

    def _scores(self, corpus: list[str], query: str) -> list[float]:
        bm25s = self.bm25s
        stemmer = _stemmer()
        tokens = bm25s.tokenize(corpus, stopwords="en", stemmer=stemmer, show_progress=False)
        retriever = bm25s.BM25()
        retriever.index(tokens, show_progress=False)
        q = bm25s.tokenize([query], stopwords="en", stemmer=stemmer, show_progress=False, return_ids=False)
        if not q or not q[0]:
            return [0.0] * len(corpus)
        return list(retriever.get_scores(q[0]))


def _stemmer():
    try:
        import Stemmer

        return Stemmer.Stemmer("english")
    except ImportError:
        return None


# --- the corpora ----------------------------------------------------------------------------------------------


def first_sentence_answer(row: dict) -> bool:
    """Whether a WikiQA answer is the page's first sentence (it then starts the page)."""
    text = norm(row["pages"][0]["html_or_text"])
    return any(text.startswith(norm(a)) for a in row["answers"])


def run_wikiqa(rows: list[dict], selectors: dict[str, Selector]) -> dict:
    later = [r for r in rows if not first_sentence_answer(r)]
    out: dict = {"queries": len(rows), "not_first": len(later), "scores": {}}
    for name, pick in selectors.items():
        for budget in BUDGETS:
            hits = {
                r["id"]: contains(pick(r["pages"][0]["html_or_text"], r["query"], budget), r["answers"])
                for r in rows
            }
            out["scores"].setdefault(name, {})[budget] = {
                "all": sum(hits.values()) / len(rows),
                "not_first": sum(hits[r["id"]] for r in later) / len(later) if later else None,
            }
    return out


def run_folds(rows: list[dict], k: int) -> list[dict]:
    ordered = sorted(rows, key=lambda r: r["id"])
    out = []
    for i in range(k):
        fold = ordered[i::k]
        out.append(
            {
                budget: sum(
                    contains(serpfuse_select(r["pages"][0]["html_or_text"], r["query"], budget), r["answers"])
                    for r in fold
                )
                / len(fold)
                for budget in BUDGETS
            }
        )
    return out


def run_nq(rows: list[dict], selectors: dict[str, Selector], budget: int = 1500) -> dict:
    return {
        name: sum(
            contains(pick(r["pages"][0]["html_or_text"], r["query"], budget), r["answers"]) for r in rows
        )
        for name, pick in selectors.items()
    }


NOT_ANSWERS = frozenset({"yes", "no", "nan", "en"})  # CRAG answers that any page holds by accident


def run_crag(rows: list[dict], selectors: dict[str, Selector], budget: int = 1500) -> dict:
    """Each question's pages read from their HTML by the reader's extraction, then selected. A question counts
    when its answer is a name or phrase some page's extracted text holds (CRAG's long-form answers are in no
    page; "yes", "no", "en" and "nan" are in every page by accident); it is contained when any of its pages'
    selections holds the answer."""
    from serpfuse.reader.extract import ExtractionError, extract_html

    texts: dict[tuple[str, int], str] = {}
    took = []
    failed = 0
    for r in rows:
        for i, page in enumerate(r["pages"]):
            if not page["html_or_text"]:
                failed += 1
                continue
            started = time.perf_counter()
            try:
                texts[(r["id"], i)] = extract_html(page["html_or_text"], page["url"]).text
            except ExtractionError:
                failed += 1
                continue
            took.append(time.perf_counter() - started)

    def answers(r: dict) -> list[str]:
        return [a for a in r["answers"] if norm(a) not in NOT_ANSWERS and len(a) >= 4]

    checkable = [
        r
        for r in rows
        if answers(r) and contains([t for k, t in texts.items() if k[0] == r["id"]], answers(r))
    ]
    out: dict = {
        "questions": len(rows),
        "checkable": len(checkable),
        "pages_read": len(texts),
        "pages_unread": failed,
        "scores": {},
    }
    for name, pick in {**selectors, "snippet": None}.items():
        hits = 0
        for r in checkable:
            selected = []
            for i, page in enumerate(r["pages"]):
                if pick is None:
                    selected.append(page.get("snippet") or "")
                elif (r["id"], i) in texts:
                    selected.extend(pick(texts[(r["id"], i)], r["query"], budget))
            hits += contains(selected, answers(r))
        out["scores"][name] = hits
    out["extract_ms_median"] = round(1000 * sorted(took)[len(took) // 2], 1) if took else None
    return out


def _unit_lengths(rows: list[dict]) -> list[Unit]:  # pragma: no cover - a debugging aid
    return [u for r in rows for u in split(r["pages"][0]["html_or_text"])]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.passages", description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("SERPFUSE_DATA", "../shared/data")))
    ap.add_argument("--folds", type=int, default=0, help="also serpfuse's WikiQA score on K folds")
    ap.add_argument(
        "--no-crag", action="store_true", help="skip the CRAG pages (their extraction takes ~10 s)"
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    folder = args.data / "passages"
    if not (folder / "wikiqa-dev.jsonl").is_file():
        print(f"serpfuse: error: no passages data in {folder} (set SERPFUSE_DATA)", file=sys.stderr)
        return 2
    try:
        bm25 = Bm25()
    except ImportError as exc:
        print(f"serpfuse: error: the BM25 baseline needs the bench extra ({exc.name})", file=sys.stderr)
        return 2
    selectors: dict[str, Selector] = {"serpfuse": serpfuse_select, "first-N": first_n, "bm25": bm25}
    report: dict = {"wikiqa": run_wikiqa(load(folder / "wikiqa-dev.jsonl"), selectors)}
    if args.folds:
        report["wikiqa_folds"] = run_folds(load(folder / "wikiqa-dev.jsonl"), args.folds)
    report["nq"] = {
        "queries": 25,
        "budget": 1500,
        "contain": run_nq(load(folder / "nq-dev-subset.jsonl"), selectors),
    }
    if not args.no_crag:
        report["crag"] = run_crag(load(folder / "crag-example.jsonl.gz"), selectors)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print_report(report)
    return 0


def print_report(report: dict) -> None:
    w = report["wikiqa"]
    print(f"WikiQA dev half: {w['queries']} queries, {w['not_first']} whose answer is not the first sentence")
    print(
        f"{'selection':<10} "
        + " ".join(f"{b:>6}" for b in BUDGETS)
        + "   | not first: "
        + " ".join(f"{b:>6}" for b in BUDGETS)
    )
    for name, by_budget in w["scores"].items():
        alls = " ".join(f"{by_budget[b]['all']:6.3f}" for b in BUDGETS)
        later = " ".join(f"{by_budget[b]['not_first']:6.3f}" for b in BUDGETS)
        print(f"{name:<10} {alls}   |             {later}")
    for i, fold in enumerate(report.get("wikiqa_folds", [])):
        print(f"  serpfuse fold {i + 1}: " + " ".join(f"{fold[b]:6.3f}" for b in BUDGETS))
    nq = report["nq"]
    print(
        f"NQ whole articles at {nq['budget']} characters: "
        + ", ".join(f"{k} {v}/{nq['queries']}" for k, v in nq["contain"].items())
    )
    if "crag" in report:
        c = report["crag"]
        print(
            f"CRAG end to end from HTML at 1500 a page: {c['pages_read']} pages read of {c['questions']} questions "
            f"({c['pages_unread']} empty or unreadable; extraction median {c['extract_ms_median']} ms); "
            f"{c['checkable']} questions whose answer some page's text holds, contained: "
            + ", ".join(f"{k} {v}" for k, v in c["scores"].items())
        )


if __name__ == "__main__":
    raise SystemExit(main())
