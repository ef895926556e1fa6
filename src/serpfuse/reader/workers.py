"""Where a page is extracted: off the event loop, under a budget of time, memory and input size.

Extraction is CPU work on hostile input, as parsing an engine's answer is (``sources.parsing`` and
``workers.pool`` say why a thread does not spare the event loop, and why a thread over its budget cannot be
stopped): a few megabytes of
table markup cost trafilatura minutes and hundreds of megabytes, and a PDF of a few hundred kilobytes can
inflate its content streams to tens of megabytes of drawing operators. So a server extracts each page in a
worker process of ``workers.WorkerPool``, a pool of its own (``WORKERS``: its workers import the
extractors, not the engines, and a slow page never waits behind or delays an engine's answer): a page over
its time is ended by killing its worker (replaced at once), a page that needs more than the worker's memory
cap (``WORKER_EXTRA_MEMORY`` over its start) fails alone, and a body over ``Budget``'s input size is refused
before any work. Each is a ``PageOverBudget`` error: "the page is too large or too slow to read (why)".

Who uses the workers: a reader told to (``Reader(workers=True)``: ``serpfuse read``), or by default a process
that ranks its searches in a worker process, as every server does (``SearchService.start``). Anything else (a
library call, ``search --read``) extracts in a daemon thread under the same time budget: abandoned when over
it, it cannot hold the program's exit. The workers start on the first page (most of a second: they import
trafilatura), end with the process (they die with it, and at exit), and are as many as the engines' parse
workers (the cores, shared out by ``serve --workers``).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any

from serpfuse import workers
from serpfuse.engines.base import ParseFailure, ParseOverrun
from serpfuse.reader.fetch import PDF_TYPES, Fetched
from serpfuse.reader.models import Page, PageOverBudget, ReadError
from serpfuse.reader.pages import media_kind, page_of
from serpfuse.workers import WORKER_EXTRA_MEMORY, NoWorker, WorkerPool, in_daemon_thread

WORKER_START_S = (
    30.0  # how long a page waits for the first worker (it imports the extractors) before a thread
)


@dataclass(frozen=True)
class Budget:
    """What the reader spends on extracting one page. Memory is the worker's cap (``WORKER_EXTRA_MEMORY``)."""

    time_s: float = 10.0  # an ordinary article takes tens of milliseconds
    max_markup_bytes: int = 8 * 1024 * 1024  # HTML and text: the tree built from them is many times larger
    max_pdf_bytes: int = 50 * 1024 * 1024  # a PDF is compressed; its cost is bounded by time and memory


WORKER_NICENESS = 10  # below the server: on a machine whose cores are all extracting, its loop still runs


def warm() -> None:
    """In a new worker, before it says it is ready: yield the CPU to the server, and import the extractors, so
    no page waits for them."""
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICENESS)
    import serpfuse.reader.extract  # noqa: F401


WORKERS = WorkerPool(size=1, preload=f"{__name__}:warm")
_closing_registered = False
_start_lock = threading.Lock()
# One slot per worker, per event loop: a page's time budget starts when a worker is free for it, so a page
# queued behind others is not failed as "too slow" for the server's being busy.
_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()


def start(size: int | None = None) -> None:
    """Start the extraction workers in the background (idempotent); ``size`` defaults to the engines' parse
    workers' number."""
    global _closing_registered
    with _start_lock:
        if WORKERS.started:
            return
        WORKERS.size = size or workers.WORKERS.size
        WORKERS.start()
        if not _closing_registered:
            atexit.register(WORKERS.close)
            _closing_registered = True


def close() -> None:
    WORKERS.close()


def check_size(fetched: Fetched, budget: Budget) -> None:
    is_pdf = media_kind(fetched) in PDF_TYPES
    cap = budget.max_pdf_bytes if is_pdf else budget.max_markup_bytes
    if len(fetched.body) > cap:
        what = "PDF" if is_pdf else "markup"
        raise PageOverBudget(f"{len(fetched.body):,} bytes of {what}; the reader extracts at most {cap:,}")


async def extract(fetched: Fetched, asked: str, budget: Budget, *, in_workers: bool) -> Page:
    """``page_of(fetched, asked)`` off the event loop within ``budget``; ``PageOverBudget`` when it would cost
    more. In a worker process when ``in_workers`` (they start now if they have not), else in a thread."""
    check_size(fetched, budget)
    if in_workers:
        start()
        if await _until_ready(WORKER_START_S):
            async with _slot():
                try:
                    return await _in_worker(fetched, asked, budget)
                except NoWorker:  # every worker died and none came back: a thread, as without them
                    pass
    try:
        return await in_daemon_thread(page_of, budget.time_s, fetched, asked, name="serpfuse-extract")
    except TimeoutError:
        raise _too_slow(budget.time_s) from None


def _too_slow(budget_s: float) -> PageOverBudget:
    return PageOverBudget(f"extraction took over {budget_s:g} s")


async def _in_worker(fetched: Fetched, asked: str, budget: Budget) -> Page:
    try:
        ((kind, value),) = await WORKERS.run(_extract_here, (fetched, asked), budget.time_s)
    except ParseOverrun:
        raise _too_slow(budget.time_s) from None
    except ParseFailure:  # the worker died under it: the memory cap, or a crash in C code
        raise PageOverBudget(
            f"the extraction worker died (it may use {WORKER_EXTRA_MEMORY // 2**20} MB)"
        ) from None
    if kind == "page":
        return value
    cls, message = value
    error = cls.__new__(cls)  # as raised: not through a constructor that would word the message again
    Exception.__init__(error, message)
    raise error


def _extract_here(fetched: Fetched, asked: str) -> list[tuple[str, Any]]:
    """In the worker: the page, or the reader's error as (class, message), as the one-item list the pool's
    reply carries."""
    try:
        return [("page", page_of(fetched, asked))]
    except ReadError as exc:
        return [("error", (type(exc), str(exc)))]


async def _until_ready(timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not WORKERS.ready:
        if time.monotonic() > deadline or not WORKERS.started:
            return False
        await asyncio.sleep(0.02)
    return True


def _slot() -> asyncio.Semaphore:
    loop = asyncio.get_running_loop()
    slot = _slots.get(loop)
    if slot is None:
        slot = _slots[loop] = asyncio.Semaphore(WORKERS.size)
    return slot
