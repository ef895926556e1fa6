"""The pool a person judges: each recorded query's rows, one per canonical URL, in a blind order."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from serpfuse.bench.judged_recording import RecordedRow, recorded_rows
from serpfuse.urls import dedup_key

SALT = "serpfuse-judge/1"  # part of every query's seed: changing it reshuffles every pool


@dataclass(frozen=True)
class PoolRow:
    key: str  # urls.dedup_key of the URL: what bench and calibrate match a judgment by
    url: str  # the first URL an engine gave for it; the judgment is written with this one
    title: str
    snippet: str


@dataclass(frozen=True)
class PoolQuery:
    query: str  # as recorded
    rows: tuple[PoolRow, ...]  # in the blind order


def pooled(rows: Iterable[RecordedRow]) -> list[PoolRow]:
    """One row per dedup key: the first URL seen, the first title and the longest snippet any engine gave."""
    merged: dict[str, PoolRow] = {}
    for row in rows:
        key = dedup_key(row.url)
        seen = merged.get(key)
        if seen is None:
            merged[key] = PoolRow(key, row.url, row.title.strip(), row.snippet.strip())
            continue
        title = seen.title or row.title.strip()
        snippet = max(seen.snippet, row.snippet.strip(), key=len)
        merged[key] = PoolRow(key, seen.url, title, snippet)
    return list(merged.values())


def blind_order(query: str, rows: Iterable[PoolRow]) -> tuple[PoolRow, ...]:
    """The rows in a random order that depends only on the query's text and the set of rows: sorted by key
    (so the recording's order, an engine's ranking, leaves no trace), then shuffled under a seed of the query."""
    from serpfuse.sources.replay import normalise_query

    ordered = sorted(rows, key=lambda r: r.key)
    digest = hashlib.sha256(f"{SALT}\n{normalise_query(query)}".encode()).digest()
    random.Random(int.from_bytes(digest[:8], "big")).shuffle(ordered)
    return tuple(ordered)


def load_pool(recording: str | Path) -> list[PoolQuery]:
    """Every recorded query that has rows, in the recording's order. A bad recording raises ``JudgmentsError``."""
    queries, _ = recorded_rows(recording)
    out = []
    for text, rows in queries.values():
        pool = pooled(rows)
        if pool:
            out.append(PoolQuery(text, blind_order(text, pool)))
    return out
