"""`serpfuse calibrate`: learn one weight per engine for the default fusion (CombMNZ) from judged queries.

    serpfuse calibrate RUN... --qrels QRELS [--depth N] [-o weights.toml]    # TREC runs, one per engine (stem)
    serpfuse calibrate --replay REC.json --qrels JUDGED.jsonl [-o weights.toml]
    serpfuse calibrate ... --strategy consensus                             # consensus-v2.1's weights instead

Judgments are TREC qrels (``qid 0 docid rel``) or JSON Lines (``{"query", "url", "rel"}``). With runs, a JSON Lines
``query`` is the qid and ``url`` the docid; with a recording, a TREC qid is the 0-based position of the query in
it. The weights are written as a settings file's ``[ranking.weights]`` (each with its bootstrap interval as a
comment): use it with ``serpfuse fuse --weights``, ``serpfuse search --weights``, or put the table in the
settings file for the HTTP API and the MCP server (with ``--strategy consensus``: the same with ``--strategy
consensus``, and ``strategy = "consensus"`` in the settings). How they are fitted: ``serpfuse.bench.calibrate``.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from serpfuse.cli.errors import fail, fail_on
from serpfuse.config import DEFAULT_STRATEGY
from serpfuse.errors import SerpfuseError
from serpfuse.files import write_private


def register(app: typer.Typer) -> None:
    @app.command("calibrate")
    def calibrate_command(
        runs: Annotated[
            list[Path] | None,
            typer.Argument(help="TREC run files, one per engine; the file stem names it (or --replay)"),
        ] = None,
        qrels: Annotated[
            Path | None,
            typer.Option("--qrels", help='judgments: TREC qrels, or JSON Lines {"query", "url", "rel"}'),
        ] = None,
        replay: Annotated[
            Path | None,
            typer.Option("--replay", help="a recording (serpfuse record's or a SearXNG JSON list)"),
        ] = None,
        depth: Annotated[
            int | None,
            typer.Option("--depth", min=1, help="keep each run's top N per query, as fuse --depth"),
        ] = None,
        output: Annotated[
            Path | None, typer.Option("--output", "-o", help="write the weights here (default: print them)")
        ] = None,
        strategy: Annotated[
            str,
            typer.Option("--strategy", "-s", help="the fusion to fit: combmnz, consensus or adaptive"),
        ] = DEFAULT_STRATEGY,
        folds: Annotated[int, typer.Option("--folds", min=2, help="cross-validation folds")] = 3,
        resamples: Annotated[
            int, typer.Option("--resamples", min=0, help="bootstrap refits for each weight's interval")
        ] = 20,
        as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
    ) -> None:
        """Learn engine weights for the default fusion from judged queries; print or write them as TOML."""
        from serpfuse.bench import calibrate as cal
        from serpfuse.cli.fuse import load_runs
        from serpfuse.config import RankingConfig

        if qrels is None:
            fail("--qrels is required: the judgments to learn from")
        if bool(runs) == (replay is not None):
            fail("give either TREC run files or --replay RECORDING, not both and not neither")
        if replay is not None and depth is not None:
            fail("--depth applies to run files, not to a recording")
        if strategy not in cal.STRATEGIES:
            fail(f"calibrate fits the weights of {', '.join(cal.STRATEGIES)}, not {strategy!r}")
        config = RankingConfig(strategy=strategy)
        try:
            if replay is not None:
                now = dt.datetime.now(dt.UTC)
                problem, notes = cal.problem_from_recording(replay, qrels, config=config, now=now)
            else:
                loaded = load_runs(runs or [])
                problem, notes = cal.problem_from_runs(
                    loaded, cal.read_run_qrels(qrels), depth, config=config
                )
            result = cal.calibrate(problem, folds=folds, resamples=resamples)
        except SerpfuseError as exc:  # CalibrationError and TrecFormatError among them: one line each
            fail_on(exc)
        except (ValueError, OSError) as exc:
            fail(str(exc).splitlines()[0])
        result.notes.extend(notes)
        text = result.toml()
        if output is not None:
            try:
                write_private(output, text)
            except OSError as exc:
                fail(f"cannot write {output}: {exc.strerror}")
        if as_json:
            payload = result.to_json()
            payload["output"] = str(output) if output is not None else None
            sys.stdout.write(json.dumps(payload, indent=2) + "\n")
        elif output is None:
            sys.stdout.write(text)
        else:
            for line in result.summary_lines():
                print(line)
            width = max(len(e) for e in result.weights)
            for engine, weight in result.weights.items():
                low, high = result.intervals[engine]
                print(f"  {engine:<{width}}  {weight:7.4f}  [{low:.4f}, {high:.4f}]")
            print(f"written to {output}")
