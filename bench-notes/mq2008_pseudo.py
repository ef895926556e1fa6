"""Second attempt (scratch): unsupervised per-query engine weighting families on the metasearch protocol.

Families: pseudo-relevance EM (leave-one-out pseudo-qrels, sharp re-weighting, iterated), per-query engine
families (clusters of near-duplicate lists vote once and never back themselves), RBO agreement, and MC4.
Run: PYTHONPATH=src:.venv/lib/python3.11/site-packages python3 bench-notes/mq2008_pseudo.py explore
"""

from __future__ import annotations

import sys

import numpy as np

sys.path.insert(0, "bench-notes")
from mq2008_pseudo_data import NAMED, baselines, evaluate, lengths, load  # noqa: E402

LOGD = 1.0 / np.log2(np.arange(2, 200))


def votes(R, base, k):
    """E x N matrix of each engine's vote per doc (unweighted)."""
    if base == "rrf":
        return np.where(R > 0, 1.0 / (k + R), 0.0)
    n = lengths(R)[:, None]
    if base == "borda":
        return np.where(R > 0, n - R + 1, 0.0)
    if base == "bordaD":  # borda normalised per engine (combsum of (n-r+1)/n)
        return np.where(R > 0, (n - R + 1) / n, 0.0)
    raise ValueError(base)


def rbo_matrix(R, p):
    """Symmetric RBO-like similarity between engines' lists (truncated at the shorter depth, normalised)."""
    E, N = R.shape
    D = int(R.max())
    # cumulative membership: C[e, d, t] = 1 if engine e ranked d at rank <= t
    agree = np.zeros((E, E))
    wsum = 0.0
    for t in range(1, D + 1):
        M = ((R > 0) & (t >= R)).astype(float)
        inter = M @ M.T
        agree += (p ** (t - 1)) * inter / t
        wsum += p ** (t - 1)
    return agree / wsum


def families(sim, tau):
    """Connected components of engines with similarity > tau."""
    E = sim.shape[0]
    lab = list(range(E))

    def find(a):
        while lab[a] != a:
            lab[a] = lab[lab[a]]
            a = lab[a]
        return a

    for a in range(E):
        for b in range(a + 1, E):
            if sim[a, b] > tau:
                lab[find(a)] = find(b)
    return np.array([find(a) for a in range(E)])


def pseudo_quality(R, S_minus, m, decay, mode):
    """Each engine's DCG@m against its own leave-one-out pseudo-qrel (E x N scores of the others)."""
    E, N = R.shape
    q = np.zeros(E)
    for e in range(E):
        s = S_minus[e]
        if mode == "graded":  # continuous pseudo gains: others' score relative to the best, top m only
            order = np.argsort(-s, kind="stable")
            g = np.zeros(N)
            top = order[:m]
            mx = s[top[0]] if s[top[0]] > 0 else 1.0
            g[top] = s[top] / mx
        else:  # rank-decaying pseudo gains
            order = np.argsort(-s, kind="stable")
            g = np.zeros(N)
            g[order[:m]] = decay ** np.arange(min(m, N))
            g[s <= 0] = 0.0
        r = R[e]
        sel = (r > 0) & (r <= m)
        dcg = (g[sel] * LOGD[(r[sel] - 1).astype(int)]).sum()
        ideal = (np.sort(g)[::-1][:m] * LOGD[: min(m, N)]).sum()
        q[e] = dcg / ideal if ideal > 0 else 0.0
    return q


def pem(
    R,
    k=10,
    base="rrf",
    m=8,
    decay=0.8,
    mode="decay",
    power=2.0,
    iters=2,
    cov=1.0,
    tau=None,
    p=0.9,
    temp=None,
    fam_vote=True,
    final_base=None,
):
    """Pseudo-relevance EM per query. tau: cluster engines by RBO>tau; families back nobody of their own."""
    E = R.shape[0]
    n = lengths(R)
    w0 = (n / n.max()) ** cov
    V = votes(R, base, k)
    if E < 3:
        return (w0[:, None] * votes(R, final_base or base, k)).sum(0)
    if tau is not None:
        fam = families(rbo_matrix(R, p), tau)
        same = fam[:, None] == fam[None, :]
        share = 1.0 / same.sum(1) if fam_vote else np.ones(E)
    else:
        same = np.eye(E, dtype=bool)
        share = np.ones(E)
    if len(set(map(int, same.argmax(1)))) < 3 and tau is not None:
        return (w0[:, None] * votes(R, final_base or base, k)).sum(0)
    w = w0.copy()
    for _ in range(iters):
        contrib = (w * share)[:, None] * V  # E x N
        S_minus = (~same).astype(float) @ contrib  # others' (other families') evidence, per engine
        q = pseudo_quality(R, S_minus, m, decay, mode)
        if q.max() <= 0:
            break
        if temp is not None:
            rel = np.exp((q - q.max()) / temp)
        else:
            rel = np.maximum((q / q.max()) ** power, 1e-6)
        w = w0 * rel
    Vf = votes(R, final_base or base, k)
    return ((w * share)[:, None] * Vf).sum(0)


BUCKETS = ((1, 3), (4, 8), (9, 10_000))


def pem_depth(R, k=10, m=8, decay=0.8, power=2.0, cov=1.0, shrink=1.0):
    """Per-depth reliability: an engine's vote at rank r is weighted by how well the others back its rows in
    r's depth band (1-3, 4-8, 9+), shrunk towards its whole-list quality (shrink rows of prior)."""
    E = R.shape[0]
    n = lengths(R)
    w0 = (n / n.max()) ** cov
    V = votes(R, "rrf", k)
    if E < 3:
        return (w0[:, None] * V).sum(0)
    S_minus = V.sum(0)[None, :] - V
    q = pseudo_quality(R, S_minus, m, decay, "decay")
    W = np.zeros_like(R)
    for e in range(E):
        s = S_minus[e]
        g = s / s.max() if s.max() > 0 else s
        for lo, hi in BUCKETS:
            sel = (R[e] >= lo) & (R[e] <= hi)
            cnt = sel.sum()
            band = (g[sel].sum() + shrink * q[e]) / (cnt + shrink) if cnt else q[e]
            W[e, sel] = band
    mx = W.max() if W.max() > 0 else 1.0
    W = np.maximum((W / mx) ** power, 1e-6)
    return (w0[:, None] * W * V).sum(0)


def agree_weights(R, k=10, m=8, cov=1.0):
    """The shipped agree's weights (graded LOO pseudo-qrel, power 1, one pass), for weighting other fusers."""
    n = lengths(R)
    w0 = (n / n.max()) ** cov
    if R.shape[0] < 3:
        return w0
    V = votes(R, "rrf", k)
    q = pseudo_quality(R, V.sum(0)[None, :] - V, m, 0.8, "graded")
    return w0 * np.maximum(q / q.max(), 1e-6) if q.max() > 0 else w0


def rbo_agree(R, k=10, p=0.9, power=2.0, cov=1.0, iters=1, base="rrf"):
    n = lengths(R)
    w0 = (n / n.max()) ** cov
    E = R.shape[0]
    V = votes(R, base, k)
    if E < 3:
        return (w0[:, None] * V).sum(0)
    sim = rbo_matrix(R, p)
    np.fill_diagonal(sim, 0.0)
    w = w0.copy()
    for _ in range(iters):
        a = sim @ w / (w.sum() - w)
        w = w0 * np.maximum((a / a.max()) ** power, 1e-6) if a.max() > 0 else w0
    return (w[:, None] * V).sum(0)


def mc4(R, w=None, iters=60, alpha=0.05):
    """MC4: from doc a go to b if a weighted majority of engines that rank both prefer b (absent = below)."""
    E, N = R.shape
    w = np.ones(E) if w is None else w
    big = np.where(R > 0, R, 1e6)
    both = (R[:, :, None] > 0) | (R[:, None, :] > 0)  # at least one of a, b shown by the engine
    pref = (big[:, None, :] < big[:, :, None]) & both  # engine prefers b over a
    opp = (big[:, :, None] < big[:, None, :]) & both
    wp = np.tensordot(w, pref, axes=1)
    wo = np.tensordot(w, opp, axes=1)
    T = (wp > wo).astype(float) / N
    np.fill_diagonal(T, 0.0)
    T[np.arange(N), np.arange(N)] = 1.0 - T.sum(1)
    T = (1 - alpha) * T + alpha / N
    pi = np.full(N, 1.0 / N)
    for _ in range(iters):
        pi = pi @ T
    return pi + 1e-9 * (votes(R, "rrf", 60) * w[:, None]).sum(0)


def report(data, qsel, method, names, base_cache):
    gains = []
    for name in names:
        qas = [qa for qa in data[name] if qa.subset in qsel]
        v = evaluate(qas, method).mean()
        b = base_cache[name]
        best = max(b[x] for x in ("rrf", "borda", "combmnz", "single"))
        gains.append(100 * (v - best) / best)
    return gains


if __name__ == "__main__":
    data = load()
    qsel = set(sys.argv[2].split(",")) if len(sys.argv) > 2 else {"S1", "S2", "S3"}
    names = list(NAMED) + [f"rnd{i}" for i in range(8)]
    base_cache = {}
    for name in names:
        qas = [qa for qa in data[name] if qa.subset in qsel]
        b = baselines(qas)
        base_cache[name] = {x: float(b[x].mean()) for x in ("rrf", "borda", "combmnz", "single")}
    grid = {
        "agree-like(graded,m8,p1,it1)": lambda R: pem(R, mode="graded", power=1, iters=1),
        "pem decay.8 m8 p2 it2": lambda R: pem(R),
        "pem decay.8 m8 p4 it3": lambda R: pem(R, power=4, iters=3),
        "pem decay.7 m5 p2 it3": lambda R: pem(R, m=5, decay=0.7, iters=3),
        "pem decay.9 m10 T.1 it3": lambda R: pem(R, m=10, decay=0.9, temp=0.1, iters=3),
        "pem fam.5": lambda R: pem(R, tau=0.5),
        "pem fam.35": lambda R: pem(R, tau=0.35),
        "pem borda-final": lambda R: pem(R, final_base="borda"),
        "rbo agree p.9 pw2": lambda R: rbo_agree(R),
        "mc4": lambda R: mc4(R),
        "mc4 agree-weighted": lambda R: mc4(R, w=agree_weights(R)),
        "mc4 agree-weighted^2": lambda R: mc4(R, w=agree_weights(R) ** 2),
        "depth p1": lambda R: pem_depth(R, power=1),
        "depth p2": lambda R: pem_depth(R, power=2),
        "depth p2 shrink3": lambda R: pem_depth(R, power=2, shrink=3),
    }
    print("setups:", names)
    for label, fn in grid.items():
        g = report(data, qsel, fn, names, base_cache)
        print(f"{label:32s} mean {np.mean(g):+.2f}  " + " ".join(f"{x:+.1f}" for x in g), flush=True)
