"""MaxPool and AveragePool on the ``cpu`` executor: 1-D and 2-D windows in Numba.

    for each plane (n, c), output row oh, tap row i inside the input, tap column j:
        for ow in the clamped range reading inside the row:
            MaxPool:     Y[oh, ow] = max(Y[oh, ow], X[ih, ow*sw + j*dw - pl])  (NaN wins)
            AveragePool: S[oh, ow] += X[ih, ow*sw + j*dw - pl]
    AveragePool: Y = S / count, count from ``_counts`` (with or without the pads)

Index math from ``onnxkit.kernels.indexing`` (the index helpers of the cpu and cuda
kernels): a window starts at ``window_start`` and its tap i reads start + i*dh, as in
the cuda pools; the clamped column ranges are ``window_taps`` (``valid_range``) of the
offsets ``conv_input_coord`` gives.

Padding is never read, so it never wins a maximum and adds nothing to a sum. MaxPool
with its Indices output, 3-D windows and integer types run the reference kernel.
https://onnx.ai/onnx/operators/onnx__MaxPool.html
https://onnx.ai/onnx/operators/onnx__AveragePool.html
"""

from __future__ import annotations

import numpy as np
from numba import njit

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._buffers import empty
from onnxkit.kernels.cpu._im2col import phase_index, phase_shape, phases, valid_range
from onnxkit.kernels.indexing import conv_input_coord, for_cpu, window_start
from onnxkit.ops.nn._windows import Geometry, geometry
from onnxkit.ops.nn.max_pool import max_pool as reference_max_pool
from onnxkit.ops.nn.pool import average_pool as reference_average_pool
from onnxkit.ops.registry import op

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_coord = for_cpu(conv_input_coord)
_start = for_cpu(window_start)


@njit(cache=True, error_model="numpy")
def max_pool_2d(x, xp, kh, kw, sh, sw, dh, dw, pt, pl, y):
    """x (P, H, W) planes -> y (P, OH, OW), the NaN-propagating max of each window.

    ``xp`` is ``phases(x, sw)`` when sw > 1: a tap then reads a contiguous run.
    """
    planes, height, width = x.shape
    oh_n, ow_n = y.shape[1], y.shape[2]
    for p in range(planes):
        for oh in range(oh_n):
            row = y[p, oh]
            for t in range(ow_n):
                row[t] = -np.inf
            top = _start(oh, sh, pt)
            for i in range(kh):
                ih = top + i * dh
                if ih < 0 or ih >= height:
                    continue
                for j in range(kw):
                    off = _coord(0, j, sw, pl, dw)  # the column tap j reads for output column 0
                    lo, hi = valid_range(off, sw, width, ow_n)
                    r, q = phase_index(off, sw)
                    a = row[lo:hi]
                    b = x[p, ih, lo + off:] if sw == 1 else xp[p, ih, r, lo + q:]
                    for t in range(hi - lo):
                        v = b[t]
                        best = a[t]
                        a[t] = best if (v <= best or best != best) else v  # NaN wins


@njit(cache=True, error_model="numpy")
def average_pool_2d(x, xp, kh, kw, sh, sw, dh, dw, pt, pl, count, y):
    """x (P, H, W) -> y (P, OH, OW): window sums (taps in order) divided by ``count``."""
    planes, height, width = x.shape
    oh_n, ow_n = y.shape[1], y.shape[2]
    for p in range(planes):
        for oh in range(oh_n):
            row = y[p, oh]
            for t in range(ow_n):
                row[t] = 0
            top = _start(oh, sh, pt)
            for i in range(kh):
                ih = top + i * dh
                if ih < 0 or ih >= height:
                    continue
                for j in range(kw):
                    off = _coord(0, j, sw, pl, dw)  # the column tap j reads for output column 0
                    lo, hi = valid_range(off, sw, width, ow_n)
                    r, q = phase_index(off, sw)
                    a = row[lo:hi]
                    b = x[p, ih, lo + off:] if sw == 1 else xp[p, ih, r, lo + q:]
                    for t in range(hi - lo):
                        a[t] += b[t]
            div = count[oh]
            for ow in range(ow_n):
                row[ow] = np.float64(row[ow]) / div[ow]


def _planes_2d(X, kernel_shape, strides, dilations, pads, auto_pad, ceil_mode):
    """(X as (planes, H, W), geometry in 2-D, output shape) or None when not 2-D/1-D."""
    if X.dtype not in FLOATS or X.ndim not in (3, 4) or X.size == 0:
        return None
    nd = X.ndim - 2
    if kernel_shape is None or len(kernel_shape) != nd or any(
            v is not None and len(v) != size
            for v, size in ((strides, nd), (dilations, nd), (pads, 2 * nd))):
        return None
    g = geometry(X.shape[2:], kernel_shape, strides, dilations, pads, auto_pad, ceil_mode)
    out_shape = X.shape[:2] + g.out
    if nd == 1:
        g = Geometry((1,) + g.kernel, (1,) + g.strides, (1,) + g.dilations, (0,) + g.begin,
                     (0,) + g.end, (1,) + g.out)
    planes = np.ascontiguousarray(X).reshape((-1,) + ((1,) if nd == 1 else ()) + X.shape[2:])
    return planes, g, out_shape


def _counts(in_hw, g: Geometry, include_pad: bool) -> np.ndarray:
    """Taps of each window inside the input (or inside input + declared pads)."""
    per_axis = []
    for size, k, s, d, b, e, o in zip(in_hw, g.kernel, g.strides, g.dilations, g.begin,
                                      g.end, g.out):
        pos = conv_input_coord(np.arange(o)[:, None], np.arange(k)[None, :], s, b, d)
        lo, hi = (-b, size + e) if include_pad else (0, size)
        per_axis.append(np.maximum(((pos >= lo) & (pos < hi)).sum(axis=1), 1))
    return np.multiply.outer(per_axis[0], per_axis[1]).astype(np.float64)


_NO_PHASES = {t: np.zeros((1, 1, 1, 1), t) for t in FLOATS}


def _phases(planes, g: Geometry):
    sw = g.strides[1]
    if sw == 1:
        return _NO_PHASES[planes.dtype]
    xp = empty(phase_shape(planes.shape, sw), planes.dtype)
    phases(planes, sw, xp)
    return xp


def _args(g: Geometry):
    return (g.kernel[0], g.kernel[1], g.strides[0], g.strides[1], g.dilations[0],
            g.dilations[1], g.begin[0], g.begin[1])


@op("MaxPool", 1, 8, 10, 11, 12, 22, context=True, registry=CPU)
def max_pool(X, *, auto_pad="NOTSET", ceil_mode=0, dilations=None, kernel_shape, pads=None,
             storage_order=0, strides=None, ctx):
    wants_indices = ctx.n_outputs > 1 and bool(ctx.node.output[1])
    found = None if wants_indices else _planes_2d(X, kernel_shape, strides, dilations, pads,
                                                  auto_pad, ceil_mode)
    if found is None:
        return reference_max_pool(X, auto_pad=auto_pad, ceil_mode=ceil_mode,
                                  dilations=dilations, kernel_shape=kernel_shape, pads=pads,
                                  storage_order=storage_order, strides=strides, ctx=ctx)
    planes, g, out_shape = found
    Y = empty((planes.shape[0],) + g.out, X.dtype)
    max_pool_2d(planes, _phases(planes, g), *_args(g), Y)
    return Y.reshape(out_shape)


@op("AveragePool", 1, 7, 10, 11, 19, 22, registry=CPU)
def average_pool(X, *, auto_pad="NOTSET", ceil_mode=0, count_include_pad=0, dilations=None,
                 kernel_shape, pads=None, strides=None):
    found = _planes_2d(X, kernel_shape, strides, dilations, pads, auto_pad, ceil_mode)
    if found is None:
        return reference_average_pool(X, auto_pad=auto_pad, ceil_mode=ceil_mode,
                                      count_include_pad=count_include_pad, dilations=dilations,
                                      kernel_shape=kernel_shape, pads=pads, strides=strides)
    planes, g, out_shape = found
    Y = empty((planes.shape[0],) + g.out, X.dtype)
    counts = _counts(planes.shape[1:], g, bool(count_include_pad))
    average_pool_2d(planes, _phases(planes, g), *_args(g), counts, Y)
    return Y.reshape(out_shape)
