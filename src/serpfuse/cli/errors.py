"""One-line errors and exit codes shared by every command: bad input exits 2, never a silent fallback."""

from __future__ import annotations

import sys
from typing import NoReturn

from pydantic import ValidationError

EXIT_BAD_INPUT = 2
EXIT_NO_RESULTS = 1


def fail(message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
    print(f"serpfuse: error: {message}", file=sys.stderr)
    raise SystemExit(code)


def validation_message(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ()) if p != "__root__")
    msg = err.get("msg", "invalid value").removeprefix("Value error, ")
    return f"{where}: {msg}" if where else msg
