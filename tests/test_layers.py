"""onnxkit's packages import each other in layers, without a cycle (docs/architecture.md).

A unit is a package ``onnxkit/<dir>`` (``onnxkit/kernels/<dir>`` counts as its own) or a
top-level module; every import counts, those inside functions included, since a lazy
import is still a dependency. Read from the source with ``ast``: nothing is imported.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "onnxkit"


def _unit(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:3] if len(parts) >= 3 and parts[1] == "kernels" else parts[:2])


@lru_cache(maxsize=None)
def import_graph() -> dict[str, set[str]]:
    """``{unit: units it imports}`` over every module of ``onnxkit/``."""
    edges: dict[str, set[str]] = defaultdict(set)
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        package = parts if path.name == "__init__.py" else parts[:-1]
        source = _unit(".".join(parts))
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = package[: len(package) - node.level + 1] if node.level else []
                names = [".".join(base + ([node.module] if node.module else []))]
            else:
                continue
            for name in names:
                if name.startswith("onnxkit.") and _unit(name) != source:
                    edges[source].add(_unit(name))
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one unit (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def _why(edges, units) -> str:
    """Which imports close the cycle: ``a -> b`` for each edge inside ``units``."""
    return "; ".join(f"{a} -> {b}" for a in units for b in sorted(edges[a]) if b in units)


def test_no_import_cycle_between_packages():
    edges = import_graph()
    assert "onnxkit.runtime" in edges and "onnxkit.ops" in edges  # the graph was read
    found = cycles(edges)
    assert not found, "import cycles: " + " | ".join(_why(edges, c) for c in found)


def test_core_is_a_leaf_and_runtime_sits_on_it():
    """core imports only the error hierarchy (a leaf module with its text escaping);
    runtime/ only core, errors, loading and that escaping: no backend, no optimizer."""
    edges = import_graph()
    assert edges["onnxkit.core"] <= {"onnxkit.errors"}, edges["onnxkit.core"]
    assert edges["onnxkit.errors"] <= {"onnxkit.html"}, edges["onnxkit.errors"]
    assert not edges.get("onnxkit.html")
    allowed = {"onnxkit.core", "onnxkit.errors", "onnxkit.html", "onnxkit.loading"}
    assert edges["onnxkit.runtime"] <= allowed, edges["onnxkit.runtime"] - allowed
    assert edges["onnxkit.loading"] <= allowed - {"onnxkit.loading"}, edges["onnxkit.loading"]


def test_reference_kernels_stand_on_core_alone():
    """The reference backend needs no runtime, and no hook of the fast executors."""
    edges = import_graph()
    assert edges["onnxkit.ops"] <= {"onnxkit.core", "onnxkit.errors"}, edges["onnxkit.ops"]


def test_every_reference_kernel_module_is_listed():
    """``onnxkit.ops.KERNEL_MODULES`` is the explicit list the reference executor imports:
    a kernel module left out of it would silently have no kernels."""
    from onnxkit.ops import KERNEL_MODULES

    on_disk = {(p.parent.name, p.stem) for p in (ROOT / "ops").glob("*/*.py")
               if not p.stem.startswith("_")}
    listed = {(package, module) for package, modules in KERNEL_MODULES.items()
              for module in modules}
    assert listed == on_disk, (sorted(on_disk - listed), sorted(listed - on_disk))


def test_executors_come_from_the_one_table():
    from onnxkit.runtime.executors import BACKENDS, executor_names, get_executor

    assert {"reference", "cpu", "cuda"} <= set(BACKENDS) <= set(executor_names())
    assert get_executor("reference").name == "reference"
