"""Reduce* and the global pools on the GPU: one block per output element (``_rows``).

    o = output ordinal (row-major over the kept axes); base = offset of o in X
    acc = init; for r in this thread's share of the reduced elements:
        acc = combine(acc, pre(X[base + offset(r over the reduced axes)]))
    Y[o] = post(block_combine(acc), count)

    ReduceSum: +   ReduceProd: *   ReduceMax / ReduceMin: max / min (NaN wins)
    ReduceMean: sum / count   ReduceSumSquare: + of x^2   ReduceL1: + of |x|
    ReduceL2: sqrt of + of x^2   GlobalAveragePool / GlobalMaxPool: mean / max over H, W...

Axes are an attribute up to version 13 (18 for most) and an input after; the axis rules
(absent or empty: all axes, or none with noop_with_empty_axes) are the reference's.
https://onnx.ai/onnx/operators/onnx__ReduceSum.html
"""

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numba
import numpy as np
from numba import cuda

from onnxkit.kernels.cuda import CUDA
from onnxkit.kernels.cuda import _scalar as s
from onnxkit.kernels.cuda._device import (DEVICE_DTYPES, FLOAT_DTYPES, device, empty, host,
                                          launch, need_dtype, shape_tuple)
from onnxkit.kernels.cuda._rows import MAX_ROW_THREADS, block_reduce, row_threads
from onnxkit.kernels.indexing import broadcast_offset, contiguous_strides, for_cuda
from onnxkit.ops.reduce._reduce import reduction_axes
from onnxkit.ops.registry import op

NUMERIC = frozenset(d for d in DEVICE_DTYPES if d.kind in "iuf")
_offset = for_cuda(broadcast_offset)


def _square(x, p0, p1):
    return x * x


def _post_mean(acc, count, p1):
    return acc / count


def _post_sqrt(acc, count, p1):
    return math.sqrt(acc)  # acc is a sum of squares: >= 0 or NaN


@dataclass(frozen=True)
class Reduction:
    pre: Callable  # formula(x, p0, p1) applied to each element
    combine: Callable  # (acc, value) -> acc
    post: Callable  # formula(acc, count, p1) applied to the result
    init: Callable  # dtype -> the identity of combine
    dtypes: frozenset


def _zero(dtype):
    return 0


def _one(dtype):
    return 1


def _lowest(dtype):
    return np.iinfo(dtype).min if dtype.kind in "iu" else -np.inf


def _highest(dtype):
    return np.iinfo(dtype).max if dtype.kind in "iu" else np.inf


SUM = Reduction(s.identity, s.add, s.identity, _zero, NUMERIC)
PROD = Reduction(s.identity, s.mul, s.identity, _one, NUMERIC)
MAX = Reduction(s.identity, s.maximum, s.identity, _lowest, NUMERIC)
MIN = Reduction(s.identity, s.minimum, s.identity, _highest, NUMERIC)
MEAN = Reduction(s.identity, s.add, _post_mean, _zero, FLOAT_DTYPES)
SUM_SQUARE = Reduction(_square, s.add, s.identity, _zero, FLOAT_DTYPES)
L1 = Reduction(s.abs_, s.add, s.identity, _zero, FLOAT_DTYPES)
L2 = Reduction(_square, s.add, _post_sqrt, _zero, FLOAT_DTYPES)


@lru_cache(maxsize=None)
def reduce_kernel(dtype, how: Reduction):
    elem = numba.from_dtype(dtype)
    cast = np.dtype(dtype).type
    init = cast(how.init(np.dtype(dtype)))
    pre, combine, post = for_cuda(how.pre), for_cuda(how.combine), for_cuda(how.post)
    block = block_reduce(how.combine)

    @cuda.jit
    def kernel(x, kept_shape, kept_strides, red_shape, red_strides, count, out):
        buf = cuda.shared.array(MAX_ROW_THREADS, elem)
        t = cuda.threadIdx.x
        nt = cuda.blockDim.x
        o = cuda.blockIdx.x
        base = _offset(o, kept_shape, kept_strides)
        acc = init
        for r in range(t, count, nt):
            value = cast(pre(x[base + _offset(r, red_shape, red_strides)], 0.0, 0.0))
            acc = cast(combine(acc, value))
        acc = block(buf, t, nt, acc)
        if t == 0:
            out[o] = post(acc, count, 0.0)

    return kernel


def reduce(data, axes, keepdims, how: Reduction, noop_with_empty_axes=0):
    """Reduce ``data`` over ``axes`` (None or empty: by the spec's rule) with ``how``."""
    X = device(data, "data")
    need_dtype(X, how.dtypes, "data")
    axes = reduction_axes(X, None if axes is None else host(axes, "axes"), noop_with_empty_axes)
    kept = [a for a in range(X.ndim) if a not in axes]
    strides = contiguous_strides(X.shape)
    kept_shape = tuple(X.shape[a] for a in kept)
    red_shape = tuple(X.shape[a] for a in axes)
    out_shape = kept_shape
    if keepdims:
        out_shape = tuple(1 if a in axes else X.shape[a] for a in range(X.ndim))
    out = empty(out_shape, X.dtype)
    if out.size == 0:
        return out
    count = int(np.prod(red_shape, dtype=np.int64))
    launch(reduce_kernel(X.dtype, how), out.size, row_threads(count), X.flat,
           shape_tuple(kept_shape), shape_tuple([strides[a] for a in kept] or [0]),
           shape_tuple(red_shape), shape_tuple([strides[a] for a in axes] or [0]), count, out.flat)
    return out


# axes as an attribute (older versions), then as an input (newer ones)


@op("ReduceSum", 1, 11, registry=CUDA)
def reduce_sum_v1(data, *, axes=None, keepdims=1):
    return reduce(data, axes, keepdims, SUM)


@op("ReduceSum", 13, registry=CUDA)
def reduce_sum(data, axes=None, *, keepdims=1, noop_with_empty_axes=0):
    return reduce(data, axes, keepdims, SUM, noop_with_empty_axes)


@op("ReduceMean", 1, 11, 13, registry=CUDA)
def reduce_mean_v1(data, *, axes=None, keepdims=1):
    return reduce(data, axes, keepdims, MEAN)


@op("ReduceMean", 18, registry=CUDA)
def reduce_mean(data, axes=None, *, keepdims=1, noop_with_empty_axes=0):
    return reduce(data, axes, keepdims, MEAN, noop_with_empty_axes)


@op("ReduceProd", 1, 11, 13, registry=CUDA)
def reduce_prod_v1(data, *, axes=None, keepdims=1):
    return reduce(data, axes, keepdims, PROD)


@op("ReduceProd", 18, registry=CUDA)
def reduce_prod(data, axes=None, *, keepdims=1, noop_with_empty_axes=0):
    return reduce(data, axes, keepdims, PROD, noop_with_empty_axes)


@op("ReduceMax", 1, 11, 12, 13, registry=CUDA)
def reduce_max_v1(data, *, axes=None, keepdims=1):
    return reduce(data, axes, keepdims, MAX)


@op("ReduceMax", 18, 20, registry=CUDA)
def reduce_max(data, axes=None, *, keepdims=1, noop_with_empty_axes=0):
    return reduce(data, axes, keepdims, MAX, noop_with_empty_axes)


@op("ReduceMin", 1, 11, 12, 13, registry=CUDA)
def reduce_min_v1(data, *, axes=None, keepdims=1):
    return reduce(data, axes, keepdims, MIN)


@op("ReduceMin", 18, 20, registry=CUDA)
def reduce_min(data, axes=None, *, keepdims=1, noop_with_empty_axes=0):
    return reduce(data, axes, keepdims, MIN, noop_with_empty_axes)


@op("ReduceSumSquare", 1, 11, 13, registry=CUDA)
def reduce_sum_square_v1(data, *, axes=None, keepdims=1):
    return reduce(data, axes, keepdims, SUM_SQUARE)


@op("ReduceSumSquare", 18, registry=CUDA)
def reduce_sum_square(data, axes=None, *, keepdims=1, noop_with_empty_axes=0):
    return reduce(data, axes, keepdims, SUM_SQUARE, noop_with_empty_axes)


@op("ReduceL1", 1, 11, 13, registry=CUDA)
def reduce_l1_v1(data, *, axes=None, keepdims=1):
    return reduce(data, axes, keepdims, L1)


@op("ReduceL1", 18, registry=CUDA)
def reduce_l1(data, axes=None, *, keepdims=1, noop_with_empty_axes=0):
    return reduce(data, axes, keepdims, L1, noop_with_empty_axes)


@op("ReduceL2", 1, 11, 13, registry=CUDA)
def reduce_l2_v1(data, *, axes=None, keepdims=1):
    return reduce(data, axes, keepdims, L2)


@op("ReduceL2", 18, registry=CUDA)
def reduce_l2(data, axes=None, *, keepdims=1, noop_with_empty_axes=0):
    return reduce(data, axes, keepdims, L2, noop_with_empty_axes)


@op("GlobalAveragePool", 1, 22, registry=CUDA)
def global_average_pool(X):
    X = device(X, "X")
    return reduce(X, list(range(2, X.ndim)) or None, 1, MEAN, 1)


@op("GlobalMaxPool", 1, 22, registry=CUDA)
def global_max_pool(X):
    X = device(X, "X")
    need_dtype(X, FLOAT_DTYPES, "X")
    return reduce(X, list(range(2, X.ndim)) or None, 1, MAX, 1)
