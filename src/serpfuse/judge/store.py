"""The judgments file as ``serpfuse judge`` keeps it: JSON Lines ``{"query", "url", "rel"}``, rewritten whole
and atomically (a temporary file, fsync, rename) on every grade, so a killed process leaves the last file or
the new one, never half of one. One process writes a file at a time (``JudgmentsFile.claimed``): a second
``judge`` on the same ``--out`` would rewrite it from what it read at its start, losing the first one's grades."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from serpfuse.bench.judged_recording import JudgmentsError, read_judgment_lines
from serpfuse.files import private_dir, write_private
from serpfuse.sources.replay import normalise_query
from serpfuse.urls import dedup_key


class JudgmentsFile:
    """(normalised query, dedup key) -> the line's object. Lines already in the file are kept as written (other
    queries' judgments, extra fields such as a ``qid``); a new grade of a key replaces every line of that key."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._held: int | None = None  # the lock file's descriptor, when ``claimed``
        self._lines: dict[tuple[str, str], list[dict[str, Any]]] = {}
        if path.exists():
            judgments = read_judgment_lines(path)  # a bad line: JudgmentsError naming it
            text = path.read_text(encoding="utf-8").splitlines()
            for item in judgments:
                raw = json.loads(text[item.line - 1])
                self._lines.setdefault((normalise_query(item.query), dedup_key(item.url)), []).append(raw)

    @classmethod
    def claimed(cls, path: Path) -> JudgmentsFile:
        """The file, read once this process holds it: an exclusive lock on ``.<name>.lock`` beside it (released
        when the process ends, however it ends), or ``JudgmentsError`` naming the process that holds it."""
        lock_path = private_dir(path.parent) / f".{path.name}.lock"
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise JudgmentsError(
                f"{path} is being written by another serpfuse judge (pid {holder}); stop it or give another --out"
            ) from None
        except ImportError:  # pragma: no cover - no flock (Windows): one judge per file is on the user
            pass
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        try:
            store = cls(path)
        except BaseException:
            os.close(fd)
            raise
        store._held = fd  # kept open for the life of the process: the lock is the open file's
        return store

    def grade(self, query: str, key: str) -> int | None:
        """The grade of this row, the highest where two lines fold to one key (as bench reads them)."""
        lines = self._lines.get((normalise_query(query), key))
        return max(int(line["rel"]) for line in lines) if lines else None

    def put(self, query: str, url: str, rel: int) -> None:
        with self._lock:
            key = (normalise_query(query), dedup_key(url))
            if key in self._lines:
                self._lines[key] = [{**line, "rel": rel} for line in self._lines[key]]
            else:
                self._lines[key] = [{"query": query, "url": url, "rel": rel}]
            self._write()

    def _write(self) -> None:
        text = "".join(
            json.dumps(line, ensure_ascii=False) + "\n" for lines in self._lines.values() for line in lines
        )
        write_private(self.path, text)
