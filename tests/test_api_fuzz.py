"""Schemathesis over /openapi.json inside `make test`: a fixed, small budget (the long run is
``python tests/fuzz_api.py --max-examples 100``, quoted in BENCHMARKS.md). No generated request may get a
5xx: the checks say so, and so does the server's own count in /metrics. Every route is fuzzed, the read routes
too: their pages come from a loopback page server, so nothing is sent beyond 127.0.0.1."""

from __future__ import annotations

import pytest

from conftest import need
from fuzz_api import SCHEMATHESIS, fuzz
from serpfuse.serve.openapi import openapi_document
from serpfuse.settings import Settings


def test_no_generated_request_gets_a_server_error(data_dir, tmp_path):
    if not SCHEMATHESIS.exists():
        pytest.skip("schemathesis is not installed (pip install -e '.[dev]')")
    run = fuzz(
        need(data_dir / "crw56" / "searxng_raw.json"), tmp_path, max_examples=30, phases="examples,fuzzing"
    )
    assert run.cases >= 100, run.output[-2000:]
    assert run.returncode == 0 and run.failures == 0, run.output[-3000:]
    assert run.server_errors == 0
    # every route the document lists was fuzzed, the read routes included (labels: guard.Guard's routes)
    assert all(
        run.requests.get(route, 0) > 0 for route in ("native", "searxng", "tavily", "read", "firecrawl")
    )
    operations = sum(len(ops) for ops in openapi_document(Settings())["paths"].values())
    assert f"{operations} selected / {operations} total" in run.output, run.output[:2000]  # every one of them
