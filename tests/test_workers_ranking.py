"""The ranking worker (``serpfuse.workers.ranking``): a server ranks in the processes it parses in, so the loop's core is
left to the network. What it must not change: every crw56 response is what ranking inline gives; a worker that dies
costs no search (the thread path answers meanwhile, and a new worker starts); an error is raised as the thread
path raises it; a search cancelled while it ranks leaves the worker alone; nothing is left running after close."""

from __future__ import annotations

import asyncio
import gc
import json
import math
import os
import signal
import time

import pytest

from conftest import running, until
from serpfuse import text
from serpfuse.config import RankingConfig
from serpfuse.models import SearchRequest
from serpfuse.pipeline import rank_answers, search
from serpfuse.ranking.query import analyze_query
from serpfuse.ranking.specificity import tables_loaded
from serpfuse.service import SearchService
from serpfuse.settings import Settings
from serpfuse.sources import parsing
from serpfuse.sources.fanout import fan_out
from serpfuse.sources.replay import ReplaySource
from serpfuse.workers import WORKERS, ranking
from test_fast_paths import NOW


@pytest.fixture
async def worker(monkeypatch):
    monkeypatch.setattr(WORKERS, "size", 1)  # one, whatever the cores: the tests name its pid
    ranking.start()
    try:
        await until(lambda: WORKERS.ready, "no ranking worker started")
        yield WORKERS
    finally:
        ranking.close()


@pytest.fixture
def threads(monkeypatch) -> list[str]:
    """The names of the functions that ran in a thread instead of the worker."""
    used: list[str] = []
    plain = ranking.in_thread

    async def counted(fn, *args, **kwargs):
        used.append(getattr(fn, "__name__", repr(fn)))
        return await plain(fn, *args, **kwargs)

    monkeypatch.setattr(ranking, "in_thread", counted)
    return used


def inline(source: ReplaySource, request: SearchRequest):
    async def run():
        query = analyze_query(request.query)
        answers = (await fan_out(source, request, query)).answers
        return rank_answers(answers, request, config=RankingConfig(), query=query, now=NOW, explain=True)

    return run()


def same(a, b) -> bool:
    a, b = a.to_json_dict(), b.to_json_dict()
    a.pop("tookMs"), b.pop("tookMs")
    return a == b


async def test_every_crw56_search_ranked_in_the_worker_answers_as_inline_ranking(recording, worker, threads):
    source = ReplaySource(recording)
    config = RankingConfig()
    for entry in json.loads(recording.read_text(encoding="utf-8")):
        for fields in ({}, {"strategy": "rrf"}, {"time_range": "year"}):
            request = SearchRequest(query=entry["query"], **fields)
            got = await search(request, source=source, config=config, now=NOW, explain=True)
            assert same(got, await inline(source, request)), (entry["query"], fields)
    assert threads == []  # every one of them in the worker


async def test_a_worker_that_dies_costs_no_search_and_is_replaced(recording, worker, threads):
    source = ReplaySource(recording)
    request = SearchRequest(query=json.loads(recording.read_text(encoding="utf-8"))[0]["query"])
    (first,) = worker.pids()
    os.kill(first, signal.SIGKILL)
    got = await search(request, source=source, now=NOW, explain=True)
    assert same(got, await inline(source, request))
    assert threads == ["rank_answers"]  # answered in a thread while the worker was gone
    await until(lambda: worker.ready and worker.pids() != [first], "no new ranking worker")
    got = await search(request, source=source, now=NOW, explain=True)
    assert same(got, await inline(source, request))
    assert threads == ["rank_answers"]  # the new worker ranked this one


async def test_an_error_is_raised_as_the_thread_path_raises_it(worker, threads):
    with pytest.raises(ValueError, match="math domain error"):
        await ranking.off_loop(math.sqrt, -1.0, budget_s=30)
    assert threads == ["sqrt"]  # the worker failed it; the thread path said why
    assert await ranking.off_loop(math.sqrt, 16.0, budget_s=30) == 4.0
    assert threads == ["sqrt"]


async def test_a_call_cancelled_while_it_runs_leaves_the_worker_alone(worker, threads):
    pids = worker.pids()
    call = asyncio.ensure_future(ranking.off_loop(time.sleep, 0.3, budget_s=30))
    await asyncio.sleep(0.1)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert await ranking.off_loop(math.sqrt, 9.0, budget_s=30) == 3.0  # after the abandoned one finished
    assert worker.pids() == pids and threads == []


async def test_a_call_over_its_budget_ends_the_worker_and_a_new_one_ranks(worker, threads):
    (first,) = worker.pids()
    t0 = time.perf_counter()
    with pytest.raises(TimeoutError):
        await ranking.off_loop(time.sleep, 30.0, budget_s=0.3)
    assert time.perf_counter() - t0 < 5.0 and threads == []  # not tried again in a thread
    await until(lambda: worker.ready and bool(worker.pids()) and worker.pids() != [first], "no new worker")
    assert await ranking.off_loop(math.sqrt, 4.0, budget_s=30) == 2.0
    assert threads == []


async def test_a_service_starts_the_worker_and_its_close_ends_it(recording, tmp_path):
    service = SearchService.from_settings(Settings(replay=str(recording), cache_dir=tmp_path))
    gc.unfreeze()
    service.start()
    assert gc.get_freeze_count() > 0  # what the started server holds is kept out of the cycle collector
    await until(lambda: WORKERS.ready, "service.start() started no ranking worker")
    pids = WORKERS.pids()
    await service.aclose()
    assert not WORKERS.ready
    await until(lambda: not any(map(running, pids)), "the ranking worker outlived its service", 10)


async def test_the_worker_has_loaded_the_ranking_tables_when_it_is_ready(worker, threads):
    # Asked in the worker's own process: a search there never waits for the word tables.
    assert await ranking.off_loop(tables_loaded, None, budget_s=30) is True
    assert threads == []  # answered by the worker, not by this process's thread


async def test_what_a_worker_loaded_before_it_was_ready_is_kept_out_of_the_cycle_collector(worker):
    gc.unfreeze()  # so a count from this process (a CLI test froze it, say) cannot pass for the worker's
    assert await ranking.off_loop(gc.get_freeze_count, budget_s=30) > 0


async def test_a_server_ranks_in_the_workers_it_parses_in(worker, threads):
    assert worker is WORKERS is parsing.WORKERS  # one pool: no process of its own for the ranking
    assert worker.preload == ranking.PRELOAD  # started by the ranking, so its workers load the tables
    ranked_in = await ranking.off_loop(os.getpid, budget_s=30)
    assert worker.pids() == [ranked_in] != [os.getpid()] and threads == []


async def test_worker_processes_sets_how_many_workers_a_service_starts(recording, tmp_path, monkeypatch):
    monkeypatch.setattr(WORKERS, "size", 3)  # the cores, say; put back after
    settings = Settings(replay=str(recording), cache_dir=tmp_path, worker_processes=1)
    service = SearchService.from_settings(settings)
    service.start()
    try:
        await until(lambda: WORKERS.ready, "service.start() started no worker")
        await asyncio.sleep(0.5)  # none more comes
        assert len(WORKERS.pids()) == 1
    finally:
        await service.aclose()


def remembered_texts() -> int:
    """How many entries the text memos of the process that runs it hold."""
    return sum(memo.cache_info().currsize for memo in text._TEXT_MEMOS)


async def test_a_worker_forgets_a_search_s_texts_after_its_ranking(recording, worker, threads):
    """A ranking in a worker leaves no texts for searches that will not meet them."""
    source = ReplaySource(recording)
    request = SearchRequest(query=json.loads(recording.read_text(encoding="utf-8"))[0]["query"])
    query = analyze_query(request.query)
    answers = (await fan_out(source, request, query)).answers
    rank = {"config": RankingConfig(), "query": query, "now": NOW}
    await ranking.off_loop(rank_answers, answers, request, budget_s=30, **rank)
    assert await ranking.off_loop(remembered_texts, budget_s=30) == 0
    await search(request, source=source, now=NOW)  # the pipeline's own ranking too
    assert await ranking.off_loop(remembered_texts, budget_s=30) == 0
    assert threads == []


async def test_a_ranking_in_a_thread_leaves_the_process_its_texts(recording):
    """Without workers (a one-shot search, the library, a replay ranked again) the process keeps its memos."""
    source = ReplaySource(recording)
    request = SearchRequest(query=json.loads(recording.read_text(encoding="utf-8"))[0]["query"])
    text.forget_texts()
    await search(request, source=source, now=NOW)
    assert remembered_texts() > 0
