"""``serve --workers N``: N server processes on one listening socket, sharing what must be shared.

uvicorn's supervisor starts the workers (spawned, so each imports serpfuse afresh) and restarts one that dies;
each builds its app with ``worker_app`` from the serve command's flags, passed in the environment. Shared
between the workers: the result cache (its SQLite file, or Redis), and, in Redis when configured, else in
``sqlite_store``'s state file beside the cache: engine cooldowns, each engine's minimum interval between
requests and its outbound budget (one queue per machine), and the HTTP API's per-client token bucket (one limit
per client, whichever worker answers), and the metrics: each worker writes its counts to files in a directory
the supervisor makes (``PROMETHEUS_MULTIPROC_DIR``) and removes when it ends, so ``/metrics``, whichever worker
answers it, adds up all of them (``serve.metrics``). Each worker parses engine answers and ranks in processes
of its own (``serpfuse.workers``, the cores shared out among the workers); they end with it. A worker ends with
its supervisor too, however that ends (``kill -9``, a crash): otherwise it goes on serving the port, which then
cannot be served again.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from serpfuse.settings import Settings

ARGS_ENV = "_SERPFUSE_WORKER_ARGS"  # no SERPFUSE_ prefix: settings must not read it as a setting
PARSERS_ENV = "_SERPFUSE_PARSE_WORKERS"  # how many parse (and ranking) workers each server process starts
COUNT_ENV = "_SERPFUSE_WORKERS"
SUPERVISOR_ENV = "_SERPFUSE_SUPERVISOR"  # the supervisor's pid, to tell when a worker has lost it
PR_SET_PDEATHSIG = 1
WATCH_INTERVAL_S = 0.5  # how often a worker checks that its supervisor is still there
# A worker whose supervisor is gone stops at once (no new connections, the port freed) and has this long to
# finish the searches it is answering; then it ends regardless.
ORPHAN_GRACE_S = 10.0
PREPARE_WAIT_S = 30.0  # before any worker runs, a slow disk may make the first write wait; nothing else does


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def shared_dir(settings: Settings) -> Path:
    """Where the workers share their state file: beside the result cache."""
    return settings.cache_path.parent


def prepare_shared_state(cache_dir: Path) -> None:
    """Create the workers' state file (WAL mode, its tables) once, before they start. Otherwise the first
    requests of N new workers race to create it, and one that waits past its lock timeout for another's first
    write (switching a new file to WAL syncs it to disk) falls back to a rate limit of its own."""
    from serpfuse.state.sqlite_store import state_file

    shared = state_file(cache_dir)
    try:
        shared.connect(PREPARE_WAIT_S)
    finally:
        shared.close()


def run(
    flags: dict[str, Any],
    settings: Settings,
    sock: socket.socket,
    *,
    workers: int,
    log_level: str,
    state_dir: Path,
) -> None:
    """Serve on ``sock`` (bound) with ``workers`` processes until stopped; ``flags`` are ``load_settings``'
    arguments, read again by each worker (``settings``, what they make here, sets the connection bounds);
    ``state_dir`` is where they share their state file (``shared_dir``)."""
    prepare_shared_state(state_dir)
    from uvicorn.supervisors import Multiprocess

    from serpfuse.serve.connections import server_config

    os.environ[ARGS_ENV] = json.dumps(flags)
    os.environ[PARSERS_ENV] = str(max(1, default_workers() // workers))
    os.environ[COUNT_ENV] = str(workers)
    os.environ[SUPERVISOR_ENV] = str(os.getpid())
    with _metrics_dir():
        config = server_config(
            f"{__name__}:worker_app",
            settings,
            log_level=log_level,
            factory=True,
            workers=workers,
            proxy_headers=False,
        )
        sock.set_inheritable(True)
        Multiprocess(config, sockets=[sock]).run()


@contextlib.contextmanager
def _metrics_dir() -> Iterator[None]:
    """A fresh directory for the workers' metric files while they run (stale files would add old counts), set
    in the environment they inherit. One set by whoever started serpfuse is theirs: used, and left alone."""
    from serpfuse.state.metrics import MULTIPROC_ENV

    if os.environ.get(MULTIPROC_ENV):
        yield
        return
    path = tempfile.mkdtemp(prefix="serpfuse-metrics-")
    os.environ[MULTIPROC_ENV] = path
    try:
        yield
    finally:
        os.environ.pop(MULTIPROC_ENV, None)
        shutil.rmtree(path, ignore_errors=True)


def worker_app() -> Any:
    """One worker's app (uvicorn calls it in each worker process)."""
    from serpfuse.serve.http_api import create_app
    from serpfuse.serve.logs import settings_secrets, setup_logging
    from serpfuse.service import SearchService
    from serpfuse.settings import load_settings
    from serpfuse.state.metrics import Metrics
    from serpfuse.workers import WORKERS

    end_with_supervisor(int(os.environ.get(SUPERVISOR_ENV) or os.getppid()))
    WORKERS.size = int(os.environ.get(PARSERS_ENV) or WORKERS.size)
    flags = json.loads(os.environ[ARGS_ENV])
    settings = load_settings(flags.pop("config"), **flags)
    setup_logging(secrets=settings_secrets(settings))  # a spawned worker starts with no logging set up
    metrics = Metrics(workers=int(os.environ[COUNT_ENV]))
    service = SearchService.from_settings(settings, shared_dir=shared_dir(settings), metrics=metrics)
    return create_app(service)


def end_with_supervisor(supervisor: int) -> None:
    """Stop this worker when ``supervisor`` is no longer its parent: SIGTERM (uvicorn's graceful stop, which
    closes the listening socket first), then, ``ORPHAN_GRACE_S`` later, exit outright. Linux sends the SIGTERM
    the moment the supervisor dies (PR_SET_PDEATHSIG); elsewhere, or when it died before that was set, a
    watching thread sends it within ``WATCH_INTERVAL_S``. Its parse workers die with it (``workers.pool``)."""
    signalled = False
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            signalled = ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM) == 0
    if os.getppid() != supervisor:  # gone before the prctl took effect: no signal will come
        signalled = False

    def watch() -> None:
        while os.getppid() == supervisor:
            time.sleep(WATCH_INTERVAL_S)
        if not signalled:  # never twice: a second SIGTERM makes uvicorn drop the searches in flight
            os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(ORPHAN_GRACE_S)
        os._exit(1)

    threading.Thread(target=watch, name="serpfuse-supervisor-watch", daemon=True).start()
