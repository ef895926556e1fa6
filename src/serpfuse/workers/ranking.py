"""Where the ranking step runs: in a server, its worker processes; anywhere else, a thread.

Ranking is pure CPU work (about 2-8 ms a search for rows new to the process). In a thread it still holds the
server's one GIL, so under load every other search's network work (the engine calls, their parses' hops, the
HTTP answers) waits behind it, and the server uses one core however many it has. A server (``start()``, from
``SearchService.start``: ``serve``, the MCP server) therefore ranks in the worker processes that parse its
engines' answers (the shared pool, ``workers.pool.WORKERS``; they load the ranking's tables before they say
they are ready): the loop only pickles the answers out and the response back (about 0.4 ms), and ranking runs
on another core. A process of its own for the ranking held 23 MB more and put every search's ranking in one
queue (100 searches at once: 1.85 s against 1.38; BENCHMARKS.md, "Performance").

It changes nothing in what is computed: the worker calls the very function the thread would, with the same
arguments; when no worker is up (starting, replaced after a death) or the worker fails in any way, the call
runs in a thread instead, exactly as without a worker, so an error is raised there as it always was. A search
cancelled while its ranking runs leaves the worker alone: the ranking is bounded and its result is dropped. A
ranking over its budget (the search's deadline, ``pipeline``) is ended: the worker is killed and replaced, a
thread (a daemon) abandoned. A one-shot search (the CLI, the library) never starts the worker: an interpreter costs more than it saves.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any, TypeVar

from serpfuse.engines.base import EngineError, ParseOverrun
from serpfuse.text import forget_texts
from serpfuse.workers.pool import WORKERS, NoWorker, by_reference, in_daemon_thread

T = TypeVar("T")

# What the server's workers (``WORKERS``: they parse and rank) load before they are ready (the engines come with
# the pipeline), so no search waits for the tables.
PRELOAD = "serpfuse.pipeline:load_tables_for"


def _call(fn: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[T]:
    """In the worker: ``fn(*args, **kwargs)``, as the one-item list the pool's reply carries; then the text
    memos emptied (``text.forget_texts``): they would otherwise fill with every search's rows, which later
    searches seldom meet."""
    result = [fn(*args, **kwargs)]
    forget_texts()
    return result


async def off_loop(fn: Callable[..., T], *args: Any, budget_s: float, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` off the event loop: in a worker when one is up, else in a thread;
    ``TimeoutError`` when it is not done within ``budget_s`` (the worker is then killed and replaced, a thread
    abandoned). A worker forgets the rows' texts afterwards; a thread's process keeps them (a one-shot search,
    a replay ranked again)."""
    ends = time.monotonic() + budget_s
    if WORKERS.ready and by_reference(fn):
        try:
            # a ranking is bounded: one whose search has gone finishes, rather than cost a new worker
            job = (fn, args, kwargs)
            (result,) = await WORKERS.run(_call, job, budget_s, kill_on_cancel=False)
            return result
        except ParseOverrun:
            raise TimeoutError(f"{fn.__name__} took over {budget_s:.2g} s") from None
        except (NoWorker, EngineError):  # no worker free, or it died or failed: the plain path decides
            pass
    return await in_thread(fn, *args, budget_s=ends - time.monotonic(), **kwargs)


async def in_thread(fn: Callable[..., T], *args: Any, budget_s: float, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` in a daemon thread: one over its budget cannot hold a one-shot search's exit."""
    call = functools.partial(fn, *args, **kwargs)
    return await in_daemon_thread(call, budget_s, name="serpfuse-rank")


def ranks_here() -> bool:
    """Whether this process ranks its own searches (no workers started): only then does it need the ranking's
    tables (memory-mapped, the pages it reads) in its own memory."""
    return not WORKERS.started


def start(size: int | None = None) -> None:
    """For servers: rank (and parse) in ``size`` workers (default: as the pool is sized), which start in the
    background (until one is up, rankings use a thread). Before the source starts them, so they load the
    ranking's tables too."""
    if not WORKERS.started:
        WORKERS.preload = PRELOAD
        WORKERS.size = size or WORKERS.size
    WORKERS.start()


def close() -> None:
    WORKERS.close()
