"""LRN: local response normalization across nearby channels.

    square_sum[n, c] = sum of X[n, c']^2 for c' in [c - floor((size-1)/2), c + ceil((size-1)/2)]
        (channels outside [0, C) contribute nothing)
    Y = X / (bias + alpha / size * square_sum) ^ beta

https://onnx.ai/onnx/operators/onnx__LRN.html
"""

import numpy as np

from onnxkit.errors import KernelError
from onnxkit.ops.nn._windows import compute_dtype
from onnxkit.ops.registry import op


@op("LRN", 1, 13)
def lrn(X, *, alpha=0.0001, beta=0.75, bias=1.0, size):
    if size < 1:
        raise KernelError(f"LRN size must be positive, got {size}")
    if X.ndim < 2:
        raise KernelError(f"LRN needs an input of rank >= 2, got shape {list(X.shape)}")
    work = compute_dtype(X.dtype)
    x = X.astype(work, copy=False)
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
    c = X.shape[1]
    # running[i] = sum of squares of channels [0, i); window ends are clipped to [0, C]
    running = np.cumsum(x * x, axis=1)
    running = np.concatenate([np.zeros_like(running[:, :1]), running], axis=1)
    channel = np.arange(c, dtype=np.int64)
    low = np.clip(channel - min(before, c), 0, c)
    high = np.clip(channel + min(after, c) + 1, 0, c)
    square_sum = np.take(running, high, axis=1) - np.take(running, low, axis=1)
    return (x / (bias + alpha / size * square_sum) ** beta).astype(X.dtype)
