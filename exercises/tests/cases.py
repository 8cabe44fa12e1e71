"""onnx's backend node cases of one operator, without building all of them.

onnx makes its node cases by running every operator's ``export`` functions, one module per
operator family in ``onnx.backend.test.case.node`` (about 20 s for all ~1,900 cases).
A check needs one operator's, so an index says which modules make single-operator cases
of which operator, and only those modules are imported. The index is exact: it is built by
importing each module in turn and recording the operator of every single-operator case
it made, since a module also makes cases of operators it never names (CastLike's expanded
cases are Cast graphs, Clip's without bounds are Identity graphs). The index for the
pinned onnx ships beside this module; another onnx version builds its own once (about
15 s) into ``.cache/exercises/``. ``exercises/tests/test_cases_index.py`` checks it
against the full collection for every operator.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
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
HERE = Path(__file__).resolve().parent


def _modules() -> list[str]:
    """``["onnx.backend.test.case.node.abs", ...]``, the ai.onnx.ml ones too, sorted."""
    top = Path(node_package.__file__).parent
    found = []
    for path in sorted(top.rglob("*.py")):
        if path.name.startswith("_"):
            continue
        parts = path.relative_to(top).with_suffix("").parts
        found.append(".".join((PACKAGE, *parts)))
    return found


def _op_of(model) -> str | None:
    """The operator of a graph made of one default-domain operator's nodes, else None."""
    ops = {(n.domain if n.domain != "ai.onnx" else "", n.op_type) for n in model.graph.node}
    if len(ops) != 1:
        return None
    domain, op_type = next(iter(ops))
    return op_type if domain == "" else None


def _record() -> dict[str, list[str]]:
    """Import every node-case module in turn (in a process that imported none yet) and
    note the operator of each single-operator case it added."""
    index: dict[str, set[str]] = {}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for module in _modules():
            before = len(node_package._NodeTestCases)
            importlib.import_module(module)
            for tc in node_package._NodeTestCases[before:]:
                op_type = _op_of(tc.model)
                if op_type is not None:
                    index.setdefault(op_type, set()).add(module)
    return {op: sorted(mods) for op, mods in sorted(index.items())}


def build_index() -> dict[str, list[str]]:
    """``{op_type: [modules that make its single-operator cases]}``, recorded in a fresh
    Python process so that no module was imported before."""
    done = subprocess.run([sys.executable, "-m", __name__], cwd=ROOT, check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout)


def _index_path(directory: Path) -> Path:
    return directory / f"node-cases-onnx-{onnx.__version__}.json"


@lru_cache(maxsize=1)
def index() -> dict[str, list[str]]:
    """The index shipped for this onnx version, or the one in ``.cache/exercises``, or
    one built there (in memory only if that folder is read-only)."""
    for path in (_index_path(HERE), _index_path(CACHE)):
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError):
            pass
    built = build_index()
    path = _index_path(CACHE)
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
             for tc in node_package._NodeTestCases if _op_of(tc.model) == op_type]
    return tuple(sorted(cases, key=lambda c: c.name))


if __name__ == "__main__":
    print(json.dumps(_record(), indent=0))
