"""One-line errors and exit codes shared by every command: bad input exits 2, never a silent fallback."""

from __future__ import annotations

import sys
from typing import NoReturn

from serpfuse.settings import validation_message  # every interface words bad input the same way

__all__ = ["EXIT_BAD_INPUT", "EXIT_NO_RESULTS", "fail", "validation_message"]

EXIT_BAD_INPUT = 2
EXIT_NO_RESULTS = 1


def fail(message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
    print(f"serpfuse: error: {message}", file=sys.stderr)
    raise SystemExit(code)
