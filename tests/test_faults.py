"""The fault matrix in the suite: every hostile engine answer, played on loopback against one real
HTTP API process, ends by the deadline with the healthy engine's rows kept, the faulty engine reported for
what it did, /healthz answering while it happens, and the process's peak RSS under 200 MB.

``python tests/fault_matrix.py`` runs the same faults one process each and prints the table BENCHMARKS.md
quotes.
"""

from __future__ import annotations

import pytest

from fault_matrix import DEADLINE_S, faults, run_all

# The target is deadline + 0.25 s (BENCHMARKS.md measures it with `python tests/fault_matrix.py`); on a shared,
# loaded 2-core machine a test allows 1 s, still far from the 14 s and 122 s this guards against.
MAX_OVERRUN_S = 1.0
MAX_PEAK_RSS_MB = 200
GZIP_BOMB = "gzip bomb (200 MB inflated)"


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    # The flood in its own process, the other faults in one: each process's peak is then the peak of the
    # faults it played (one process for all would add up their leftovers).
    names = [f.name for f in faults()]
    alone = ["30,000 rows", GZIP_BOMB]
    groups = [[n] for n in alone] + [[n for n in names if n not in alone]]
    return {o.fault: o for o in run_all(tmp_path_factory.mktemp("faults"), groups=groups)}


@pytest.mark.parametrize("fault", faults(), ids=lambda f: f.name)
def test_a_faulty_engine_never_takes_the_search_down(outcomes, fault):
    o = outcomes[fault.name]
    assert o.status == 200
    assert o.took_s <= DEADLINE_S + MAX_OVERRUN_S, f"{fault.name}: search took {o.took_s:.2f} s"
    assert o.engines["wikipedia"] == "ok" and o.engines[fault.engine] in fault.statuses, o.engines
    assert o.rows["wikipedia"] == 10  # the healthy engine's rows are kept...
    if fault.statuses != ("ok",):  # ...and, when the faulty one gave nothing, they are the answer
        assert o.result_engines == ["wikipedia"]
    if fault.name == "30,000 rows":  # the flood has no more say than an engine that answered as asked
        flood = [e for e in o.result_engines if e.startswith("searxng:")]
        assert flood == ["searxng:flood"]
    # /healthz kept answering while the faulty search ran (its latency goes to BENCHMARKS.md, not here).
    assert o.healthz_before_end >= 1


def test_peak_memory_stays_bounded(outcomes):
    peak = max(o.peak_rss_mb for name, o in outcomes.items() if name != GZIP_BOMB)
    assert 0 < peak < MAX_PEAK_RSS_MB
    assert max(o.helper_peak_rss_mb for o in outcomes.values()) < MAX_PEAK_RSS_MB  # each parse worker too


def test_peak_memory_stays_bounded_under_a_gzip_bomb(outcomes):
    assert 0 < outcomes[GZIP_BOMB].peak_rss_mb < MAX_PEAK_RSS_MB


def test_nothing_the_app_started_outlives_it(outcomes):
    """The parse workers (and anything else the app started) end with it."""
    assert all(o.helper_peak_rss_mb > 0 for o in outcomes.values())  # its parse workers ran
    assert [o.leftovers for o in outcomes.values() if o.leftovers] == []
