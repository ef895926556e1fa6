"""The engine registry: an explicit list of engine modules (no discovery magic).

Each module follows the contract in ``serpfuse.engines.base``: ``INFO``, then ``build_request`` + ``parse``,
or ``run`` for a multi-step engine; ``build_preflight`` when its request needs a page fetched first. A module
may also define ``classify`` to refine the central status mapper.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from types import ModuleType
from typing import Any

from serpfuse.engines.base import EngineError, classify_http
from serpfuse.errors import InputError

# The registered engine modules, in the order ENGINES lists them; each engine's name is its module's, with "-"
# for "_". They are imported when first asked for: a search of a recording, or `serpfuse --help`, needs none of
# them (importing all 22 costs a tenth of a second).
MODULES = (
    "ddg",
    "bing",
    "bing_cn",
    "baidu",
    "sogou",
    "so360",
    "naver",
    "yahoo",
    "google",
    "google_cse",
    "mojeek",
    "brave_web",
    "startpage",
    "yep",
    "mwmbl",
    "wikipedia",
    "anysearch",
    "exa_free",
    "keenable",
    "parallel",
    "you_free",
    "tavily_free",
    "brave",
    "exa",
    "tavily",
    "firecrawl",
    "searxng",
    "ddg_news",
    "bing_news",
    "brave_news",
    "google_news",
)
ENGINE_NAMES = tuple(m.replace("_", "-") for m in MODULES)
_MODULE_OF = dict(zip(ENGINE_NAMES, MODULES, strict=True))


def engine_module(name: str) -> ModuleType | None:
    """The registered engine called ``name``, imported now if it was not; None for any other name."""
    module = _MODULE_OF.get(name)
    return importlib.import_module(f"serpfuse.engines.{module}") if module else None


@cache
def engine_registry() -> dict[str, ModuleType]:
    """Every registered engine by name (``ENGINES``), each module imported now if it was not."""
    return {name: engine_module(name) for name in ENGINE_NAMES}  # type: ignore[misc]


def __getattr__(name: str) -> Any:
    if name == "ENGINES":  # ``from serpfuse.engines import ENGINES``: every engine, imported on first use
        return engine_registry()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Engines that hold no general web index of their own: Wikipedia searches one site, AnySearch and SearXNG pass
# on other engines' results. A count of independent indexes leaves them out.
NOT_OWN_WEB_INDEX = frozenset({"wikipedia", "anysearch", "searxng"})


class UnknownEngine(InputError):
    """Engine names that are not among ``valid`` (the registry's, or those a source can ask)."""

    def __init__(self, names: list[str], valid: list[str]):
        super().__init__(f"unknown engine {', '.join(map(repr, names))}; choose from: {', '.join(valid)}")
        self.names, self.valid = names, valid


def get_engine(name: str) -> ModuleType:
    module = engine_module(name)
    if module is None:
        raise UnknownEngine([name], sorted(ENGINE_NAMES))
    return module


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
    module = engine_module(name)
    return module.INFO.category if module is not None else "general"


def default_keyless_primaries(category: str = "general") -> list[str]:
    """The engines every search of ``category`` asks without any setup: primary tier, no key, no base URL."""
    return [
        name
        for name, module in engine_registry().items()
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
