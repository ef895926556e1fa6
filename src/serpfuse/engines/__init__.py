"""The engine registry: an explicit list of engine modules (no discovery magic).

Each module follows the contract in ``serpfuse.engines.base``: ``INFO``, then ``build_request`` + ``parse``,
or ``run`` for a multi-step engine; ``build_preflight`` when its request needs a page fetched first. A module
may also define ``classify`` to refine the central status mapper.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import ModuleType

from serpfuse.engines import (
    anysearch,
    bing,
    bing_cn,
    brave,
    brave_web,
    ddg,
    exa,
    exa_free,
    firecrawl,
    mojeek,
    searxng,
    startpage,
    tavily,
    wikipedia,
    yahoo,
)
from serpfuse.engines.base import EngineError, classify_http

ENGINES: dict[str, ModuleType] = {
    module.INFO.name: module
    for module in (
        ddg,
        bing,
        bing_cn,
        yahoo,
        mojeek,
        brave_web,
        startpage,
        wikipedia,
        anysearch,
        exa_free,
        brave,
        exa,
        tavily,
        firecrawl,
        searxng,
    )
}


class UnknownEngine(ValueError):
    """An engine name that is not in the registry."""


def get_engine(name: str) -> ModuleType:
    try:
        return ENGINES[name]
    except KeyError:
        raise UnknownEngine(f"unknown engine {name!r}; valid engines: {', '.join(sorted(ENGINES))}") from None


def env_name(name: str) -> str:
    """An engine's name as an environment variable spells it: upper case, ``-`` as ``_`` (``BRAVE_WEB``)."""
    return name.upper().replace("-", "_")


def name_from_env(spelled: str) -> str:
    """The engine name an environment variable (or a settings table) spells: ``BRAVE_WEB`` -> ``brave-web``.
    No engine name holds ``_``, so the way back is unambiguous."""
    return spelled.strip().lower().replace("_", "-")


def option_env(name: str, option: str) -> str:
    """The variable that sets one of an engine's options: ``SERPFUSE_ENGINES__BRAVE_WEB__BASE_URL``."""
    return f"SERPFUSE_ENGINES__{env_name(name)}__{option.upper()}"


def base_url_env(name: str) -> str:
    """The variable that sets an engine's base URL: ``SERPFUSE_ENGINES__BRAVE_WEB__BASE_URL``."""
    return option_env(name, "base_url")


def classifier(engine: ModuleType) -> Callable[[int, Mapping[str, str], bytes], EngineError | None]:
    """The status mapper to use for an engine's responses: its own ``classify`` or the central one."""
    return getattr(engine, "classify", classify_http)


def is_multi_step(engine: ModuleType) -> bool:
    """True for engines that drive their own round trips through ``run(client, q)``."""
    return hasattr(engine, "run")


def has_preflight(engine: ModuleType) -> bool:
    """True for engines whose request is built from a first page's answer (``build_preflight``)."""
    return hasattr(engine, "build_preflight")
