"""Schemathesis over the HTTP API's own /openapi.json, against a real HTTP API process on loopback
(``fuzz_app.py``: replay, so no engine is asked, and a page reader that reaches only a loopback page server):
every generated request, to every route the document lists, must get an answer below 500.

``python tests/fuzz_api.py --max-examples 100`` is the long run BENCHMARKS.md quotes (about 2,000+ cases);
``tests/test_api_fuzz.py`` runs a fixed small budget inside ``make test``. Prints the cases schemathesis ran
and the server's own count of 5xx answers (from /metrics).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from redis_server import start_serpfuse, stop  # noqa: E402

SCHEMATHESIS = Path(sys.executable).parent / "st"
APP = HERE / "fuzz_app.py"


@dataclass
class FuzzRun:
    cases: int
    failures: int
    server_errors: int  # responses >= 500, as the server counted them
    requests: dict[str, int]  # route label -> requests the server answered
    returncode: int
    output: str


def fuzz(
    recording: Path, home: Path, *, max_examples: int, phases: str | None = None, seed: int = 1
) -> FuzzRun:
    env = {"SERPFUSE_RATE_LIMIT_BURST": "1000000", "SERPFUSE_CACHE": "off"}
    server = start_serpfuse(home, ["--replay", str(recording)], env=env, command=(), program=(str(APP),))
    try:
        cmd = [str(SCHEMATHESIS), "run", f"{server.base}/openapi.json", "-n", str(max_examples)]
        cmd += ["-c", "not_a_server_error", "--seed", str(seed), "--no-color"]
        cmd += ["--phases", phases] if phases else []
        # In the server's home: schemathesis keeps a cache (.schemathesis/) in its working directory.
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, cwd=home)
        metrics = server.get("/metrics")[2].decode()
    finally:
        stop(server.proc)
    output = done.stdout + done.stderr
    m = re.search(r"(\d+) generated, (\d+) passed(?:, (\d+) failed)?", output)
    cases, failures = (int(m.group(1)), int(m.group(3) or 0)) if m else (0, -1)
    counted = re.findall(r"^serpfuse_http_requests_total\{([^}]*)\} (\S+)", metrics, re.M)
    errors, requests = 0, {}
    for labels, value in counted:
        route, status = re.search(r'route="([^"]*)"', labels), re.search(r'status="(\d+)"', labels)
        if route and status:
            requests[route[1]] = requests.get(route[1], 0) + int(float(value))
            errors += int(float(value)) if status[1].startswith("5") else 0
    return FuzzRun(cases, failures, errors, requests, done.returncode, output)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-examples", type=int, default=100)
    parser.add_argument(
        "--seed", type=int, default=1, help="schemathesis' seed: runs with other seeds add cases"
    )
    parser.add_argument(
        "--recording", type=Path, default=HERE.parent.parent / "shared/data/crw56/searxng_raw.json"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run = fuzz(args.recording, Path(tmp), max_examples=args.max_examples, seed=args.seed)
    print(
        f"schemathesis cases: {run.cases}; failed checks: {run.failures}; server 5xx answers: {run.server_errors}"
    )
    sys.exit(0 if run.returncode == 0 and run.server_errors == 0 else 1)


if __name__ == "__main__":
    main()
