"""What a spec-conformance notebook cell runs: one onnx case on the selected runtime, rendered.

``show(case, op, module, rtol, atol)`` builds the case by importing only the onnx module that
defines it (``onnx.backend.test.case.node.<module>``: inputs and expected outputs come from
its definition, as in onnx's suite), runs it on the runtime named by the environment
variable ``ONNXKIT_SPEC_RUNTIME`` (default ``reference``; any name ``onnxkit conformance
--backend`` takes) and prints ``render(expected, actual)``. The notebooks' saved outputs are
``render(expected, expected)``: a runtime whose every value is within the case's tolerance
prints exactly them, and any other difference is an nbval diff naming the operator and case.

render: per output, its shape and dtype, then the values rounded to the case's tolerance;
a value outside the tolerance is printed as the runtime gave it, marked ``!``.
"""

from __future__ import annotations

import math
import os
from functools import lru_cache

import numpy as np

from onnxkit.conformance.cases import Case

RUNTIME_VARIABLE = "ONNXKIT_SPEC_RUNTIME"


def load_case(name: str, module: str, rtol: float = 1e-3, atol: float = 1e-7) -> Case:
    """Case ``name`` from ``onnx.backend.test.case.node.<module>`` (importing only that module)."""
    import importlib
    import warnings

    import onnx.backend.test.case.node as node_pkg

    from onnxkit.conformance.cases import _as_value

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        importlib.import_module(f"{node_pkg.__name__}.{module}")
    for tc in node_pkg._NodeTestCases:
        if tc.name == name:
            data = [([_as_value(i) for i in ins], [_as_value(o) for o in outs]) for ins, outs in tc.data_sets]
            return Case(name, "node", rtol, atol, None, tc.model, data)
    raise LookupError(f"onnx {onnx_version()} has no node case {name!r} in module {module!r}")


def onnx_version() -> str:
    import onnx

    return onnx.__version__


@lru_cache(maxsize=4)
def _runner(name: str):
    from onnxkit.conformance.backends import resolve_backend

    return resolve_backend(name)


def _decimals(rtol: float, atol: float, ref: np.ndarray) -> int:
    scale = float(np.nanmax(np.abs(ref[np.isfinite(ref)]))) if np.isfinite(ref).any() else 1.0
    tol = max(atol, rtol * scale, 1e-12)
    return max(0, min(8, -math.floor(math.log10(tol))))


def _value_text(x, decimals: int) -> str:
    if isinstance(x, (float, np.floating)):
        if math.isnan(x) or math.isinf(x):
            return str(float(x))
        text = f"{float(x):.{decimals}f}"
        return "0." + "0" * decimals if text.lstrip("-").strip("0.") == "" else text
    return repr(x.item() if hasattr(x, "item") else x)


def _render_one(ref, out, rtol, atol, where: str) -> list[str]:
    ref, out = (np.asarray(v) if isinstance(v, np.generic) else v for v in (ref, out))  # 0-d results
    if isinstance(ref, list) or ref is None:
        if isinstance(ref, list) and isinstance(out, list) and len(ref) == len(out):
            lines = [f"{where}: sequence of {len(ref)}"]
            for j, (r, o) in enumerate(zip(ref, out)):
                lines += _render_one(r, o, rtol, atol, f"{where}[{j}]")
            return lines
        return [f"{where}: {'None' if ref is None else f'sequence of {len(ref)}'}"
                + ("" if _same_kind(ref, out) else f" ! got {type(out).__name__}")]
    ref = np.asarray(ref)
    if not isinstance(out, np.ndarray):
        return [f"{where}: ! got {type(out).__name__}, expected an array"]
    head = f"{where}: shape {tuple(ref.shape)} {ref.dtype}"
    if out.shape != ref.shape or out.dtype != ref.dtype:
        return [head, f"  ! got shape {tuple(out.shape)} {out.dtype}"]
    if ref.dtype.kind not in "fc":
        vals = [_value_text(r, 0) if r == o else f"!{_value_text(o, 0)}"
                for r, o in zip(ref.ravel().tolist(), out.ravel().tolist())]
    else:
        r64, o64 = ref.astype(np.float64), out.astype(np.float64)
        close = np.isclose(o64, r64, rtol=rtol, atol=atol, equal_nan=True)
        d = _decimals(rtol, atol, r64)
        vals = [_value_text(r, d) if c else f"!{_value_text(o, 8)}"
                for r, o, c in zip(r64.ravel(), o64.ravel(), close.ravel())]
    shown = vals[:24] + (["..."] if len(vals) > 24 else [])
    bad = sum(v.startswith("!") for v in vals)
    return [head, "  " + " ".join(shown)] + ([f"  ! {bad} values outside rtol={rtol:g} atol={atol:g}"] if bad else [])


def _same_kind(ref, out) -> bool:
    return (ref is None and out is None) or (isinstance(ref, list) and isinstance(out, list))


def render(case_name: str, op: str, expected: list, actual, rtol: float, atol: float) -> str:
    lines = [f"{op} {case_name}"]
    if isinstance(actual, str):
        return "\n".join(lines + [f"! {actual}"])
    if len(actual) != len(expected):
        lines.append(f"! {len(actual)} outputs, expected {len(expected)}")
    for i, (ref, out) in enumerate(zip(expected, actual)):
        lines += _render_one(ref, out, rtol, atol, f"output {i}")
    return "\n".join(lines)


def run_and_render(case_name: str, op: str, module: str, rtol: float = 1e-3, atol: float = 1e-7,
                   runtime: str | None = None) -> str:
    runtime = runtime or os.environ.get(RUNTIME_VARIABLE, "reference")
    case = load_case(case_name, module, rtol, atol)
    parts = []
    for inputs, expected in case.data_sets:
        try:
            with np.errstate(all="ignore"):
                actual = _runner(runtime)(case.model, [case.feeds(inputs)])[0]
            actual = [np.asarray(a) if not isinstance(a, (list, type(None), np.ndarray)) else a for a in actual]
        except Exception as exc:  # the runtime's error is the cell's output, shown in the diff
            actual = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
        parts.append(render(case_name, op, expected, actual, rtol, atol))
    return "\n".join(parts)


def show(case_name: str, op: str, module: str, rtol: float = 1e-3, atol: float = 1e-7) -> None:
    print(run_and_render(case_name, op, module, rtol, atol))


__all__ = ["show", "render", "run_and_render", "load_case", "RUNTIME_VARIABLE"]
