"""com.microsoft QLinearGlobalAveragePool on the ``cpu`` executor: one compiled pass.

    acc[n, c] = sum over the plane of x[n, c, ...] - x_zero_point * plane size   (int64)
    y[n, c]   = saturate(rint(float32(acc) * m) + float32(y_zero_point))
                m = x_scale / (y_scale * float32(plane size))                   (float32)

The reference's float32 operations in its order (``onnxkit.ops.quant.
qlinear_global_average_pool``), so the answers are the same bits. The rows (n, c) are
shared among the threads. Scales that are not one float32 value, zero points of another
type, ranks below 3 run the reference kernel (it names what is wrong).
https://github.com/microsoft/onnxruntime/blob/main/docs/ContribOperators.md#com.microsoft.QLinearGlobalAveragePool
"""

from __future__ import annotations

import numpy as np
from numba import njit

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._buffers import empty
from onnxkit.kernels.cpu._route import fall_back
from onnxkit.kernels.cpu._threads import run_parts
from onnxkit.ops.quant import qlinear_global_average_pool as ref_pool
from onnxkit.ops.quant._contrib import EIGHT_BIT, MS_DOMAIN
from onnxkit.ops.quant._quant import INT_RANGES
from onnxkit.ops.registry import op

F32 = np.dtype(np.float32)


@njit(cache=True, nogil=True, error_model="numpy")
def _pool_rows(x, shift, mult, zero, low, high, y, lo, hi):
    """y[n, c] for rows r = n * C + c in [lo, hi) of x (N, C, S) (any strides)."""
    channels = x.shape[1]
    for r in range(lo, hi):
        n, c = r // channels, r % channels
        total = np.int64(0)
        for s in range(x.shape[2]):
            total += np.int64(x[n, c, s])
        v = np.rint(np.float32(total - shift) * mult) + zero
        if v != v:
            v = np.float32(0.0)  # NaN: 0, as the reference's nan_to_num
        y[n, c] = min(max(v, low), high)


def _one(value, dtype=None) -> bool:
    a = np.asarray(value)
    return a.size == 1 and (dtype is None or a.dtype == dtype)


@op("QLinearGlobalAveragePool", 1, domain=MS_DOMAIN, registry=CPU)
def qlinear_global_average_pool(X, x_scale, x_zero_point, y_scale, y_zero_point, *,
                                channels_last=0):
    if (X.dtype not in EIGHT_BIT or X.ndim < 3 or X.size == 0
            or not _one(x_scale, F32) or not _one(y_scale, F32)
            or not (x_zero_point is None or _one(x_zero_point, X.dtype))
            or not (y_zero_point is None or _one(y_zero_point, X.dtype))):
        return fall_back(ref_pool.qlinear_global_average_pool, X, x_scale, x_zero_point,
                         y_scale, y_zero_point, channels_last=channels_last)
    n = X.shape[0]
    if channels_last:  # [N, *spatial, C] seen as (N, C, S)
        c = X.shape[-1]
        x3 = X.reshape(n, -1, c).transpose(0, 2, 1)
        out_shape = (n,) + (1,) * (X.ndim - 2) + (c,)
    else:
        c = X.shape[1]
        x3 = X.reshape(n, c, -1)
        out_shape = (n, c) + (1,) * (X.ndim - 2)
    size = x3.shape[2]
    zx = 0 if x_zero_point is None else int(np.asarray(x_zero_point).reshape(()))
    zy = 0 if y_zero_point is None else int(np.asarray(y_zero_point).reshape(()))
    mult = np.float32(np.asarray(x_scale).reshape(())) / (
        np.float32(np.asarray(y_scale).reshape(())) * np.float32(size))
    low, high = INT_RANGES[X.dtype]
    y = empty((n, c), X.dtype)
    run_parts(_pool_rows, n * c, X.size, x3, np.int64(zx * size), np.float32(mult),
              np.float32(zy), np.float32(low), np.float32(high), y)
    return y.reshape(out_shape)
