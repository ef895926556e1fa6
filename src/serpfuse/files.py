"""How serpfuse writes files: private to the user who runs it. A recording holds an engine's raw pages for the
user's queries, judgments hold what they graded, a cache what they searched: each file is created 0600 (from
its first byte, never widened after the fact) in folders serpfuse creates 0700. A folder that already exists
(the working directory, a folder the user chose) keeps its mode.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


def private_dir(path: Path) -> Path:
    """``path`` and each missing folder above it, created 0700 (``mkdir(parents=True)`` gives the parents the
    umask's mode, 0755 mostly)."""
    missing = []
    at = Path(path)
    while not at.exists():
        missing.append(at)
        if at.parent == at:
            break
        at = at.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=PRIVATE_DIR)
        except FileExistsError:  # made meanwhile by another process
            continue
        os.chmod(folder, PRIVATE_DIR)  # mkdir's mode is masked by the umask; 0700 is what was meant
    return path


def write_private(path: Path, data: bytes | str) -> None:
    """``data`` written to ``path`` whole or not at all (a temporary file, fsync, rename), the file 0600 from
    its creation; the folders it needs are created 0700."""
    path = Path(path)
    private_dir(path.parent)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)  # 0600 already
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
