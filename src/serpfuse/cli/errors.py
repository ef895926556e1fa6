"""One-line errors and exit codes shared by every command: bad input exits 2, never a silent fallback.

A command catches ``SerpfuseError`` and calls ``fail_on``: the exit code is the error's class's
(``serpfuse.errors`` draws the tree), not a list kept here."""

from __future__ import annotations

import sys
from typing import NoReturn

from serpfuse.errors import SerpfuseError
from serpfuse.settings import validation_message  # every interface words bad input the same way

__all__ = ["EXIT_BAD_INPUT", "EXIT_NO_RESULTS", "fail", "fail_on", "validation_message"]

EXIT_BAD_INPUT = 2
EXIT_NO_RESULTS = 1


def fail(message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
    print(f"serpfuse: error: {message}", file=sys.stderr)
    raise SystemExit(code)


def fail_on(exc: SerpfuseError) -> NoReturn:
    """The error's first line, and the exit code its class says (2 for the caller's input or setup)."""
    message = str(exc).splitlines()
    fail(message[0] if message else type(exc).__name__, exc.exit_code)
