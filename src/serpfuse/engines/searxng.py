"""A self-hosted SearXNG instance, read through its JSON API (keyless; needs a base URL).

GET {base_url}/search?q=...&format=json[&time_range=day|week|month|year][&language=..]. JSON must be enabled
in the instance's ``search.formats``; otherwise SearXNG answers 403.

SearXNG has already merged its engines' lists. Each result carries ``engines`` (a set, in no useful order) and
``positions`` (one per sighting, the first belonging to ``engine``). We split them back into one row per
(result, underlying engine) named ``searxng:<engine>``, so fusion counts SearXNG's engines as separate voters.
Which of the other positions belongs to which engine is not recorded, so it is solved for: every engine's
positions must be distinct across the whole answer (each engine lists a URL at one position). When that
constraint cannot settle it within a small budget, the leftover pairs follow the listed order. The budget
bounds the work before anything is enumerated: a result names at most ``MAX_SIGHTINGS`` engines, offers at
most ``MAX_PAIRINGS`` pairings (10 engines have 3.6 million), and an answer is read up to ``MAX_ITEMS`` results.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping
from typing import Any

from serpfuse.engines.base import (
    BODY_HEAD_BYTES,
    AccessDenied,
    ChallengeDetected,
    EngineError,
    EngineInfo,
    EngineQuery,
    ParseFailure,
    RequestSpec,
    classify_http,
)
from serpfuse.engines.bodies import json_body
from serpfuse.engines.bounds import MAX_ITEMS
from serpfuse.engines.dates import parse_published
from serpfuse.engines.locale import split_locale
from serpfuse.engines.rows import make_row
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="searxng",
    website="https://docs.searxng.org",
    tier="primary",
    region="both",
    kind="json",
    needs_key=False,
    needs_base_url=True,
    base_url_envs=("SERPFUSE_SEARXNG_URL",),
    time_range_support=True,
    rows_per_request=30,
)

SEARCH_PATH = "/search"
PREFIX = "searxng:"
JSON_DISABLED = (
    "SearXNG refused JSON (HTTP 403): enable it on the instance by adding `json` to search.formats"
    " in settings.yml"
)
SOLVER_BUDGET = 20_000  # backtracking steps before falling back to the listed order
MAX_PAIRINGS = 120  # pairings tried per result (all of 5 engines'); the listed order is always the first
MAX_SIGHTINGS = 32  # engines (and positions) read per result; SearXNG's own merge rarely passes 10

Pairs = tuple[tuple[str, int], ...]


def base_url(q: EngineQuery) -> str | None:
    for value in (q.base_url, *(os.environ.get(name) for name in INFO.base_url_envs)):
        if value and value.strip():
            return value.strip().rstrip("/")
    return None


def build_request(q: EngineQuery) -> RequestSpec | None:
    base = base_url(q)
    if base is None or q.date_from or q.date_to:
        return None
    params = {"q": q.text, "format": "json"}
    if q.time_range:
        params["time_range"] = q.time_range
    country, lang = split_locale(q.region, q.language)
    if lang:
        params["language"] = f"{lang}-{country.upper()}" if country else lang
    return RequestSpec(method="GET", url=base + SEARCH_PATH, params=params)


def classify(status: int, headers: Mapping[str, str], body_head: bytes) -> EngineError | None:
    """The central mapper, except that a plain 403 from SearXNG means JSON output is switched off."""
    error = classify_http(status, headers, body_head)
    if status == 403 and not isinstance(error, ChallengeDetected):
        return AccessDenied(JSON_DISABLED)
    return error


# --- splitting merged results back into per-engine sightings ------------------------------------------------


def _candidates(engine: Any, engines: list[str], positions: list[int]) -> list[Pairs]:
    """Every plausible pairing of one result's engines with its positions, best guess first."""
    engines, positions = engines[:MAX_SIGHTINGS], positions[:MAX_SIGHTINGS]
    if not engines or not positions:
        return [()]
    if len(set(engines)) == 1:
        return [tuple((engines[0], p) for p in positions)]
    first = engine if engine in engines else None
    rest_engines = [e for e in engines if e != first] if first else list(engines)
    rest_positions = positions[1:] if first else list(positions)
    head: Pairs = ((first, positions[0]),) if first else ()
    if len(rest_engines) != len(rest_positions):
        # An engine listed the URL twice, or SearXNG dropped a sighting: no exact pairing exists.
        return [head + tuple(zip(rest_engines, rest_positions, strict=False))]
    seen: set[Pairs] = set()
    out: list[Pairs] = []
    for perm in itertools.islice(itertools.permutations(rest_positions), MAX_PAIRINGS):
        pairs = head + tuple(zip(rest_engines, perm, strict=True))
        key = tuple(sorted(pairs))
        if key not in seen:
            seen.add(key)
            out.append(pairs)
    return out


def assign_positions(results: list[dict]) -> list[Pairs]:
    """For each result, its (engine, position) pairs, such that no engine holds one position twice."""
    options = [_candidates(r.get("engine"), _engines(r), _positions(r)) for r in results]
    order = sorted(range(len(options)), key=lambda i: len(options[i]))  # forced rows first
    chosen: list[Pairs | None] = [None] * len(options)
    used: set[tuple[str, int]] = set()
    steps = 0

    def solve(k: int) -> bool:
        nonlocal steps
        if k == len(order):
            return True
        i = order[k]
        for pairs in options[i]:
            steps += 1
            if steps > SOLVER_BUDGET:
                return False
            if len(options[i]) > 1 and any(p in used for p in pairs):
                continue
            chosen[i] = pairs
            added = [p for p in pairs if p not in used]
            used.update(added)
            if solve(k + 1):
                return True
            used.difference_update(added)
        chosen[i] = None
        return False

    if solve(0):
        return [c or () for c in chosen]
    return [opts[0] for opts in options]


def _engines(result: dict) -> list[str]:
    raw = result.get("engines")
    return [e for e in raw[:MAX_SIGHTINGS] if isinstance(e, str)] if isinstance(raw, list) else []


def _positions(result: dict) -> list[int]:
    raw = result.get("positions")
    if not isinstance(raw, list):
        return []
    return [p for p in raw[:MAX_SIGHTINGS] if isinstance(p, int) and not isinstance(p, bool) and p >= 1]


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    error = classify(status, headers, body[:BODY_HEAD_BYTES])
    if error is not None:
        raise error
    data = json_body(body)
    results = data.get("results") if isinstance(data, dict) else None
    if not isinstance(results, list):
        raise ParseFailure("SearXNG: no result list in the response")
    usable = [r for r in results[:MAX_ITEMS] if isinstance(r, dict)]
    rows: list[EngineRow] = []
    for result, pairs in zip(usable, assign_positions(usable), strict=True):
        published = parse_published(result.get("publishedDate"))
        for engine, position in pairs:
            row = make_row(
                PREFIX + engine,
                position,
                result.get("url"),
                result.get("title"),
                result.get("content"),
                published,
                markup=False,
            )
            if row:
                rows.append(row)
    rows.sort(key=lambda r: (r.engine, r.rank))
    return rows
