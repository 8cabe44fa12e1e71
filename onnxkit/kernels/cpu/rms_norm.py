"""RMSNormalization (opset 23) and onnxkit::RMSNormalization on the ``cpu`` executor.

    for each row r (the trailing axes from ``axis`` flattened, D values):
        inv = 1 / sqrt(sum(X[r]^2) / D + epsilon)     (accumulated in float64, any order)
        Y[r] = X[r] * inv * scale

One compiled pass over the rows (the reference takes five numpy passes and a check).
``scale`` must hold the normalized shape's D values (leading axes of size 1 allowed);
float32 with ``stash_type`` 1 only (``COMPILED``). Other scales, dtypes and stash types
run the reference kernel, which also names what is wrong with a bad input. A node whose
scale is an initializer is prepared with the plan: few rows normalized over the last
axis are one compiled call (``_small_norm``).
https://onnx.ai/onnx/operators/onnx__RMSNormalization.html
"""

from __future__ import annotations

import numpy as np
from numba import njit

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._buffers import SMALL, empty, read_only
from onnxkit.kernels.cpu._dtypes import COMPILED
from onnxkit.kernels.cpu._math import FASTMATH, rms_inv
from onnxkit.kernels.cpu._route import fall_back
from onnxkit.kernels.cpu._small_norm import install_prepare
from onnxkit.kernels.cpu._threads import min_parallel, run_parts
from onnxkit.ops.fused import rms_norm as ref_fused
from onnxkit.ops.nn import rms_norm as ref_rms_norm
from onnxkit.ops.registry import op


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH)
def _rms_rows(x, scale, eps, y, lo, hi):
    """y[r] = x[r] / sqrt(mean(x[r]^2) + eps) * scale, rows lo .. hi - 1 of (R, D)."""
    d = x.shape[1]
    for r in range(lo, hi):
        row = x[r]
        inv = rms_inv(row, eps)
        out = y[r]
        for i in range(d):
            out[i] = row[i] * inv * scale[i]


def _trailing(shape) -> tuple:
    """``shape`` without its leading axes of size 1."""
    start = 0
    while start < len(shape) and shape[start] == 1:
        start += 1
    return tuple(shape[start:])


def rms_norm_fast(X, scale, axis, epsilon):
    """Y, or None for the cases left to the reference kernel."""
    if X.dtype not in COMPILED or scale.dtype != X.dtype or X.size == 0 \
            or not -X.ndim <= axis < X.ndim or scale.ndim > X.ndim:
        return None
    start = axis % X.ndim
    if not (scale.ndim == 1 and start == X.ndim - 1 and scale.shape[0] == X.shape[-1]) \
            and _trailing(scale.shape) != _trailing(X.shape[start:]):
        return None  # a scale that varies along the other axes, or does not broadcast
    d = scale.size
    x = X.reshape(-1, d) if X.flags.c_contiguous else X.copy().reshape(-1, d)
    Y = np.empty(X.shape, X.dtype) if X.nbytes < SMALL else empty(X.shape, X.dtype)
    y, rows = Y.reshape(-1, d), x.shape[0]
    if x.size < min_parallel():  # one call here: no split to work out
        _rms_rows(read_only(x), read_only(scale.reshape(d)), float(epsilon), y, 0, rows)
    else:
        run_parts(_rms_rows, rows, x.size, read_only(x), read_only(scale.reshape(d)),
                  float(epsilon), y)
    return Y


def _rms_or(reference, X, scale, axis, epsilon, stash_type):
    """The compiled kernel, or ``reference`` where it does not serve (``fall_back``)."""
    Y = rms_norm_fast(X, scale, axis, epsilon) if stash_type == 1 else None
    if Y is None:
        return fall_back(reference, X, scale, axis=axis, epsilon=epsilon,
                         stash_type=stash_type)
    return Y


@op("RMSNormalization", 23, registry=CPU)
def rms_normalization(X, scale, *, axis=-1, epsilon=1e-5, stash_type=1):
    return _rms_or(ref_rms_norm.rms_normalization, X, scale, axis, epsilon, stash_type)


@op("RMSNormalization", 1, domain="onnxkit", registry=CPU)
def onnxkit_rms_normalization(X, scale, *, axis=-1, epsilon=1e-5, stash_type=1):
    return _rms_or(ref_fused.rms_normalization, X, scale, axis, epsilon, stash_type)


install_prepare(rms_normalization, "rms")
install_prepare(onnxkit_rms_normalization, "rms")
