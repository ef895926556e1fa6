"""Engine weights learned from judgments: the fitted fusion is the rankers' own, the fit finds a better engine,
the weights reach fuse, search, the settings, the fingerprint and the cache key, and bad files are one-line
errors naming the line."""

from __future__ import annotations

import datetime as dt
import json
import random
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import need
from serpfuse.bench import calibrate as cal
from serpfuse.bench import judged_recording as jr
from serpfuse.bench import metrics, trec
from serpfuse.cli import app
from serpfuse.cli.fuse import fuse_runs
from serpfuse.config import DEFAULT_STRATEGY, RankingConfig
from serpfuse.models import SearchRequest
from serpfuse.ranking.fusion import fuse_lists
from serpfuse.settings import ConfigError, load_settings, read_weights_file
from serpfuse.state.cache import cache_key

NOW = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)


def synthetic_runs(
    queries: int = 60, seed: int = 3, engines: tuple[str, ...] = ("good", "noisy1", "noisy2", "noisy3")
) -> tuple[dict[str, trec.Run], trec.QrelsSet]:
    """Engine ``good`` puts the relevant documents first; every other engine shuffles most of its list."""
    rng = random.Random(seed)
    runs: dict[str, trec.Run] = {e: {} for e in engines}
    qrels: trec.QrelsSet = {}
    for q in range(queries):
        qid = f"q{q}"
        docs = [f"{qid}-d{i}" for i in range(20)]
        grades = {d: (2 if i < 2 else 1 if i < 5 else 0) for i, d in enumerate(docs)}
        qrels[qid] = grades
        for engine in engines:
            order = docs[:]
            if engine == "good":
                order = order[:6] + rng.sample(order[6:], 14)
            else:
                order = rng.sample(order, 20)
            runs[engine][qid] = {d: float(20 - r) for r, d in enumerate(order[:15])}
    return runs, qrels


def real_ndcg(runs, qrels, config: RankingConfig) -> dict[str, float]:
    """Each judged query's nDCG@8 of what ``serpfuse fuse`` writes with this configuration."""
    fused = fuse_runs(runs, config.strategy, config=config)
    return {
        q: metrics.ndcg_at([d for d, _ in fused.get(q, [])], qrels[q], 8, gain="exp")
        for q in qrels
        if any(g >= 1 for g in qrels[q].values())
    }


# --- the fitted fusion is the rankers' own -------------------------------------------------------------------


@pytest.mark.parametrize("strategy", ["combmnz", "adaptive", "consensus"])
def test_the_fast_fusion_is_the_rankers_own_with_groups_aliases_and_ties(strategy):
    # bing, ddg (and duckduckgo, its alias) share the bing group, retention 0.25: the groups' path is exercised
    # (CombMNZ has no groups: it sums every list's rank scores)
    runs, qrels = synthetic_runs(40, engines=("bing", "duckduckgo", "brave", "mojeek", "exa"))
    config = RankingConfig(strategy=strategy)
    problem, _ = cal.problem_from_runs(runs, qrels, config=config)
    assert problem.singletons == (strategy == "combmnz") and "ddg" in problem.voters
    rng = random.Random(11)
    settings = [{}] + [{v: 2.0 ** rng.choice(cal.GRID) for v in problem.voters} for _ in range(4)]
    for weights in settings:  # equal weights first: rows with the same votes tie, and the tie rule decides
        fast = problem.ndcg_of(weights)
        real = real_ndcg(runs, qrels, config.model_copy(update={"weights": weights}))
        assert [real[c.qid] for c in problem.caches] == pytest.approx(list(fast), abs=1e-12), weights


@pytest.mark.parametrize("strategy", ["combmnz", "consensus"])
def test_the_line_search_scores_are_the_full_scores_bit_for_bit(strategy):
    runs, qrels = synthetic_runs(30)
    problem, _ = cal.problem_from_runs(runs, qrels, config=RankingConfig(strategy=strategy))
    theta = np.array([0.5, -1.0, 0.0, 1.5])
    line = problem.line(2.0**theta)
    for column in range(len(problem.voters)):
        weights = np.tile(2.0**theta, (len(cal.GRID), 1))
        weights[:, column] = cal.GRID_VALUES
        assert np.array_equal(line.scores(column, cal.GRID_VALUES), problem.scores(weights))


@pytest.mark.parametrize("strategy", ["combmnz", "consensus"])
def test_the_recorded_fusion_is_the_pipelines_own(data_dir, strategy):
    """crw56 dev through the pipeline's filters and demotions, then CombMNZ's top rows or consensus's MMR."""
    recording = need(data_dir / "crw56" / "searxng_raw.json")
    judgments = need(data_dir / "crw56" / "qrels-dev.jsonl")
    plain = RankingConfig(strategy=strategy)
    problem, _ = cal.problem_from_recording(recording, judgments, config=plain, now=NOW)
    judged = jr.load_judged_recording(recording, judgments)
    runner = jr.PipelineRunner(judged.recording, NOW)
    by_qid = {q.qid: q for q in judged.queries}
    rng = random.Random(5)
    drawn = [{v: 2.0 ** rng.choice(cal.GRID) for v in problem.voters} for _ in range(3)]
    for weights in ({}, {"bing": 4.0, "ddg": 0.5, "google": 0.25}, {"google": 8.0, "bing": 0.125}, *drawn):
        config = plain.model_copy(update={"weights": weights})
        real = []
        for c in problem.caches:
            q = by_qid[c.qid]
            rows = jr.judge(q, runner(q, config), None)
            real.append(metrics.ndcg_at([r.docid for r in rows], q.judged, 8, gain="exp"))
        assert real == pytest.approx(list(problem.ndcg_of(weights)), abs=1e-12), weights


def _mmr_query(rng: random.Random, single_site: bool):
    """Candidates with near-duplicate texts, short (sparse) texts and shared domains, as MMR's caps see them."""
    from conftest import cand

    words = [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
        "zeta",
        "eta",
        "theta",
        "iota",
        "kappa",
        "lambda",
        "mu",
        "nu",
        "xi",
        "omicron",
        "pi",
    ]
    rows = []
    for i in range(24):
        domain = f"site{rng.randrange(4)}.example"
        text = " ".join(rng.sample(words, 12)) if i % 3 else "alpha beta"  # every third row: sparse text
        if i % 5 == 4 and rows:
            text = rows[-1].snippet  # a near duplicate of the row before
        row = cand(f"https://{domain}/page{i}", title=f"alpha {i}", snippet=text)
        for engine in ("e1", "e2", "e3", "e4"):
            if rng.random() < 0.6:
                row.engine_ranks[engine] = rng.randrange(1, 15)
        if row.engine_ranks:
            rows.append(row)
    include = ["site0.example"] if single_site else []
    request = SearchRequest(query="alpha beta", limit=8, include_domains=include)
    return rows, request


@pytest.mark.parametrize("strategy", ["consensus", "combmnz"])
def test_the_selection_replica_is_the_selection_stages_own(strategy):
    """Greedy MMR with its diversity penalty, the sparse-text domain cap (off for a single site) and demotions;
    CombMNZ's top rows with the demotions."""
    from types import SimpleNamespace

    from serpfuse.ranking.context import RankContext
    from serpfuse.ranking.query import analyze_query
    from serpfuse.ranking.rankers import get_ranker
    from serpfuse.ranking.rankers.base import demote
    from serpfuse.ranking.selection import select
    from serpfuse.urls import dedup_key

    rng = random.Random(7)
    config = RankingConfig(strategy=strategy)
    queries = []
    for q in range(8):
        rows, request = _mmr_query(rng, single_site=q % 2 == 1)
        ctx = RankContext(request=request, query=analyze_query(request.query), config=config, now=NOW)
        demoted = {r.key: "lacks the anchor" for r in rows[::7]}
        grades = {dedup_key(r.url): rng.choice([0, 0, 1, 2]) for r in rows}
        grades[dedup_key(rows[0].url)] = 2  # every query has a relevant row
        queries.append((rows, ctx, demoted, grades))
    caches = [
        cal.cache_ranking_inputs(
            str(i), SimpleNamespace(ctx=ctx, outcome=SimpleNamespace(kept=rows, demoted=d)), g
        )
        for i, (rows, ctx, d, g) in enumerate(queries)
    ]
    problem = cal.Problem(caches, config)
    ranker = get_ranker(config.strategy)
    for weights in ({}, {"e1": 4.0, "e2": 0.25}, {"e3": 8.0, "e4": 0.5, "e1": 0.125}):
        real = []
        for rows, ctx, demoted, grades in queries:
            weighted = RankContext(**{**vars(ctx), "config": config.model_copy(update={"weights": weights})})
            ranked = demote(ranker.rank(rows, weighted), demoted, config.filters.anchor_demotion)
            shown = [dedup_key(s.candidate.url) for s in select(ranked, ranker, weighted).selected]
            real.append(metrics.ndcg_at(shown, grades, 8, gain="exp"))
        assert real == pytest.approx(list(problem.ndcg_of(weights)), abs=1e-12), weights


def test_the_default_fusion_fitted_is_what_fuse_weights_writes_on_mq2008(data_dir, tmp_path):
    """A slice of MQ2008 (five rankers, 120 queries, --depth 20) through ``serpfuse fuse --weights``: the
    fitter's nDCG@8 of each query under random weights is the one of the run fuse writes."""
    from benchmarks import mq2008

    corpus = mq2008.load_mq2008(need(data_dir / "mq2008-agg"))
    queries = dict(list(mq2008.queries_of(corpus).items())[:120])
    runs = {
        mq2008.engine_name(r): {
            qid: {d: -float(q.positions[r][d]) for d in q.ranking(r)} for qid, q in queries.items()
        }
        for r in (1, 5, 9, 17, 25)
    }
    runs = {e: {q: rows for q, rows in run.items() if rows} for e, run in runs.items()}
    qrels = {qid: q.grades for qid, q in queries.items()}
    paths, _ = _runs_on_disk(tmp_path, runs, qrels)
    problem, _ = cal.problem_from_runs(runs, qrels, depth=20)
    assert problem.config.strategy == DEFAULT_STRATEGY and problem.queries > 60
    rng = random.Random(21)
    for draw in range(4):
        weights = {v: 2.0 ** rng.choice(cal.GRID) for v in problem.voters} if draw else {}
        file = tmp_path / "w.toml"
        file.write_text(
            "[ranking.weights]\n" + "".join(f"{e} = {w!r}\n" for e, w in weights.items()), encoding="utf-8"
        )
        fused = _cli("fuse", *paths, "--depth", "20", "--weights", str(file))
        assert fused.exit_code == 0, fused.output
        (tmp_path / "fused.run").write_text(fused.stdout, encoding="utf-8")
        ranked = trec.ranked_lists(trec.read_run(tmp_path / "fused.run"))
        real = [metrics.ndcg_at(ranked[c.qid][:8], qrels[c.qid], 8, gain="exp") for c in problem.caches]
        assert real == pytest.approx(list(problem.ndcg_of(weights)), abs=1e-12), weights


# --- the fit -------------------------------------------------------------------------------------------------


def test_calibration_finds_the_better_engine_and_says_what_it_gains(tmp_path):
    runs, qrels = synthetic_runs(60)
    problem, _ = cal.problem_from_runs(runs, qrels)
    result = cal.calibrate(problem, resamples=10, alone=False)  # the weighting itself
    good = result.weights["good"]
    assert good > 1 and all(good > w for e, w in result.weights.items() if e != "good")
    low, high = result.intervals["good"]
    assert low <= good <= high and low > 1
    assert result.gain.low > 0  # cross-validated: the held-out folds gain too
    assert result.fitted > result.equal
    written = tmp_path / "weights.toml"
    written.write_text(result.toml(), encoding="utf-8")
    assert read_weights_file(written) == pytest.approx(result.weights, rel=1e-5)


def test_an_engine_that_beats_every_weighting_alone_is_chosen_alone():
    """On these judgments the good engine's list alone beats any weighting of the rest: cross-validation says
    so, the others weigh 0, and what the fitter scores is what CombMNZ with those weights ranks."""
    runs, qrels = synthetic_runs(60)
    problem, _ = cal.problem_from_runs(runs, qrels)
    result = cal.calibrate(problem, resamples=10)
    assert result.lam == cal.ALONE
    assert result.weights == {v: (1.0 if v == "good" else 0.0) for v in problem.voters}
    assert result.cv_means[cal.ALONE] > max(result.cv_means[lam] for lam in cal.LAMBDAS)
    assert result.gain.low > 0
    assert "alone" in result.toml()
    # the fitter's nDCG@8 under those weights is each engine's own list scored alone
    alone = problem.ndcg_alone()[problem.voters.index("good")]
    assert problem.ndcg_of(result.weights) == pytest.approx(alone, abs=1e-12)


def test_judgments_that_cannot_tell_engines_apart_keep_every_weight_at_one():
    runs, qrels = synthetic_runs(30, engines=("a",))
    runs["b"] = runs["c"] = runs["a"]  # three engines with one list: any weights give the same order
    problem, _ = cal.problem_from_runs(runs, qrels)
    result = cal.calibrate(problem, resamples=5)
    assert result.weights == {"a": 1.0, "b": 1.0, "c": 1.0}
    assert result.gain.delta == 0


def test_the_same_judgments_give_the_same_weights():
    runs, qrels = synthetic_runs(40)
    problem, _ = cal.problem_from_runs(runs, qrels)
    first, second = (cal.calibrate(problem, resamples=5).to_json() for _ in range(2))
    assert first == second


# --- the weights everywhere ---------------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", ["adaptive", "consensus", "rrf"])
def test_every_weighted_ranker_follows_the_weights(strategy):
    lists = {"a": ["p", "q"], "b": ["q", "p"]}  # a tie until one engine weighs more
    config = RankingConfig(strategy=strategy)
    for heavier, first in (("a", "p"), ("b", "q")):
        fused = fuse_lists(lists, strategy, config.model_copy(update={"weights": {heavier: 2.0}}))
        assert fused[0][0] == first


def test_weights_move_the_fingerprint_and_the_cache_key_and_bad_ones_are_refused():
    plain, weighted = RankingConfig(), RankingConfig(weights={"bing": 2.0})
    assert plain.fingerprint() != weighted.fingerprint()
    request = SearchRequest(query="x")
    assert cache_key(request, plain.fingerprint(), "replay") != cache_key(
        request, weighted.fingerprint(), "replay"
    )
    assert weighted.weight_of("bing") == 2.0 and weighted.weight_of("brave") == 1.0
    assert RankingConfig(weights={"ddg": 3.0}).weight_of("duckduckgo") == 3.0  # by its logical name
    for bad in ({"bing": -1}, {"bing": True}, {"bing": float("inf")}, {"": 1.0}, {"bing": "x"}):
        with pytest.raises(ValueError):
            RankingConfig(weights=bad)


def test_the_settings_file_carries_the_weights(tmp_path, monkeypatch):
    monkeypatch.delenv("SERPFUSE_CONFIG", raising=False)
    path = tmp_path / "serpfuse.toml"
    path.write_text('[ranking.weights]\nbing = 2.5\n"searxng:google" = 0.5\n', encoding="utf-8")
    settings = load_settings(path)
    assert settings.ranking_config.weights == {"bing": 2.5, "searxng:google": 0.5}
    assert settings.ranking_config.fingerprint() != RankingConfig().fingerprint()
    path.write_text("[ranking.weights]\nbing = -2\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="ranking.weights.bing"):
        load_settings(path)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[ranking.weights]\nbing = 2\nddg = -1\n", "w.toml:3: ranking.weights.ddg: must be a finite number"),
        (
            '[ranking.weights]\n"searxng:bing" = true\n',
            "w.toml:2: ranking.weights.searxng:bing: must be a number",
        ),
        ("[ranking.weights\nbing = 1\n", "not valid TOML"),  # tomllib names the line and column
        ('[ranking]\nstrategy = "rrf"\n[ranking.weights]\nbing = 1\n', "holds one table, [ranking.weights]"),
        ("bing = 1\n", "holds one table"),
    ],
)
def test_a_bad_weights_file_is_a_one_line_error(tmp_path, text, needle):
    path = tmp_path / "w.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        read_weights_file(path)
    assert needle in str(err.value) and "\n" not in str(err.value)


def _runs_on_disk(tmp_path: Path, runs: dict[str, trec.Run], qrels: trec.QrelsSet) -> tuple[list[str], Path]:
    paths = []
    for engine, run in runs.items():
        path = tmp_path / f"{engine}.run"
        trec.write_run(path, {q: list(scores.items()) for q, scores in run.items()}, engine)
        paths.append(str(path))
    qrels_path = tmp_path / "qrels.txt"
    trec.write_qrels(qrels_path, qrels)
    return paths, qrels_path


def _cli(*args: str):
    return CliRunner().invoke(app, list(args))


def test_calibrate_writes_weights_that_fuse_then_uses(tmp_path):
    runs, qrels = synthetic_runs(60)
    paths, qrels_path = _runs_on_disk(tmp_path, runs, qrels)
    out = tmp_path / "weights.toml"
    result = _cli("calibrate", *paths, "--qrels", str(qrels_path), "-o", str(out), "--resamples", "5")
    assert result.exit_code == 0, result.output
    assert "cross-validated gain against equal weights" in result.stdout and "good" in result.stdout
    weights = read_weights_file(out)
    assert weights["good"] > max(w for e, w in weights.items() if e != "good")  # here: alone, the rest 0

    def fused_ndcg(*extra: str) -> float:
        fused = _cli("fuse", *paths, *extra)
        assert fused.exit_code == 0, fused.output
        run_path = tmp_path / "fused.run"
        run_path.write_text(fused.stdout, encoding="utf-8")
        ranked = trec.ranked_lists(trec.read_run(run_path))
        return metrics.mean(metrics.ndcg_at(ranked[q][:8], qrels[q], 8, gain="exp") for q in qrels)

    assert fused_ndcg("--weights", str(out)) > fused_ndcg()


def test_calibrate_prints_the_toml_and_reads_json_lines_judgments_for_runs(tmp_path):
    runs, qrels = synthetic_runs(30)
    paths, _ = _runs_on_disk(tmp_path, runs, qrels)
    jsonl = tmp_path / "judged.jsonl"
    jsonl.write_text(
        "".join(
            json.dumps({"query": q, "url": d, "rel": g}) + "\n"
            for q, gs in qrels.items()
            for d, g in gs.items()
        ),
        encoding="utf-8",
    )
    result = _cli("calibrate", *paths, "--qrels", str(jsonl), "--resamples", "3")
    assert result.exit_code == 0, result.output
    assert "[ranking.weights]" in result.stdout and "# 95 % interval" in result.stdout
    printed = tmp_path / "printed.toml"
    printed.write_text(result.stdout, encoding="utf-8")
    weights = read_weights_file(printed)
    assert weights["good"] > max(w for e, w in weights.items() if e != "good")


@pytest.mark.parametrize(
    ("name", "text", "needle"),
    [
        ("qrels.txt", "q0 0 q0-d0 2\nq0 0 q0-d1\n", "qrels.txt:2: expected 4 fields"),
        ("qrels.txt", "q0 0 q0-d0 2\nq0 0 q0-d1 high\n", "qrels.txt:2: relevance 'high' is not an integer"),
        (
            "j.jsonl",
            '{"query": "q0", "url": "q0-d0", "rel": 2}\n{"query": "q0", "url": "x"}\n',
            "j.jsonl:2: missing 'rel'",
        ),
        ("j.jsonl", '{"query": "q0", "url": "q0-d0", "rel": 2}\nnot json\n', "j.jsonl:2: not JSON"),
    ],
)
def test_bad_judgments_are_one_line_errors_naming_the_line(tmp_path, name, text, needle):
    runs, qrels = synthetic_runs(10)
    paths, _ = _runs_on_disk(tmp_path, runs, qrels)
    bad = tmp_path / name
    bad.write_text(text, encoding="utf-8")
    result = _cli("calibrate", *paths, "--qrels", str(bad))
    assert result.exit_code == 2
    message = result.stderr.strip()
    assert needle in message and len(message.splitlines()) == 1


def test_calibrate_refuses_runs_and_a_recording_together(tmp_path):
    result = _cli("calibrate", str(tmp_path / "a.run"), "--replay", str(tmp_path / "r.json"), "--qrels", "q")
    assert result.exit_code == 2 and "not both" in result.stderr


def test_fuse_names_the_line_of_a_bad_weight(tmp_path):
    runs, qrels = synthetic_runs(5)
    paths, _ = _runs_on_disk(tmp_path, runs, qrels)
    bad = tmp_path / "w.toml"
    bad.write_text("[ranking.weights]\ngood = 2\nnoisy1 = -3\n", encoding="utf-8")
    result = _cli("fuse", *paths, "--weights", str(bad))
    assert result.exit_code == 2 and "w.toml:3: ranking.weights.noisy1" in result.stderr


def test_calibrate_from_a_recording_and_search_with_its_weights(data_dir, tmp_path, monkeypatch):
    recording = need(data_dir / "crw56" / "searxng_raw.json")
    judgments = need(data_dir / "crw56" / "qrels-dev.jsonl")
    out = tmp_path / "web.toml"
    result = _cli(
        "calibrate", "--replay", str(recording), "--qrels", str(judgments), "-o", str(out), "--json"
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert set(payload["weights"]) == {"bing", "ddg", "google"} and payload["queries"] == 14
    assert set(read_weights_file(out)) == {"bing", "ddg", "google"}

    monkeypatch.chdir(tmp_path)
    query = "top restaurants in belgrad"

    def search(*extra: str) -> dict:
        found = _cli("search", query, "--replay", str(recording), "--no-cache", "--json", *extra)
        assert found.exit_code == 0, found.output
        return json.loads(found.stdout)

    silenced = tmp_path / "no-google.toml"
    silenced.write_text("[ranking.weights]\ngoogle = 0\n", encoding="utf-8")
    plain, weighted = search(), search("--weights", str(silenced))
    assert plain["configFingerprint"] != weighted["configFingerprint"]
    assert any(r["engines"] == ["google"] for r in plain["results"])
    assert not any(r["engines"] == ["google"] for r in weighted["results"])  # a weight of 0 casts no vote
    settings = tmp_path / "serpfuse.toml"  # the settings file: what the HTTP API and the MCP server read
    settings.write_text(silenced.read_text(encoding="utf-8"), encoding="utf-8")
    from_settings = search("--config", str(settings))
    assert from_settings["configFingerprint"] == weighted["configFingerprint"]
    assert from_settings["results"] == weighted["results"]


def test_trec_qrels_for_a_recording_name_queries_by_position(data_dir, tmp_path):
    recording = need(data_dir / "crw56" / "searxng_raw.json")
    judged = need(data_dir / "crw56" / "qrels-dev.jsonl")
    lines = [json.loads(line) for line in judged.read_text(encoding="utf-8").splitlines() if line.strip()]
    qrels = tmp_path / "dev.qrels"
    qrels.write_text("".join(f"{j['qid']} 0 {j['url']} {j['rel']}\n" for j in lines), encoding="utf-8")
    from_trec, _ = cal.problem_from_recording(recording, qrels, now=NOW)
    from_jsonl, _ = cal.problem_from_recording(recording, judged, now=NOW)
    assert [c.qid for c in from_trec.caches] == [c.qid for c in from_jsonl.caches]
    assert list(from_trec.ndcg_of({})) == list(from_jsonl.ndcg_of({}))
    qrels.write_text("0 0 https://a.example/ 1\n99 0 https://b.example/ 2\n", encoding="utf-8")
    with pytest.raises(cal.CalibrationError, match=r"dev.qrels:2: query '99' is not in the recording"):
        cal.problem_from_recording(recording, qrels, now=NOW)


@pytest.mark.slow
def test_calibrate_25_runs_of_784_queries_within_30_seconds(data_dir, tmp_path):
    from benchmarks import mq2008

    corpus = mq2008.load_mq2008(need(data_dir / "mq2008-agg"))
    queries = mq2008.queries_of(corpus)
    paths = []
    for ranker in mq2008.RANKERS:
        ranked = {
            qid: [(d, -float(q.positions[ranker][d])) for d in q.ranking(ranker)]
            for qid, q in queries.items()
        }
        path = tmp_path / f"{mq2008.engine_name(ranker)}.run"
        trec.write_run(path, {q: rows for q, rows in ranked.items() if rows}, "mq")
        paths.append(str(path))
    qrels = tmp_path / "qrels.txt"
    trec.write_qrels(qrels, {qid: q.grades for qid, q in queries.items()})
    started = time.monotonic()
    result = _cli("calibrate", *paths, "--qrels", str(qrels), "--depth", "20", "-o", str(tmp_path / "w.toml"))
    took = time.monotonic() - started
    assert result.exit_code == 0, result.output
    assert "564 judged queries" in result.stdout
    assert took < 30, f"calibrate took {took:.1f} s"


@pytest.mark.slow
def test_the_mq2008_five_fold_bench_scores_every_query_once(data_dir, tmp_path):
    from benchmarks import calibrate_mq2008 as bench
    from benchmarks import mq2008

    corpus = mq2008.load_mq2008(need(data_dir / "mq2008-agg"))
    setup = mq2008.Setup("three", (3, 9, 25), 10)
    result = bench.evaluate_setup(corpus, setup, tmp_path)
    everything = mq2008.queries_of(corpus)
    judged = {qid for qid, q in everything.items() if q.has_relevant}
    assert all(
        set(scores) == judged for scores in result.per_query.values()
    )  # the folds partition the corpus
    borda = mq2008.metasearch(everything, mq2008.strategy_fuser("borda"), setup.rankers, setup.depth)
    assert result.means["borda"] == pytest.approx(borda.mean_ndcg, abs=1e-12)
    assert set(result.weights) == set(mq2008.SUBSETS) and set(result.weights["S1"]) == {"r3", "r9", "r25"}
