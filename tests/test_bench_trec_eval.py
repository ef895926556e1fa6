"""`serpfuse bench --replay --qrels` scored again by trec_eval (through pytrec_eval): nDCG@8 agrees to 0.002.

The bench's own figures against an implementation it shares no code with, over the same shown lists: each
query's eight rows from ``bench --json`` become a TREC run (score: minus the position, so no ties), the JSON
Lines judgments a qrels set. The conventions the bench documents, spelled for trec_eval: gain 2^rel - 1 (the
qrels carry the gain, since trec_eval's ndcg takes a grade as its gain), the ideal from every judged row, and
the mean over the queries with a relevant judged row (chosen here from the judgments, not from the bench's
output). Shared with the bench: only the URL key rows are matched by (``urls.dedup_key``) and the lists.
Every ``qrels-*.jsonl`` beside the crw56 recording is checked, so new judgments there are checked too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import need
from serpfuse.cli import app
from serpfuse.sources.replay import normalise_query
from serpfuse.urls import dedup_key

pytrec_eval = pytest.importorskip(
    "pytrec_eval", reason="pytrec_eval (pytrec-eval-terrier) is in the dev extra"
)

TOLERANCE = 0.002


def judgment_sets(data_dir: Path) -> list[Path]:
    found = sorted((data_dir / "crw56").glob("qrels-*.jsonl"))
    return found or [need(data_dir / "crw56" / "qrels-dev.jsonl")]


def trec_qrels(path: Path) -> dict[str, dict[str, int]]:
    """Query -> row key -> gain 2^rel - 1 (the highest grade where two URLs share a key, as the bench reads)."""
    out: dict[str, dict[str, int]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            grades = out.setdefault(normalise_query(item["query"]), {})
            key = dedup_key(item["url"])
            grades[key] = max(2 ** item["rel"] - 1, grades.get(key, 0))
    return out


@pytest.mark.slow
def test_bench_ndcg_at_8_agrees_with_trec_eval(data_dir: Path) -> None:
    recording = need(data_dir / "crw56" / "searxng_raw.json")
    for qrels_path in judgment_sets(data_dir):
        result = CliRunner().invoke(
            app,
            [
                "bench",
                "--replay",
                str(recording),
                "--qrels",
                str(qrels_path),
                "--json",
                "--now",
                "2026-05-31",
            ],
        )
        assert result.exit_code == 0, result.output
        report = json.loads(result.stdout)["report"]
        qrels = trec_qrels(qrels_path)
        shown = {normalise_query(q["query"]): q for q in report["perQuery"]}
        scored = {
            q: grades for q, grades in qrels.items() if q in shown and any(g > 0 for g in grades.values())
        }
        assert scored, f"no judged query with a relevant row of {qrels_path.name} is in the recording"
        run = {
            q: {row["docid"]: float(-position) for position, row in enumerate(shown[q]["shown"])}
            for q in scored
        }
        for q in scored:  # a query that shows nothing scores 0: trec_eval needs a row to evaluate it
            run[q] = run[q] or {"(nothing shown)": 0.0}
        theirs = pytrec_eval.RelevanceEvaluator(scored, {"ndcg_cut.8"}).evaluate(run)
        for q in scored:
            ours = shown[q]["values"]["nDCG@8"]
            assert abs(ours - theirs[q]["ndcg_cut_8"]) <= TOLERANCE, (qrels_path.name, q, ours, theirs[q])
        mean = sum(theirs[q]["ndcg_cut_8"] for q in scored) / len(scored)
        assert report["summary"]["nDCG@8:n"] == len(scored)
        assert abs(report["summary"]["nDCG@8"] - mean) <= TOLERANCE, (
            qrels_path.name,
            report["summary"],
            mean,
        )
