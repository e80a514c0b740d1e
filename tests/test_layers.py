"""The package's layers read from top to bottom: no import circles, and no import upward.

cli -> report -> filetypes -> notebook -> engine -> (ops, rules) -> (config, safe_io).
Imports are read with ``ast`` from every module, those inside functions included (a
lazy import hides a circle from Python, not from a reader).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "migrate"

# Lower number = lower layer. A module may import its own layer's modules (without a circle)
# and any layer below it.
LAYERS = {
    "migrate.cli": 6,
    "migrate.__main__": 6,
    "migrate.report": 5,
    "migrate.filetypes": 4,
    "migrate.notebook": 3,
    "migrate.engine": 2,
    "migrate.ops": 1,
    "migrate.rules": 1,
    "migrate.config": 0,
    "migrate.safe_io": 0,
    "migrate": 0,  # the package's own __init__: its version
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def modules() -> dict[str, Path]:
    found = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: path for name, path in found.items() if not name.startswith("migrate.runtime")}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules ``name`` imports, anywhere in its body."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            # ``from pkg import mod`` depends on the module; ``from mod import name`` on mod.
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for target in targets:
            # The module itself, or the nearest package of it that is a module of ours.
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name and target.startswith("migrate"):
                out.add(target)
    return out


def layer_of(name: str) -> int:
    best = max((prefix for prefix in LAYERS if name == prefix or name.startswith(prefix + ".")), key=len)
    return LAYERS[best]


def graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    return {name: imports_of(name, path, known) - {"migrate.runtime"} for name, path in found.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected set of two or more modules (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_no_import_circles_outside_the_runtime():
    assert cycles(graph()) == []


def test_no_module_imports_a_layer_above_its_own():
    upward = sorted(
        f"{name} imports {target}"
        for name, targets in graph().items()
        for target in targets
        if layer_of(target) > layer_of(name)
    )
    assert upward == []


def test_the_engine_imports_neither_the_report_nor_notebooks():
    engine = {n: t for n, t in graph().items() if n.startswith("migrate.engine")}
    assert {n: sorted(t) for n, t in engine.items() if any(x.startswith(("migrate.report", "migrate.notebook",
                                                                          "migrate.filetypes", "migrate.cli")) for x in t)} == {}


def test_the_reader_sees_lazy_imports_and_finds_a_circle():
    """The check itself: a lazy import inside a function makes a circle it must see."""
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(edges) == [["a", "b", "c"]]
    source = Path(__file__)
    tree_imports = imports_of("migrate.engine.runner", PACKAGE / "engine" / "runner.py", set(modules()))
    assert "migrate.engine.convert" in tree_imports  # imported inside convert_source, not at the top
    assert source.exists()
