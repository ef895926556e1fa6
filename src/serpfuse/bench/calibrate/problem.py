"""Calibration's problem: each judged query's fusion worked out up to the engine weights (``QueryCache``), then
every query at once (``Problem``): numpy fuses and selects a whole line of the weight grid in one pass, as the
rankers (combmnz, consensus) and the MMR selection would. tests/test_calibrate.py checks the lists match."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from serpfuse.bench import metrics
from serpfuse.config import RankingConfig
from serpfuse.errors import InputError
from serpfuse.ranking.context import RankContext
from serpfuse.ranking.types import Candidate

if TYPE_CHECKING:
    from serpfuse.pipeline import RankingInputs

K = 8  # nDCG@8: what an agent is shown
GRID = tuple(step / 2 for step in range(-6, 7))  # log2 of a weight: 1/8 .. 8
LAMBDAS = (math.inf, 1e-2, 1e-3, 0.0)  # strongest pull first: each fit starts from the one before
# One more choice beside the lambdas, for the additive fusion: the engine best alone on the training queries,
# every other weighted 0 (which CombMNZ counts as not listing the row). The weakest prior, so it wins only a
# strict gain: when the judgments say one engine beats every weighting of the rest, the weights say that.
ALONE = "alone"
Choice = float | str  # a lambda, or ALONE
MAX_SWEEPS = 6
LOCAL = 2  # a refining sweep tries this many grid points either side
COARSE = tuple(i for i, g in enumerate(GRID) if g == int(g))  # the first sweep: whole powers of two
FOLDS = 3
RESAMPLES = 20  # serpfuse calibrate --resamples
EPS = 1e-12  # a gain smaller than this is float noise, not a gain
# The rankers whose score calibrate computes from the weights: CombMNZ, the sum of weight x rank score times the
# number of lists (the weights never change that count: none is 0); and consensus-v2.1's, weight x rank decay.
STRATEGIES = ("combmnz", "consensus", "adaptive")
ADDITIVE = ("combmnz",)
_DISCOUNT = np.array([1.0 / math.log2(position + 2) for position in range(K)])


class CalibrationError(InputError):
    """Input calibrate cannot use, said in one line (naming the file and line for a bad judgment)."""


# --- one query, worked out up to the weights -----------------------------------------------------------------


@dataclass
class MMRInputs:
    """What greedy MMR (ranking/selection.py) needs of one query's candidates, in ``QueryCache`` order."""

    similarity: list[list[float]]  # shingle Jaccard of each pair (0 when either row has no shingles)
    sparse: list[bool]  # no shingles: admitted only under the per-domain cap
    domains: list[str]
    penalty: float
    cap: int | None
    limit: int


@dataclass
class QueryCache:
    """One query's fusion up to the weights, its candidates in the order that breaks a tie of scores."""

    qid: str
    keys: list[str]
    # per candidate: voter -> its vote at weight 1 in ranking.weights (consensus: w_e * kappa / (kappa + r - 1);
    # combmnz: its rank scores (n - r + 1) / n, summed over the engines an alias folds into the voter)
    votes: list[dict[str, float]]
    # per candidate: consensus, (1 + metadata correction) x demotion; combmnz, the demotion
    factors: list[float]
    grades: list[int]
    ideal: float  # DCG@8 of the ideal ranking of every judged document
    mmr: MMRInputs | None = None  # None: the ranker's own order is the list (bare lists, top rows)
    hits: list[int] | None = None  # combmnz: per candidate, how many lists hold it


def voter_votes(candidates: Sequence[Candidate], ctx: RankContext) -> list[dict[str, float]]:
    """Each candidate's vote from each logical voter at weight 1 in ``ranking.weights``, as the default ranker
    casts it (consensus: its configured weight; adaptive: times agreement and content, per query)."""
    from serpfuse.ranking.rankers.adaptive import query_weights
    from serpfuse.ranking.rankers.consensus import voter_weights

    config = ctx.config
    check_strategy(config)
    if config.strategy in ADDITIVE:
        return [parts for parts, _ in combmnz_parts(candidates, ctx)]
    neutral = config.model_copy(update={"weights": {}}) if config.weights else config
    ctx = RankContext(**{**vars(ctx), "config": neutral})
    cfg = neutral.consensus
    if neutral.strategy == "adaptive":
        weights = query_weights(list(candidates), ctx).voters
    else:
        weights = voter_weights(list(candidates), ctx) or {}
    out = []
    for cand in candidates:
        best: dict[str, int] = {}
        for engine, rank in cand.engine_ranks.items():
            voter = cfg.aliases.get(engine, engine)
            best[voter] = min(rank, best.get(voter, rank))
        votes = {}
        for voter, rank in best.items():
            x = weights.get(voter, cfg.weights.get(voter, 1.0)) * (cfg.kappa / (cfg.kappa + rank - 1))
            if x > 0:
                votes[voter] = x
        out.append(votes)
    return out


def check_strategy(config: RankingConfig) -> None:
    if config.strategy not in STRATEGIES:
        raise CalibrationError(
            f"calibrate fits the weights of {', '.join(STRATEGIES)}, not {config.strategy!r}"
        )


def combmnz_parts(candidates: Sequence[Candidate], ctx: RankContext) -> list[tuple[dict[str, float], int]]:
    """Each candidate's rank scores by voter at weight 1 and how many lists hold it, as CombMNZ counts them
    (rankers/combmnz.py): its score is ``hits * sum(w_voter * part)``."""
    from serpfuse.ranking.rankers.combmnz import list_sizes, rank_score, score_scales

    config = ctx.config
    sizes = list_sizes(list(candidates), ctx, config.combmnz.depth)
    scales = score_scales(sizes, config.combmnz.short_list_scale)
    out = []
    for cand in candidates:
        parts: dict[str, float] = {}
        hits = 0
        for engine, rank in cand.engine_ranks.items():
            if rank <= sizes[engine]:
                voter = config.consensus.aliases.get(engine, engine)  # as RankingConfig.weight_of names it
                parts[voter] = parts.get(voter, 0.0) + rank_score(rank, sizes[engine], scales[engine])
                hits += 1
        out.append((parts, hits))
    return out


def base_factors(candidates: Sequence[Candidate], ctx: RankContext) -> list[float]:
    """What multiplies each candidate's score before any demotion: consensus-v2.1's metadata correction
    (CombMNZ: nothing; its count of lists is ``hits_of``)."""
    from serpfuse.ranking.rankers.consensus import query_terms

    if ctx.config.strategy in ADDITIVE:
        return [1.0] * len(candidates)
    terms = query_terms(ctx.query)
    return [metadata_factor(c, ctx, terms) for c in candidates]


def hits_of(candidates: Sequence[Candidate], ctx: RankContext) -> list[int] | None:
    if ctx.config.strategy not in ADDITIVE:
        return None
    return [hits for _, hits in combmnz_parts(candidates, ctx)]


def metadata_factor(cand: Candidate, ctx: RankContext, terms: list[str]) -> float:
    """1 + consensus-v2.1's bounded lexical and freshness correction of the candidate's score."""
    from serpfuse.ranking.rankers.consensus import form_lexical_match, freshness

    cfg = ctx.config.consensus
    correction = cfg.lexical * form_lexical_match(terms, cand.form) + cfg.freshness * freshness(cand, ctx)
    return 1 + max(-cfg.metadata_clip, min(cfg.metadata_clip, correction))


def ideal_dcg(grades: Mapping[str, int]) -> float:
    return metrics.dcg(sorted((g for g in grades.values() if g > 0), reverse=True)[:K], "exp")


def cache_lists(
    qid: str, lists: Mapping[str, Sequence[str]], grades: Mapping[str, int], config: RankingConfig
) -> QueryCache:
    """A query given as bare ranked lists (TREC runs): its list is the ranker's order, ties by docid
    descending, as ``serpfuse fuse`` writes it."""
    from serpfuse.ranking.fusion import bare_context

    check_strategy(config)
    candidates, ctx = bare_context(lists, config.model_copy(update={"weights": {}}))
    candidates.sort(key=lambda c: c.key, reverse=True)
    return QueryCache(
        qid=qid,
        keys=[c.key for c in candidates],
        votes=voter_votes(candidates, ctx),
        factors=base_factors(candidates, ctx),
        hits=hits_of(candidates, ctx),
        grades=[grades.get(c.key, 0) for c in candidates],
        ideal=ideal_dcg(grades),
    )


def cache_ranking_inputs(qid: str, inputs: RankingInputs, judged: Mapping[str, int]) -> QueryCache:
    """A query the pipeline has filtered (``pipeline.ranking_inputs``): the kept candidates, demotions, then the
    selection as its stage runs it (MMR for consensus-v2.1, the top rows for CombMNZ); a row's grade is its first
    URL's judgment, as the recording bench judges."""
    from serpfuse.ranking.rankers import get_ranker
    from serpfuse.ranking.selection import jaccard, row_shingles, single_site
    from serpfuse.ranking.types import Scored
    from serpfuse.urls import dedup_key

    ctx = inputs.ctx
    config = ctx.config
    check_strategy(config)
    # either selection gives a tie to the smaller key (CombMNZ sorts by key, the demotion's re-sort is stable)
    candidates = sorted(inputs.outcome.kept, key=lambda c: c.key)
    anchor = config.filters.anchor_demotion
    factors = []
    for cand, factor in zip(candidates, base_factors(candidates, ctx), strict=True):
        if cand.key in inputs.outcome.demoted and anchor < 1:
            factor *= anchor
        factors.append(factor)
    grades = []
    for cand in candidates:
        urls = dict.fromkeys([cand.url, *(o.url for o in cand.observations)])
        keys = [dedup_key(u) for u in urls]
        grades.append(next((judged[k] for k in keys if k in judged), 0))
    sel = config.selection
    ranker = get_ranker(config.strategy)
    method = ranker.selects_by if sel.method == "auto" else sel.method
    if method == "top":
        per_domain = getattr(ranker, "per_domain", 0) if sel.per_domain is None else sel.per_domain
        if per_domain:
            raise CalibrationError(f"calibrate fits the top rows without a per-domain cap, not {per_domain}")
        if ctx.request.limit < K:
            raise CalibrationError(f"calibrate fits lists of at least {K} rows, not {ctx.request.limit}")
        return QueryCache(
            qid=qid,
            keys=[c.key for c in candidates],
            votes=voter_votes(candidates, ctx),
            factors=factors,
            grades=grades,
            ideal=ideal_dcg(judged),
            hits=hits_of(candidates, ctx),
        )
    shingles = [row_shingles(Scored(c, 0.0, 0.0), sel.shingle_n, sel.shingle_min_tokens) for c in candidates]
    one_site = single_site({*ctx.request.include_domains, *ctx.query.include_domains})
    mmr = MMRInputs(
        similarity=[[jaccard(a, b) for b in shingles] for a in shingles],
        sparse=[s is None for s in shingles],
        domains=[c.domain for c in candidates],
        penalty=sel.diversity_penalty,
        cap=None if one_site else sel.sparse_domain_cap,
        limit=ctx.request.limit,
    )
    return QueryCache(
        qid=qid,
        keys=[c.key for c in candidates],
        votes=voter_votes(candidates, ctx),
        factors=factors,
        grades=grades,
        ideal=ideal_dcg(judged),
        mmr=mmr,
    )


# --- every query at once ------------------------------------------------------------------------------------


# Votes as whole numbers of 2^-40 (held in floats, exact below 2^53): their sums are exact in any order, so
# rows with the same votes tie exactly, as they do in the rankers, however the sum is taken.
SCALE = float(2**40)
# CombMNZ's total in whole units of its rounding (rankers/combmnz.py); its votes are held unscaled
UNIT = 1e10  # rankers/combmnz.py's rounded: 10 decimals


@dataclass
class _Block:
    """Queries padded to one width (columns ``start`` .. ``start + len(queries) * width`` of the layout)."""

    start: int
    width: int
    queries: np.ndarray  # positions in the problem's query order
    mmr: _MMRArrays | None = None  # None: the ranker's own order is the list

    @property
    def stop(self) -> int:
        return self.start + len(self.queries) * self.width


@dataclass
class _MMRArrays:
    """What the MMR selection reads of a block's queries, padded to its width."""

    similarity: np.ndarray  # (Qb, width, width)
    sparse: np.ndarray  # (Qb, width)
    same_domain: np.ndarray  # (Qb, width, width)
    cap: np.ndarray  # (Qb,) rows a domain may fill with sparse text (a single site: no cap)
    inputs: MMRInputs  # the first query's (penalty and limit are the configuration's, alike for every query)


@dataclass
class _QueryArrays:
    votes: np.ndarray  # (V, rows)
    factors: np.ndarray
    gains: np.ndarray
    hits: np.ndarray


class Problem:
    """Every query's fusion as arrays: the nDCG@8 of each query under many weight vectors at once.

    Rows are laid out query by query, queries of similar size padded to one width (a padding row casts no
    vote), so a block's scores are a (G, queries, width) view for the sort or MMR.
    """

    def __init__(self, caches: Sequence[QueryCache], config: RankingConfig):
        if not caches:
            raise CalibrationError("no judged query with a relevant document to calibrate on")
        if len({c.mmr is None for c in caches}) > 1:
            raise CalibrationError("queries mix bare lists and recorded answers")
        self.config = config
        cfg = config.consensus
        self.additive = config.strategy in ADDITIVE  # CombMNZ: no groups, the votes' sum
        voters = sorted({v for c in caches for votes in c.votes for v in votes})
        group_of = {v: v if self.additive else cfg.groups.get(v, v) for v in voters}
        voters.sort(key=lambda v: (group_of[v], v))  # a group's columns side by side
        self.voters = voters
        self.column = {v: i for i, v in enumerate(voters)}
        groups = list(dict.fromkeys(group_of[v] for v in voters))
        self.group_index = np.array([groups.index(group_of[v]) for v in voters], dtype=int)
        self.group_columns = [np.flatnonzero(self.group_index == g) for g in range(len(groups))]
        self.eta = [float(cfg.retention.get(g, 1.0)) for g in groups]
        self.singletons = len(groups) == len(voters)
        self.beta = float(cfg.beta)
        arrays = []
        for c in caches:
            votes = np.zeros((len(voters), len(c.keys)))
            for row, row_votes in enumerate(c.votes):
                for voter, vote in row_votes.items():
                    votes[self.column[voter], row] = vote
            gains = np.array([metrics.gain_of(g, "exp") for g in c.grades])
            hits = np.array(c.hits if c.hits is not None else [1] * len(c.keys), dtype=float)
            arrays.append(_QueryArrays(votes, np.array(c.factors, dtype=float), gains, hits))
        self._lay_out(caches, arrays)

    def _lay_out(self, caches: Sequence[QueryCache], arrays: Sequence[_QueryArrays]) -> None:
        self.caches, self.arrays = list(caches), list(arrays)
        self.ideal = np.array([c.ideal for c in caches])
        sizes = [len(c.keys) for c in caches]
        width_of = [max(K, 1 << max(0, size - 1).bit_length()) for size in sizes]  # a power of 2
        self.blocks: list[_Block] = []
        start = 0
        pieces: list[tuple[int, int]] = []  # (query, padded start) in layout order
        for width in sorted(set(width_of)):
            members = [i for i, w in enumerate(width_of) if w == width]
            block = _Block(start, width, np.array(members, dtype=int))
            for b, i in enumerate(members):
                pieces.append((i, start + b * width))
            if caches[0].mmr is not None:
                block.mmr = self._mmr_arrays(width, [caches[i] for i in members])
            self.blocks.append(block)
            start = block.stop
        self.n = start
        self.x = np.zeros((len(self.voters), self.n))  # votes at weight 1, times SCALE (CombMNZ: as they are)
        self.factors = np.zeros(self.n)
        self.hits = np.zeros(self.n)
        self.gains = np.zeros(self.n)
        for i, at in pieces:
            rows = slice(at, at + sizes[i])
            self.x[:, rows], self.factors[rows], self.gains[rows] = (
                arrays[i].votes if self.additive else arrays[i].votes * SCALE,
                arrays[i].factors,
                arrays[i].gains,
            )
            self.hits[rows] = arrays[i].hits

    @staticmethod
    def _mmr_arrays(width: int, caches: Sequence[QueryCache]) -> _MMRArrays:
        inputs = [c.mmr for c in caches if c.mmr is not None]
        if len(inputs) != len(caches):
            raise ValueError("every query of a problem is selected alike: MMR inputs for all or none")
        count = len(caches)
        arrays = _MMRArrays(
            similarity=np.zeros((count, width, width)),
            sparse=np.zeros((count, width), dtype=bool),
            same_domain=np.zeros((count, width, width), dtype=bool),
            cap=np.array([width if m.cap is None else m.cap for m in inputs]),
            inputs=inputs[0],
        )
        for b, (c, m) in enumerate(zip(caches, inputs, strict=True)):
            d = len(c.keys)
            if d:
                arrays.similarity[b, :d, :d] = m.similarity
                arrays.sparse[b, :d] = m.sparse
                domains = np.array(m.domains, dtype=object)
                arrays.same_domain[b, :d, :d] = domains[:, None] == domains[None, :]
        return arrays

    @property
    def queries(self) -> int:
        return len(self.caches)

    def take(self, positions: Sequence[int]) -> Problem:
        """The problem over these queries only (each once), with the same voters."""
        part = object.__new__(Problem)
        part.__dict__.update(self.__dict__)
        part._lay_out([self.caches[i] for i in positions], [self.arrays[i] for i in positions])
        return part

    def weights_vector(self, weights: Mapping[str, float]) -> np.ndarray:
        return np.array([float(weights.get(v, 1.0)) for v in self.voters])

    def votes(self, weights: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Votes at these weights in whole units of 1/SCALE (CombMNZ: as they are, the total is rounded),
        ``weights`` broadcast against ``x``."""
        if self.additive:
            return weights * x
        return np.rint(weights * x)

    def held(self, group_max: np.ndarray, group_sum: np.ndarray, group: int) -> np.ndarray:
        """What a group of correlated engines casts: its best vote plus eta of the rest."""
        return group_max + self.eta[group] * (group_sum - group_max)

    def scores(self, weights: np.ndarray) -> np.ndarray:
        """(G, n) scores of every row under each row of ``weights`` (G, V); 0 where a row scores nothing."""
        votes = self.votes(weights[:, :, None], self.x[None, :, :])  # (G, V, n)
        top = votes.max(axis=1)
        if self.additive and (weights == 0).any():
            # an engine weighted 0 is not among the lists holding a row: count the lists again
            hits = ((self.x[None, :, :] > 0) & (weights[:, :, None] > 0)).sum(axis=1)
            return self._finish(top, votes.sum(axis=1) - top, hits)
        if self.singletons:
            return self._finish(top, votes.sum(axis=1) - top)
        total = None
        for g, columns in enumerate(self.group_columns):
            part = votes[:, columns]
            held = self.held(part.max(axis=1), part.sum(axis=1), g)
            total = held if total is None else total + held
        return self._finish(top, np.maximum(total - top, 0.0))

    def _finish(
        self, top: np.ndarray, rest: np.ndarray, hits: np.ndarray | float | None = None
    ) -> np.ndarray:
        """consensus-v2.1's E = M + beta * log1p(C) from the best vote and the rest (units of 1/SCALE), or
        CombMNZ's sum of the votes times ``hits`` (default: every engine's list counted), times each row's
        factor. A row without a vote scores 0 (a factor is never negative)."""
        if self.additive:  # rounded as CombMNZ rounds its total, then demoted
            hits = self.hits if hits is None else hits
            return np.rint((top + rest) * hits * UNIT) * self.factors
        return (top + (self.beta * SCALE) * np.log1p(rest / SCALE)) * self.factors

    def line(self, weights: np.ndarray) -> _Line:
        return _Line(self, weights)

    def ndcg(self, scores: np.ndarray) -> np.ndarray:
        """(G, Q) nDCG@8 of each query's list under each row of ``scores`` (G, n)."""
        out = np.zeros((scores.shape[0], self.queries))
        step = 2 * np.spacing(max(1.0, float(scores.max(initial=0.0))))
        for block in self.blocks:
            shape = (scores.shape[0], len(block.queries), block.width)
            s = scores[:, block.start : block.stop].reshape(shape)
            gains = self.gains[block.start : block.stop].reshape(shape[1:])
            if block.mmr is None:
                dcg = _top_dcg(s, gains, step)
            else:
                dcg = _mmr_dcg(s, gains, block.mmr)
            out[:, block.queries] = dcg
        return out / self.ideal

    def ndcg_alone(self) -> np.ndarray:
        """(V, Q) nDCG@8 of each query with one engine alone (the rest weighted 0: their rows score nothing and
        count for no list). Additive fusion only."""
        return self.ndcg(self._finish(self.x, np.zeros_like(self.x), hits=1.0))  # a row in one list

    def best_alone(self, counts: np.ndarray | None = None) -> str | None:
        """The engine whose list alone scores best over these queries, ``counts`` weighing them (ties to the
        first in ``voters``)."""
        if not self.additive or not self.voters:
            return None
        means = np.average(self.ndcg_alone(), axis=1, weights=counts)
        top = max(range(len(self.voters)), key=lambda i: (round(float(means[i]), 12), -i))
        return self.voters[top]

    def ndcg_of(self, weights: Mapping[str, float]) -> np.ndarray:
        """(Q,) nDCG@8 of each query under one set of weights (an engine not named weighs 1)."""
        return self.ndcg(self.scores(self.weights_vector(weights)[None, :]))[0]


class _Line:
    """The votes of every row under the current weights, kept so that moving one engine's weight along the
    grid costs a pass over the rows, not over rows x engines. Its scores are bit for bit ``Problem.scores``."""

    def __init__(self, problem: Problem, weights: np.ndarray):
        self.problem = problem
        self.set(weights)

    def set(self, weights: np.ndarray) -> None:
        p = self.problem
        self.votes = p.votes(weights[:, None], p.x)  # (V, n)
        if p.singletons:
            self.total = self.votes.sum(axis=0)
            self.first_column = self.votes.argmax(axis=0)
            self.first = self.votes.max(axis=0)
            rest = self.votes.copy()
            rest[self.first_column, np.arange(p.n)] = 0.0
            self.second = rest.max(axis=0)

    def scores(self, column: int, values: np.ndarray) -> np.ndarray:
        """(G, n) scores with the voter in ``column`` at each of ``values`` and every other as it is."""
        p = self.problem
        mine = p.votes(values[:, None], p.x[column][None, :])  # (G, n)
        if p.singletons:
            others_top = np.where(self.first_column == column, self.second, self.first)
            top = np.maximum(others_top, mine)
            return p._finish(top, (self.total - self.votes[column]) + mine - top)
        group = p.group_index[column]
        others = np.delete(np.arange(len(p.voters)), column)
        top = np.maximum(self.votes[others].max(axis=0), mine)
        total = None
        for g, columns in enumerate(p.group_columns):
            if g == group:
                rest = [c for c in columns if c != column]
                inside_max = self.votes[rest].max(axis=0) if rest else 0
                inside_sum = self.votes[rest].sum(axis=0) if rest else 0
                held = p.held(np.maximum(inside_max, mine), inside_sum + mine, g)
            else:
                part = self.votes[columns]
                held = p.held(part.max(axis=0), part.sum(axis=0), g)
            total = held if total is None else total + held
        return p._finish(top, np.maximum(total - top, 0.0))


def _top_dcg(scores: np.ndarray, gains: np.ndarray, step: float) -> np.ndarray:
    """DCG@8 of each (G, Qb) list: the rows by score, a tie to the earlier row. Each row's score is raised by a
    few ``step`` (float spacing) more than the next row's, so equal scores order as the rows do and an unstable
    sort, quicker, gives the stable order."""
    width = scores.shape[-1]
    keys = -(scores + (width - np.arange(width)) * step)
    order = np.argsort(keys, axis=-1)[..., :K]
    shown = np.where(scores > 0, gains, 0.0)  # a row that scores nothing is not in the list
    return np.take_along_axis(shown, order, axis=-1) @ _DISCOUNT[: order.shape[-1]]


def _mmr_dcg(scores: np.ndarray, gains: np.ndarray, block: _MMRArrays) -> np.ndarray:
    """Greedy MMR as ranking.selection.mmr_select runs it, for every query of the block at once."""
    g_count, q_count, width = scores.shape
    mmr = block.inputs
    redundancy = np.zeros_like(scores)
    taken = scores <= 0  # rows that score nothing never enter
    same_domain_chosen = np.zeros(scores.shape, dtype=int)
    dcg = np.zeros((g_count, q_count))
    rows = np.arange(q_count)[None, :]
    gains = np.broadcast_to(gains, scores.shape)
    for step in range(min(mmr.limit, K)):
        closed = taken.copy()
        closed |= block.sparse[None] & (same_domain_chosen >= block.cap[None, :, None])
        marginal = np.where(closed, -np.inf, scores - (mmr.penalty * SCALE) * redundancy)  # scores: 1/SCALE
        pick = marginal.argmax(axis=-1)  # the first of equals: the smaller key
        ok = np.take_along_axis(marginal, pick[..., None], axis=-1)[..., 0] > -np.inf
        dcg += ok * np.take_along_axis(gains, pick[..., None], axis=-1)[..., 0] * _DISCOUNT[step]
        np.put_along_axis(taken, pick[..., None], True, axis=-1)  # harmless where nothing was picked
        sim = block.similarity[rows, pick]  # (G, Qb, D)
        redundancy = np.where(ok[..., None], np.maximum(redundancy, sim), redundancy)
        same_domain_chosen += ok[..., None] * block.same_domain[rows, pick]
    return dcg
