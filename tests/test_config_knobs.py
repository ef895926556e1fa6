"""Every ranking knob lives in RankingConfig: each one moves the fingerprint (so the cache key), and no ranking
module keeps a numeric threshold of its own where `--set` and a sweep cannot reach it."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel

import serpfuse
from serpfuse.config import RankingConfig

RANKING = Path(serpfuse.__file__).parent / "ranking"


def changed(value: Any, annotation: Any) -> Any:
    """A different valid value of a knob's type."""
    if get_origin(annotation) is Literal:
        return next(v for v in get_args(annotation) if v != value)
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1 if isinstance(value, int) else value / 2 + 0.01
    if isinstance(value, dict):
        return {**value, "another-engine": next(iter(value.values()), 1.0)}  # a value of the dict's own type
    if value is None:
        return 2
    raise AssertionError(f"no changed value for {value!r}")


def test_every_knob_moves_the_fingerprint() -> None:
    base = RankingConfig()
    seen = {base.fingerprint(): "default"}
    for section in type(base).model_fields:
        value = getattr(base, section)
        if not isinstance(value, BaseModel):
            continue
        for knob, info in type(value).model_fields.items():
            if section == "consensus" and knob == "ranking":
                new_section = type(value)(ranking="research")
            else:
                new = changed(getattr(value, knob), info.annotation)
                new_section = value.model_copy(update={knob: new})
            fp = base.model_copy(update={section: new_section}).fingerprint()
            assert fp not in seen, f"{section}.{knob} does not move the fingerprint ({seen.get(fp)})"
            seen[fp] = f"{section}.{knob}"
    assert len(seen) > 60


def test_no_numeric_threshold_outside_the_config() -> None:
    """A module-level number in ranking/ is a knob the fingerprint cannot see (memo sizes aside)."""
    found = []
    for path in RANKING.rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
                names = [t.id for t in node.targets]
                numeric = isinstance(node.value, ast.Constant) and type(node.value.value) in (int, float)
                numeric |= isinstance(node.value, ast.BinOp) and all(
                    isinstance(x, ast.Constant) for x in (node.value.left, node.value.right)
                )
                if numeric and not all(n.endswith("_MEMO") for n in names):
                    found.append(f"{path.relative_to(RANKING)}: {', '.join(names)}")
    assert not found, found
