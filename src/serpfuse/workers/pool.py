"""The worker processes' pool: CPU work on hostile or heavy input, off the event loop, under a budget of time and
memory, and stoppable.

A thread spares the event loop nothing while it holds the GIL (``sources.parsing`` says how much), and a
thread that overruns its budget cannot be stopped, only abandoned. A job in a worker process leaves the loop
waiting on a pipe only, and one over its budget is ended by killing its worker, which is replaced at once.

Each worker is a fresh interpreter that imports what its pool preloads (the engines, by default; and nothing of
the server: not multiprocessing's fork server, which would also import the server's main script in every
worker) and serves one job at a time over its own pipes. The server's shared pool (``WORKERS``) parses its
engines' answers (``sources.parsing``) and ranks its searches (``workers.ranking``): a process of its own for
the ranking made one process more and put every search's ranking in one queue; in the parse workers the
rankings spread over the cores (100 searches at once: faster and smaller; BENCHMARKS.md, "Performance"). The
reader extracts pages in a pool of its own (``reader.workers``). A pool holds ``size`` workers (the cores,
shared out by ``serve --workers``; the ``worker_processes`` setting). A replacement starts in the background
(about a second); meanwhile jobs use the other workers, or their caller's thread (``NoWorker``).
A function is sent by reference (its module and name, ``by_reference``), so only a module's own top-level
functions go to a worker, anything else to a thread. Bounded memory: a worker's address space may grow at
most ``WORKER_EXTRA_MEMORY`` over its start, so a job that would need more fails (``ParseFailure``) without
touching the server. Nothing outlives the server: ``close()`` (the source's ``aclose``) kills the workers, a
worker exits when its pipe closes, and on Linux it is killed when the server dies.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import importlib
import logging
import os
import pickle
import queue
import resource
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from serpfuse.engines.base import EngineError, ParseFailure, ParseOverrun
from serpfuse.errors import SerpfuseError

T = TypeVar("T")

log = logging.getLogger(__name__)

WORKER_EXTRA_MEMORY = 512 * 1024 * 1024  # address space a worker may add to what it starts with
READY = b"ready"  # a new worker's first message: the engines are imported


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


# --- the worker process --------------------------------------------------------------------------------------


def worker_main(inbox: int, outbox: int, preload: str = "serpfuse.engines") -> None:
    """A worker's life: one parse per message on ``inbox``, its reply on ``outbox``, until the server closes
    the pipe (``python -c "...worker_main(R, W)"``; ``preload`` is imported first: the engines, every parse
    function a worker is sent, or the pipeline for the ranking worker; ``module:function`` also calls that
    function, before the worker says it is ready)."""
    module, _, call = preload.partition(":")
    loaded = importlib.import_module(module)
    if call:
        getattr(loaded, call)()
    gc.freeze()  # the modules and tables loaded so far live as long as the worker: no collection rescans them

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's; it ends us by closing the pipe
    _cap_memory()
    receive, send = Connection(inbox, writable=False), Connection(outbox, readable=False)
    send.send_bytes(READY)
    while True:
        try:
            message = receive.recv_bytes()
        except (EOFError, OSError):
            return
        try:
            fn, args = pickle.loads(message)
            reply: tuple[str, Any] = ("rows", list(fn(*args)))
        except EngineError as exc:
            reply = ("error", _error_state(exc))
        except MemoryError:
            reply = (
                "error",
                _error_state(ParseFailure("parsing the answer needed more memory than allowed")),
            )
        except Exception as exc:  # a parser bug; its text may quote the body, so only its type goes back
            reply = ("error", _error_state(ParseFailure(f"parser failed: {type(exc).__name__}")))
        try:
            send.send_bytes(pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL))
        except (EOFError, OSError):
            return


def _error_state(error: EngineError) -> tuple[type[EngineError], str, dict[str, Any]]:
    """An engine error as it crosses the pipe: whole (``cooldown_s``, ``retry_after_s``...), whatever the
    arguments its class's constructor takes."""
    return type(error), error.message, dict(error.__dict__)


def _rebuilt(state: tuple[type[EngineError], str, dict[str, Any]]) -> EngineError:
    cls, message, fields = state
    error = cls.__new__(cls)
    Exception.__init__(error, message)
    error.__dict__.update(fields)
    return error


def _die_with_parent(parent: int) -> str:
    """The first statements of a worker's ``python -c``, before any import (the engines take seconds to import
    on a loaded machine, and a server killed meanwhile must not leave the worker behind): on Linux, be killed
    when the server dies (strictly: the pool thread that started us, which lives as long as the pool); and exit
    at once if it died before that took effect."""
    code = "import os, sys\n"
    if sys.platform.startswith("linux"):
        code += f"import ctypes; ctypes.CDLL(None).prctl(1, {int(signal.SIGKILL)})  # PR_SET_PDEATHSIG\n"
    return code + f"if os.getppid() != {parent}: os._exit(0)\n"


def _cap_memory() -> None:
    with contextlib.suppress(Exception):
        with open("/proc/self/statm") as f:
            size = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_AS, (size + WORKER_EXTRA_MEMORY, size + WORKER_EXTRA_MEMORY))


class _Worker:
    """One worker process and its two pipes."""

    def __init__(self, preload: str) -> None:
        inbox_r, inbox_w = os.pipe()
        outbox_r, outbox_w = os.pipe()
        # The server's import path, so a worker finds every function the server could send it.
        code = _die_with_parent(os.getpid()) + (
            f"sys.path[:] = {sys.path!r}\n"
            f"from serpfuse.workers.pool import worker_main; worker_main({inbox_r}, {outbox_w}, {preload!r})"
        )
        try:
            # Nothing a worker prints can reach the server's output: its own stderr is not masked.
            self.process = subprocess.Popen(
                [sys.executable, "-c", code],
                pass_fds=(inbox_r, outbox_w),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except BaseException:
            for fd in (inbox_w, outbox_r):
                os.close(fd)
            raise
        finally:
            os.close(inbox_r)
            os.close(outbox_w)
        self._send = Connection(inbox_w, readable=False)
        self._receive = Connection(outbox_r, writable=False)

    def wait_ready(self, timeout_s: float = 60.0) -> bool:
        """Until the worker has imported the engines (most of a second), so no parse waits for that."""
        try:
            return self._receive.poll(timeout_s) and self._receive.recv_bytes() == READY
        except (EOFError, OSError):
            return False

    def call(self, payload: bytes) -> bytes:
        """Send one parse and wait for its reply (in a pool thread: both ends release the GIL while waiting).
        ``EOFError``/``OSError`` when the worker was killed meanwhile."""
        self._send.send_bytes(payload)
        return self._receive.recv_bytes()

    def kill(self) -> None:
        with contextlib.suppress(Exception):
            self.process.kill()

    def reap(self) -> None:
        with contextlib.suppress(Exception):
            self.process.wait(timeout=5.0)
        for conn in (self._send, self._receive):
            with contextlib.suppress(Exception):
                conn.close()


# --- the pool ------------------------------------------------------------------------------------------------


@dataclass(eq=False)
class _Job:
    worker: _Worker | None = None
    abandoned: bool = False


class WorkerPool:
    """``size`` worker processes (the cores), started by ``start()``, and one thread per worker to talk to it:
    the one pool class, whose ``run`` parses engine answers (``WORKERS`` here, ``sources.parsing``), ranks
    searches (``workers.ranking.off_loop``) and extracts pages (``reader.workers``).

    ``preload``: what each worker imports (and with ``module:function``, calls) before it says it is ready."""

    def __init__(self, size: int | None = None, *, preload: str = "serpfuse.engines") -> None:
        self.size = size or _cores()
        self.preload = preload
        self._lock = threading.Lock()
        self._workers: set[_Worker] = set()  # started and not killed
        self._idle: list[_Worker] = []
        self._started = False
        self._generation = 0  # bumped by close(): a worker of an earlier start is never taken back
        self._threads: ThreadPoolExecutor | None = None

    @property
    def started(self) -> bool:
        """Whether ``start()`` ran (and no ``close()`` since): the workers are up or on their way."""
        return self._started

    @property
    def ready(self) -> bool:
        """Whether a parse would go to a worker now (started, and at least one worker up)."""
        return self._started and bool(self._workers)

    def start(self) -> None:
        """Start the workers in the background (the fork server's first start takes most of a second); until
        one is up, ``parse_answer`` uses a thread. Idempotent; after ``close()`` it starts afresh."""
        with self._lock:
            if self._started:
                return
            self._started = True
            self._threads = ThreadPoolExecutor(self.size, thread_name_prefix="serpfuse-parse-io")
            threads, generation = self._threads, self._generation
        for _ in range(self.size):
            threads.submit(self._add_worker, generation)

    def _add_worker(self, generation: int) -> None:
        try:
            worker = _Worker(self.preload)
        except Exception as exc:  # its jobs stay in threads
            log.warning("worker (%s) did not start: %s", self.preload, type(exc).__name__)
            return
        if not worker.wait_ready():
            log.warning("worker (%s) did not start", self.preload)
            worker.kill()
            worker.reap()
            return
        with self._lock:
            if generation == self._generation:
                self._workers.add(worker)
                self._idle.append(worker)
                return
        worker.kill()
        worker.reap()

    def _run(
        self,
        job: _Job,
        fn: Callable[..., Iterable[Any]],
        args: tuple[Any, ...],
        began: Callable[[], None] = lambda: None,
    ) -> tuple[str, Any]:
        """In a pool thread: one parse on an idle worker (each pool thread finds one while all are up)."""
        began()
        with self._lock:
            if job.abandoned or not self._idle:
                raise NoWorker()
            worker = job.worker = self._idle.pop()
            generation = self._generation
        try:
            reply = worker.call(pickle.dumps((fn, args), protocol=pickle.HIGHEST_PROTOCOL))
        except (EOFError, OSError):
            # Killed for overrunning (its caller has gone), or it died by itself (a crash, the memory cap).
            worker.kill()
            worker.reap()
            with self._lock:
                self._workers.discard(worker)
                replace = generation == self._generation
            if replace:  # here, before this thread takes another job: it then finds a worker
                self._add_worker(generation)
            return "error", _error_state(ParseFailure("the worker died"))
        with self._lock:
            if generation == self._generation:
                self._idle.append(worker)
        return pickle.loads(reply)

    def _abandon(self, job: _Job) -> None:
        with self._lock:
            job.abandoned = True
            worker = job.worker
        if worker is not None:
            worker.kill()  # its pool thread sees the pipe close, reaps it and starts a replacement

    async def run(
        self,
        fn: Callable[..., Iterable[T]],
        args: tuple[Any, ...],
        budget_s: float,
        *,
        kill_on_cancel: bool = True,
    ) -> list[T]:
        """``fn(*args)`` in a worker; ``ParseOverrun`` (the worker killed) when it is not done in ``budget_s``.
        Raises ``NoWorker`` when no worker is up. ``kill_on_cancel``: a call whose caller has gone kills its
        worker (a parse of hostile input must not go on using a core); False for work that is bounded anyway
        (ranking), which then finishes and is thrown away instead of costing a new worker."""
        threads = self._threads
        if not self.ready or threads is None:
            raise NoWorker()
        job = _Job()
        began, signal = beginning()
        future = asyncio.get_running_loop().run_in_executor(threads, self._run, job, fn, args, signal)
        try:
            await asyncio.wait((began, future), return_when=asyncio.FIRST_COMPLETED)
            async with asyncio.timeout(max(0.0, budget_s)):
                kind, value = await future
        except TimeoutError:
            self._abandon(job)
            raise ParseOverrun(
                f"parsing the answer took over {max(0.0, budget_s):.2g} s; abandoned"
            ) from None
        except asyncio.CancelledError:
            if kill_on_cancel:
                self._abandon(job)
            else:
                with self._lock:  # not started yet: never started; else it finishes and nobody reads it
                    job.abandoned = True
            raise
        if kind == "rows":
            return value
        raise _rebuilt(value)

    def close(self) -> None:
        """Kill every worker (a parse in flight fails) and let the threads go. Idempotent."""
        with self._lock:
            self._generation += 1
            self._started = False
            workers, self._workers, self._idle = self._workers, set(), []
            threads, self._threads = self._threads, None
        for worker in workers:
            worker.kill()
        for worker in workers:
            worker.reap()
        if threads is not None:
            threads.shutdown(wait=False, cancel_futures=True)

    def pids(self) -> list[int]:
        """The worker processes alive now."""
        with self._lock:
            return sorted(w.process.pid for w in self._workers if w.process.pid is not None)


class NoWorker(SerpfuseError):
    """No worker process is up (the pool was not started, or is starting): the answer parses in a thread."""


# --- threads -------------------------------------------------------------------------------------------------


class DaemonThreads(Executor):
    """``size`` daemon threads taking jobs in turn. Not ``ThreadPoolExecutor``: the interpreter joins its
    threads at exit, so a one-shot search (the CLI, a script) whose parse was abandoned would wait for that
    parse to end before its process could (tens of seconds for a hostile page); a daemon thread ends with
    the process."""

    def __init__(self, size: int, name: str) -> None:
        self.size = size
        self.name = name
        self._jobs: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]]] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        self._jobs.put((future, functools.partial(fn, *args, **kwargs)))
        with self._lock:  # started on demand: a command that parses nothing starts none
            if len(self._threads) < self.size:
                thread = threading.Thread(
                    target=self._serve, name=f"{self.name}-{len(self._threads)}", daemon=True
                )
                thread.start()
                self._threads.append(thread)
        return future

    def _serve(self) -> None:
        while True:
            future, job = self._jobs.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(job())
            except BaseException as exc:
                future.set_exception(exc)
            del future, job  # not kept alive (with its answer) while this thread waits for the next


async def in_daemon_thread(fn: Callable[..., T], budget_s: float, *args: Any, name: str) -> T:
    """``fn(*args)`` in a daemon thread of its own; ``TimeoutError`` when not done in ``budget_s``. The thread
    is abandoned then (Python cannot stop one), and being a daemon it cannot hold the program's exit, as a
    thread of an executor would."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def run() -> None:
        try:
            outcome: tuple[bool, Any] = (True, fn(*args))
        except BaseException as exc:  # handed to the awaiting task, which raises it
            outcome = (False, exc)
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits for this any more
            loop.call_soon_threadsafe(_settle, done, outcome)

    threading.Thread(target=run, name=name, daemon=True).start()
    async with asyncio.timeout(max(0.0, budget_s)):
        return await done


def _settle(future: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
    if future.done():  # abandoned (over its budget, or its caller gone)
        return
    ok, value = outcome
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


WORKERS = WorkerPool()  # the server's: it parses engine answers and ranks searches


def beginning() -> tuple[asyncio.Future[None], Callable[[], None]]:
    """A future set when a job begins, and the call (from any thread) that sets it. A parse's budget starts
    there: it bounds the parse's own work, not its wait behind the others (a burst of answers, a hundred
    searches at once, queues for the few parse threads; the search's deadline bounds that wait)."""
    loop = asyncio.get_running_loop()
    began: asyncio.Future[None] = loop.create_future()

    def set_began() -> None:
        if not began.done():
            began.set_result(None)

    def begin() -> None:
        loop.call_soon_threadsafe(set_began)

    return began, begin


def by_reference(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` pickles as a reference a worker can import (a module's own top-level function)."""
    module = sys.modules.get(getattr(fn, "__module__", None) or "")
    if module is None or getattr(module, "__spec__", None) is None:
        return False
    return getattr(module, getattr(fn, "__qualname__", ""), None) is fn
