"""Normalise: turn every engine's rows into candidates, one per page (dedup key), with full provenance.

Metadata is chosen deterministically (query-term match, then provider rank, then text order), never by which
engine answered first or by which text is longest; conflicting publication dates are reported as conflicting.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence

from serpfuse.models import DateStatus, EngineAnswer, EngineRow, Observation
from serpfuse.ranking.query import QueryAnalysis
from serpfuse.ranking.types import Candidate
from serpfuse.text import cjk_bigrams, clean_text, word_set
from serpfuse.urls import canonical_url, host_of, key_of_canonical, registrable_domain


def _match_share(text: str, query: QueryAnalysis, terms: frozenset[str] | None = None) -> float:
    """Share of the query's terms (``terms``: worked out once per search) that ``text`` has."""
    terms = _terms_of(query) if terms is None else terms
    if not terms:
        return 0.0
    tokens = word_set(text)
    if query.cjk_tokens:  # the query's terms are ASCII words otherwise: no bigram could match one
        tokens = tokens | set(cjk_bigrams(text))
    return len(terms & tokens) / len(terms)


def _terms_of(query: QueryAnalysis) -> frozenset[str]:
    return frozenset(query.terms) | frozenset(query.cjk_tokens)


def merge_dates(dates: Iterable[dt.datetime | None]) -> tuple[dt.datetime | None, DateStatus]:
    """One date for a page: known when every engine that dated it agrees on the day, else conflicting."""
    known = [d for d in dates if d is not None]
    if not known:
        return None, "unknown"
    days = {d.date() for d in known}
    if len(days) > 1:
        return None, "conflicting"
    return min(known), "known"


def fold_engine_names(answers: Iterable[EngineAnswer], cap: int) -> list[EngineAnswer]:
    """The answers, where one whose rows name more than ``cap`` engines (a broker such as SearXNG splits its
    rows by the engines behind it) keeps the ``cap`` names it ranks best and folds the rest into one voter,
    ``<engine>:other``: an answer cannot bring voters without bound, and agreement costs grow with voters."""
    out = []
    for answer in answers:
        best: dict[str, int] = {}
        for row in answer.rows:
            best[row.engine] = min(row.rank, best.get(row.engine, row.rank))
        if len(best) <= cap:
            out.append(answer)
            continue
        kept = set(sorted(best, key=lambda name: (best[name], name))[:cap])
        rows: list[EngineRow] = []
        folded: dict[
            str, EngineRow
        ] = {}  # the folded voter's best-ranked row per URL: one voter sees a page once
        for row in answer.rows:
            if row.engine in kept:
                rows.append(row)
            elif row.url not in folded or row.rank < folded[row.url].rank:
                folded[row.url] = row
        other = f"{answer.engine}:other"
        rows += [row.model_copy(update={"engine": other}) for row in folded.values()]
        out.append(answer.model_copy(update={"rows": rows}))
    return out


def build_candidates(answers: Iterable[EngineAnswer], query: QueryAnalysis) -> tuple[list[Candidate], int]:
    """Merge all rows by dedup key. Returns the candidates (in first-seen order) and the number of unusable rows."""
    groups: dict[str, list[tuple[EngineRow, str]]] = {}
    invalid = 0
    for answer in answers:
        for row in answer.rows:
            url = canonical_url(row.url)
            if url is None:
                invalid += 1
                continue
            groups.setdefault(key_of_canonical(url), []).append((row, url))
    terms = _terms_of(query)
    return [_merge(key, rows, query, terms) for key, rows in groups.items()], invalid


def _merge(
    key: str, rows: list[tuple[EngineRow, str]], query: QueryAnalysis, terms: frozenset[str]
) -> Candidate:
    observations = [
        Observation(
            engine=row.engine,
            rank=row.rank,
            variant=row.variant,
            url=row.url,
            title=clean_text(row.title),
            snippet=clean_text(row.snippet),
            published=row.published,
        )
        for row, _ in rows
    ]
    observations.sort(key=lambda o: (o.engine, o.rank, o.variant, o.url))
    engine_ranks: dict[str, int] = {}
    for o in observations:
        engine_ranks[o.engine] = min(o.rank, engine_ranks.get(o.engine, o.rank))

    # Display URL: prefer https, then the best-ranked sighting; deterministic whatever the arrival order.
    urls = sorted({(not u.startswith("https://"), row.rank, u) for row, u in rows})
    url = urls[0][2]

    def best(field: str) -> str:
        texts = [(o, getattr(o, field)) for o in observations if getattr(o, field)]
        if not texts:
            return ""
        if len(texts) == 1:  # one text: nothing to choose between
            return texts[0][1]
        return min(texts, key=lambda t: (-_match_share(t[1], query, terms), t[0].rank, t[1]))[1]

    published, date_status = merge_dates(o.published for o in observations)
    host = host_of(url)
    return Candidate(
        key=key,
        url=url,
        title=best("title"),
        snippet=best("snippet"),
        domain=registrable_domain(host) or host,
        host=host,
        published=published,
        date_status=date_status,
        observations=observations,
        engine_ranks=engine_ranks,
    )


def candidates_from_lists(lists: dict[str, list[str]]) -> list[Candidate]:
    """Bare ranked docid lists (TREC runs, MQ2008) as candidates: no URLs, no text, ranks only."""
    merged: dict[str, Candidate] = {}
    for engine, docids in lists.items():
        for rank, docid in enumerate(docids, start=1):
            cand = merged.get(docid)
            if cand is None:
                cand = merged[docid] = Candidate(
                    key=docid, url=docid, title="", snippet="", domain=docid, host=""
                )
            if engine not in cand.engine_ranks:
                cand.engine_ranks[engine] = rank
                cand.observations.append(Observation(engine=engine, rank=rank, url=docid))
    return list(merged.values())


EngineLists = Mapping[str, Sequence[str]]  # engine -> keys, best first


def engine_lists(candidates: Sequence[Candidate]) -> dict[str, list[str]]:
    """Each engine's list of candidate keys, best first (ties of rank by key, so the order is deterministic)."""
    rows: dict[str, list[tuple[int, str]]] = {}
    for cand in candidates:
        for engine, rank in cand.engine_ranks.items():
            rows.setdefault(engine, []).append((rank, cand.key))
    return {engine: [key for _, key in sorted(pairs)] for engine, pairs in sorted(rows.items())}
