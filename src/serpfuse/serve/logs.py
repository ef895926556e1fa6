"""One logging set-up for every entry point (each CLI command, ``serve``, ``mcp``): records go to stderr, every
one of them through the key-masking filter, and no request URL, credential or query is logged at INFO.

The HTTP clients log each request's full URL at INFO (a SearXNG basic-auth password, every query), and
uvicorn's access log prints each path with its query string, so those loggers are held at WARNING whatever
the level asked for. The filter sits on the root logger and on each of its handlers: a logger's filters only
see records logged on that logger itself, a handler's see every record that reaches it. The masker is built
on the first record, so a command that logs nothing never loads the key store.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Iterable

# Loggers whose INFO lines carry request URLs or query text.
QUIET_LOGGERS = ("httpx", "httpx2", "httpcore", "hpack", "uvicorn.access", "mcp", "sse_starlette")
FORMAT = "serpfuse: %(levelname)s %(name)s: %(message)s"


class MaskingFilter(logging.Filter):
    """Masks every secret the process knows in each record (message, arguments and traceback)."""

    def __init__(self, extra_secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self._extra = {s for s in extra_secrets if s}
        self._mask: Callable[[str], str] | None = None

    def mask(self, text: str) -> str:
        if self._mask is None:
            from serpfuse.secrets import (
                KeyMaskingFilter,
                KeysFileError,
                KeyStore,
                Masker,
                environment_secrets,
            )

            try:
                values = set(KeyStore().masker().secrets)
            except KeysFileError:  # an unusable keys file is reported by the command itself
                values = environment_secrets(os.environ)
            self._mask = Masker(values | self._extra).mask
            self._record_filter = KeyMaskingFilter(self._mask)
        return self._mask(text)

    def filter(self, record: logging.LogRecord) -> bool:
        self.mask("")
        return self._record_filter.filter(record)


def setup_logging(level: int | str = logging.WARNING, *, secrets: Iterable[str] = ()) -> MaskingFilter:
    """Configure the root logger once per process (calling again updates the level and adds ``secrets``,
    e.g. the API token and URL passwords a settings file holds)."""
    level = logging.getLevelName(level.upper()) if isinstance(level, str) else level
    root = logging.getLogger()
    handler = next(
        (h for h in root.handlers if isinstance(h, logging.StreamHandler) and getattr(h, "serpfuse", False)),
        None,
    )
    if handler is None:
        handler = logging.StreamHandler(sys.stderr)
        handler.serpfuse = True  # type: ignore[attr-defined]
        handler.setFormatter(logging.Formatter(FORMAT))
        root.addHandler(handler)
    else:  # the stderr of this call (an in-process run may have swapped, and closed, the last one)
        handler.stream = sys.stderr  # not setStream: it flushes the old stream, which may be closed
    old = next((f for f in root.filters if isinstance(f, MaskingFilter)), None)
    masking = MaskingFilter([*(old._extra if old else ()), *secrets])
    for target in (root, *root.handlers):
        for f in [f for f in target.filters if isinstance(f, MaskingFilter)]:
            target.removeFilter(f)
        target.addFilter(masking)
    root.setLevel(level)
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(max(logging.WARNING, level))
    return masking


def settings_secrets(settings: object) -> list[str]:
    """The secrets a ``Settings`` holds beyond the environment (a TOML file's token, URL passwords)."""
    return sorted(settings.secrets())  # type: ignore[attr-defined]
