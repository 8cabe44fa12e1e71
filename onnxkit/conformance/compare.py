"""Compare outputs the way onnx's backend test runner does.

Same count; per output: sequences element by element, same shape, same dtype,
strings exactly, numbers with ``assert_allclose(rtol, atol)`` (bfloat16 compared in
float32 with rtol at least two bfloat16 ULPs, as onnx does).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np


def assert_outputs_close(expected: Sequence[Any], actual: Sequence[Any], rtol: float, atol: float) -> None:
    if len(actual) != len(expected):
        raise AssertionError(f"expected {len(expected)} outputs, got {len(actual)}")
    for i, (ref, out) in enumerate(zip(expected, actual)):
        _assert_value(ref, out, rtol, atol, f"output {i}")


def _assert_value(ref, out, rtol, atol, where: str) -> None:
    if isinstance(ref, (list, tuple)):
        if not isinstance(out, (list, tuple)):
            raise AssertionError(f"{where}: expected a sequence, got {type(out).__name__}")
        if len(ref) != len(out):
            raise AssertionError(f"{where}: expected a sequence of {len(ref)}, got {len(out)}")
        for j, (r, o) in enumerate(zip(ref, out)):
            _assert_value(r, o, rtol, atol, f"{where}[{j}]")
        return
    if ref is None or out is None:
        if ref is not out:
            raise AssertionError(f"{where}: expected {ref!r}, got {type(out).__name__}")
        return
    if isinstance(ref, dict):
        if not isinstance(out, dict) or set(ref) != set(out):
            raise AssertionError(f"{where}: map keys differ")
        for key in ref:
            _assert_value(ref[key], out[key], rtol, atol, f"{where}[{key!r}]")
        return
    ref = np.asarray(ref)
    if not isinstance(out, np.ndarray):
        raise AssertionError(f"{where}: expected an array, got {type(out).__name__}")
    if out.shape != ref.shape:
        raise AssertionError(f"{where}: shape {out.shape} != expected {ref.shape}")
    if ref.dtype == object:
        np.testing.assert_array_equal(out, ref, err_msg=where)
        return
    if out.dtype != ref.dtype:
        raise AssertionError(f"{where}: dtype {out.dtype} != expected {ref.dtype}")
    if ref.dtype.name == "bfloat16":
        rtol = max(rtol, 2**-6)
    if ref.dtype.kind not in "biufc?":
        out, ref = out.astype(np.float32), ref.astype(np.float32)
    np.testing.assert_allclose(out, ref, rtol=rtol, atol=atol, err_msg=where)
