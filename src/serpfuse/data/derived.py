"""Tables derived from installed libraries (word frequencies, lemmas, the parsed Public Suffix List), kept as
files so that only a machine's first process builds them and every later one reads them.

They live in the cache directory the settings name (``cache_dir`` in the settings file, or
``SERPFUSE_CACHE_DIR``), else in the user's cache directory: an operator who moved serpfuse's cache (a read-only
home, a container volume) expects everything serpfuse writes to follow it. A missing or unwritable directory
only costs time: the table is built in memory, as without a cache.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from serpfuse.files import write_private

SUBDIRECTORY = "word-tables"
CACHE_DIR_ENV = "SERPFUSE_CACHE_DIR"

_cache_dir: Path | None = None  # set by the settings once read; the environment covers processes without them


def keep_under(cache_dir: Path | None) -> None:
    """Keep derived tables under ``cache_dir`` (None: the default), as the loaded settings say."""
    global _cache_dir
    _cache_dir = Path(cache_dir) if cache_dir else None


def derived_path(name: str) -> Path:
    import platformdirs  # imported on first use: most processes read an existing table

    root = _cache_dir or (Path(env) if (env := os.environ.get(CACHE_DIR_ENV)) else None)
    return (root or platformdirs.user_cache_path("serpfuse")) / SUBDIRECTORY / name


def write_whole(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all (another process may be reading it); failures are
    silent, since the caller already holds the table in memory."""
    with contextlib.suppress(OSError):
        write_private(path, data)
