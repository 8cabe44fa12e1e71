"""InstanceNormalization on the GPU: one block per (sample, channel) plane.

    mean, var = row_moments(X[n, c, ...])            (tree sums in shared memory, _rows.py)
    Y[n, c, ...] = (X[n, c, ...] - mean) / sqrt(var + epsilon) * scale[c] + B[c]

https://onnx.ai/onnx/operators/onnx__InstanceNormalization.html
"""

import math
from functools import lru_cache

import numba
import numpy as np
from numba import cuda

from onnxkit.errors import KernelError
from onnxkit.kernels.cuda import CUDA
from onnxkit.kernels.cuda._device import (FLOAT_DTYPES, HostFallback, device, empty, launch,
                                          need_dtype)
from onnxkit.kernels.cuda._rows import MAX_ROW_THREADS, row_moments, row_threads
from onnxkit.ops.registry import op


@lru_cache(maxsize=None)
def instance_norm_kernel(dtype):
    elem = numba.from_dtype(dtype)
    cast = np.dtype(dtype).type
    moments = row_moments(dtype)

    @cuda.jit
    def kernel(x, length, channels, scale, bias, epsilon, out):
        buf = cuda.shared.array(MAX_ROW_THREADS, elem)
        t = cuda.threadIdx.x
        nt = cuda.blockDim.x
        r = cuda.blockIdx.x
        c = r % channels
        base = r * length
        mean, var = moments(x, base, length, buf, t, nt)
        std = cast(math.sqrt(var + cast(epsilon)))
        for k in range(t, length, nt):
            out[base + k] = (x[base + k] - mean) / std * scale[c] + bias[c]

    return kernel


@op("InstanceNormalization", 1, 6, 22, registry=CUDA)
def instance_normalization(X, scale, B, *, consumed_inputs=None, epsilon=1e-5):
    X, scale, B = device(X, "X"), device(scale, "scale"), device(B, "B")
    need_dtype(X, FLOAT_DTYPES, "X")
    if X.ndim < 2 or scale.size != X.shape[1] or B.size != X.shape[1]:
        raise KernelError(f"InstanceNormalization: scale {list(scale.shape)} and B {list(B.shape)} "
                          f"need one value per channel of X {list(X.shape)}")
    if scale.dtype != X.dtype or B.dtype != X.dtype:
        raise HostFallback(f"X is {X.dtype}, scale {scale.dtype}, B {B.dtype}")
    out = empty(X.shape, X.dtype)
    length = int(np.prod(X.shape[2:], dtype=np.int64))
    if out.size == 0:
        return out
    launch(instance_norm_kernel(X.dtype), out.size // length, row_threads(length), X.flat,
           length, X.shape[1], scale.flat, B.flat, float(epsilon), out.flat)
    return out
