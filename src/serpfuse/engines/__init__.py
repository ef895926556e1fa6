"""The engine registry: an explicit list of engine modules (no discovery magic).

Each module follows the contract in ``serpfuse.engines.base``: ``INFO``, ``build_request``, ``parse`` (or
``run`` for multi-step engines).
"""

from __future__ import annotations

from types import ModuleType

ENGINES: dict[str, ModuleType] = {}


class UnknownEngine(ValueError):
    """An engine name that is not in the registry."""


def get_engine(name: str) -> ModuleType:
    try:
        return ENGINES[name]
    except KeyError:
        raise UnknownEngine(f"unknown engine {name!r}; valid engines: {', '.join(sorted(ENGINES))}") from None
