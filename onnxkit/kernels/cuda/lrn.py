"""LRN (local response normalization across channels) on the GPU: one thread per element.

    square_sum = sum of X[n, k, ...]^2 for k in [c - floor((size-1)/2), c + ceil((size-1)/2)]
                 clipped to [0, C)
    Y[n, c, ...] = X[n, c, ...] / (bias + alpha / size * square_sum) ^ beta

https://onnx.ai/onnx/operators/onnx__LRN.html
"""

import math
from functools import lru_cache

import numpy as np
from numba import cuda

from onnxkit.errors import KernelError
from onnxkit.kernels.cuda import CUDA
from onnxkit.kernels.cuda._device import FLOAT_DTYPES, device, empty, launch_1d, need_dtype
from onnxkit.ops.registry import op


@lru_cache(maxsize=None)
def lrn_kernel(dtype):
    cast = np.dtype(dtype).type

    @cuda.jit
    def kernel(x, channels, inner, before, after, scale, beta, bias, out):
        i = cuda.grid(1)
        if i < out.size:
            c = (i // inner) % channels
            first = max(c - before, 0)
            stop = min(c + after + 1, channels)
            total = cast(0)
            for k in range(first, stop):
                v = x[i + (k - c) * inner]
                total += v * v
            out[i] = x[i] / math.pow(cast(bias) + cast(scale) * total, cast(beta))

    return kernel


@op("LRN", 1, 13, registry=CUDA)
def lrn(X, *, alpha=0.0001, beta=0.75, bias=1.0, size):
    if size < 1:
        raise KernelError(f"LRN size must be positive, got {size}")
    X = device(X, "X")
    need_dtype(X, FLOAT_DTYPES, "X")
    if X.ndim < 2:
        raise KernelError(f"LRN needs an input of rank >= 2, got shape {list(X.shape)}")
    out = empty(X.shape, X.dtype)
    inner = int(np.prod(X.shape[2:], dtype=np.int64))
    before = (size - 1) // 2
    launch_1d(lrn_kernel(X.dtype), out.size, X.flat, X.shape[1], inner, before,
              size - 1 - before, alpha / size, float(beta), float(bias), out.flat)
    return out
