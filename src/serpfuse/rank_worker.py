"""Where the ranking step runs: in a server, a worker process of its own; anywhere else, a thread.

Ranking is pure CPU work (about 5-10 ms a search for rows new to the process). In a thread it still holds the
server's one GIL, so under load every other search's network work (the engine calls, their parses' hops, the
HTTP answers) waits behind it, and the server uses one core however many it has. A server (``start()``, from
``SearchService.start``: ``serve``, the MCP server) therefore ranks in a worker process (``sources.parsing``'s
pool, importing the pipeline instead of the engines): the loop only pickles the answers out and the response
back (about 0.4 ms), and ranking runs on another core. The worker keeps every per-text memo of the ranking
code warm for every search of that server, as the server's own process did.

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
from serpfuse.sources.parsing import ParsePool, _by_reference, _NoWorker, in_daemon_thread

T = TypeVar("T")

# The worker loads the ranking's tables before it is ready, so no search waits for them there.
WORKERS = ParsePool(size=1, preload="serpfuse.pipeline:load_tables_for", kill_on_cancel=False)


def _call(fn: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[T]:
    """In the worker: ``fn(*args, **kwargs)``, as the one-item list the pool's reply carries."""
    return [fn(*args, **kwargs)]


async def off_loop(fn: Callable[..., T], *args: Any, budget_s: float, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` off the event loop: in the ranking worker when it is up, else in a thread;
    ``TimeoutError`` when it is not done within ``budget_s`` (the worker is then killed and replaced, a thread
    abandoned)."""
    ends = time.monotonic() + budget_s
    if WORKERS.ready and _by_reference(fn):
        try:
            (result,) = await WORKERS.parse(_call, (fn, args, kwargs), budget_s)
            return result
        except ParseOverrun:
            raise TimeoutError(f"{fn.__name__} took over {budget_s:.2g} s") from None
        except (_NoWorker, EngineError):  # no worker free, or it died or failed: the plain path decides
            pass
    return await in_thread(fn, *args, budget_s=ends - time.monotonic(), **kwargs)


async def in_thread(fn: Callable[..., T], *args: Any, budget_s: float, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` in a daemon thread: one over its budget cannot hold a one-shot search's exit."""
    call = functools.partial(fn, *args, **kwargs)
    return await in_daemon_thread(call, budget_s, name="serpfuse-rank")


def ranks_here() -> bool:
    """Whether this process ranks its own searches (no ranking worker started): only then does it need the
    ranking's tables (memory-mapped, the pages it reads) in its own memory."""
    return not WORKERS.started


def start() -> None:
    """For servers: start the ranking worker (in the background; until it is up, rankings use a thread)."""
    WORKERS.start()


def close() -> None:
    WORKERS.close()
