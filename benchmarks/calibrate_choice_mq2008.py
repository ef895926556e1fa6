"""An experiment, not a default: would calibrate do better choosing the fusion method on the training folds?

    python -m benchmarks.calibrate_choice_mq2008 50     # the three fixed setups and 50 random subsets

As ``calibrate_mq2008``: five folds by subset, calibrate on four. Here each held-out subset is also fused by the
method the four training subsets favour: calibrated CombMNZ (its inner cross-validated nDCG@8, from
``calibrate --json``), plain RRF or Borda (their mean nDCG@8 on the training queries; they fit nothing). Prints,
per setup, calibrated and chosen against the best baseline, and each fold's pick. The result (lab notebook,
2026-12-03) is why calibrate does not choose the method.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
from pathlib import Path

from benchmarks import mq2008 as mq
from benchmarks.calibrate_mq2008 import fused_ndcg, serpfuse, write_runs
from benchmarks.setups import data_root
from serpfuse.bench import metrics, trec
from serpfuse.config import RankingConfig

FIXED = {
    "rrf": mq.plain_rrf(RankingConfig()),
    "borda": RankingConfig(strategy="borda"),
    "combmnz": RankingConfig(strategy="combmnz"),
}
UNFITTED = ("rrf", "borda")  # the methods the choice may take instead of the calibrated fusion


def fold(
    corpus: mq.Corpus, setup: mq.Setup, held: str, folder: Path
) -> tuple[str, dict[str, dict[str, float]]]:
    """The method the training subsets favour, and every method's held-out nDCG@8 per query."""
    train, test = mq.queries_of(corpus, [s for s in mq.SUBSETS if s != held]), corpus[held]
    depth = str(setup.depth)
    train_runs = write_runs(folder / "train", train, setup.rankers)
    test_runs = write_runs(folder / "test", test, setup.rankers)
    qrels, weights = folder / "train.qrels", folder / "weights.toml"
    trec.write_qrels(qrels, {qid: q.grades for qid, q in train.items()})
    fit = ["calibrate", *train_runs, "--qrels", str(qrels), "--depth", depth, "--resamples", "0"]
    on_train = {"calibrated": max(json.loads(serpfuse(*fit, "--json"))["crossValidation"].values())}
    serpfuse(*fit, "-o", str(weights))
    fused = serpfuse("fuse", *test_runs, "--depth", depth, "--limit", "8", "--weights", str(weights))
    held_out = {"calibrated": fused_ndcg(fused, test, folder)}
    for name, config in FIXED.items():
        fuser = mq.strategy_fuser(config.strategy, config)
        held_out[name] = mq.metasearch(test, fuser, setup.rankers, setup.depth).ndcg
        if name in UNFITTED:
            on_train[name] = metrics.mean(
                mq.metasearch(train, fuser, setup.rankers, setup.depth).ndcg.values()
            )
    single, _ = mq.best_single(train, setup.rankers, setup.depth)
    held_out["single"] = mq.metasearch(test, mq.single_fuser(single), setup.rankers, setup.depth).ndcg
    pick = max(on_train, key=lambda m: (on_train[m], m == "calibrated"))  # ties to the calibrated fusion
    return pick, held_out


def main(subsets: int) -> None:
    corpus = mq.load_mq2008(data_root(None) / "mq2008-agg")
    setups = [*mq.REFERENCE_SETUPS, *mq.random_setups(subsets, mq.SUBSET_SEED)]
    rows = []
    with tempfile.TemporaryDirectory(prefix="calibrate-choice-") as tmp:
        for number, setup in enumerate(setups):
            per: dict[str, dict[str, float]] = {}
            picks = []
            for held in mq.SUBSETS:
                pick, held_out = fold(corpus, setup, held, Path(tmp) / f"setup{number}" / held)
                picks.append(pick)
                for name, scores in held_out.items():
                    per.setdefault(name, {}).update(scores)
                per.setdefault("chosen", {}).update(held_out[pick])
            means = {m: metrics.mean(v.values()) for m, v in per.items()}
            best = max(means[m] for m in (*FIXED, "single"))
            gains = (mq.gap_percent(means["calibrated"], best), mq.gap_percent(means["chosen"], best))
            rows.append((len(setup.rankers), *gains))
            print(
                f"{setup.name:12s} n={len(setup.rankers):2d} calibrated {gains[0]:+.2f} % chosen {gains[1]:+.2f} % {picks}"
            )
    for label, sel in (("random", rows[3:]), (">= 5 rankers", [r for r in rows[3:] if r[0] >= 5])):
        if sel:
            cal, chosen = [r[1] for r in sel], [r[2] for r in sel]
            print(
                f"{label} ({len(sel)}): calibrated mean {statistics.mean(cal):+.2f} %, {sum(g >= 0 for g in cal)} >= 0;"
                f" chosen mean {statistics.mean(chosen):+.2f} %, {sum(g >= 0 for g in chosen)} >= 0"
            )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 50)
