"""LayerNormalization (and onnxkit's LayerNormalization / SkipLayerNormalization) on the GPU.

One block per row (the trailing axes ``axis..rank-1``), statistics in ``stash_type``::

    mean = sum(x) / L;  var = sum((x - mean)^2) / L;  inv = 1 / sqrt(var + epsilon)
    y = (x - mean) * inv * Scale + B                  (Scale, B broadcast over the row)
    SkipLayerNormalization: x = X + Skip first (and S = x is its second output)

https://onnx.ai/onnx/operators/onnx__LayerNormalization.html
"""

import math
from functools import lru_cache

import numba
import numpy as np
from numba import cuda

from onnxkit.errors import KernelInputError
from onnxkit.kernels.cuda import CUDA
from onnxkit.kernels.cuda import _scalar as s
from onnxkit.kernels.cuda._device import (FLOAT_DTYPES, HostFallback, device, empty, launch,
                                          need_dtype, shape_tuple)
from onnxkit.kernels.cuda._elementwise import binary
from onnxkit.kernels.cuda._rows import MAX_ROW_THREADS, row_moments, row_threads
from onnxkit.kernels.indexing import broadcast_offset, broadcast_strides, for_cuda
from onnxkit.ops.nn._stats import normalize_axis, stash_dtype
from onnxkit.ops.registry import op

_offset = for_cuda(broadcast_offset)


@lru_cache(maxsize=None)
def layer_norm_kernel(work):
    elem = numba.from_dtype(work)
    cast = np.dtype(work).type
    one = cast(1)
    moments = row_moments(work)

    @cuda.jit
    def kernel(x, length, scale, s_strides, bias, b_strides, has_bias, row_shape, epsilon,
               out, mean_out, inv_out, want_stats):
        buf = cuda.shared.array(MAX_ROW_THREADS, elem)
        t = cuda.threadIdx.x
        nt = cuda.blockDim.x
        r = cuda.blockIdx.x
        base = r * length
        mean, var = moments(x, base, length, buf, t, nt)
        inv = cast(one / math.sqrt(var + cast(epsilon)))
        for k in range(t, length, nt):
            y = (cast(x[base + k]) - mean) * inv * cast(scale[_offset(k, row_shape, s_strides)])
            if has_bias:
                y += cast(bias[_offset(k, row_shape, b_strides)])
            out[base + k] = y
        if want_stats and t == 0:
            mean_out[r] = mean
            inv_out[r] = inv

    return kernel


def layer_norm(X, Scale, B=None, axis=-1, epsilon=1e-5, stash_type=1):
    """(Y, Mean, InvStdDev) with Mean and InvStdDev keeping the normalized axes as 1."""
    X, Scale = device(X, "X"), device(Scale, "Scale")
    need_dtype(X, FLOAT_DTYPES, "X")
    work = stash_dtype(stash_type, X.dtype)
    start = normalize_axis(axis, X.ndim)
    row_shape = X.shape[start:]
    bias = None if B is None else device(B, "B")
    for what, t in (("Scale", Scale), ("B", bias)):
        if t is not None and (t.dtype != X.dtype or t.ndim > len(row_shape)):
            raise HostFallback(f"{what} {t.dtype}{list(t.shape)} for rows {list(row_shape)}")
    length = int(np.prod(row_shape, dtype=np.int64))
    stats_shape = X.shape[:start] + (1,) * len(row_shape)
    out, mean, inv = empty(X.shape, X.dtype), empty(stats_shape, work), empty(stats_shape, work)
    if out.size == 0:
        return out, mean, inv
    rows = out.size // length
    launch(layer_norm_kernel(work), rows, row_threads(length), X.flat, length, Scale.flat,
           _strides(Scale, row_shape), X.flat if bias is None else bias.flat,
           _strides(bias, row_shape), bias is not None, shape_tuple(row_shape), float(epsilon),
           out.flat, mean.flat, inv.flat, True)
    return out, mean, inv


def _strides(t, row_shape) -> tuple:
    if t is None or not row_shape:
        return (0,)
    return shape_tuple(broadcast_strides(t.shape, row_shape))


@op("LayerNormalization", 17, registry=CUDA)
def layer_normalization(X, Scale, B=None, *, axis=-1, epsilon=1e-5, stash_type=1):
    return layer_norm(X, Scale, B, axis, epsilon, stash_type)


@op("LayerNormalization", 1, domain="onnxkit", registry=CUDA)
def onnxkit_layer_normalization(X, Scale, B=None, *, axis=-1, epsilon=1e-5, stash_type=1):
    return layer_norm(X, Scale, B, axis, epsilon, stash_type)[0]


@op("SkipLayerNormalization", 1, domain="onnxkit", registry=CUDA)
def skip_layer_normalization(X, Skip, Scale, B=None, *, axis=-1, epsilon=1e-5):
    X, Skip = device(X, "X"), device(Skip, "Skip")
    if X.shape != Skip.shape:
        raise KernelInputError(f"X has shape {list(X.shape)} and Skip {list(Skip.shape)}; "
                         "they must match")
    if X.dtype != Skip.dtype:
        raise HostFallback(f"X is {X.dtype}, Skip is {Skip.dtype}")
    S = binary(X, Skip, s.add)
    return layer_norm(S, Scale, B, axis, epsilon)[0], S
