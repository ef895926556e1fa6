"""MQ2008-agg, five folds by subset: engine weights calibrated on four subsets, the fifth fused with them.

    python -m benchmarks.calibrate_mq2008                  # the three fixed setups and 50 random subsets
    python -m benchmarks.calibrate_mq2008 --subsets 0      # the fixed setups only
    python -m benchmarks.calibrate_mq2008 --json           # every setup, fold and weight

For each setup (which rankers act as engines, how deep each shows; ``mq2008.REFERENCE_SETUPS`` and
``mq2008.random_setups``) and each held-out subset S1..S5:

- the setup's rankers are written as TREC runs, one file per ranker (its judged documents by position) and
  ``serpfuse calibrate --depth D`` learns the weights from the other four subsets' judgments;
- ``serpfuse fuse --weights FILE --depth D`` fuses the held-out subset's queries; the fused run is read back as
  trec_eval reads one and its top 8 scored as the metasearch protocol scores (nDCG@8, gain 2^rel - 1);
- on the same held-out queries: plain RRF k=60, CombMNZ, Borda, ``fuse`` without weights (the default with
  equal weights) and the single ranker that is best on the four training subsets.

The held-out subsets partition the corpus, so every method has one score per query with a relevant document.
"best" is the best mean of RRF, CombMNZ, Borda and the best-on-training single ranker; the interval is the
paired bootstrap 95 % of calibrated minus that best. Nothing is chosen on a held-out subset.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated

import typer
from typer.testing import CliRunner

from benchmarks import mq2008 as mq
from benchmarks.setups import compact_ranges, data_root, load_mq2008_queries
from serpfuse.bench import metrics, trec
from serpfuse.bench.bootstrap import paired_bootstrap
from serpfuse.cli import app as serpfuse_app
from serpfuse.config import RankingConfig
from serpfuse.settings import read_weights_file

TARGET_GAIN = 2.0  # percent over the best baseline, on setups of at least TARGET_SIZE rankers
TARGET_SIZE = 5
PLAIN = ("rrf (plain)", "combmnz", "borda")


@dataclass
class SetupResult:
    name: str
    rankers: tuple[int, ...]
    depth: int
    means: dict[str, float]  # method -> mean nDCG@8 over the held-out queries
    singles: dict[str, int]  # held-out subset -> the ranker best on its training subsets
    weights: dict[str, dict[str, float]]  # held-out subset -> engine -> weight
    best: str = ""
    gain: float = 0.0  # calibrated against the best, percent
    low: float = 0.0
    high: float = 0.0
    over_default: float = 0.0  # calibrated against the default with equal weights, percent
    seconds: float = 0.0
    per_query: dict[str, dict[str, float]] = field(default_factory=dict, repr=False)


def serpfuse(*args: str) -> str:
    """One ``serpfuse`` command, in this process (the CLI's own code path); its stdout."""
    result = CliRunner().invoke(serpfuse_app, list(args))
    if result.exit_code != 0:
        raise RuntimeError(f"serpfuse {args[0]} failed: {result.output.strip()}")
    return result.stdout


def write_runs(folder: Path, queries: Mapping[str, mq.QueryData], rankers: Sequence[int]) -> list[str]:
    """One TREC run per ranker over ``queries``: its judged documents by position (score: minus position)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for ranker in rankers:
        ranked = {
            qid: [(d, -float(q.positions[ranker][d])) for d in q.ranking(ranker)]
            for qid, q in queries.items()
        }
        path = folder / f"{mq.engine_name(ranker)}.run"
        trec.write_run(path, {qid: rows for qid, rows in ranked.items() if rows}, "mq2008")
        paths.append(str(path))
    return paths


def fused_ndcg(run_text: str, queries: Mapping[str, mq.QueryData], folder: Path) -> dict[str, float]:
    """nDCG@8 of each judged query's fused top 8, the run read as trec_eval reads it."""
    path = folder / "fused.run"
    path.write_text(run_text, encoding="utf-8")
    ranked = trec.ranked_lists(trec.read_run(path))
    return {
        qid: mq.score_ranked(ranked.get(qid, [])[: mq.CUTOFF], q.grades)[0]
        for qid, q in queries.items()
        if q.has_relevant
    }


def evaluate_setup(corpus: mq.Corpus, setup: mq.Setup, work: Path, resamples: int = 0) -> SetupResult:
    started = time.monotonic()
    per_query: dict[str, dict[str, float]] = {m: {} for m in (*PLAIN, "best single", "default", "calibrated")}
    singles: dict[str, int] = {}
    weights: dict[str, dict[str, float]] = {}
    fixed = {
        PLAIN[0]: mq.plain_rrf(RankingConfig()),
        PLAIN[1]: RankingConfig(strategy="combmnz"),
        PLAIN[2]: RankingConfig(strategy="borda"),
    }
    depth = str(setup.depth)
    for held_out in mq.SUBSETS:
        train = mq.queries_of(corpus, [s for s in mq.SUBSETS if s != held_out])
        test = corpus[held_out]
        folder = work / held_out
        train_runs = write_runs(folder / "train", train, setup.rankers)
        test_runs = write_runs(folder / "test", test, setup.rankers)
        qrels = folder / "train.qrels"
        trec.write_qrels(qrels, {qid: q.grades for qid, q in train.items()})
        weights_file = folder / "weights.toml"
        serpfuse(
            "calibrate", *train_runs, "--qrels", str(qrels), "--depth", depth,
            "--resamples", str(resamples), "-o", str(weights_file),
        )  # fmt: skip
        weights[held_out] = read_weights_file(weights_file)
        calibrated = serpfuse(
            "fuse", *test_runs, "--depth", depth, "--limit", "8", "--weights", str(weights_file)
        )
        per_query["calibrated"].update(fused_ndcg(calibrated, test, folder))
        default = serpfuse("fuse", *test_runs, "--depth", depth, "--limit", "8")
        per_query["default"].update(fused_ndcg(default, test, folder))
        for name, config in fixed.items():
            scores = mq.metasearch(
                test, mq.strategy_fuser(config.strategy, config), setup.rankers, setup.depth
            )
            per_query[name].update(scores.ndcg)
        single, _ = mq.best_single(train, setup.rankers, setup.depth)
        singles[held_out] = single
        per_query["best single"].update(
            mq.metasearch(test, mq.single_fuser(single), setup.rankers, setup.depth).ndcg
        )
    means = {m: metrics.mean(v.values()) for m, v in per_query.items()}
    best = max((*PLAIN, "best single"), key=lambda m: means[m])
    a, b = mq.aligned(per_query[best], per_query["calibrated"])
    interval = paired_bootstrap(a, b)
    return SetupResult(
        name=setup.name,
        rankers=setup.rankers,
        depth=setup.depth,
        means=means,
        singles=singles,
        weights=weights,
        best=best,
        gain=mq.gap_percent(means["calibrated"], means[best]),
        low=interval.low,
        high=interval.high,
        over_default=mq.gap_percent(means["calibrated"], means["default"]),
        seconds=time.monotonic() - started,
        per_query=per_query,
    )


def ranker_text(rankers: Sequence[int]) -> str:
    return compact_ranges(rankers)


def table(results: Sequence[SetupResult]) -> list[str]:
    head = "| setup | rankers @depth | rrf (plain) | combmnz | borda | best single (train) | default | calibrated | vs best | 95 % interval | vs default |"
    lines = [head, "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|"]
    for r in results:
        singles = sorted(set(r.singles.values()))
        single = f"{r.means['best single']:.4f} (r{'/r'.join(map(str, singles))})"
        cells = [
            r.name,
            f"{ranker_text(r.rankers)} @{r.depth}",
            *(f"{r.means[m]:.4f}" for m in PLAIN),
            single,
            f"{r.means['default']:.4f}",
            f"**{r.means['calibrated']:.4f}**",
            f"{r.gain:+.2f} % ({r.best})",
            f"[{r.low:+.4f}, {r.high:+.4f}]",
            f"{r.over_default:+.2f} %",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def summary(results: Sequence[SetupResult]) -> list[str]:
    if not results:
        return []
    large = [r for r in results if len(r.rankers) >= TARGET_SIZE]
    gains = [r.gain for r in results]
    lines = [
        "| subsets | mean vs best | worst | best | at or above the best | mean vs default |",
        "|---|---:|---:|---:|---:|---:|",
        f"| all {len(results)} | {metrics.mean(gains):+.2f} % | {min(gains):+.2f} % | {max(gains):+.2f} % | "
        f"{sum(g >= 0 for g in gains)} | {metrics.mean(r.over_default for r in results):+.2f} % |",
    ]
    if large:
        big = [r.gain for r in large]
        lines.append(
            f"| {len(large)} of >= {TARGET_SIZE} rankers | {metrics.mean(big):+.2f} % | {min(big):+.2f} % | "
            f"{max(big):+.2f} % | {sum(g >= 0 for g in big)} (>= +{TARGET_GAIN:g} %: "
            f"{sum(g >= TARGET_GAIN for g in big)}) | {metrics.mean(r.over_default for r in large):+.2f} % |"
        )
    return lines


def main(
    subsets: Annotated[
        int, typer.Option("--subsets", min=0, help="random ranker subsets beside the fixed three")
    ] = 50,
    seed: Annotated[int, typer.Option("--seed", help="the random subsets' draw")] = mq.SUBSET_SEED,
    data: Annotated[Path | None, typer.Option("--data", help="the corpora (default $SERPFUSE_DATA)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="every setup, fold and weight as JSON")] = False,
) -> None:
    """Five folds by subset: calibrate on four, fuse the fifth with the weights; against the best baseline."""
    corpus = mq.load_mq2008(data_root(data) / "mq2008-agg")
    load_mq2008_queries(data_root(data))  # the same checks and one-line errors as python -m benchmarks
    setups = [*mq.REFERENCE_SETUPS, *mq.random_setups(subsets, seed)]
    results: list[SetupResult] = []
    with tempfile.TemporaryDirectory(prefix="calibrate-mq2008-") as tmp:
        for number, setup in enumerate(setups, start=1):
            result = evaluate_setup(corpus, setup, Path(tmp) / f"setup{number}")
            results.append(result)
            print(
                f"[{number}/{len(setups)}] {setup.name} ({ranker_text(setup.rankers)} @{setup.depth}): "
                f"calibrated {result.means['calibrated']:.4f}, {result.gain:+.2f} % vs {result.best}, "
                f"{result.seconds:.0f} s",
                file=sys.stderr,
            )
    if as_json:
        payload = [{k: v for k, v in asdict(r).items() if k != "per_query"} for r in results]
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
        return
    fixed, random_ = results[: len(mq.REFERENCE_SETUPS)], results[len(mq.REFERENCE_SETUPS) :]
    print("### Fixed setups (nDCG@8, five folds by subset; the interval: calibrated minus the best)\n")
    print("\n".join(table(fixed)))
    if random_:
        print(f"\n### {len(random_)} random subsets (seed {seed}): calibrated against the best, per subset\n")
        print("\n".join(summary(random_)))
        print("\n<details><summary>every random subset</summary>\n")
        print("\n".join(table(random_)))
        print("\n</details>")


if __name__ == "__main__":
    typer.run(main)
