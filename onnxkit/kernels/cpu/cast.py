"""Cast on the ``cpu`` executor between numpy's plain types: one ``astype``.

    same type:                 a copy
    float -> bool:             X != 0            (NaN -> True, as the reference)
    bool / int / float -> any other of them:  X.astype(to)

Transformers cast their int64 attention mask to bool or float on every run; the
reference's path through the string, float8 and small-int rules costs more than the
cast. The target type is looked up in a table of the plain ONNX types; strings, float8,
bfloat16, int4 and the like (either side) run the reference kernel.
https://onnx.ai/onnx/operators/onnx__Cast.html
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._route import fall_back
from onnxkit.ops.cast import cast as ref_cast
from onnxkit.ops.registry import op

#: ONNX element type -> numpy dtype, the types ``astype`` converts as Cast does
PLAIN = {getattr(TensorProto, name): np.dtype(kind) for name, kind in (
    ("BOOL", np.bool_), ("INT8", np.int8), ("INT16", np.int16), ("INT32", np.int32),
    ("INT64", np.int64), ("UINT8", np.uint8), ("UINT16", np.uint16), ("UINT32", np.uint32),
    ("UINT64", np.uint64), ("FLOAT16", np.float16), ("FLOAT", np.float32),
    ("DOUBLE", np.float64))}
_PLAIN_DTYPES = frozenset(PLAIN.values())


def cast_fast(x, to):
    """The cast, or None for the reference kernel."""
    dtype = PLAIN.get(to)
    if dtype is None or x.dtype not in _PLAIN_DTYPES:
        return None
    if x.dtype == dtype:
        return x.copy()
    if dtype.kind == "b" and x.dtype.kind == "f":
        return np.asarray(x != 0)
    return x.astype(dtype)


@op("Cast", 6, 9, 13, registry=CPU)
def cast_v6(input, *, to):
    y = cast_fast(input, to)
    return fall_back(ref_cast.cast_v6, input, to=to) if y is None else y


@op("Cast", 19, 21, 23, registry=CPU)
def cast_v19(input, *, to, saturate=1):  # saturate: float8 targets only
    y = cast_fast(input, to)
    return fall_back(ref_cast.cast_v19, input, to=to, saturate=saturate) if y is None else y


@op("Cast", 24, 25, 28, registry=CPU)
def cast(input, *, to, saturate=1, round_mode="up"):  # round_mode: float8e8m0 only
    y = cast_fast(input, to)
    if y is None:
        return fall_back(ref_cast.cast, input, to=to, saturate=saturate, round_mode=round_mode)
    return y
