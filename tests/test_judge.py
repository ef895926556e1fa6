"""`serpfuse judge`: the blind pool, the judgments file it keeps, its routes, and the loop it feeds.

The page in a browser (keyboard, kill and restart) is tests/test_judge_browser.py; here the pool and the app
through Starlette's test client, and ``judge`` -> ``bench`` -> ``calibrate`` on four crw56 dev queries.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from conftest import crw56_subset
from serpfuse.bench.judged_recording import RecordedRow, read_judgments
from serpfuse.cli import app
from serpfuse.config import RankingConfig
from serpfuse.judge.app import Judging, create_app
from serpfuse.judge.pool import PoolRow, blind_order, load_pool, pooled
from serpfuse.judge.store import JudgmentsFile
from serpfuse.settings import read_weights_file
from serpfuse.sources.replay import normalise_query
from serpfuse.urls import dedup_key

LOCAL = "http://127.0.0.1:8766"  # the page answers to loopback names only
QUERIES = 4  # the small recording: the first crw56 queries with a relevant dev judgment


def row(url: str, title: str = "", snippet: str = "", engine: str = "bing", rank: int = 1) -> RecordedRow:
    return RecordedRow(url, title, snippet, 0.0, (engine,), (rank,))


@pytest.fixture(scope="module")
def small(data_dir: Path, tmp_path_factory) -> tuple[Path, Path]:
    """A SearXNG recording of four crw56 dev queries, and the dev judgments of those queries."""
    return crw56_subset(data_dir, tmp_path_factory.mktemp("small"), QUERIES)


# --- the pool ------------------------------------------------------------------------------------------------


def test_the_pool_has_one_row_per_canonical_url_with_the_best_text() -> None:
    rows = pooled(
        [
            row("https://www.example.com/a?utm_source=x", "A", "short", "bing", 1),
            row("http://example.com/a", "", "a longer snippet", "google", 4),
            row("https://example.com/b", "B", "", "google", 1),
        ]
    )
    assert [r.key for r in rows] == [dedup_key("https://example.com/a"), dedup_key("https://example.com/b")]
    assert rows[0] == PoolRow(rows[0].key, "https://www.example.com/a?utm_source=x", "A", "a longer snippet")


def test_the_blind_order_depends_on_the_query_and_the_set_of_rows_only() -> None:
    rows = [PoolRow(f"example.com/{i}", f"https://example.com/{i}", str(i), "") for i in range(20)]
    once = blind_order("rust async", rows)
    assert (
        blind_order("Rust  Async", list(reversed(rows))) == once
    )  # the recorded (ranked) order leaves no trace
    assert [r.key for r in once] != sorted(r.key for r in rows)  # shuffled, not sorted
    assert blind_order("go channels", rows) != once  # each query its own seed


def test_every_recorded_row_is_in_the_pool_once(small) -> None:
    recording, _ = small
    entries = json.loads(recording.read_text(encoding="utf-8"))
    pool = load_pool(recording)
    assert [q.query for q in pool] == [e["query"] for e in entries]
    for query, entry in zip(pool, entries, strict=True):
        keys = [r.key for r in query.rows]
        assert len(keys) == len(set(keys))
        assert set(keys) == {dedup_key(r["url"]) for r in entry["results"]}


# --- the page is blind ---------------------------------------------------------------------------------------


def test_the_page_names_no_engine_and_shows_no_rank_or_score(small, tmp_path) -> None:
    recording, _ = small
    entries = json.loads(recording.read_text(encoding="utf-8"))
    engines = {e for entry in entries for r in entry["results"] for e in r["engines"]}
    engines |= {name for entry in entries for name, _ in entry.get("unresponsive") or []}
    assert {"google", "bing", "duckduckgo"} <= engines
    pool = load_pool(recording)
    client = TestClient(base_url=LOCAL, app=create_app(Judging(pool, JudgmentsFile(tmp_path / "j.jsonl"))))
    for n, query in enumerate(pool, start=1):
        html = client.get(f"/q/{n}").text
        # what is left once the rows' own text (title, URL, snippet: which may name anything) is taken out
        rest = html
        for r in sorted(query.rows, key=lambda r: -len(r.snippet)):
            for text in (r.snippet, r.title, r.url):
                for shown in {text, text.replace("&", "&amp;"), _escaped(text)}:
                    rest = rest.replace(shown, " ") if shown else rest
        words = set(re.findall(r"[a-z]+", rest.lower()))
        assert not engines & words, engines & words
        assert not {"score", "rank", "ranks", "position", "engine", "engines"} & words
        assert not re.search(r"#\s*\d", rest)
        # the rows in the blind order, which is not SearXNG's
        urls = re.findall(r'<p class="url">([^<]*)</p>', html)
        assert urls == [_escaped(r.url) for r in query.rows]
        assert urls != [_escaped(r["url"]) for r in entries[n - 1]["results"]]


def _escaped(text: str) -> str:
    from markupsafe import escape

    return str(escape(text))


# --- grades: written at once, resumed -----------------------------------------------------------------------


def test_each_grade_is_on_disk_when_the_answer_comes_and_a_new_server_resumes(small, tmp_path) -> None:
    recording, _ = small
    out = tmp_path / "j.jsonl"
    pool = load_pool(recording)
    client = TestClient(
        base_url=LOCAL, app=create_app(Judging(pool, JudgmentsFile(out))), follow_redirects=False
    )
    assert client.get("/").headers["location"] == "/q/1"
    total = sum(len(q.rows) for q in pool)
    answer = client.post("/grade", json={"q": 1, "row": 0, "rel": 2}).json()
    assert answer == {"graded": 1, "total": total, "queryGraded": 1, "queryTotal": len(pool[0].rows)}
    assert read_judgments(out) == {normalise_query(pool[0].query): {pool[0].rows[0].key: 2}}
    client.post("/grade", json={"q": 1, "row": 0, "rel": 0})  # a new grade replaces the old one
    assert read_judgments(out)[normalise_query(pool[0].query)] == {pool[0].rows[0].key: 0}
    for i in range(len(pool[0].rows)):
        client.post("/grade", data={"q": "1", "row": str(i), "rel": "1"})  # the form, without script
    client.post("/grade", json={"q": 2, "row": 0, "rel": 1})
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(pool[0].rows) + 1
    assert all(set(json.loads(line)) == {"query", "url", "rel"} for line in lines)
    # a new server on the same file: the first query is done, the second's first row graded
    again = TestClient(
        base_url=LOCAL,
        app=create_app(Judging(load_pool(recording), JudgmentsFile(out))),
        follow_redirects=False,
    )
    assert again.get("/").headers["location"] == "/q/2"
    page = again.get("/q/2").text
    assert 'data-start="1"' in page and f'<b id="graded">{len(lines)}</b>' in page


def test_lines_already_in_the_file_are_kept_as_written(small, tmp_path) -> None:
    recording, _ = small
    pool = load_pool(recording)
    out = tmp_path / "j.jsonl"
    other = {"qid": 7, "query": "another query", "url": "https://example.org/", "rel": 1}
    mine = {"qid": 0, "query": pool[0].query, "url": pool[0].rows[3].url, "rel": 2}
    out.write_text(json.dumps(other) + "\n\n" + json.dumps(mine) + "\n", encoding="utf-8")
    client = TestClient(base_url=LOCAL, app=create_app(Judging(pool, JudgmentsFile(out))))
    assert client.get("/q/1").text.count('aria-pressed="true"') == 1
    client.post("/grade", json={"q": 1, "row": 3, "rel": 0})
    client.post("/grade", json={"q": 1, "row": 0, "rel": 1})
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert lines == [
        other,
        {**mine, "rel": 0},
        {"query": pool[0].query, "url": pool[0].rows[0].url, "rel": 1},
    ]
    assert not list(tmp_path.glob(".*.tmp"))  # the temporary file was renamed over the file


@pytest.mark.parametrize(
    "body, message",
    [
        ({"q": 1, "row": 0, "rel": 3}, "a grade is one of 0, 1, 2"),
        ({"q": 99, "row": 0, "rel": 1}, "no query 99"),
        ({"q": 1, "row": 9999, "rel": 1}, "has no row 9999"),
        ({"q": 1, "row": 0, "rel": True}, "rel must be a whole number"),
        ({"q": 1, "row": "x", "rel": 1}, "row must be a whole number"),
        ([1, 2], "expected"),
    ],
)
def test_a_bad_grade_is_refused_and_writes_nothing(small, tmp_path, body, message) -> None:
    recording, _ = small
    out = tmp_path / "j.jsonl"
    client = TestClient(base_url=LOCAL, app=create_app(Judging(load_pool(recording), JudgmentsFile(out))))
    resp = client.post("/grade", json=body)
    assert resp.status_code == 400 and message in resp.json()["error"]
    assert not out.exists()


# --- the command's bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "replay file not found"),
        ("not json", "cannot read replay file"),
        ('{"a": 1}', "neither a SearXNG recording nor serpfuse-replay/1"),
        ('[{"query": "x", "results": [{"title": "t"}]}]', "query 1 ('x') has a result without a url"),
        ("[]", "holds no rows to judge"),
    ],
)
def test_a_bad_recording_is_one_line_and_exit_2(tmp_path, content, message) -> None:
    path = tmp_path / "rec.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    result = CliRunner().invoke(app, ["judge", str(path), "--out", str(tmp_path / "j.jsonl"), "--port", "0"])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.output


def test_a_bad_judgments_file_is_one_line_naming_the_line(small, tmp_path) -> None:
    recording, _ = small
    out = tmp_path / "j.jsonl"
    out.write_text(
        '{"query": "q", "url": "https://a.example/", "rel": 1}\n{"query": "q"}\n', encoding="utf-8"
    )
    result = CliRunner().invoke(app, ["judge", str(recording), "--out", str(out), "--port", "0"])
    assert result.exit_code == 2
    assert result.output.strip() == f"serpfuse: error: {out}:2: missing 'url', 'rel'"


# --- the loop: judge, then bench and calibrate read what it wrote --------------------------------------------


def test_judge_bench_calibrate_loop_on_four_crw56_queries(small, tmp_path) -> None:
    """Every pooled row graded as the dev judgments grade it (0 where they say nothing): bench on the file the
    judge wrote gives the dev judgments' own figures, and calibrate learns from it."""
    recording, dev = small
    dev_grades = read_judgments(dev)
    pool = load_pool(recording)
    out = tmp_path / "judged.jsonl"
    client = TestClient(base_url=LOCAL, app=create_app(Judging(pool, JudgmentsFile(out))))
    for n, query in enumerate(pool, start=1):
        grades = dev_grades.get(normalise_query(query.query), {})
        for i, r in enumerate(query.rows):
            assert (
                client.post("/grade", json={"q": n, "row": i, "rel": grades.get(r.key, 0)}).status_code == 200
            )
    assert client.get("/", follow_redirects=False).headers["location"] == "/q/1"  # nothing left: the start

    def bench(qrels: Path) -> dict:
        args = ["bench", "--replay", str(recording), "--qrels", str(qrels), "--json", "--now", "2026-05-31"]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)["report"]

    ours, theirs = bench(out), bench(dev)
    assert ours["summary"]["queries"] == QUERIES and ours["summary"]["nDCG@8:n"] == QUERIES
    for name in ("nDCG@8", "P@8", "MRR@8", "Irrelevant@5", "IrrelevantJudged@5"):
        assert ours["summary"][name] == pytest.approx(theirs["summary"][name]), name
    assert not any("no judgment" in note for note in ours["notes"])  # every shown row was in the pool

    weights = tmp_path / "weights.toml"
    args = ["calibrate", "--replay", str(recording), "--qrels", str(out), "--folds", "2", "--resamples", "2"]
    result = CliRunner().invoke(app, [*args, "-o", str(weights)])
    assert result.exit_code == 0, result.output
    assert f"learned from {QUERIES} judged queries" in result.output
    assert "[ranking.weights]" in weights.read_text(encoding="utf-8")

    # bench with the learned weights: B of --compare, named in its label and its fingerprint
    learned = read_weights_file(weights)
    args = ["bench", "--replay", str(recording), "--qrels", str(out), "--now", "2026-05-31", "--json"]
    result = CliRunner().invoke(app, [*args, "--compare", "combmnz", "combmnz", "--weights", str(weights)])
    assert result.exit_code == 0, result.output
    compared = json.loads(result.stdout)
    label = ",".join(["combmnz", *(f"weights.{e}={w:g}" for e, w in learned.items())])
    assert compared["a"]["config"] == "combmnz" and compared["b"]["config"] == label
    weighted = RankingConfig(strategy="combmnz", weights={e: float(f"{w:g}") for e, w in learned.items()})
    assert compared["b"]["fingerprint"] == weighted.fingerprint()
    assert compared["a"]["summary"]["nDCG@8"] == pytest.approx(ours["summary"]["nDCG@8"])
    bad = tmp_path / "bad.toml"
    bad.write_text("[ranking]\nstrategy = 'rrf'\n", encoding="utf-8")
    result = CliRunner().invoke(app, [*args, "--weights", str(bad)])
    assert result.exit_code == 2 and "a weights file holds one table" in result.output
