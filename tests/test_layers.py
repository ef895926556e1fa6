"""The package's import graph has no circle, counting every import statement: module-level, function-local
and ``TYPE_CHECKING`` ones alike (import-linter's layers contract in pyproject.toml checks the direction)."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import serpfuse

PACKAGE = Path(serpfuse.__file__).parent


def modules() -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (its file, whether it is a package's __init__)."""
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ["serpfuse", *path.relative_to(PACKAGE).with_suffix("").parts]
        is_package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports anywhere in its text."""
    mods = modules()

    def known(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, (path, is_package) in mods.items():
        package = name if is_package else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([node.module] if node.module else [])])
                # `from pkg import mod` names a module; `from mod import name` names the module
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            for target in targets:
                if target.startswith("serpfuse") and (found := known(target)) and found != name:
                    graph[name].add(found)
    return graph


def test_the_scan_sees_function_local_and_type_checking_imports() -> None:
    graph = import_graph()
    # read_shapes imports the reader's service only under TYPE_CHECKING; the pipeline's ranking worker is
    # imported at module level: both must be edges
    assert "serpfuse.reader.service" in graph["serpfuse.serve.read_shapes"]
    assert "serpfuse.workers.ranking" in graph["serpfuse.pipeline"]


def test_no_import_circles() -> None:
    try:
        tuple(TopologicalSorter(import_graph()).static_order())
    except CycleError as circle:
        raise AssertionError(f"import circle: {' -> '.join(circle.args[1])}") from None


def test_at_most_fifteen_modules_at_the_top() -> None:
    """Twelve until round 3 added three that belong to no wing because every wing uses them: ``errors`` (the
    one error tree), ``deployment`` (the one way in, above the service) and ``files`` (every file written 0600).
    """
    top = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")
    assert len(top) <= 15, top
