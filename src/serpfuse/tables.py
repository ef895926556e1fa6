"""Data tables shipped in ``serpfuse/data``: blocklists, official domains, geo competitors, engine weights."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any


def _read(name: str) -> str:
    return resources.files("serpfuse.data").joinpath(name).read_text(encoding="utf-8")


@cache
def lines(name: str) -> tuple[str, ...]:
    """Non-empty lines of a text table, without `#` comments, lowercased."""
    out = []
    for raw in _read(name).splitlines():
        line = raw.split("#", 1)[0].strip().lower()
        if line:
            out.append(line)
    return tuple(out)


@cache
def json_table(name: str) -> Any:
    return json.loads(_read(name))
