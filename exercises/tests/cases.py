"""onnx's backend node cases of one operator, without building all of them.

onnx makes its node cases by running every operator's ``export`` functions, one module per
operator family in ``onnx.backend.test.case.node`` (about 20 s for all ~1,900 cases).
A check needs one operator's, so an index says which modules may make cases of which
operator (the names quoted in a module's source, and its ``Base`` classes), and only those
modules are imported. The index is built once per onnx version (a scan of the sources, well
under a second) and kept in ``.cache/exercises/``. ``exercises/tests/test_cases_index.py``
checks it against the full collection for every operator.
"""

from __future__ import annotations

import importlib
import json
import re
import warnings
from functools import lru_cache
from pathlib import Path

import numpy as np
import onnx
import onnx.backend.test.case.node as node_package

from onnxkit.conformance.cases import Case

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "exercises"
PACKAGE = node_package.__name__
#: a quoted operator-like name ("LeakyRelu") or a test class ``class LeakyRelu(Base)``
NAMES = re.compile(r"""["']([A-Z][A-Za-z0-9]*)["']|^class (\w+)\(Base\)""", re.M)


def _modules() -> dict[str, Path]:
    """``{"onnx.backend.test.case.node.leakyrelu": path, ...}``, the ai.onnx.ml ones too."""
    top = Path(node_package.__file__).parent
    found = {}
    for path in sorted(top.rglob("*.py")):
        if path.name.startswith("_"):
            continue
        parts = path.relative_to(top).with_suffix("").parts
        found[".".join((PACKAGE, *parts))] = path
    return found


def build_index() -> dict[str, list[str]]:
    """``{op_type: [modules that may make its cases]}`` from the modules' sources."""
    index: dict[str, set[str]] = {}
    for module, path in _modules().items():
        for quoted, cls in NAMES.findall(path.read_text()):
            index.setdefault(quoted or cls, set()).add(module)
    return {op: sorted(mods) for op, mods in sorted(index.items())}


@lru_cache(maxsize=1)
def index() -> dict[str, list[str]]:
    """The index, read from ``.cache/exercises`` or built there (in memory if read-only)."""
    path = CACHE / f"node-cases-onnx-{onnx.__version__}.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        pass
    built = build_index()
    try:
        CACHE.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{id(built)}.tmp")
        tmp.write_text(json.dumps(built, indent=0))
        tmp.replace(path)  # atomic: parallel test workers may build it at once
    except OSError:
        pass
    return built


def _as_value(item):
    return onnx.numpy_helper.to_array(item) if isinstance(item, onnx.TensorProto) else item


def _single(tc, op_type: str) -> bool:
    """Every node of the main graph is ``op_type`` of the default domain (as in
    ``Case.op_types == [op_type]``)."""
    return {(n.domain if n.domain != "ai.onnx" else "", n.op_type)
            for n in tc.model.graph.node} == {("", op_type)}


@lru_cache(maxsize=None)
def node_cases_of(op_type: str) -> tuple[Case, ...]:
    """onnx's node cases whose graph is made of ``op_type`` nodes only (default domain),
    sorted by name: the cases ``onnxkit.conformance.node_cases()`` has for that graph."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for module in index().get(op_type, ()):
            importlib.import_module(module)  # its Base classes run their exports on import
    cases = [Case(tc.name, "node", tc.rtol, tc.atol, None, tc.model,
                  [([_as_value(i) for i in ins], [_as_value(o) for o in outs])
                   for ins, outs in tc.data_sets])
             for tc in node_package._NodeTestCases if _single(tc, op_type)]
    return tuple(sorted(cases, key=lambda c: c.name))
