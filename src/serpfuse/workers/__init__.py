"""The speed machinery: the processes that parse engine answers, rank searches and extract pages off the event
loop, each job under a budget of time and memory, and stoppable.

``pool`` is the one pool class (``WorkerPool``: fresh interpreters over pipes, a job over its budget ended by
killing its worker, which is replaced at once) and the daemon threads everything falls back to while no worker
is up; ``WORKERS`` is the server's shared pool, in which ``sources.parsing`` parses engine answers and
``ranking`` ranks searches (``ranking.start()`` starts it for a server, ``ranking.off_loop`` ranks in it, or in
a thread without it). The reader extracts pages in a pool of its own (``reader.workers``). A one-shot search
(the CLI, the library) starts none of them: it parses and ranks in daemon threads.
"""

from __future__ import annotations

from serpfuse.workers import ranking
from serpfuse.workers.pool import (
    WORKER_EXTRA_MEMORY,
    WORKERS,
    DaemonThreads,
    NoWorker,
    WorkerPool,
    beginning,
    by_reference,
    in_daemon_thread,
)

__all__ = [
    "WORKERS",
    "WORKER_EXTRA_MEMORY",
    "DaemonThreads",
    "NoWorker",
    "WorkerPool",
    "beginning",
    "by_reference",
    "in_daemon_thread",
    "ranking",
]
