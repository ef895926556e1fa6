"""The ranking output on the whole crw56 recording, as digests: every strategy, and the default one under a date
window, another language, a longer list and one site, each with its explanations (``--explain``) included.

A speed-up must leave every digest as it is (tests/test_fast_paths.py). A change that is meant to change the
ranking rewrites them, and says so in its commit:

    SERPFUSE_DATA=../shared/data .venv/bin/python tests/ranking_snapshot.py
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from serpfuse.config import RankingConfig
from serpfuse.models import SearchRequest
from serpfuse.pipeline import rank_answers
from serpfuse.ranking.query import analyze_query
from serpfuse.ranking.rankers import available
from serpfuse.sources.fanout import fan_out
from serpfuse.sources.replay import ReplaySource

STORED = Path(__file__).parent / "fixtures" / "ranking" / "crw56_responses.json"
NOW = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
# Beside every strategy, the default one where other code paths run: the date window, the language gate,
# a list past the usual eight, a single site.
EXTRA_REQUESTS: dict[str, dict[str, Any]] = {
    "time_range=year": {"time_range": "year"},
    "language=fr": {"language": "fr"},
    "limit=20": {"limit": 20},
    "site=wikipedia.org": {"include_domains": ["wikipedia.org"]},
}


def requests() -> dict[str, dict[str, Any]]:
    """Label -> the request fields beside the query."""
    return {f"strategy={s}": {"strategy": s} for s in available()} | EXTRA_REQUESTS


def _rounded(value: Any) -> Any:
    # Twelve significant digits: the last bits of a logarithm may differ between C libraries, a ranking
    # change does not hide there.
    if isinstance(value, float):
        return float(f"{value:.12g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


# Not ranking output: the time taken, and the configuration's fingerprint (a new knob at its old value changes
# the fingerprint, not the ranking; tests/test_settings.py checks the fingerprint itself).
UNPINNED = {"tookMs", "configFingerprint"}


def digest(response: dict[str, Any]) -> str:
    response = {k: v for k, v in response.items() if k not in UNPINNED}
    text = json.dumps(_rounded(response), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def responses(recording: Path) -> dict[str, list[dict[str, Any]]]:
    """Label -> the response to each recorded query, in the recording's order (explanations included)."""
    source = ReplaySource(recording)
    config = RankingConfig()
    queries = [e["query"] for e in json.loads(recording.read_text(encoding="utf-8"))]

    async def run() -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for label, fields in requests().items():
            for q in queries:
                request = SearchRequest(query=q, **fields)
                query = analyze_query(request.query)
                answers = (await fan_out(source, request, query)).answers
                response = rank_answers(answers, request, config=config, query=query, now=NOW, explain=True)
                out.setdefault(label, []).append(response.to_json_dict())
        return out

    return asyncio.run(run())


def digests(recording: Path) -> dict[str, list[str]]:
    return {label: [digest(r) for r in rs] for label, rs in responses(recording).items()}


def stored() -> dict[str, list[str]]:
    return json.loads(STORED.read_text(encoding="utf-8"))["digests"]


def main() -> None:
    data = Path(os.environ.get("SERPFUSE_DATA", "../shared/data"))
    recording = data / "crw56" / "searxng_raw.json"
    STORED.parent.mkdir(parents=True, exist_ok=True)
    body = {"recording": "crw56/searxng_raw.json", "now": NOW.isoformat(), "digests": digests(recording)}
    STORED.write_text(json.dumps(body, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {STORED}", file=sys.stderr)


if __name__ == "__main__":
    main()
