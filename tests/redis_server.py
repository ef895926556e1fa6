"""Local server processes for the tests, all on 127.0.0.1 and free ports, all stopped at teardown.

- ``start_redis``: a real ``redis-server`` in a temp dir (no persistence); skips, saying why, when the binary is
  absent (``.ci/run`` installs Debian's package; locally: ``apt-get install redis-server``).
- ``start_serpfuse``: a real ``serpfuse serve`` (or any serpfuse command) subprocess with an isolated
  environment (no user config, keys file or cache dir leaks in), waited for on ``/healthz``.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

STARTUP_TIMEOUT_S = 30.0  # generous: a 2-core noisy CI machine imports slowly
CLI = "from serpfuse.cli import main; main()"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


# --- redis-server --------------------------------------------------------------------------------------------


@dataclass
class RedisProcess:
    url: str
    port: int
    proc: subprocess.Popen


def _redis_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def start_redis(workdir: Path) -> RedisProcess:
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server; .ci/run installs it)")
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(workdir), "--save", ""]
    args += ["--appendonly", "no", "--protected-mode", "yes", "--daemonize", "no", "--loglevel", "warning"]
    log = (workdir / "redis.log").open("wb")
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, cwd=workdir)
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while not _redis_ping(port):
        if proc.poll() is not None or time.monotonic() > deadline:
            stop(proc)
            raise RuntimeError(f"redis-server did not start: {(workdir / 'redis.log').read_text()[-500:]}")
        time.sleep(0.05)
    return RedisProcess(url=f"redis://127.0.0.1:{port}/0", port=port, proc=proc)


# --- serpfuse subprocesses -----------------------------------------------------------------------------------


def isolated_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The parent's environment minus every SERPFUSE_* setting, with config/cache/keys under ``home``."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("SERPFUSE_") and not k.endswith("_API_KEY")
    }
    env.update(
        {
            "XDG_CONFIG_HOME": str(home / "config"),
            "XDG_CACHE_HOME": str(home / "cache"),
            "SERPFUSE_KEYS_FILE": str(home / "keys.json"),
            "SERPFUSE_CACHE_DIR": str(home / "cache" / "serpfuse"),
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.update(extra or {})
    return env


@dataclass
class ServeProcess:
    base: str
    port: int
    proc: subprocess.Popen
    log: Path

    def __enter__(self) -> ServeProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        stop(self.proc)

    def get(self, path: str, headers: Mapping[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
        return http("GET", self.base + path, headers=headers)

    def post(
        self, path: str, body: Any, headers: Mapping[str, str] | None = None, raw: bytes | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        data = raw if raw is not None else json.dumps(body).encode()
        hdrs = {"Content-Type": "application/json", **(headers or {})}
        return http("POST", self.base + path, data=data, headers=hdrs)

    def json(self, method: str, path: str, body: Any = None, headers: Mapping[str, str] | None = None):
        status, hdrs, raw = self.post(path, body, headers) if method == "POST" else self.get(path, headers)
        return status, hdrs, json.loads(raw)


def http(
    method: str, url: str, data: bytes | None = None, headers: Mapping[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, {k.lower(): v for k, v in resp.headers.items()}, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, {k.lower(): v for k, v in err.headers.items()}, err.read()


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def start_serpfuse(
    home: Path,
    args: list[str],
    env: Mapping[str, str] | None = None,
    *,
    command: tuple[str, ...] = ("serve",),
    program: tuple[str, ...] = ("-c", CLI),
    port: int | None = None,
) -> ServeProcess:
    """``serpfuse serve --port <free> ARGS`` with an isolated environment, up once /healthz answers.

    Another ``command`` (e.g. ``("mcp", "--http")``) is up once its port accepts connections; ``port`` serves
    that port instead of a free one. Another ``program`` (a script's path) is run instead of the CLI, with
    ``--host``, ``--port`` and ARGS.
    """
    home.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    log = home / f"serve-{port}.log"
    if command == ("serve",) and "--workers" not in args:
        args = ["--workers", "1", *args]  # one process unless a test asks for more (the default is the cores)
    cmd = [sys.executable, *program, *command, "--host", "127.0.0.1", "--port", str(port), *args]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, cwd=home, env=isolated_env(home, env)
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"serpfuse serve exited with {proc.returncode}: {log.read_text()[-800:]}")
        try:
            up = http("GET", base + "/healthz")[0] == 200 if command == ("serve",) else _accepts(port)
            if up:
                return ServeProcess(base=base, port=port, proc=proc, log=log)
        except OSError:
            pass
        if time.monotonic() > deadline:
            stop(proc)
            raise RuntimeError(f"serpfuse serve did not answer /healthz: {log.read_text()[-800:]}")
        time.sleep(0.1)
