"""AveragePool and LpPool: reduce each (dilated, strided, padded) window of the input.

    AveragePool: Y[n, c, o] = sum(window(o)) / count(o)
        count(o) = taps inside the input, or inside input + pads with count_include_pad=1
        (taps that ceil_mode pushes past the end padding are never counted)
    LpPool:      Y[n, c, o] = (sum |window(o)|^p) ^ (1/p)      (padding contributes 0)

https://onnx.ai/onnx/operators/onnx__AveragePool.html
https://onnx.ai/onnx/operators/onnx__LpPool.html
"""

import numpy as np

from onnxkit.ops.nn._windows import (compute_dtype, geometry, pad_for_windows, reduce_windows,
                                     window_counts)
from onnxkit.ops.registry import op


@op("AveragePool", 1, 7, 10, 11, 19, 22)
def average_pool(X, *, auto_pad="NOTSET", ceil_mode=0, count_include_pad=0, dilations=None,
                 kernel_shape, pads=None, strides=None):
    g = geometry(X.shape[2:], kernel_shape, strides, dilations, pads, auto_pad, ceil_mode)
    work = compute_dtype(X.dtype)
    total = reduce_windows(pad_for_windows(X.astype(work, copy=False), g), g, np.add)
    counts = window_counts(X.shape[2:], g, bool(count_include_pad))
    return (total / np.maximum(counts, 1)).astype(X.dtype)


@op("LpPool", 1, 2, 11, 18, 22)
def lp_pool(X, *, auto_pad="NOTSET", ceil_mode=0, dilations=None, kernel_shape, p=2,
            pads=None, strides=None):
    g = geometry(X.shape[2:], kernel_shape, strides, dilations, pads, auto_pad, ceil_mode)
    work = compute_dtype(X.dtype)
    powers = np.abs(X.astype(work, copy=False)) ** p
    total = reduce_windows(pad_for_windows(powers, g), g, np.add)
    return (total ** (1.0 / p)).astype(X.dtype)
