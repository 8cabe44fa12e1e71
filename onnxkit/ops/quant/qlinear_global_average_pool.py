"""com.microsoft QLinearGlobalAveragePool: the mean of each channel's plane, requantized.

    acc[n, c] = sum over the plane of (x - x_zero_point)                   exact
    y[n, c] = saturate(round(acc * (x_scale / (y_scale * plane size))) + y_zero_point)

x is [N, C, *spatial], or [N, *spatial, C] with ``channels_last`` = 1; y keeps the rank
with every spatial axis 1. The product runs in float32, as onnxruntime's does.
https://github.com/microsoft/onnxruntime/blob/main/docs/ContribOperators.md#com.microsoft.QLinearGlobalAveragePool
"""

import numpy as np

from onnxkit.errors import InputError
from onnxkit.ops.quant._contrib import (F32, MS_DOMAIN, eight_bit, saturated, scale_of,
                                        zero_point_of)
from onnxkit.ops.registry import op


@op("QLinearGlobalAveragePool", 1, domain=MS_DOMAIN)
def qlinear_global_average_pool(X, x_scale, x_zero_point, y_scale, y_zero_point, *,
                                channels_last=0):
    eight_bit(X, "X")
    if X.ndim < 3:
        raise InputError(f"X must have rank 3 or more (batch, channels, spatial), "
                         f"got shape {list(X.shape)}")
    axes = tuple(range(1, X.ndim - 1)) if channels_last else tuple(range(2, X.ndim))
    size = int(np.prod([X.shape[a] for a in axes]))
    zx = zero_point_of(x_zero_point, X.dtype, "x_zero_point")
    zy = zero_point_of(y_zero_point, X.dtype, "y_zero_point")
    acc = X.astype(np.int64).sum(axis=axes, keepdims=True) - zx * size
    multiplier = scale_of(x_scale, "x_scale") / (scale_of(y_scale, "y_scale") * F32(size))
    return saturated(np.rint(acc.astype(F32) * multiplier) + F32(zy), X.dtype)
