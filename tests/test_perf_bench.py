"""``python -m benchmarks --perf``: its parts, never its timings (those are printed by the command, not asserted)."""

from __future__ import annotations

import asyncio
import json
import urllib.request

import pytest

from benchmarks import perf, perf_probe
from benchmarks.perf_probe import clear_memos, raw_gather, raw_get, rows_for
from benchmarks.runner import run
from benchmarks.setups import BenchOptions
from serpfuse.bench.modes import BenchError


def test_fake_engines_overlap_like_real_ones():
    a, b = rows_for("e50", "rust async"), rows_for("e300", "rust async")
    assert len(a) == len(b) == 10
    shared = {r["url"] for r in a} & {r["url"] for r in b}
    assert 0 < len(shared) < 10  # some pages in common, each engine with its own too


def test_the_fake_engine_server_answers_after_its_latency_and_stops():
    engines, port = perf.start_engines(lifetime_s=30)
    with engines:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/20/e20?q=rust+async", timeout=10) as response:
            body = json.loads(response.read())
        assert body["results"] == rows_for("e20", "rust async")
    assert engines.proc.poll() is not None


def test_the_raw_gather_asks_every_engine_for_every_query_and_refuses_a_failed_answer():
    engines, port = perf.start_engines(lifetime_s=30)
    with engines:
        body = json.loads(asyncio.run(raw_get(port, "/20/e20?q=rust+async")))
        assert body["results"] == rows_for("e20", "rust async")
        asyncio.run(raw_gather(port, {"e10": 10, "e20": 20}, ["a b", "c"]))  # four requests, all answered

    async def refused() -> None:
        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(answer, "127.0.0.1", 0)
        async with server:
            await raw_get(server.sockets[0].getsockname()[1], "/10/e10?q=x")

    with pytest.raises(RuntimeError, match="answered 503"):  # a fast failure would flatter the floor
        asyncio.run(refused())


def test_clearing_the_memos_makes_the_next_ranking_meet_its_words_as_new():
    from serpfuse.ranking.words import light_stem

    light_stem("hiking")
    assert light_stem.cache_info().currsize > 0
    assert clear_memos() > 5
    assert light_stem.cache_info().currsize == 0


def test_the_served_probe_measures_a_real_server_tree(tmp_path):
    engines, port = perf.start_engines(lifetime_s=120)
    with engines:
        got = perf.served_concurrent(perf.THIS_SRC, port, 3, tmp_path, "t")
    assert (
        got["failed"] == 0 and got["serve_s"] > 0.3 and got["raw_s"] > 0.3
    )  # the slowest fake engine: 300 ms
    assert got["rss_mb"] > 30 and got["cpu_ms"] > 0


def test_the_table_shows_before_after_and_their_ratio():
    rows = [
        perf.Row("ranking step", "≤ 1", "ms", {"this": [1.0, 2.0, 3.0], "baseline": [4.0, 5.0, 6.0]}),
        perf.Row("of which candidates / filters / fusion+selection", "", "ms", {"this": [0.5, 0.25, 0.125]}),
    ]
    text = perf.markdown(rows, 80.0, command="make bench-perf", when="today", commit="abc123")
    assert "| ranking step | ms | 5.000 (min 4.000) | 2.000 (min 1.000) | 0.40 | ≤ 1 |" in text
    assert "0.50 / 0.25 / 0.12" in text
    assert "commit abc123" in text and "Peak RSS of any probe process: 80 MB." in text


@pytest.mark.parametrize(
    "options, needle",
    [
        ({"strategies": ["rrf"]}, "default configuration"),
        ({"sweep": True}, "default configuration"),
        ({"perf_baseline": "nowhere"}, "src directory"),
    ],
)
def test_perf_refuses_what_it_does_not_measure(tmp_path, options, needle):
    if "perf_baseline" in options:
        options = {"perf_baseline": tmp_path / options["perf_baseline"]}
    with pytest.raises(BenchError, match=needle):
        run(BenchOptions(root=tmp_path, perf=True, **options))


async def test_the_load_generator_counts_answers_and_refuses_a_failed_one(api):
    """The requests/s rows' client: answers counted over keep-alive connections; a non-200 (a fast 404 or 429
    would flatter the server) fails the run instead of counting."""
    assert await perf._load(api.base, ["/healthz", "/openapi.json"], 0.3, 2) > 0
    with pytest.raises(RuntimeError, match="answered 404"):
        await perf._load(api.base, ["/nowhere"], 0.3, 1)


def test_ranx_gets_the_runs_cut_to_the_queries_every_run_answers(tmp_path):
    from serpfuse.bench import trec

    trec.write_run(tmp_path / "a.run", {"q1": [("d1", 2.0), ("d2", 1.0)], "q2": [("d3", 1.0)]}, tag="a")
    trec.write_run(tmp_path / "b.run", {"q1": [("d2", 5.0)], "q3": [("d4", 1.0)]}, tag="b")
    cut = perf.common_query_runs([tmp_path / "a.run", tmp_path / "b.run"], tmp_path / "common")
    assert [trec.read_run(p) for p in cut] == [{"q1": {"d1": 2.0, "d2": 1.0}}, {"q1": {"d2": 5.0}}]


def test_the_fake_engines_parse_where_a_real_engines_would(monkeypatch):
    """A server sends a parse to its workers only by reference (a module's own function): the fake engines'
    must be one too, or the perf rows measure a server that parses in its own threads."""
    from serpfuse.workers import by_reference

    monkeypatch.syspath_prepend(str(perf.PROBE.with_name("probe_path")))  # as the probe's PYTHONPATH has it
    module = perf_probe.engine_module("fake", 5, "http://127.0.0.1:9")
    assert by_reference(module.parse)
    body = json.dumps({"engine": "fake", "results": perf_probe.rows_for("fake", "a b")}).encode()
    rows = module.parse(200, {}, body, None)
    assert [r.engine for r in rows] == ["fake"] * 10 and rows[0].title.startswith("a b")


@pytest.mark.parametrize("patch", sorted((perf.THIS_SRC.parent / "bench-notes" / "patches").glob("*.patch")))
def test_each_machinery_patch_still_applies_to_this_tree(patch, tmp_path):
    """``benchmarks.machinery`` puts a retired piece back (or takes a kept one out) with these patches: one that no
    longer applies would leave its BENCHMARKS row without a command that reruns it."""
    from benchmarks import machinery

    src = machinery.tree("HEAD", patch, tmp_path / "tree")
    assert (src / "serpfuse" / "service.py").is_file()


def test_machinery_refuses_an_unknown_probe():
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.machinery", "--a", "HEAD", "--b", "HEAD", "--probes", "e2e,speed"],
        cwd=perf.THIS_SRC.parent,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2 and "unknown probe 'speed'" in out.stderr
