"""Ranking configurations as a bench names them: ``NAME[,section.knob=value...]``, ``--set`` items and sweep grids.

A value is JSON when it parses (``3``, ``0.25``, ``true``, ``"text"``), else bare text; knob names may be
camelCase or snake_case. Every result is a validated ``RankingConfig``: an unknown knob is a validation error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from serpfuse.config import RankingConfig
from serpfuse.ranking.rankers import available, get_ranker

BASELINE = "baseline"  # a reference list, not a configuration: SearXNG's own order where a recording has it

# The default sweep grids: 27 points each over rrf's and consensus's main knobs. Any ranker can be swept with
# --grid.
DEFAULT_GRIDS: dict[str, dict[str, list[Any]]] = {
    "rrf": {
        "rrf.rrf_constant": [40, 60, 80],
        "rrf.authority_boost": [0.1, 0.25, 0.4],
        "rrf.freshness_boost": [0.1, 0.2, 0.35],
    },
    "consensus": {
        "consensus.kappa": [5, 10, 20],
        "selection.diversity_penalty": [0.05, 0.15, 0.3],
        "selection.sparse_domain_cap": [1, 2, 3],
    },
}


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def parse_setting(item: str) -> tuple[list[str], Any]:
    """``section.knob=value`` -> (["section", "knob"], value); the value is JSON when it parses, else text."""
    path, sep, raw = item.partition("=")
    if not sep or not path.strip():
        raise ValueError(f"--set wants section.knob=value, got {item!r}")
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        value = raw
    return [_snake(p.strip()) for p in path.split(".")], value


def apply_settings(config: RankingConfig, settings: Sequence[str]) -> RankingConfig:
    """A new, validated config with each setting applied (an unknown knob is a validation error)."""
    data = config.model_dump()
    for item in settings:
        path, value = parse_setting(item)
        node = data
        for part in path[:-1]:
            if not isinstance(node.get(part), dict):
                raise ValueError(f"unknown configuration section {'.'.join(path[:-1])!r} in {item!r}")
            node = node[part]
        if not isinstance(node, dict):
            raise ValueError(f"cannot set {item!r}")
        node[path[-1]] = value
    return RankingConfig.model_validate(data)


def config_from(strategy: str | None, settings: Sequence[str] = ()) -> RankingConfig:
    config = RankingConfig()
    config = config.with_strategy(strategy) if strategy else config
    get_ranker(config.strategy)  # UnknownStrategy before any work
    return apply_settings(config, settings)


def parse_spec(
    spec: str, is_reference: Callable[[str], bool] = lambda name: name == BASELINE
) -> tuple[str, RankingConfig | None]:
    """``NAME[,section.knob=value...]`` -> (label, config); a reference list (``baseline``) -> (label, None)."""
    name, *settings = [part.strip() for part in spec.split(",") if part.strip()] or [""]
    if is_reference(name):
        if settings:
            raise ValueError(f"{name} (a reference list, not a configuration) takes no settings")
        return spec, None
    return spec, config_from(name, settings)


def strategy_names(text: str | None) -> list[str | None]:
    """``None`` (the default ranker), one name, ``a,b,c`` or ``all``."""
    if not text:
        return [None]
    if text == "all":
        return list(available())
    return [name.strip() for name in text.split(",") if name.strip()] or [None]


def grid_of(strategy: str, grid_items: Sequence[str]) -> dict[str, list[Any]]:
    """The swept knobs: ``section.knob=v1,v2,...`` items, or the strategy's default grid without any."""
    if not grid_items:
        if strategy not in DEFAULT_GRIDS:
            raise ValueError(
                f"no default grid for {strategy!r}: give --grid section.knob=v1,v2,... (repeatable)"
            )
        return DEFAULT_GRIDS[strategy]
    grid: dict[str, list[Any]] = {}
    for item in grid_items:
        knob, sep, values = item.partition("=")
        if not sep or not values:
            raise ValueError(f"--grid wants section.knob=v1,v2,..., got {item!r}")
        grid[knob.strip()] = [parse_setting(f"x={v.strip()}")[1] for v in values.split(",")]
    return grid


def current_value(config: RankingConfig, knob: str) -> Any:
    node: Any = config.model_dump()
    for part in knob.split("."):
        node = node[_snake(part)]
    return node
