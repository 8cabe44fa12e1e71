"""LRN: local response normalization across nearby channels.

    square_sum[n, c] = sum of X[n, c']^2 for c' in [c - floor((size-1)/2), c + ceil((size-1)/2)]
    Y = X / (bias + alpha / size * square_sum) ^ beta

https://onnx.ai/onnx/operators/onnx__LRN.html
"""

import numpy as np

from onnxkit.ops.nn._windows import compute_dtype
from onnxkit.ops.registry import op


@op("LRN", 1, 13)
def lrn(X, *, alpha=0.0001, beta=0.75, bias=1.0, size):
    work = compute_dtype(X.dtype)
    x = X.astype(work, copy=False)
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
    widths = [(0, 0)] * X.ndim
    widths[1] = (before, after)
    squares = np.pad(x * x, widths)
    running = np.cumsum(squares, axis=1)
    running = np.concatenate([np.zeros_like(running[:, :1]), running], axis=1)
    c = X.shape[1]
    square_sum = running[:, size:size + c] - running[:, :c]
    return (x / (bias + alpha / size * square_sum) ** beta).astype(X.dtype)
