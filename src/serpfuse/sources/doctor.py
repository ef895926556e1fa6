"""The live canary: run a fixed query set through every engine and say which ones are broken today.

Engines break from outside (a new bot check, a new page layout, a market that answers from the first word), so
a test suite on recorded pages cannot notice. ``check_engines`` asks every engine of a ``LiveSource`` each
query of ``data/doctor_queries.json`` (one query at a time, the engines of a query concurrently, with the
cooldowns and rate limits of a real search), then judges each answer:

- **challenge / rate-limited / timeout / error**: the engine's own status;
- **wrong layout**: the parser refused a 2xx page (the answer is an error, yet an HTTP 2xx came back), or
  fewer than half of the rows have a title;
- **empty**: no rows for a query every general index can answer;
- **off-topic**: fewer than ``OFF_TOPIC_BELOW`` of the rows carry the query's specific terms. Those are the
  key terms of the relevance guard (``filters.relevance.query_terms``, built on ``query.py``'s analysis: no
  function words, no "how"/"best"/years), and a row carries them when it mentions as many as the guard's
  pool gate asks for; CJK queries count the query's character bigrams (at least half). A word-frequency
  specificity measure would be finer; this is the one the pipeline already trusts.

A plain error or timeout does not suspend an engine here (``COOLDOWNS``: no backoff), so one dropped connection
cannot cost an engine its remaining queries; a block does. An engine's status is ``challenge`` or
``rate-limited`` as soon as one query meets it (it is then suspended and the rest are skipped), else ``ok`` when at least half its asked queries are, else its most frequent
failure. A *default primary* (a web engine of the primary tier, usable without further setup) that is not ``ok``
or ``skipped`` makes the report fail: the CLI exits 1.

Also reported per engine: rows, median latency, the share of rows with a title, URL and snippet, the on-topic
share, and overlap (the share of its rows that another engine also returned for the same query).

And how many independent web indexes answered: the correlated groups (Bing, DuckDuckGo and Yahoo are one index)
of the web engines whose status is ``ok``, without those that hold no index of their own (``engines.
NOT_OWN_WEB_INDEX``); per query, the groups with an engine whose answer to it was ``ok``. Five engines of one
index are one opinion, so this is the number that says how broad today's search is. It is counted per tier
(primary, fallback) and per region (global, cjk, both) too: a search leans on its primaries, and a CJK query on
the engines that answer Chinese, Japanese and Korean sources. An engine that answered any query with a decoy list
(``decoy``: rows about another question, which the live source keeps out of fusion) is named, with its queries:
a decoy is no voice, however well-formed its rows.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from serpfuse import data
from serpfuse.config import engine_table
from serpfuse.engines import category_of, web_index_groups
from serpfuse.models import EngineAnswer, EngineRow, SearchRequest
from serpfuse.ranking.filters.relevance import gate_need
from serpfuse.ranking.query import analyze_query
from serpfuse.ranking.words import RowText, found_terms, query_terms
from serpfuse.sources.capped_body import HttpResponse
from serpfuse.sources.live import LiveSource
from serpfuse.state.cooldown import CooldownPolicy, InMemoryCooldownStore
from serpfuse.urls import dedup_key

QUERIES_FILE = "doctor_queries.json"
# Blocks keep their own cooldowns (they name one); plain errors and timeouts back off 0 s.
COOLDOWNS = CooldownPolicy(error_step_s=0.0, error_cap_s=0.0)
OFF_TOPIC_BELOW = 0.3  # on-topic share under which an engine answered another question
MIN_TITLED = 0.5  # share of rows with a title under which the parser is reading the wrong nodes
CJK_SHARE = 0.5  # share of a CJK query's bigrams a row must hold to carry it
SUSPENDING = ("challenge", "rate-limited")  # one is enough: the engine is suspended after it
GOOD = ("ok", "skipped")
KIND_ORDER = ("primary", "fallback", "global", "cjk", "both")  # how the tiers and regions are listed
DECOY = "decoy"  # the live source's status for a list about another question (engines.decoy)


@dataclass(frozen=True)
class DoctorQuery:
    query: str
    language: str | None = None
    kind: str | None = None


def shipped_queries() -> list[DoctorQuery]:
    """The fixed query set shipped with the package."""
    return [
        DoctorQuery(q["query"], q.get("language"), q.get("kind")) for q in data.json(QUERIES_FILE)["queries"]
    ]


def cooldowns() -> InMemoryCooldownStore:
    """The cooldown store a doctor run uses: its own, with ``COOLDOWNS``."""
    return InMemoryCooldownStore(policy=COOLDOWNS)


# --- judging one answer ---------------------------------------------------------------------------------------


def on_topic_share(query: str, rows: list[EngineRow]) -> float | None:
    """The share of rows that carry the query's specific terms; None when the query has none to look for."""
    if not rows:
        return None
    analysis = analyze_query(query)
    key_terms = [t for t in query_terms(analysis) if not t.weak]
    if key_terms:
        need = gate_need(len(key_terms))
        hits = sum(len(found_terms(key_terms, RowText.of(r.title, r.snippet, r.url))) >= need for r in rows)
        return hits / len(rows)
    if analysis.cjk_tokens:
        grams = analysis.cjk_tokens
        hits = sum(sum(g in f"{r.title} {r.snippet}" for g in grams) >= CJK_SHARE * len(grams) for r in rows)
        return hits / len(rows)
    return None


def _share(rows: list[EngineRow], attr: str) -> float | None:
    return sum(bool(getattr(r, attr)) for r in rows) / len(rows) if rows else None


@dataclass
class QueryCheck:
    """One engine's answer to one doctor query, judged."""

    query: str
    verdict: str
    status: str
    rows: int = 0
    latency_ms: float = 0.0
    with_title: float | None = None
    with_url: float | None = None
    with_snippet: float | None = None
    on_topic: float | None = None
    overlap: float | None = None
    reason: str | None = None

    @property
    def asked(self) -> bool:
        return self.verdict != "skipped"

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "status": self.verdict,
            "engineStatus": self.status,
            "rows": self.rows,
            "latencyMs": self.latency_ms,
            "withTitle": _round(self.with_title),
            "withUrl": _round(self.with_url),
            "withSnippet": _round(self.with_snippet),
            "onTopic": _round(self.on_topic),
            "overlap": _round(self.overlap),
            "reason": self.reason,
        }


def judge(answer: EngineAnswer, query: str, last_status: int | None) -> QueryCheck:
    """The verdict on one answer. ``last_status``: the HTTP status of the last response the engine received
    for this query (None when none arrived)."""
    rows = answer.rows
    check = QueryCheck(
        query=query,
        verdict=answer.status,
        status=answer.status,
        rows=len(rows),
        latency_ms=answer.latency_ms,
        with_title=_share(rows, "title"),
        with_url=_share(rows, "url"),
        with_snippet=_share(rows, "snippet"),
        on_topic=on_topic_share(query, rows),
        reason=answer.reason,
    )
    if answer.status == "error" and last_status is not None and 200 <= last_status < 300:
        check.verdict = "wrong layout"
        check.reason = f"the parser refused a {last_status} page: {answer.reason}"
    elif answer.status == "empty":
        check.reason = "no rows"
    elif answer.status == "ok":
        if (check.with_title or 0.0) < MIN_TITLED:
            check.verdict = "wrong layout"
            check.reason = f"only {check.with_title:.0%} of the rows have a title"
        elif check.on_topic is not None and check.on_topic < OFF_TOPIC_BELOW:
            check.verdict = "off-topic"
            check.reason = f"only {check.on_topic:.0%} of the rows carry the query's terms"
    return check


def add_overlap(checks: dict[str, QueryCheck], answers: dict[str, EngineAnswer]) -> None:
    """Each engine's overlap for one query: the share of its rows another engine also returned."""
    keys = {name: {dedup_key(r.url) for r in answer.rows} for name, answer in answers.items()}
    for name, mine in keys.items():
        others = (
            set().union(*(k for other, k in keys.items() if other != name and k)) if len(keys) > 1 else set()
        )
        if mine and others:
            checks[name].overlap = len(mine & others) / len(mine)


# --- one engine over the query set ----------------------------------------------------------------------------


@dataclass
class EngineCheck:
    engine: str
    tier: str
    group: str | None
    default_primary: bool
    region: str = "both"  # whose sources it answers (EngineInfo.region): global, cjk or both
    checks: list[QueryCheck] = field(default_factory=list)

    @property
    def asked(self) -> list[QueryCheck]:
        return [c for c in self.checks if c.asked]

    @property
    def status(self) -> str:
        for check in self.checks:
            if check.verdict in SUSPENDING:
                return check.verdict
        asked = self.asked
        if not asked:
            return "skipped"
        if 2 * sum(c.verdict == "ok" for c in asked) >= len(asked):
            return "ok"
        return Counter(c.verdict for c in asked if c.verdict != "ok").most_common(1)[0][0]

    @property
    def reason(self) -> str | None:
        status = self.status
        if status == "ok":
            return None
        for check in self.checks:
            if check.verdict == status:
                return f"{check.query!r}: {check.reason}" if check.asked else check.reason
        return None

    @property
    def broken(self) -> bool:
        return self.default_primary and self.status not in GOOD

    @property
    def decoys(self) -> list[QueryCheck]:
        """The queries it answered with a decoy list (rows about another question, kept out of fusion)."""
        return [c for c in self.checks if c.verdict == DECOY]

    def _mean(self, attr: str) -> float | None:
        values = [getattr(c, attr) for c in self.asked if getattr(c, attr) is not None]
        return statistics.fmean(values) if values else None

    def to_json(self) -> dict[str, Any]:
        asked = self.asked
        return {
            "engine": self.engine,
            "tier": self.tier,
            "group": self.group,
            "defaultPrimary": self.default_primary,
            "region": self.region,
            "status": self.status,
            "broken": self.broken,
            "reason": self.reason,
            "queriesAsked": len(asked),
            "queriesOk": sum(c.verdict == "ok" for c in asked),
            "rows": _round(statistics.fmean([c.rows for c in asked])) if asked else None,
            "latencyMs": _round(statistics.median([c.latency_ms for c in asked])) if asked else None,
            "withTitle": _round(self._mean("with_title")),
            "withUrl": _round(self._mean("with_url")),
            "withSnippet": _round(self._mean("with_snippet")),
            "onTopic": _round(self._mean("on_topic")),
            "overlap": _round(self._mean("overlap")),
            "queries": [c.to_json() for c in self.checks],
        }


@dataclass
class DoctorReport:
    engines: list[EngineCheck]
    queries: list[DoctorQuery]
    checked_at: str
    # No engine could be reached on the first query, so the others were not asked.
    offline: bool = False

    @property
    def broken(self) -> list[str]:
        return [e.engine for e in self.engines if e.broken]

    @property
    def ok(self) -> bool:
        return not self.broken

    def _indexes(self, engines: list[EngineCheck]) -> list[str]:
        return sorted(
            web_index_groups([e.engine for e in engines], {e.engine: e.group or e.engine for e in engines})
        )

    @property
    def indexes_answered(self) -> list[str]:
        """The independent web indexes with an engine whose status is ``ok``: groups, not engines."""
        return self._indexes([e for e in self.engines if e.status == "ok"])

    def indexes_for(self, query: str) -> list[str]:
        """The independent web indexes with an engine whose answer to ``query`` was ``ok``."""
        answered = [e for e in self.engines if any(c.query == query and c.verdict == "ok" for c in e.checks)]
        return self._indexes(answered)

    def indexes_by(self, attr: str) -> dict[str, list[str]]:
        """``indexes_answered`` per tier (``attr="tier"``: primary, fallback) or region (``"region"``: global,
        cjk, both): the groups each kind of engine answered for. Every kind asked is listed, with none too."""
        asked = {getattr(e, attr) for e in self.engines if category_of(e.engine) == "general"}
        kinds = sorted(asked, key=lambda k: (KIND_ORDER.index(k) if k in KIND_ORDER else len(KIND_ORDER), k))
        ok = [e for e in self.engines if e.status == "ok"]
        return {kind: self._indexes([e for e in ok if getattr(e, attr) == kind]) for kind in kinds}

    @property
    def decoys(self) -> list[EngineCheck]:
        """The engines that answered any query with a decoy list: named, whatever their overall status."""
        return [e for e in self.engines if e.decoys]

    def to_json(self) -> dict[str, Any]:
        indexes = self.indexes_answered
        return {
            "ok": self.ok,
            "brokenPrimaries": self.broken,
            "checkedAt": self.checked_at,
            "offline": self.offline,
            "independentIndexes": {
                "answered": len(indexes),
                "groups": indexes,
                **{
                    f"by{attr.capitalize()}": {
                        kind: {"answered": len(groups), "groups": groups}
                        for kind, groups in self.indexes_by(attr).items()
                    }
                    for attr in ("tier", "region")
                },
            },
            "decoys": [
                {
                    "engine": e.engine,
                    "group": e.group,
                    "queries": [c.query for c in e.decoys],
                    "queriesAsked": len(e.asked),
                    "reason": e.decoys[0].reason,
                }
                for e in self.decoys
            ],
            "queries": [
                {
                    "query": q.query,
                    "language": q.language,
                    "kind": q.kind,
                    "independentIndexes": len(self.indexes_for(q.query)),
                    "decoys": [e.engine for e in self.engines if any(c.query == q.query for c in e.decoys)],
                }
                for q in self.queries
            ],
            "engines": [e.to_json() for e in self.engines],
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


# --- running it -----------------------------------------------------------------------------------------------


async def check_engines(
    source: LiveSource,
    queries: list[DoctorQuery],
    groups: dict[str, str] | None = None,
    on_query: Callable[[int, DoctorQuery, dict[str, QueryCheck]], None] | None = None,
) -> DoctorReport:
    """Ask every engine of ``source`` each query and judge the answers (see the module docstring). ``groups``:
    the correlated-engine groups (default: data/engine_weights.json's). ``on_query`` hears of each query once
    every engine has answered it (its 1-based number and the checks)."""
    groups = engine_table()["groups"] if groups is None else groups
    # The HTTP status of the last response each (engine, query) received: tells a refused page from a dead link.
    last_status: dict[tuple[str, str], int] = {}
    previous_hook = source.on_response

    def seen(engine: str, variant: str, response: HttpResponse) -> None:
        last_status[(engine, variant)] = response.status
        if previous_hook is not None:
            previous_hook(engine, variant, response)

    probe = SearchRequest(query="serpfuse doctor")
    reports = {
        slot.name: EngineCheck(
            engine=slot.name,
            tier=slot.tier,
            region=slot.region,
            group=groups.get(slot.name, slot.name),
            # A news engine is checked too, but cannot fail the check: evergreen queries may have no news.
            default_primary=slot.tier == "primary" and slot.available and category_of(slot.name) == "general",
        )
        for slot in source.slots(probe)
    }
    source.on_response = seen
    offline = False
    try:
        for number, item in enumerate(queries, start=1):
            request = SearchRequest(query=item.query, language=item.language)
            names = list(reports)
            answers = await asyncio.gather(*(source.ask(name, item.query, request) for name in names))
            by_name = dict(zip(names, answers, strict=True))
            checks = {
                name: judge(a, item.query, last_status.get((name, item.query))) for name, a in by_name.items()
            }
            add_overlap(checks, {n: a for n, a in by_name.items() if checks[n].asked})
            for name, check in checks.items():
                reports[name].checks.append(check)
            if on_query is not None:
                on_query(number, item, checks)
            if number == 1 and _unreachable(checks, last_status, item.query):
                # Every engine failed before any answer came back: the machine is offline (or its proxy is
                # dead). The other queries would only repeat that, one timeout each.
                queries = queries[:1]
                offline = True
                break
    finally:
        source.on_response = previous_hook
    return DoctorReport(
        engines=list(reports.values()),
        queries=list(queries),
        checked_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        offline=offline,
    )


def _unreachable(checks: dict[str, QueryCheck], last_status: dict[tuple[str, str], int], query: str) -> bool:
    """No engine that was asked received any HTTP response, and none answered."""
    asked = [(name, c) for name, c in checks.items() if c.asked]
    return bool(asked) and all(
        c.verdict in ("error", "timeout") and (name, query) not in last_status for name, c in asked
    )
