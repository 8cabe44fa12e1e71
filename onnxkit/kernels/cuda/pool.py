"""MaxPool and AveragePool on the GPU: one thread per output element.

    start = o * stride - pad_begin; taps j in window_taps(start, dilation, kernel, size)
    tap j reads input position conv_input_coord(o, j, stride, pad_begin, dilation)
    MaxPool:     Y = max over the taps inside X (padding never wins; the first max on
                 ties, the first NaN if any); Indices = flat index of that element in X,
                 row-major, or column-major over the spatial axes with storage_order=1
    AveragePool: Y = sum over the taps inside X / count, count = taps inside X, or inside
                 X and its declared pads with count_include_pad=1

The window geometry (output size, auto_pad, ceil_mode) is the reference's; the tap
bounds are ``onnxkit.kernels.indexing.window_taps``, shared with the cpu kernels. 1-D and
2-D pools run as 3-D ones over leading axes of size 1.
https://onnx.ai/onnx/operators/onnx__MaxPool.html
https://onnx.ai/onnx/operators/onnx__AveragePool.html
"""

from functools import lru_cache

import numpy as np
from numba import cuda

from onnxkit.kernels.cuda import CUDA
from onnxkit.kernels.cuda._device import (FLOAT_DTYPES, HostFallback, device, empty, launch_1d,
                                          need_dtype)
from onnxkit.kernels.indexing import (conv_input_coord, for_cuda, im2col_col_split, spatial3,
                                      window_start, window_taps)
from onnxkit.ops.nn._windows import geometry
from onnxkit.ops.registry import op

_col_split = for_cuda(im2col_col_split)
_coord = for_cuda(conv_input_coord)
_start = for_cuda(window_start)
_taps = for_cuda(window_taps)
MAX_POOL_DTYPES = FLOAT_DTYPES | {np.dtype(np.int8), np.dtype(np.uint8)}


@lru_cache(maxsize=None)
def max_pool_kernel(dtype):
    lowest = np.dtype(dtype).type(np.iinfo(dtype).min if dtype.kind in "iu" else -np.inf)

    @cuda.jit
    def kernel(x, in3, k3, s3, d3, p3, o3, column_major, out, indices, want_indices):
        i = cuda.grid(1)
        if i < out.size:
            P = o3[0] * o3[1] * o3[2]
            plane = i // P
            od, oh, ow = _col_split(i % P, o3[0], o3[1], o3[2])
            b0 = _start(od, s3[0], p3[0])
            b1 = _start(oh, s3[1], p3[1])
            b2 = _start(ow, s3[2], p3[2])
            f0, e0 = _taps(b0, d3[0], k3[0], in3[0])
            f1, e1 = _taps(b1, d3[1], k3[1], in3[1])
            f2, e2 = _taps(b2, d3[2], k3[2], in3[2])
            best = lowest
            found = False
            at0, at1, at2 = 0, 0, 0
            for j0 in range(f0, e0):
                for j1 in range(f1, e1):
                    for j2 in range(f2, e2):
                        p0 = _coord(od, j0, s3[0], p3[0], d3[0])
                        p1 = _coord(oh, j1, s3[1], p3[1], d3[1])
                        p2 = _coord(ow, j2, s3[2], p3[2], d3[2])
                        v = x[((plane * in3[0] + p0) * in3[1] + p1) * in3[2] + p2]
                        if not found or v > best or (v != v and best == best):
                            best = v
                            found = True
                            at0, at1, at2 = p0, p1, p2
            out[i] = best
            if want_indices:
                if column_major:
                    place = (at2 * in3[1] + at1) * in3[0] + at0
                else:
                    place = (at0 * in3[1] + at1) * in3[2] + at2
                indices[i] = plane * in3[0] * in3[1] * in3[2] + place

    return kernel


@cuda.jit
def _average_pool_kernel(x, in3, k3, s3, d3, p3, e3, o3, include_pad, out):
    i = cuda.grid(1)
    if i < out.size:
        P = o3[0] * o3[1] * o3[2]
        plane = i // P
        od, oh, ow = _col_split(i % P, o3[0], o3[1], o3[2])
        b0 = _start(od, s3[0], p3[0])
        b1 = _start(oh, s3[1], p3[1])
        b2 = _start(ow, s3[2], p3[2])
        f0, e0 = _taps(b0, d3[0], k3[0], in3[0])
        f1, e1 = _taps(b1, d3[1], k3[1], in3[1])
        f2, e2 = _taps(b2, d3[2], k3[2], in3[2])
        total = 0.0
        for j0 in range(f0, e0):
            for j1 in range(f1, e1):
                r0 = _coord(od, j0, s3[0], p3[0], d3[0])
                r1 = _coord(oh, j1, s3[1], p3[1], d3[1])
                row = (plane * in3[0] + r0) * in3[1] + r1
                for j2 in range(f2, e2):
                    total += x[row * in3[2] + _coord(ow, j2, s3[2], p3[2], d3[2])]
        count = max(e0 - f0, 0) * max(e1 - f1, 0) * max(e2 - f2, 0)
        if include_pad:  # taps inside [-begin, size + end): shift the window by the pads
            g0, h0 = _taps(b0 + p3[0], d3[0], k3[0], in3[0] + p3[0] + e3[0])
            g1, h1 = _taps(b1 + p3[1], d3[1], k3[1], in3[1] + p3[1] + e3[1])
            g2, h2 = _taps(b2 + p3[2], d3[2], k3[2], in3[2] + p3[2] + e3[2])
            count = max(h0 - g0, 0) * max(h1 - g1, 0) * max(h2 - g2, 0)
        out[i] = total / max(count, 1)


def _geometry(X, kernel_shape, strides, dilations, pads, auto_pad, ceil_mode):
    if not 3 <= X.ndim <= 5:
        raise HostFallback(f"a {X.ndim - 2}-D pool (the cuda kernel does 1-D to 3-D)")
    g = geometry(X.shape[2:], kernel_shape, strides, dilations, pads, auto_pad, ceil_mode)
    geometry3 = (spatial3(X.shape[2:], 1), spatial3(g.kernel, 1), spatial3(g.strides, 1),
                 spatial3(g.dilations, 1), spatial3(g.begin, 0))
    return g, geometry3, spatial3(g.end, 0), spatial3(g.out, 1)


@op("MaxPool", 1, 8, 10, 11, 12, 22, context=True, registry=CUDA)
def max_pool(X, *, auto_pad="NOTSET", ceil_mode=0, dilations=None, kernel_shape, pads=None,
             storage_order=0, strides=None, ctx):
    X = device(X, "X")
    need_dtype(X, MAX_POOL_DTYPES, "X")
    g, geometry3, _, out3 = _geometry(X, kernel_shape, strides, dilations, pads, auto_pad,
                                      ceil_mode)
    out = empty(X.shape[:2] + g.out, X.dtype)
    want = ctx.n_outputs > 1 and bool(ctx.node.output[1])
    indices = empty(out.shape, np.int64) if want else empty((1,), np.int64)
    launch_1d(max_pool_kernel(X.dtype), out.size, X.flat, *geometry3, out3, bool(storage_order),
              out.flat, indices.flat, want)
    return (out, indices) if want else out


@op("AveragePool", 1, 7, 10, 11, 19, 22, registry=CUDA)
def average_pool(X, *, auto_pad="NOTSET", ceil_mode=0, count_include_pad=0, dilations=None,
                 kernel_shape, pads=None, strides=None):
    X = device(X, "X")
    need_dtype(X, FLOAT_DTYPES, "X")
    g, geometry3, end3, out3 = _geometry(X, kernel_shape, strides, dilations, pads, auto_pad,
                                         ceil_mode)
    out = empty(X.shape[:2] + g.out, X.dtype)
    launch_1d(_average_pool_kernel, out.size, X.flat, *geometry3, end3, out3,
              bool(count_include_pad), out.flat)
    return out
