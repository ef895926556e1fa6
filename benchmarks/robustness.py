"""Robustness benches: the same judged queries with one thing made worse, scored against the clean run.

Misspelled queries (crw56 dev): each query gets one typo as people make them, and is answered by the recording
of the correctly spelled query plus rows that merely echo the misspelled query back. The judgments are the
correct query's, so an echo row (unjudged) counts as irrelevant.

- The typo: the query's longest important term of at least 4 letters (ties: the first) gets one edit drawn with
  ``random.Random(f"{seed}:{qid}")``: a dropped, a doubled, or two swapped neighbouring letters, never touching
  the first letter (people rarely mistype it). A swap of two equal letters is no typo, so it is redrawn.
- The echo rows: one in each of the (at most two) engines with the longest lists for that query (ties: by
  name), at rank 3. An engine that did not answer the recorded query returns no echo either, so a query that
  only one engine answered gets one echo row. Each echo row is titled with the misspelled query and a generic
  suffix, repeats it in its snippet, and comes from a made-up host: two different ones of ``ECHO_TEMPLATES``
  (a Q&A farm, an ideas board, a listicle, a results page, a video tag page, an explainer farm) drawn with
  ``random.Random(f"{seed}:{qid}:echo")``, so no single suffix word can catch them all.

Garbage engine: one engine answers every query off-topic.

- crw56: the engine's list for each dev query is its list for the next dev query (in qid order, cyclic) that it
  answered: a fixed derangement over the queries it answered; queries it did not answer stay unanswered.
- MQ2008 (metasearch): the ranker's list for each query is its list for the next query in the corpus's order
  (cyclic) that it ranked, so its documents are unjudged for the query.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from benchmarks import crw56
from benchmarks import mq2008 as mq
from benchmarks.setups import compact_ranges
from benchmarks.tables import STRONG, Tables
from serpfuse.bench.report import aggregate
from serpfuse.models import EngineAnswer, EngineRow
from serpfuse.urls import dedup_key

if TYPE_CHECKING:
    from serpfuse.config import RankingConfig

MISSPELL_SEED = 8  # fixed, so the typos are the same every run
ECHO_RANK = 3
MIN_LETTERS = 4
TYPOS = ("drop", "double", "swap")


# --- misspellings --------------------------------------------------------------------------------------------


def typo(word: str, rng: random.Random) -> tuple[str, str]:
    """(misspelled word, kind): one dropped, doubled or swapped letter, never at the first letter."""
    if len(word) < 3:
        raise ValueError(f"too short to misspell: {word!r}")
    while True:
        kind = rng.choice(TYPOS)
        i = rng.randrange(1, len(word) - 1)  # an inner letter (a swap takes it and the next one)
        if kind == "drop":
            return word[:i] + word[i + 1 :], kind
        if kind == "double":
            return word[: i + 1] + word[i:], kind
        if word[i] != word[i + 1]:
            return word[:i] + word[i + 1] + word[i] + word[i + 2 :], kind


@dataclass(frozen=True)
class Misspelling:
    qid: int
    query: str
    misspelled: str
    word: str
    typo: str
    kind: str


def misspell_query(query: crw56.Crw56Query, seed: int = MISSPELL_SEED) -> Misspelling | None:
    """The query with its longest important term (>= 4 letters, ties: the first) misspelled, or None if it has
    no such term."""
    words = [t for t in query.analysis.terms if t.isalpha() and len(t) >= MIN_LETTERS]
    if not words:
        return None
    word = max(words, key=len)  # max keeps the first of equal lengths
    wrong, kind = typo(word, random.Random(f"{seed}:{query.qid}"))
    pattern = re.compile(rf"\b{re.escape(word)}\b", re.IGNORECASE)
    text = pattern.sub(wrong, query.query, count=1)
    return Misspelling(query.qid, query.query, text, word, wrong, kind)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


# Made-up hosts of the kinds that echo a query back (a Q&A farm, an ideas board, a listicle, a results page, a
# video tag page, an explainer farm), each with its generic title suffix and a snippet repeating the query.
ECHO_TEMPLATES: tuple[tuple[str, str, str], ...] = (
    (
        "https://www.answerhub-forum.com/questions/{slug}",
        "{q} - Questions & Answers",
        "Looking for {q}? Read 12 answers about {q} from our community and share your own {q} tips.",
    ),
    (
        "https://ideas.pinspiration.net/board/{slug}",
        "{q} | Ideas & Inspiration",
        "Discover {q} ideas. Save your favourite {q} pins and find more {q} inspiration today.",
    ),
    (
        "https://www.toptenfinder.net/{slug}",
        "{q}: Top 10 Picks (Updated)",
        "We researched {q} so you don't have to. Our {q} list compares the best {q} options side by side.",
    ),
    (
        "https://search.infohubs.org/results/{slug}",
        "{q} - Search Results",
        "Results for {q}. Find {q} and related searches for {q} on InfoHubs.",
    ),
    (
        "https://www.vidfeeds.tv/tag/{slug}",
        "{q} Videos",
        "Watch {q} videos. The latest {q} clips and {q} highlights, updated daily.",
    ),
    (
        "https://www.everything-explained.info/{slug}",
        "{q} - Everything You Need to Know",
        "{q} explained: what {q} is, why {q} matters, and more about {q}.",
    ),
)


def echo_row(misspelled: str, engine: str, template: int) -> EngineRow:
    url, title, snippet = ECHO_TEMPLATES[template]
    return EngineRow(
        engine=engine,
        rank=ECHO_RANK,
        url=url.format(slug=_slug(misspelled)),
        title=title.format(q=misspelled),
        snippet=snippet.format(q=misspelled),
    )


def echo_engines(answers: Mapping[str, EngineAnswer], count: int = 2) -> list[str]:
    """The engines with the longest lists (ties: by name), at most ``count``, only those that answered."""
    answered = [e for e, a in answers.items() if a.rows]
    return sorted(answered, key=lambda e: (-len(answers[e].rows), e))[:count]


def with_row_at(answer: EngineAnswer, row: EngineRow, rank: int) -> EngineAnswer:
    """The answer with ``row`` inserted at ``rank`` (1-based; the end of a shorter list), ranks renumbered."""
    rows = list(answer.rows)
    rows.insert(min(rank, len(rows) + 1) - 1, row)
    renumbered = [r.model_copy(update={"rank": i}) for i, r in enumerate(rows, start=1)]
    return answer.model_copy(update={"rows": renumbered, "status": "ok"})


def misspelled_answers(
    answers: Mapping[str, EngineAnswer], misspelled: str, rng: random.Random | None = None
) -> tuple[dict[str, EngineAnswer], list[EngineRow]]:
    """The correct query's answers with an echo row of ``misspelled`` at rank 3 in each of two engines, each
    from a different template (drawn with ``rng``; without one, the first templates in order)."""
    out = dict(answers)
    echoes = []
    engines = echo_engines(answers)
    templates = rng.sample(range(len(ECHO_TEMPLATES)), len(engines)) if rng else range(len(engines))
    for engine, template in zip(engines, templates, strict=True):
        row = echo_row(misspelled, engine, template)
        out[engine] = with_row_at(answers[engine], row, ECHO_RANK)
        echoes.append(row)
    return out, echoes


# --- garbage engines -----------------------------------------------------------------------------------------


def derangement(keys: Sequence, has_list: Callable[[object], bool]) -> dict:
    """key -> the next key (in order, cyclic) that has a list, for each key that has one; needs two such keys."""
    with_list = [k for k in keys if has_list(k)]
    if len(with_list) < 2:
        raise ValueError("an off-topic list needs at least two queries the engine answered")
    return {k: with_list[(i + 1) % len(with_list)] for i, k in enumerate(with_list)}


@dataclass(frozen=True)
class Swap:
    """The garbage engine's donor for each query: qid -> the qid whose list it shows instead."""

    engine: str
    donor: dict


def garbage_recording(
    recording: Mapping[str, object], queries: Sequence[crw56.Crw56Query], engine: str
) -> tuple[dict, Swap]:
    """crw56: a copy of the replay recording in which ``engine`` answers each query with its answer to another."""
    from serpfuse.sources.replay import normalise_query

    def answers_of(q: crw56.Crw56Query) -> dict[str, EngineAnswer]:
        return recording[normalise_query(q.query)].variants.get("", {})

    by_qid = {q.qid: q for q in queries}

    def answered(qid: int) -> bool:
        answer = answers_of(by_qid[qid]).get(engine)
        return answer is not None and bool(answer.rows)

    donor = derangement([q.qid for q in queries], answered)
    out = dict(recording)
    for qid, other in donor.items():
        key = normalise_query(by_qid[qid].query)
        record = recording[key]
        main = dict(record.variants.get("", {}))
        main[engine] = answers_of(by_qid[other])[engine]
        out[key] = replace(record, variants={**record.variants, "": main})
    return out, Swap(engine, donor)


def removed_recording(
    recording: Mapping[str, object], queries: Sequence[crw56.Crw56Query], engine: str
) -> tuple[dict, set[int]]:
    """crw56: a copy of the replay recording in which ``engine`` returns nothing for ``queries`` (the
    reference for a garbage engine: what losing its rows costs), and the qids another engine answered."""
    from serpfuse.sources.replay import normalise_query

    out = dict(recording)
    others = set()
    for query in queries:
        key = normalise_query(query.query)
        record = recording[key]
        main = dict(record.variants.get("", {}))
        if any(e != engine and a.rows for e, a in main.items()):
            others.add(query.qid)
        if engine in main:
            main[engine] = main[engine].model_copy(update={"rows": []})
            out[key] = replace(record, variants={**record.variants, "": main})
    return out, others


def garbage_queries(queries: Mapping[str, mq.QueryData], ranker: int) -> tuple[dict[str, mq.QueryData], dict]:
    """MQ2008: every query with ``ranker``'s positions replaced by its positions for the next query it ranked."""
    donor = derangement(list(queries), lambda qid: bool(queries[qid].positions.get(ranker)))
    out = dict(queries)
    for qid, other in donor.items():
        q = queries[qid]
        out[qid] = replace(q, positions={**q.positions, ranker: queries[other].positions[ranker]})
    return out, donor


# --- generic rows (the unseen half's failure class) ------------------------------------------------------------------

GENERIC_RANKS = (2, 3, 4, 5, 6)  # where the unseen half's generic rows land


def specific_word(query: crw56.Crw56Query, nth: int = 0) -> str | None:
    """The query's most specific one-word key term by wordfreq (9 - Zipf; the query's "specific meaning"), or
    with ``nth`` the next ones (1: the second most specific); None when it has no such term."""
    from serpfuse.ranking.specificity import specificity
    from serpfuse.ranking.words import query_terms

    words = [t.text for t in query_terms(query.analysis) if not t.weak and t.text.isalpha()]
    ranked = sorted(words, key=specificity, reverse=True)  # stable: equal ones keep the query's order
    return ranked[nth] if nth < len(ranked) else None


def swap_word(text: str, word: str, other: str) -> str:
    """``text`` with every word of ``word``'s stems (any case; "Belgrade" for "belgrad") written as ``other``,
    capitalised as it was."""
    from serpfuse.ranking.words import word_stems

    stems = word_stems(word)

    def one(match: re.Match[str]) -> str:
        token = match.group(0)
        if not word_stems(token.lower()) & stems:
            return token
        return other.upper() if token.isupper() else other.capitalize() if token[0].isupper() else other

    return re.sub(r"[^\W\d_]+", one, text)


def generic_rows(
    rows: Sequence[EngineRow],
    donors: Sequence[EngineRow],
    word: str,
    other: str,
    engine: str,
    ranks: Sequence[int],
) -> list[EngineRow]:
    """Rows that carry the query's generic words but not its specific one: each is a donor query's real row
    (its URL and snippet: a page about something else) under the title of one of the query's own rows with
    ``word`` replaced by the donor's specific word ``other`` ("THE 10 BEST Restaurants in Kyoto" for "top
    restaurants in belgrad"), at ``ranks``. Only titles that have ``word`` are used: a title without it would
    make a row as on-topic as the one it was taken from. The snippet is the donor's so that the row is no
    near-duplicate of the row it was titled after (real generic pages do not share the relevant ones' text)."""
    titled = [row for row in rows if swap_word(row.title, word, other) != row.title]
    return [
        EngineRow(
            engine=engine,
            rank=rank,
            url=donor.url,
            title=swap_word(row.title, word, other),
            snippet=donor.snippet,
        )
        for rank, row, donor in zip(ranks, titled, donors, strict=False)
    ]


def with_rows_at(answer: EngineAnswer, rows: Sequence[EngineRow]) -> EngineAnswer:
    """The answer with each of ``rows`` inserted at its own rank (ascending), ranks renumbered."""
    for row in sorted(rows, key=lambda r: r.rank):
        answer = with_row_at(answer, row, row.rank)
    return answer


@dataclass(frozen=True)
class GenericPlan:
    qid: int
    word: str
    other: str
    donor: int
    source: str  # the engine whose rows' titles were taken
    rows: tuple[EngineRow, ...]


def generic_recording(
    recording: Mapping[str, object],
    queries: Sequence[crw56.Crw56Query],
    engine: str,
    whole: bool = False,
    nth: int = 0,
) -> tuple[dict, list[GenericPlan]]:
    """crw56: a copy of the replay recording in which ``engine``'s list for each query that another engine
    answered too carries, at ranks 2-6, rows that match only the query's generic words (``generic_rows``), or
    (``whole``) is nothing but such rows, one for each row of the other engine's list. The word they lack is
    the query's most specific one, or (``nth``) the second most specific, etc. The titles come from the other
    engine with the longest list (ties: by name), the donors are the next such query in qid order (cyclic)
    whose most specific word is not in the query."""
    from serpfuse.sources.replay import normalise_query

    def answers_of(q: crw56.Crw56Query) -> dict[str, EngineAnswer]:
        return recording[normalise_query(q.query)].variants.get("", {})

    def source_of(q: crw56.Crw56Query) -> str | None:
        answers = answers_of(q)
        if not (answers.get(engine) and answers[engine].rows):
            return None
        others = [e for e, a in answers.items() if e != engine and a.rows]
        return min(others, key=lambda e: (-len(answers[e].rows), e)) if others else None

    eligible = [q for q in queries if source_of(q) and specific_word(q, nth)]
    out = dict(recording)
    plans = []
    for i, query in enumerate(eligible):
        word = specific_word(query, nth)
        own = set(query.analysis.terms)
        donor = next((d for d in eligible[i + 1 :] + eligible[:i] if specific_word(d) not in own), None)
        if donor is None:
            continue
        source = source_of(query)
        other = specific_word(donor)
        titles, donors = answers_of(query)[source].rows, answers_of(donor)[source_of(donor)].rows
        ranks = range(1, len(titles) + 1) if whole else GENERIC_RANKS
        rows = generic_rows(titles, donors, word, other, engine, ranks)
        if not rows:
            continue
        key = normalise_query(query.query)
        record = recording[key]
        main = dict(record.variants.get("", {}))
        if whole:
            main[engine] = main[engine].model_copy(update={"rows": rows})
        else:
            main[engine] = with_rows_at(main[engine], rows)
        out[key] = replace(record, variants={**record.variants, "": main})
        plans.append(GenericPlan(query.qid, word, other, donor.qid, source, tuple(rows)))
    return out, plans


# --- the benches ---------------------------------------------------------------------------------------------

Runs = Sequence[tuple[str, "RankingConfig"]]
Tick = Callable[[], None]


def _bold_default(label: str, default: str) -> str:
    return STRONG + label if label == default else label


def _crw56_summary(scores) -> dict[str, float]:
    return aggregate(scores, crw56.METRICS)


def run_misspelled(root, runs: Runs, default: str, progress, only: Collection[int] | None = None) -> Tables:
    """crw56 dev: every run on the correctly spelled queries and on their misspelled twins with echo rows
    (``only``: just these qids, for tests)."""
    from benchmarks.setups import load_crw56
    from serpfuse.sources.replay import RecordedQuery, load_recording, normalise_query

    corpus = load_crw56(root)
    recording = load_recording(corpus.recording)
    spelled, typed, spellings, echoes = [], [], [], {}
    altered: dict[str, RecordedQuery] = {}
    for query in corpus.split("dev"):
        if only is not None and query.qid not in only:
            continue
        spelling = misspell_query(query)
        if spelling is None:
            continue
        answers, rows = misspelled_answers(
            recording[normalise_query(query.query)].variants.get("", {}),
            spelling.misspelled,
            random.Random(f"{MISSPELL_SEED}:{query.qid}:echo"),
        )
        altered[normalise_query(spelling.misspelled)] = RecordedQuery(spelling.misspelled, {"": answers})
        spelled.append(query)
        typed.append(replace(query, query=spelling.misspelled))
        spellings.append(spelling)
        echoes[query.qid] = rows
    clean_runner = crw56.PipelineRunner(corpus)
    typo_runner = crw56.PipelineRunner(corpus, recording=altered)
    echo_keys = {dedup_key(r.url) for rows in echoes.values() for r in rows}

    results = []
    with progress(2 * len(spelled) * len(runs)) as tracker:
        tracker.describe(f"{len(runs)} rankers, {len(spelled)} queries twice")
        for label, config in runs:
            clean = crw56.score_run(
                spelled, lambda q, c=config: clean_runner(q, c), None, progress=tracker.step
            )
            wrong = crw56.score_run(typed, lambda q, c=config: typo_runner(q, c), None, progress=tracker.step)
            shown_echoes = sum(1 for s in wrong for r in s.shown if r.docid in echo_keys)
            results.append((label, _crw56_summary(clean), _crw56_summary(wrong), shown_echoes, clean, wrong))

    rows = []
    for label, clean, wrong, shown_echoes, _, _ in results:
        rows.append(
            [
                _bold_default(label, default),
                f"{clean['nDCG@8']:.4f}",
                f"{wrong['nDCG@8']:.4f}",
                f"{wrong['nDCG@8'] - clean['nDCG@8']:+.4f}",
                f"{int(clean['Irrelevant@5'])}",
                f"{int(wrong['Irrelevant@5'])}",
                f"{int(wrong['Irrelevant@5'] - clean['Irrelevant@5']):+d}",
                str(shown_echoes),
            ]
        )
    head = [
        "ranker",
        "nDCG@8 spelled",
        "nDCG@8 misspelled",
        "Δ",
        "Irrelevant@5 spelled",
        "Irrelevant@5 misspelled",
        "Δ",
        "echo rows shown",
    ]
    typos = [
        [
            str(s.qid),
            s.query,
            s.misspelled,
            f"{s.word} → {s.typo} ({s.kind})",
            ", ".join(f"{r.engine} ({urlsplit(r.url).hostname})" for r in echoes[s.qid]),
        ]
        for s in spellings
    ]
    n = next((int(r[1]["nDCG@8:n"]) for r in results), 0)
    note = (
        f"crw56 dev, {len(spelled)} queries (nDCG@8 over the {n} with a relevant row, Irrelevant@5 summed; "
        f"echo rows are unjudged, so irrelevant). Each misspelled query is answered by the recording of the "
        f"correct one plus {sum(len(r) for r in echoes.values())} echo rows at rank {ECHO_RANK}, one in each of "
        f"the (at most two) engines with the longest lists; typos and echo templates drawn with seed "
        f"{MISSPELL_SEED}. "
        f"Bold: the default ranker."
    )
    payload = {
        "corpus": "crw56",
        "split": "dev",
        "seed": MISSPELL_SEED,
        "default": default,
        "queries": [
            {
                "qid": s.qid,
                "query": s.query,
                "misspelled": s.misspelled,
                "word": s.word,
                "typo": s.typo,
                "kind": s.kind,
                "echoes": [r.model_dump(mode="json") for r in echoes[s.qid]],
            }
            for s in spellings
        ],
        "rankers": {
            label: {
                "spelled": clean,
                "misspelled": wrong,
                "echoRowsShown": shown_echoes,
                "perQuery": [
                    {
                        "qid": a.qid,
                        "spelled": a.values,
                        "misspelled": b.values,
                        "shown": [r.url for r in b.shown],
                    }
                    for a, b in zip(clean_scores, wrong_scores, strict=True)
                ],
            }
            for label, clean, wrong, shown_echoes, clean_scores, wrong_scores in results
        },
    }
    return Tables(
        payload,
        [
            ("crw56 dev: spelled vs misspelled (echo rows at rank 3)", head, rows, 1),
            ("the misspellings", ["qid", "query", "misspelled", "typo", "echo rows from"], typos, 5),
        ],
        note,
    )


def _mean_over(scores, metric: str, qids: Collection[int]) -> float:
    """The mean of ``metric`` over the scored queries among ``qids`` that have it."""
    values = [s.values[metric] for s in scores if int(s.qid) in qids and metric in s.values]
    return sum(values) / len(values) if values else 0.0


def _garbage_table(
    results: Sequence[tuple[str, dict[str, float], dict[str, float]]], metrics: Sequence[str], default: str
) -> tuple[list[str], list[list[str]]]:
    head = ["ranker"]
    for name in metrics:
        head += [f"{name} clean", f"{name} garbage", "Δ"]
    rows = []
    for label, clean, bad in results:
        cells = [_bold_default(label, default)]
        for name in metrics:
            fmt = ".4f" if name == "nDCG@8" else ".0f"
            sign = "+.4f" if name == "nDCG@8" else "+.0f"
            cells += [f"{clean[name]:{fmt}}", f"{bad[name]:{fmt}}", f"{bad[name] - clean[name]:{sign}}"]
        rows.append(cells)
    return head, rows


def pool_ceiling(queries: Sequence[crw56.Crw56Query], recording: Mapping[str, object]) -> float:
    """Mean nDCG@8 of the best top 8 the engines' rows allow (ordered by their grades), over the queries with
    a relevant row: what no ranker can beat on that pool."""
    from serpfuse.bench import metrics as m
    from serpfuse.sources.replay import normalise_query

    values = []
    for query in queries:
        if not query.has_relevant:
            continue
        answers = recording[normalise_query(query.query)].variants.get("", {})
        keys = {dedup_key(row.url) for answer in answers.values() for row in answer.rows}
        best = sorted(keys, key=lambda k: -query.judged.get(k, 0))
        values.append(m.ndcg_at(best, query.judged, crw56.K, gain="exp"))
    return m.mean(values)


def _dev_recording(root, engine: str, option: str, only: Collection[int] | None):
    """crw56's corpus, its dev queries (``only``: just these qids) and its recording, once ``engine`` is known
    to be one of the engines that answered them (else the one-line error names ``option``)."""
    from benchmarks.setups import BenchError, load_crw56
    from serpfuse.sources.replay import load_recording

    corpus = load_crw56(root)
    queries = [q for q in corpus.split("dev") if only is None or q.qid in only]
    known = crw56.engines_of(queries)
    if engine not in known:
        raise BenchError(f"{option} {engine!r}: crw56's engines are {', '.join(known)}")
    return corpus, queries, load_recording(corpus.recording)


def run_garbage_crw56(
    root, engine: str, runs: Runs, default: str, progress, only: Collection[int] | None = None
) -> Tables:
    """crw56 dev: every run clean and with ``engine`` answering each query with its list for another query
    (``only``: just these qids are scored, for tests; the donors are drawn from them too)."""
    from benchmarks.setups import BenchError

    corpus, queries, recording = _dev_recording(root, engine, "--garbage-engine", only)
    try:
        altered, swap = garbage_recording(recording, queries, engine)
    except ValueError as exc:
        raise BenchError(f"--garbage-engine {engine}: {exc}") from None
    removed, answered_by_others = removed_recording(recording, queries, engine)
    runners = {
        name: crw56.PipelineRunner(corpus, recording=r)
        for name, r in (("clean", recording), ("garbage", altered), ("removed", removed))
    }
    results = []
    with progress(len(runners) * len(queries) * len(runs)) as tracker:
        for label, config in runs:
            scores = {
                name: crw56.score_run(
                    queries, lambda q, c=config, r=runner: r(q, c), None, progress=tracker.step
                )
                for name, runner in runners.items()
            }
            results.append((label, {name: _crw56_summary(s) for name, s in scores.items()}, scores))
    head, rows = _garbage_table([(label, s["clean"], s["garbage"]) for label, s, _ in results],
                                ("nDCG@8", "Irrelevant@5"), default)  # fmt: skip
    n_others = sum(1 for q in queries if q.qid in answered_by_others and q.has_relevant)
    head[4:4] = ["nDCG@8 removed", "garbage − removed", f"Δ where another engine answered ({n_others})"]
    for row, (_, summary, scores) in zip(rows, results, strict=True):
        others = {
            name: _mean_over(scores[name], "nDCG@8", answered_by_others) for name in ("clean", "garbage")
        }
        row[4:4] = [
            f"{summary['removed']['nDCG@8']:.4f}",
            f"{summary['garbage']['nDCG@8'] - summary['removed']['nDCG@8']:+.4f}",
            f"{others['garbage'] - others['clean']:+.4f}",
        ]
    ceilings = (
        pool_ceiling(queries, recording),
        pool_ceiling(queries, altered),
        pool_ceiling(queries, removed),
    )
    rows.append(
        [
            "best possible top 8",
            f"{ceilings[0]:.4f}",
            f"{ceilings[1]:.4f}",
            f"{ceilings[1] - ceilings[0]:+.4f}",
            f"{ceilings[2]:.4f}",
            f"{ceilings[1] - ceilings[2]:+.4f}",
        ]
    )
    rows[-1] += [""] * (len(head) - len(rows[-1]))
    n = next((int(s["clean"]["nDCG@8:n"]) for _, s, _ in results), 0)
    note = (
        f"crw56 dev, {len(queries)} queries (nDCG@8 over the {n} with a relevant row, Irrelevant@5 summed). "
        f"Garbage: {engine} answers each of the {len(swap.donor)} queries it answered with its list for the next "
        f"one (qid order, cyclic). Removed: {engine} returns nothing; garbage − removed is the harm the off-topic "
        f"rows do beyond the loss of {engine}'s own rows. The last Δ is garbage − clean over the {n_others} "
        f"queries with a relevant row that another engine answered too. rrf (plain) is the reference; bold: the "
        f"default ranker. Best possible top 8: the engines' rows ordered by their judgments, the ceiling any "
        f"ranker has on that pool."
    )
    payload = {
        "corpus": "crw56",
        "split": "dev",
        "engine": engine,
        "donor": {str(k): v for k, v in swap.donor.items()},
        "default": default,
        "answeredByOthers": sorted(answered_by_others),
        "rankers": {label: summary for label, summary, _ in results},
        "ceiling": {"clean": ceilings[0], "garbage": ceilings[1], "removed": ceilings[2]},
    }
    return Tables(payload, [(f"crw56 dev: nDCG@8 with {engine} off-topic", head, rows, 1)], note)


# (name, whole list, which word the rows lack: 0 the most specific, 1 the second most specific)
GENERIC_VARIANTS = (
    ("ranks 2-6", False, 0),
    ("whole list", True, 0),
    ("ranks 2-6, lacking the second most specific word", False, 1),
)


def run_generic_crw56(
    root, engine: str, runs: Runs, default: str, progress, only: Collection[int] | None = None
) -> Tables:
    """crw56 dev: every run clean and with ``engine``'s lists carrying rows that match only the query's generic
    words, in each of the ``GENERIC_VARIANTS`` (``generic_recording``; ``only``: just these qids, for tests)."""
    from benchmarks.setups import BenchError

    corpus, queries, recording = _dev_recording(root, engine, "--generic-rows", only)
    variants = [
        (name, *generic_recording(recording, queries, engine, whole, nth))
        for name, whole, nth in GENERIC_VARIANTS
    ]
    planned = {p.qid for _, _, plans in variants for p in plans}
    if not planned:
        raise BenchError(f"--generic-rows {engine}: no query that {engine} and another engine both answered")
    scored = [q for q in queries if q.qid in planned]
    clean_runner = crw56.PipelineRunner(corpus, recording=recording)
    results = []
    steps = len(runs) * (len(scored) + sum(len(plans) for _, _, plans in variants))
    with progress(steps) as tracker:
        tracker.describe(f"{len(runs)} rankers, {len(scored)} queries, clean and {len(variants)} ways")
        for label, config in runs:
            clean = crw56.score_run(
                scored, lambda q, c=config: clean_runner(q, c), None, progress=tracker.step
            )
            row = {}
            for name, altered, plans in variants:
                qids = {p.qid for p in plans}
                runner = crw56.PipelineRunner(corpus, recording=altered)
                these = [q for q in scored if q.qid in qids]
                bad = crw56.score_run(
                    these, lambda q, c=config, r=runner: r(q, c), None, progress=tracker.step
                )
                injected = {str(p.qid): {dedup_key(r.url) for r in p.rows} for p in plans}
                row[name] = {
                    "clean": _crw56_summary([s for s in clean if int(s.qid) in qids]),
                    "generic": _crw56_summary(bad),
                    "top8": sum(1 for s in bad for r in s.shown if r.docid in injected[s.qid]),
                    "top5": sum(
                        1 for s in bad for r in s.shown[: crw56.K_SHOWN] if r.docid in injected[s.qid]
                    ),
                    "scores": bad,
                }
            results.append((label, row))

    head = [
        "ranker",
        "nDCG@8 clean",
        "nDCG@8 generic",
        "Δ",
        "RelShown@8 clean",
        "RelShown@8 generic",
        "Irrelevant@5 clean",
        "Irrelevant@5 generic",
        "generic rows in top 8",
        "in top 5",
    ]
    tables = []
    altered_of = {name: altered for name, altered, _ in variants}
    for (name, _, plans), (_, whole, nth) in zip(variants, GENERIC_VARIANTS, strict=True):
        rows = []
        for label, row in results:
            clean, bad = row[name]["clean"], row[name]["generic"]
            rows.append(
                [
                    _bold_default(label, default),
                    f"{clean['nDCG@8']:.4f}",
                    f"{bad['nDCG@8']:.4f}",
                    f"{bad['nDCG@8'] - clean['nDCG@8']:+.4f}",
                    f"{clean['RelShown@8']:.4f}",
                    f"{bad['RelShown@8']:.4f}",
                    f"{int(clean['Irrelevant@5'])}",
                    f"{int(bad['Irrelevant@5'])}",
                    str(row[name]["top8"]),
                    str(row[name]["top5"]),
                ]
            )
        these = [q for q in scored if q.qid in {p.qid for p in plans}]
        ceilings = (pool_ceiling(these, recording), pool_ceiling(these, altered_of[name]))
        rows.append(
            [
                "best possible top 8",
                f"{ceilings[0]:.4f}",
                f"{ceilings[1]:.4f}",
                f"{ceilings[1] - ceilings[0]:+.4f}",
            ]
            + [""] * (len(head) - 4)
        )
        where = f"{engine}'s lists replaced by" if whole else f"ranks 2-6 of {engine}'s lists:"
        word = "second most specific word" if nth else "most specific word"
        n = next((int(row[name]["clean"]["nDCG@8:n"]) for _, row in results), 0)
        title = (
            f"{name}: {len(plans)} queries ({n} with a relevant row), {where} "
            f"{sum(len(p.rows) for p in plans)} rows lacking the query's {word}"
        )
        tables.append((title, [f"ranker ({name})", *head[1:]], rows, 1))
    examples = [
        [str(p.qid), next(q.query for q in scored if q.qid == p.qid), f"{p.word} → {p.other}", p.source, p.rows[0].title]
        for name, _, plans in variants
        if name == GENERIC_VARIANTS[0][0] or name == GENERIC_VARIANTS[2][0]
        for p in plans
    ]  # fmt: skip
    tables.append(
        ("the generic rows (the first per query)", ["qid", "query", "word replaced", "titles from", "first title"],
         examples, 5)
    )  # fmt: skip
    note = (
        f"crw56 dev, the queries that {engine} and another engine both answered (nDCG@8 and RelShown@8 over those "
        f"with a relevant row, Irrelevant@5 summed). Generic rows match only the query's generic words: the "
        f"other engine's rows' titles with one of the query's words (the most specific by wordfreq, or the "
        f"second most specific) replaced by the most specific word of the next such query, over that query's "
        f"real URLs and snippets; unjudged, so irrelevant. rrf (plain) is the reference; bold: the default "
        f"ranker. Best possible top 8: the engines' rows ordered by their judgments (the whole list loses "
        f"{engine}'s own rows)."
    )
    payload = {
        "corpus": "crw56",
        "split": "dev",
        "engine": engine,
        "default": default,
        "variants": {
            name: [
                {
                    "qid": p.qid,
                    "word": p.word,
                    "replacedBy": p.other,
                    "donor": p.donor,
                    "titlesFrom": p.source,
                    "rows": [r.model_dump(mode="json") for r in p.rows],
                }
                for p in plans
            ]
            for name, _, plans in variants
        },
        "rankers": {
            label: {
                name: {
                    "clean": row[name]["clean"],
                    "generic": row[name]["generic"],
                    "genericRowsTop8": row[name]["top8"],
                    "genericRowsTop5": row[name]["top5"],
                    "perQuery": [
                        {"qid": s.qid, "values": s.values, "shown": [r.url for r in s.shown]}
                        for s in row[name]["scores"]
                    ],
                }
                for name, _, _ in variants
            }
            for label, row in results
        },
    }
    return Tables(payload, tables, note)


def parse_ranker(name: str, rankers: Sequence[int]) -> int:
    """``r9`` or ``9`` -> 9, one of ``rankers``."""
    text = name.strip().lower().removeprefix("r")
    if not text.isdigit() or int(text) not in rankers:
        raise ValueError(f"--garbage-engine {name!r}: MQ2008 names a ranker of the setup, r1-r25 (e.g. r9)")
    return int(text)


def run_garbage_mq2008(
    queries: Mapping[str, mq.QueryData],
    ranker: int,
    rankers: Sequence[int],
    depth: int,
    runs: Runs,
    default: str,
    progress,
) -> Tables:
    """MQ2008 metasearch: every run clean and with ``ranker``'s lists shuffled across queries."""
    garbage, donor = garbage_queries(queries, ranker)
    results = []
    with progress(2 * len(runs)) as tracker:
        tracker.describe(f"{len(runs)} rankers, clean and garbage")
        for label, config in runs:
            fuser = mq.strategy_fuser(config.strategy, config)
            clean = mq.metasearch(queries, fuser, rankers, depth)
            tracker.step()
            bad = mq.metasearch(garbage, fuser, rankers, depth)
            tracker.step()
            results.append((label, {"nDCG@8": clean.mean_ndcg}, {"nDCG@8": bad.mean_ndcg}))
    head, rows = _garbage_table(results, ("nDCG@8",), default)
    head.append("Δ %")
    for row, (_, clean, bad) in zip(rows, results, strict=True):
        row.append(f"{mq.gap_percent(bad['nDCG@8'], clean['nDCG@8']):+.2f} %")
    judged = sum(1 for q in queries.values() if q.has_relevant)
    note = (
        f"MQ2008 metasearch, rankers {compact_ranges(rankers)} at depth {depth}, nDCG@8 over the {judged} queries "
        f"with a relevant document. Garbage: r{ranker} shows, for each of the {len(donor)} queries it ranked, its "
        f"list for the next one (corpus order, cyclic), whose documents are unjudged here. rrf (plain) is the "
        f"reference; bold: the default ranker."
    )
    payload = {
        "corpus": "mq2008",
        "protocol": "metasearch",
        "rankers": list(rankers),
        "depth": depth,
        "engine": mq.engine_name(ranker),
        "default": default,
        "results": {label: {"clean": clean, "garbage": bad} for label, clean, bad in results},
    }
    return Tables(payload, [(f"MQ2008: nDCG@8 with r{ranker} shuffled across queries", head, rows, 1)], note)
