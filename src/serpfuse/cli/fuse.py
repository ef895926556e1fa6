"""`serpfuse fuse RUN...`: fuse TREC run files (one per engine, the file stem names the engine) with any ranker.

Each run is read as trec_eval reads it (score descending, ties by docid descending; the rank column is
ignored), cut to its top ``--depth`` per query, and fused per query with ``fusion.fuse_lists``. An engine the
rankers do not know weighs 1 and belongs to no correlated group; ``--weights FILE`` (``[ranking.weights]``, as
``serpfuse calibrate`` writes it) multiplies the weights of the engines it names. The fused run is printed in
TREC format; equal scores are written in trec_eval's order, so the rank column and the scores agree.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from serpfuse.bench import trec
from serpfuse.cli.errors import fail, fail_on, validation_message
from serpfuse.config import DEFAULT_STRATEGY, RankingConfig
from serpfuse.errors import SerpfuseError
from serpfuse.ranking.rankers import get_ranker


def engine_name(path: Path) -> str:
    return path.stem or path.name


def load_runs(paths: list[Path]) -> dict[str, trec.Run]:
    """engine name -> run; two files with one stem would silently merge two engines, so that is an error."""
    runs: dict[str, trec.Run] = {}
    for path in paths:
        name = engine_name(path)
        if name in runs:
            raise ValueError(f"two runs are named {name!r} (file stems must differ): rename one")
        if not path.is_file():
            raise ValueError(f"run file not found: {path}")
        runs[name] = trec.read_run(path)
    return runs


def fuse_runs(
    runs: dict[str, trec.Run],
    strategy: str,
    depth: int | None = None,
    limit: int | None = None,
    config: RankingConfig | None = None,
) -> dict[str, list[tuple[str, float]]]:
    """qid -> fused (docid, score) best first, at most ``limit`` rows."""
    from serpfuse.ranking.fusion import fuse_lists

    lists = trec.per_query_lists(runs, depth)
    config = (config or RankingConfig()).with_strategy(strategy)
    fused: dict[str, list[tuple[str, float]]] = {}
    for qid in trec.qid_order(lists):
        rows = fuse_lists(lists[qid], strategy=strategy, config=config)
        ordered = trec.order_by_score(rows)  # trec_eval's reading of equal scores
        scores = dict(rows)
        fused[qid] = [(docid, scores[docid]) for docid in ordered][:limit]
    return fused


def register(app: typer.Typer) -> None:
    @app.command("fuse")
    def fuse_command(
        runs: Annotated[
            list[Path], typer.Argument(help="TREC run files, one per engine; the file stem names it")
        ],
        strategy: Annotated[str, typer.Option("--strategy", "-s", help="ranker name")] = DEFAULT_STRATEGY,
        depth: Annotated[
            int | None, typer.Option("--depth", min=1, help="keep each run's top N per query (default: all)")
        ] = None,
        limit: Annotated[int, typer.Option("--limit", "-k", min=1, help="fused rows per query")] = 1000,
        settings: Annotated[
            list[str] | None, typer.Option("--set", help="a ranking knob, section.knob=value (repeatable)")
        ] = None,
        weights: Annotated[
            Path | None,
            typer.Option(
                "--weights", help="engine weights, [ranking.weights] (serpfuse calibrate writes it)"
            ),
        ] = None,
    ) -> None:
        """Fuse ranked lists given as TREC run files and print the fused run in TREC format."""
        from serpfuse.bench.config_specs import config_from
        from serpfuse.settings import read_weights_file

        try:
            get_ranker(strategy)
        except SerpfuseError as exc:
            fail_on(exc)
        tag = trec.check_tag(f"serpfuse-{strategy}")
        try:
            config = config_from(strategy, settings or [])
            if weights is not None:
                config = config.model_copy(update={"weights": read_weights_file(weights)})
            loaded = load_runs(runs)
        except SerpfuseError as exc:
            fail_on(exc)
        except ValidationError as exc:
            fail(validation_message(exc))
        except (ValueError, OSError) as exc:
            fail(str(exc).splitlines()[0])
        fused = fuse_runs(loaded, strategy, depth=depth, limit=limit, config=config)
        lines = trec.run_lines(fused, tag)
        sys.stdout.write("".join(f"{line}\n" for line in lines))
