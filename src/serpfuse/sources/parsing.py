"""Where an engine's answer is parsed: off the event loop, under a time budget, and stoppable.

A parse is CPU work on hostile input. In a thread it still holds the GIL for each whole C call: ``json.loads``
of a 5 MB answer takes 155 ms, and the server's loop (every other search, ``/healthz``) waits that long. Even
a small answer that is costly to read (SearXNG's position solver, 50 ms of Python on a 7 KB answer) slows the
loop far beyond its own time: every socket read or write the loop makes then waits for the GIL's switch
interval (5 ms) again (/healthz took 45-160 ms during it, 15-22 ms with the parse in a worker). And a thread
that overruns its budget cannot be stopped, only abandoned. So a server (``LiveSource.start``: ``serve``, the
MCP server) parses every answer in a worker process of the server's pool (``workers.WORKERS``, whose design
``workers.pool`` describes): the loop only waits on a pipe, and a parse over its budget is ended by killing its
worker, which is replaced at once. The round trip costs about a millisecond more than a thread for an ordinary
page (``tests/parse_stall.py`` measures both). A one-shot search (the CLI) never starts the workers, and parses
in a thread: it has no other request to stall, and starting an interpreter would cost it more than it saves.

An engine's parse function goes to a worker when it can be sent by reference (``by_reference``: a module's
own top-level function), anything else to a thread, as does every answer while no worker is up. An answer
that would need more memory than a worker may take fails that parse (``ParseFailure``) without touching the
server.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable
from typing import Any

from serpfuse.engines.base import ParseOverrun
from serpfuse.models import EngineRow
from serpfuse.workers import WORKERS, DaemonThreads, NoWorker, beginning, by_reference

Parse = Callable[..., Iterable[EngineRow]]

# Small answers, and every answer while no worker is up. Two threads: an abandoned parse (its budget spent)
# finishes by itself within the bounds' worst case while the other thread carries on.
_THREADS = DaemonThreads(2, "serpfuse-parse")


async def parse_answer(fn: Parse, args: tuple[Any, ...], budget_s: float) -> list[EngineRow]:
    """``fn(*args)``, the parse of an answer, off the event loop within ``budget_s``: in a worker process when
    the workers are up and ``fn`` can be sent by reference; else in a thread. ``ParseOverrun`` when it does not
    finish in time."""
    if WORKERS.ready and by_reference(fn):
        with contextlib.suppress(NoWorker):
            return await WORKERS.run(fn, args, budget_s)
    return await parse_in_thread(lambda: fn(*args), budget_s)


async def parse_in_thread(parse: Callable[[], Iterable[EngineRow]], budget_s: float) -> list[EngineRow]:
    """``parse()`` in a parser thread; ``ParseOverrun`` when it is not done within ``budget_s``. The thread is
    abandoned, not stopped (Python cannot stop one): the input bounds keep what it has left to do short."""
    began, signal = beginning()

    def run() -> list[EngineRow]:
        signal()
        return list(parse())

    future = asyncio.get_running_loop().run_in_executor(_THREADS, run)
    await asyncio.wait((began, future), return_when=asyncio.FIRST_COMPLETED)
    try:
        async with asyncio.timeout(max(0.0, budget_s)):
            return await future
    except TimeoutError:
        raise ParseOverrun(f"parsing the answer took over {max(0.0, budget_s):.2g} s; abandoned") from None
