"""The built wheel ships what a user runs on their own data, and none of the research corpora or experiments."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# what serpfuse.bench ships: metrics, TREC I/O, bootstrap, sweep, configurations, reports, the judged recording,
# engine weights calibrated on a user's own judgments
PACKAGE_BENCH = {
    "__init__.py",
    "bootstrap.py",
    # bench/calibrate/, a package: the problem, the fit, the validation and the files
    "problem.py",
    "fit.py",
    "validate.py",
    "io.py",
    "config_specs.py",
    "judged_recording.py",
    "metrics.py",
    "modes.py",
    "report.py",
    "sweep.py",
    "trec.py",
}


@pytest.fixture(scope="module")
def wheel_files(tmp_path_factory) -> list[str]:
    """Build the wheel from a copy of the work tree (so the build leaves nothing behind) and list its files."""
    tmp = tmp_path_factory.mktemp("wheel")
    tree = tmp / "tree"
    ignore = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache")
    shutil.copytree(REPO, tree, ignore=ignore)
    out = tmp / "dist"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            ".",
        ],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode != 0 and "No module named pip" in proc.stderr:
        pytest.skip("no pip in this interpreter")
    assert proc.returncode == 0, proc.stderr
    (wheel,) = out.glob("serpfuse-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


@pytest.mark.slow
def test_the_wheel_holds_no_corpus_loader_or_experiment(wheel_files: list[str]) -> None:
    tops = {name.split("/", 1)[0] for name in wheel_files}
    assert "benchmarks" not in tops
    assert {t for t in tops if not t.endswith(".dist-info")} == {"serpfuse"}
    # the corpus loaders and experiments by name (the command-line and table plumbing has generic names)
    plumbing = {"__init__.py", "__main__.py", "cli.py", "runner.py", "setups.py", "tables.py"}
    research = {p.name for p in (REPO / "benchmarks").glob("*.py")} - plumbing
    assert {"crw56.py", "mq2008.py", "robustness.py", "perf.py"} <= research
    shipped = {Path(name).name for name in wheel_files if name.endswith(".py")}
    assert not research & shipped, f"research modules in the wheel: {sorted(research & shipped)}"
    bench = {Path(n).name for n in wheel_files if n.startswith("serpfuse/bench/")}
    assert bench == PACKAGE_BENCH


@pytest.mark.slow
def test_the_wheel_still_has_the_bench_a_user_runs(wheel_files: list[str]) -> None:
    assert "serpfuse/cli/bench.py" in wheel_files and "serpfuse/bench/trec.py" in wheel_files


@pytest.mark.slow
def test_the_wheel_has_the_judging_page_with_its_template_script_and_style(wheel_files: list[str]) -> None:
    judge = {n.removeprefix("serpfuse/judge/") for n in wheel_files if n.startswith("serpfuse/judge/")}
    assert {
        "pool.py",
        "store.py",
        "app.py",
        "templates/judge.html",
        "static/judge.js",
        "static/judge.css",
    } <= judge
    assert "serpfuse/cli/judge.py" in wheel_files
