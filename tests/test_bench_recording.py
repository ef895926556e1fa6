"""`serpfuse bench --replay REC --qrels JUDGED.jsonl`: the bench a user runs on their own recording."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchmarks import crw56
from conftest import need
from serpfuse.bench.judged_recording import JudgmentsError, read_judgments
from serpfuse.bench.metrics import irrelevant_at
from serpfuse.cli import app
from serpfuse.config import RankingConfig

HEADLINE = ("nDCG@8", "RelShown@8", "P@8", "MRR@8", "Irrelevant@5", "Junk@5", "CleanRel@5", "shown")


def bench(*args: str):
    return CliRunner().invoke(app, ["bench", *args])


def ok_json(*args: str) -> dict:
    result = bench(*args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def crw56_files(data_dir: Path) -> tuple[str, str]:
    return str(need(data_dir / crw56.RECORDING)), str(need(data_dir / crw56.QRELS_DEV))


@pytest.fixture(scope="module")
def corpus(data_dir: Path) -> crw56.Crw56Corpus:
    return crw56.load_crw56(data_dir)


# --- crw56 dev through the user's command: the research protocol's numbers ----------------------------------


def test_crw56_dev_default_and_baseline_agree_with_the_research_bench(crw56_files, corpus) -> None:
    recording, qrels = crw56_files
    out = ok_json("--replay", recording, "--qrels", qrels, "--now", "2026-05-31")
    ours, (baseline,) = out["report"], out["references"]
    expected = crw56.run(corpus, RankingConfig(), "dev", per_engine=True)
    expected_baseline = crw56.run(corpus, None, "dev", per_engine=False)
    assert ours["summary"] == expected.summary
    assert ours["perEngine"] == expected.per_engine
    assert baseline["config"] == "baseline" and baseline["summary"] == expected_baseline.summary
    # the figures the crw56 baseline is known by, and every dev query (judged by text) taken
    assert round(baseline["summary"]["nDCG@8"], 4) == 0.8926 and baseline["summary"]["Irrelevant@5"] == 73
    assert ours["summary"]["queries"] == 28 and ours["summary"]["nDCG@8:n"] == 14


def test_crw56_compare_baseline_gives_the_interval(crw56_files) -> None:
    recording, qrels = crw56_files
    out = ok_json(
        "--replay", recording, "--qrels", qrels, "--compare", "baseline", "rrf", "--now", "2026-05-31"
    )
    ndcg = out["intervals"]["nDCG@8"]
    assert ndcg["n"] == 14 and ndcg["low"] <= ndcg["delta"] <= ndcg["high"]
    assert {d["qid"] for d in out["deltas"]} == {
        q["qid"] for q in out["a"]["perQuery"] if "nDCG@8" in q["values"]
    }


# --- judgments: one line, one clear error --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("{not json", "not JSON"),
        ('["q", "u", 1]', "expected an object"),
        ('{"query": "q", "url": "https://a.example/"}', "missing 'rel'"),
        ('{"query": "q", "url": "https://a.example/", "rel": "2"}', '"rel" must be an integer'),
        ('{"query": "q", "url": "https://a.example/", "rel": true}', '"rel" must be an integer'),
        ('{"query": "", "url": "https://a.example/", "rel": 1}', "non-empty text"),
    ],
)
def test_a_bad_judgment_line_is_named(tmp_path: Path, line: str, says: str) -> None:
    path = tmp_path / "j.jsonl"
    path.write_text(
        '{"query": "q", "url": "https://b.example/", "rel": 1}\n\n' + line + "\n", encoding="utf-8"
    )
    with pytest.raises(JudgmentsError) as caught:
        read_judgments(path)
    assert str(caught.value).startswith(f"{path}:3: ") and says in str(caught.value)


def test_the_command_exits_2_with_one_line(tmp_path: Path, crw56_files) -> None:
    recording, _ = crw56_files
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "q", "url": "u"}\n', encoding="utf-8")
    result = bench("--replay", recording, "--qrels", str(bad))
    assert result.exit_code == 2
    assert result.stderr.strip() == f"serpfuse: error: {bad}:1: missing 'rel'"
    missing = bench("--replay", recording, "--qrels", str(tmp_path / "none.jsonl"))
    assert missing.exit_code == 2 and "judgments file not found" in missing.stderr
    elsewhere = tmp_path / "other.jsonl"
    elsewhere.write_text('{"query": "no such query here", "url": "https://a.example/", "rel": 2}\n')
    unmatched = bench("--replay", recording, "--qrels", str(elsewhere))
    assert unmatched.exit_code == 2 and "no judged query is in the recording" in unmatched.stderr
    assert bench("--replay", recording, "--qrels", str(bad), "--json", "--markdown").exit_code == 2


def test_two_urls_of_one_page_keep_the_higher_grade(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    rows = [
        {"query": "Rust  Async", "url": "https://www.a.example/x/", "rel": 1},
        {"query": "rust async", "url": "http://a.example/x", "rel": 2},
        {"query": "rust async", "url": "https://b.example/", "rel": 0},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert read_judgments(path) == {"rust async": {"a.example/x": 2, "b.example": 0}}


# --- a serpfuse recording: no SearXNG order, so no baseline --------------------------------------------------


def _serpfuse_recording(path: Path) -> None:
    def answer(engine: str, urls: list[str], words: str) -> dict:
        rows = [
            {
                "engine": engine,
                "rank": i,
                "url": u,
                "title": f"{words} guide {i}",
                "snippet": f"All about {words}.",
            }
            for i, u in enumerate(urls, start=1)
        ]
        return {"engine": engine, "status": "ok", "rows": rows}

    queries = [
        {
            "query": "postgres logical replication",
            "engines": {
                "google": answer(
                    "google",
                    [f"https://pg{i}.example/repl" for i in range(1, 6)],
                    "postgres logical replication",
                ),
                "brave": answer(
                    "brave",
                    [f"https://pg{i}.example/repl" for i in (2, 1, 6)],
                    "postgres logical replication",
                ),
            },
        },
        {
            "query": "rust async runtime",
            "engines": {
                "google": answer(
                    "google", [f"https://rs{i}.example/rt" for i in range(1, 4)], "rust async runtime"
                ),
            },
        },
        {"query": "not judged at all", "engines": {"google": answer("google", ["https://x.example/"], "x")}},
    ]
    path.write_text(json.dumps({"format": "serpfuse-replay/1", "queries": queries}), encoding="utf-8")


def test_a_serpfuse_recording_is_scored_without_a_baseline(tmp_path: Path) -> None:
    recording = tmp_path / "rec.json"
    _serpfuse_recording(recording)
    qrels = tmp_path / "j.jsonl"
    lines = [
        {"query": "postgres logical replication", "url": "https://pg1.example/repl", "rel": 2},
        {"query": "postgres logical replication", "url": "https://pg6.example/repl", "rel": 1},
        {"query": "postgres logical replication", "url": "https://pg3.example/repl", "rel": 0},
        {"query": "rust async runtime", "url": "https://rs1.example/rt", "rel": 0},
        {"query": "a query nobody recorded", "url": "https://z.example/", "rel": 2},
    ]
    qrels.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    out = ok_json(
        "--replay", str(recording), "--qrels", str(qrels), "--strategy", "rrf", "--now", "2026-01-01"
    )
    report = out["report"]
    assert out["references"] == []
    assert report["summary"]["queries"] == 2  # the judged ones; the unjudged recorded query is not scored
    assert report["summary"]["nDCG@8:n"] == 1  # only one judged query has a relevant row
    assert "1 judged queries are not in the recording (skipped)" in report["notes"]
    assert set(report["perEngine"]) == {"google", "brave"}
    by_query = {q["query"]: q for q in report["perQuery"]}
    assert "nDCG@8" not in by_query["rust async runtime"]["values"]
    for q in report["perQuery"]:  # Irrelevant@5 is what the shown rows' grades say
        grades = {r["docid"]: r["grade"] for r in q["shown"] if r["grade"] is not None}
        assert q["values"]["Irrelevant@5"] == irrelevant_at([r["docid"] for r in q["shown"]], grades, 5)
    pg = by_query["postgres logical replication"]["values"]
    assert 0 < pg["nDCG@8"] <= 1 and pg["RelShown@8"] == 1.0  # both relevant rows are in the pool and shown
    assert "kept" not in pg  # kept@8 needs SearXNG's order
    refused = bench("--replay", str(recording), "--qrels", str(qrels), "--compare", "baseline", "rrf")
    assert refused.exit_code == 2 and "only a SearXNG recording has it" in refused.stderr
