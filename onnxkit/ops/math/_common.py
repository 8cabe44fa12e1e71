"""Helpers shared by the elementwise kernels: working precision and legacy broadcasting.

- numpy has no arithmetic of its own for the ml_dtypes floats (bfloat16, float8...):
  compute in float32 and cast the result back to the input's dtype (``working``);
  activation formulas of several steps do the same for float16 (``precise``).
- opset < 7 binary ops broadcast only when ``broadcast=1``, and only B onto A:
  B's shape must match a contiguous run of A's dims starting at ``axis``
  (suffix matching when ``axis`` is absent); like old exporters, a B dim of 1 stretches.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from onnxkit.errors import KernelInputError
from onnxkit.core.limits import check_allocation


def is_extended_float(dtype: np.dtype) -> bool:
    """bfloat16, float8 and float4 types from ml_dtypes (numpy kind 'V')."""
    return dtype.kind == "V" and "float" in dtype.name


def working(x: np.ndarray) -> np.ndarray:
    """``x`` in a dtype numpy computes with (float32 for the ml_dtypes floats)."""
    return x.astype(np.float32) if is_extended_float(x.dtype) else x


def precise(x: np.ndarray) -> np.ndarray:
    """Like ``working``, and float16 too: formulas of several steps round only once."""
    return x.astype(np.float32) if x.dtype == np.float16 else working(x)


def as_dtype(y, dtype: np.dtype) -> np.ndarray:
    """``y`` as an array of ``dtype`` (numpy returns scalars for 0-d results)."""
    return np.asarray(y).astype(dtype, copy=False)


def unary_float(fn: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    """``fn(x)`` computed in working precision, returned in ``x``'s dtype."""
    return as_dtype(fn(working(x)), x.dtype)


def check_broadcast(*arrays: np.ndarray) -> None:
    """Broadcasting multiplies sizes ([N, 1] op [1, N] has N * N entries): check the
    result against ``max_tensor_bytes`` before numpy allocates it."""
    shape = np.broadcast_shapes(*(np.shape(a) for a in arrays))
    widest = max((np.asarray(a).dtype for a in arrays), key=lambda d: d.itemsize)
    check_allocation(shape, widest, "broadcast result")


def legacy_broadcast(A: np.ndarray, B: np.ndarray, broadcast: int, axis: int | None) -> np.ndarray:
    """B reshaped so that numpy broadcasting implements the opset-1/6 rule."""
    if not broadcast:
        if A.shape != B.shape:
            raise KernelInputError(
                f"shapes {list(A.shape)} and {list(B.shape)} differ and broadcast=0 "
                "(set broadcast=1 or use opset >= 7)"
            )
        return B
    if B.size == 1:
        return B.reshape(())
    if axis is None:
        start = A.ndim - B.ndim
    else:
        start = axis + A.ndim if axis < 0 else axis
    fits = 0 <= start and start + B.ndim <= A.ndim and all(
        b in (1, a) for a, b in zip(A.shape[start:], B.shape))
    if not fits:
        raise KernelInputError(
            f"cannot broadcast B {list(B.shape)} onto A {list(A.shape)} at axis {start}"
        )
    return B.reshape(B.shape + (1,) * (A.ndim - start - B.ndim))


_ERF = np.frompyfunc(math.erf, 1, 1)


def erf(x: np.ndarray) -> np.ndarray:
    """The error function elementwise (numpy has none; ``math.erf`` is exact to double)."""
    return np.asarray(_ERF(x)).astype(x.dtype)
