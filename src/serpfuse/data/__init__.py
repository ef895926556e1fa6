"""The tables serpfuse ships (blocklists, word lists, engine weights...) and the one way to read them."""

from __future__ import annotations

import json as _json
from importlib import resources
from typing import Any


def text(name: str) -> str:
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


def lines(name: str) -> list[str]:
    """The non-empty lines of a text table, lowercased, without ``#`` comments."""
    stripped = (raw.split("#", 1)[0].strip().lower() for raw in text(name).splitlines())
    return [line for line in stripped if line]


def json(name: str) -> Any:
    return _json.loads(text(name))
