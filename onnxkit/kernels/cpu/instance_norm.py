"""InstanceNormalization on the ``cpu`` executor: one Numba pass set per (sample, channel).

    for each row r = (n, c) of X seen as (N * C, D), D the spatial size:
        mean = sum(x) / D;  var = sum((x - mean)^2) / D       (accumulated in float64)
        Y[r] = x * a + b,   a = scale[c] / sqrt(var + epsilon),  b = B[c] - mean * a

The rows are shared among the threads; each is read three times while it is in cache
(the reference: mean, var, then four whole-tensor passes; ``docs/cpu.md``). X of rank
2, types other than float32 (``COMPILED``) and scale or B not one value per channel run
the reference kernel.
https://onnx.ai/onnx/operators/onnx__InstanceNormalization.html
"""

from __future__ import annotations

import numpy as np
from numba import njit

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._buffers import empty, read_only
from onnxkit.kernels.cpu._dtypes import COMPILED
from onnxkit.kernels.cpu._math import FASTMATH, mean_inv_std
from onnxkit.kernels.cpu._route import fall_back
from onnxkit.kernels.cpu._threads import run_parts
from onnxkit.ops.nn.instance_norm import instance_normalization as reference
from onnxkit.ops.registry import op


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH)
def _rows(x, scale, bias, eps, y, lo, hi):
    d, channels = x.shape[1], scale.size
    for r in range(lo, hi):
        src, dst = x[r], y[r]
        mean, inv = mean_inv_std(src, eps)
        a64 = scale[r % channels] * inv
        a, b = dst.dtype.type(a64), dst.dtype.type(bias[r % channels] - mean * a64)
        for i in range(d):
            dst[i] = src[i] * a + b


def instance_rows(x, scale, bias, eps, y):
    """y (R, D) = the rows of x normalized (see the module docstring), rows among threads."""
    run_parts(_rows, x.shape[0], x.size, x, scale, bias, eps, y)


@op("InstanceNormalization", 1, 6, 22, registry=CPU)
def instance_normalization(X, scale, B, *, consumed_inputs=None, epsilon=1e-5):
    c = X.shape[1] if X.ndim > 1 else -1
    if (X.ndim < 3 or X.dtype not in COMPILED or X.size == 0
            or any(p.dtype != X.dtype or p.shape != (c,) for p in (scale, B))):
        return fall_back(reference, X, scale, B, consumed_inputs=consumed_inputs,
                         epsilon=epsilon)
    Y = empty(X.shape, X.dtype)
    rows = X.shape[0] * c
    instance_rows(read_only(np.ascontiguousarray(X).reshape(rows, -1)), read_only(scale),
                  read_only(B), float(epsilon), Y.reshape(rows, -1))
    return Y
