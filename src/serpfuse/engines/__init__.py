"""The engine registry: an explicit list of engine modules (no discovery magic).

Each module follows the contract in ``serpfuse.engines.base``: ``INFO``, then ``build_request`` + ``parse``,
or ``run`` for a multi-step engine; ``build_preflight`` when its request needs a page fetched first. A module
may also define ``classify`` to refine the central status mapper.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import ModuleType

from serpfuse.engines import (
    anysearch,
    bing,
    bing_cn,
    bing_news,
    brave,
    brave_news,
    brave_web,
    ddg,
    ddg_news,
    exa,
    exa_free,
    firecrawl,
    google,
    google_news,
    mojeek,
    mwmbl,
    searxng,
    startpage,
    tavily,
    wikipedia,
    yahoo,
    yep,
)
from serpfuse.engines.base import EngineError, classify_http

ENGINES: dict[str, ModuleType] = {
    module.INFO.name: module
    for module in (
        ddg,
        bing,
        bing_cn,
        yahoo,
        google,
        mojeek,
        brave_web,
        startpage,
        yep,
        mwmbl,
        wikipedia,
        anysearch,
        exa_free,
        brave,
        exa,
        tavily,
        firecrawl,
        searxng,
        ddg_news,
        bing_news,
        brave_news,
        google_news,
    )
}

# Engines that hold no general web index of their own: Wikipedia searches one site, AnySearch and SearXNG pass
# on other engines' results. A count of independent indexes leaves them out.
NOT_OWN_WEB_INDEX = frozenset({"wikipedia", "anysearch", "searxng"})


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


def category_of(name: str) -> str:
    """What a registered engine searches ("general", "news"); "general" for any other name (a recording's)."""
    module = ENGINES.get(name)
    return module.INFO.category if module is not None else "general"


def default_keyless_primaries(category: str = "general") -> list[str]:
    """The engines every search of ``category`` asks without any setup: primary tier, no key, no base URL."""
    return [
        name
        for name, module in ENGINES.items()
        if module.INFO.tier == "primary"
        and module.INFO.category == category
        and not module.INFO.needs_key
        and not module.INFO.needs_base_url
    ]


def web_index_groups(engines: Iterable[str], groups: Mapping[str, str]) -> set[str]:
    """The independent general-web indexes behind ``engines``: their correlated groups (``groups``, as in
    data/engine_weights.json; an engine not listed is its own), without the engines that hold no index of
    their own. Bing, DuckDuckGo and Yahoo are one index, Microsoft's."""
    return {
        groups.get(name, name)
        for name in engines
        if name not in NOT_OWN_WEB_INDEX and category_of(name) == "general"
    }
