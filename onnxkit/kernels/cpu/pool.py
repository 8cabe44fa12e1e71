"""MaxPool and AveragePool on the ``cpu`` executor: 1-D and 2-D windows in Numba, separably.

    for each plane (n, c) and output row oh:
        t = reduce over the window's tap rows i inside the input of X[ih, :]   (whole rows)
        ph[r] = columns r, r + sw, r + 2*sw ... of t, with padding values around them
        for each tap column j:  Y[oh, :] = reduce(Y[oh, :], ph[r_j][q_j:q_j + OW])
    reduce: MaxPool max (NaN wins, padding -inf); AveragePool sum (padding 0), then
            Y / count, count from ``_counts`` (with or without the pads)

Both passes read contiguous runs, so they vectorize: a 3x3 stride-2 MaxPool does 3 row
passes and 3 phase passes per output row instead of 9 strided ones. Windows 3 columns
wide at column stride 2 and dilation 1 (the stems' 3x3 stride-2 pools, SqueezeNet's)
split the reduced row once into its even and odd padded columns, each behind and past
a margin of the padding value, and read the three taps as contiguous runs of them
(``_three_apart``). Small planes are bound by the per-row loop overhead, so planes at
most ``FLAT_WIDTH`` wide (dilation 1) run ``_flat_planes``: each
plane copied into a padded one, then one long pass per column tap and per row tap over
the whole flat plane, and the outputs picked from it at their stride (the windows near
a row's end mix in the next row, but no output reads those). Measurements of both:
``docs/cpu.md``.

Index math from ``onnxkit.kernels.indexing`` (the index helpers of the cpu and cuda
kernels): a window starts at ``window_start`` and its tap i reads start + i*dh, as in
the cuda pools; the column tap j of output column ow reads
``conv_input_coord(ow, j, sw, pl, dw)``, which is column ow + q of phase r
(``phase_index``).

Padding never wins a maximum and adds nothing to a sum. MaxPool with its Indices
output, 3-D windows and types other than float32 (``COMPILED``) run the reference kernel.
https://onnx.ai/onnx/operators/onnx__MaxPool.html
https://onnx.ai/onnx/operators/onnx__AveragePool.html
"""

from __future__ import annotations

import numpy as np
from numba import njit

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._buffers import empty, read_only
from onnxkit.kernels.cpu._dtypes import COMPILED
from onnxkit.kernels.cpu._geometry import attrs_fit, layer_geometry
from onnxkit.kernels.cpu._im2col import copy_run, phase_index
from onnxkit.kernels.cpu._route import fall_back
from onnxkit.kernels.cpu._threads import run_parts
from onnxkit.kernels.indexing import conv_input_coord, for_cpu, window_start
from onnxkit.ops.nn._windows import Geometry
from onnxkit.ops.nn.max_pool import max_pool as reference_max_pool
from onnxkit.ops.nn.pool import average_pool as reference_average_pool
from onnxkit.ops.registry import op

_coord = for_cpu(conv_input_coord)
_start = for_cpu(window_start)


@njit(inline="always")
def _bigger(best, v):
    """max(best, v) where NaN wins (either side), as the reference's np.max. Numba's
    ``np.maximum`` on two scalars vectorizes in the callers' loops; a compare-and-select
    of them does not."""
    return np.maximum(best, v)


@njit(inline="always")
def _taps_into(acc, src, n, is_max):
    """acc[:n] = max(acc, src) (NaN wins) or acc + src, over contiguous runs."""
    if is_max:
        for t in range(n):
            acc[t] = _bigger(acc[t], src[t])
    else:
        for t in range(n):
            acc[t] += src[t]


def pool_rows(x, kh, kw, sh, sw, dh, dw, pt, pl, is_max, y):
    """x (P, H, W) planes -> y (P, OH, OW): the max (NaN wins) or sum of each window.

    Separable: for each output row, the window's input rows are reduced into one row
    ``t`` (contiguous runs), whose ``sw`` column phases go to ``ph`` with a margin of
    ``fill`` (-inf or 0: what the padding adds) on both sides; tap j of every window of
    the row then reads one contiguous run of phase ``(j*dw - pl) mod sw``. The planes
    are shared among the threads, each part with its own ``t`` and ``ph``.
    """
    run_parts(_pool_planes, x.shape[0], x.size, x, kh, kw, sh, sw, dh, dw, pt, pl, is_max, y)


@njit(inline="always")
def _three_apart(t, width, pl, ev, od, row, ow_n, is_max):
    """row[ow] = reduce of padded columns 2ow .. 2ow + 2 of ``t`` (padded column p is
    t[p - pl], pl <= 2): ``t`` split into ``ev`` (padded columns 2j) and ``od`` (2j + 1),
    whose entries outside ``t`` keep the padding value the caller filled them with."""
    if pl % 2 == 0:  # column 2k of t is padded column 2k + pl
        a, b = ev[pl // 2:], od[pl // 2:]
    else:
        a, b = od[pl // 2:], ev[pl // 2 + 1:]
    half = width // 2
    for k in range(half):
        a[k] = t[2 * k]
        b[k] = t[2 * k + 1]
    if width % 2 == 1:
        a[half] = t[width - 1]
    e0, o0, e1 = ev[:ow_n], od[:ow_n], ev[1:1 + ow_n]
    if is_max:
        for w in range(ow_n):
            row[w] = _bigger(_bigger(e0[w], o0[w]), e1[w])
    else:
        for w in range(ow_n):
            row[w] = e0[w] + o0[w] + e1[w]


FLAT_WIDTH = 32  # input columns: planes at most this wide run ``_flat_planes``


@njit(cache=True, nogil=True, error_model="numpy")
def _flat_planes(x, kh, kw, sh, sw, pt, pl, is_max, y, lo, hi):
    """``_pool_planes`` at dilation 1 for small planes, in long loops over the flat plane:

        buf[(r + pt) * wp + c + pl] = x[r, c]      (the fill value elsewhere)
        across[i] = reduce of buf[i + j], j < kw    (one pass per column tap)
        down[i] = reduce of across[i + k*wp], k < kh (one pass per row tap)
        y[oh, ow] = down[oh*sh*wp + ow*sw]

    ``wp`` (``hp``) is the padded extent the windows read, so a window never runs past
    its row; the positions near a row's end mix in the next row, and no output reads
    them. On rows of 7-15 values each per-row loop ran in LLVM's scalar remainder."""
    height, width = x.shape[1], x.shape[2]
    oh_n, ow_n = y.shape[1], y.shape[2]
    fill = -np.inf if is_max else 0.0
    hp, wp = (oh_n - 1) * sh + kh, (ow_n - 1) * sw + kw
    buf = np.full(hp * wp, fill, y.dtype)
    across = np.empty(hp * wp, y.dtype)
    down = np.empty(hp * wp, y.dtype)
    rows = max(0, min(height, hp - pt))  # the input rows and columns inside it
    cols = max(0, min(width, wp - pl))
    n_across = hp * wp - (kw - 1)
    n_down = (hp - kh) * wp + (ow_n - 1) * sw + 1  # up to the last output's position
    for p in range(lo, hi):
        for r in range(rows):
            copy_run(buf, (r + pt) * wp + pl, x[p, r], 0, cols)
        copy_run(across, 0, buf, 0, n_across)
        for j in range(1, kw):
            _taps_into(across, buf[j:j + n_across], n_across, is_max)
        copy_run(down, 0, across, 0, n_down)
        for k in range(1, kh):
            _taps_into(down, across[k * wp:k * wp + n_down], n_down, is_max)
        for oh in range(oh_n):
            row = y[p, oh]
            picked = down[oh * sh * wp:]
            for ow in range(ow_n):
                row[ow] = picked[ow * sw]


@njit(cache=True, nogil=True, error_model="numpy")
def _pool_planes(x, kh, kw, sh, sw, dh, dw, pt, pl, is_max, y, lo, hi):
    height, width = x.shape[1], x.shape[2]
    oh_n, ow_n = y.shape[1], y.shape[2]
    if dh == 1 and dw == 1 and width <= FLAT_WIDTH:
        _flat_planes(x, kh, kw, sh, sw, pt, pl, is_max, y, lo, hi)
        return
    fill = -np.inf if is_max else 0.0
    margin = (pl + sw - 1) // sw + 1
    length = margin + ow_n + ((kw - 1) * dw + sw - 1) // sw + (width + sw - 1) // sw + 1
    t = np.empty(width, y.dtype)  # the row reduced over the window's tap rows
    apart = kw == 3 and sw == 2 and dw == 1 and pl <= 2  # ``_three_apart``
    ph = np.full((sw, length), fill, y.dtype)
    ev = np.full(ow_n + width // 2 + 4, fill, y.dtype)
    od = np.full(ow_n + width // 2 + 4, fill, y.dtype)
    for p in range(lo, hi):
        for oh in range(oh_n):
            top = _start(oh, sh, pt)
            first = True
            for i in range(kh):
                ih = top + i * dh
                if ih < 0 or ih >= height:
                    continue
                if first:
                    copy_run(t, 0, x[p, ih], 0, width)
                    first = False
                else:
                    _taps_into(t, x[p, ih], width, is_max)
            row = y[p, oh]
            if apart and not first:  # it writes the whole row
                _three_apart(t, width, pl, ev, od, row, ow_n, is_max)
                continue
            for ow in range(ow_n):
                row[ow] = fill
            if first:
                continue  # every tap row is padding
            for r in range(sw):
                dst = ph[r, margin:]
                for k in range((width - r + sw - 1) // sw):
                    dst[k] = t[k * sw + r]
            for j in range(kw):
                r, q = phase_index(_coord(0, j, sw, pl, dw), sw)  # column ow*sw + d: phase r, ow + q
                _taps_into(row, ph[r, margin + q:], ow_n, is_max)


def _planes_2d(X, kernel_shape, strides, dilations, pads, auto_pad, ceil_mode):
    """(X as (planes, H, W), geometry in 2-D, output shape) or None when not 2-D/1-D."""
    if X.dtype not in COMPILED or X.ndim not in (3, 4) or X.size == 0:
        return None
    nd = X.ndim - 2
    if not attrs_fit(nd, kernel_shape, strides, dilations, pads):
        return None
    g = layer_geometry(X.shape[2:], kernel_shape, strides, dilations, pads, auto_pad, ceil_mode)
    out_shape = X.shape[:2] + g.out
    if nd == 1:
        g = Geometry((1,) + g.kernel, (1,) + g.strides, (1,) + g.dilations, (0,) + g.begin,
                     (0,) + g.end, (1,) + g.out)
    planes = read_only(np.ascontiguousarray(X).reshape((-1,) + ((1,) if nd == 1 else ())
                                                       + X.shape[2:]))
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


def _args(g: Geometry):
    return (g.kernel[0], g.kernel[1], g.strides[0], g.strides[1], g.dilations[0],
            g.dilations[1], g.begin[0], g.begin[1])


@op("MaxPool", 1, 8, 10, 11, 12, 22, context=True, registry=CPU)
def max_pool(X, *, auto_pad="NOTSET", ceil_mode=0, dilations=None, kernel_shape, pads=None,
             storage_order=0, strides=None, ctx):
    wants_indices = ctx.n_outputs > 1 and bool(ctx.node.output[1])
    found = None if wants_indices else _planes_2d(X, kernel_shape, strides, dilations, pads,
                                                  auto_pad, ceil_mode)
    if found is None and not wants_indices:  # 8-bit values: quantized_pool's loop
        from onnxkit.kernels.cpu.quantized_pool import max_pool_8bit
        found = max_pool_8bit(X, kernel_shape, strides, dilations, pads, auto_pad, ceil_mode)
        if found is not None:
            return found
    if found is None:
        return fall_back(reference_max_pool, X, auto_pad=auto_pad, ceil_mode=ceil_mode,
                         dilations=dilations, kernel_shape=kernel_shape, pads=pads,
                         storage_order=storage_order, strides=strides, ctx=ctx)
    planes, g, out_shape = found
    Y = empty((planes.shape[0],) + g.out, X.dtype)
    pool_rows(planes, *_args(g), True, Y)
    return Y.reshape(out_shape)


@op("AveragePool", 1, 7, 10, 11, 19, 22, registry=CPU)
def average_pool(X, *, auto_pad="NOTSET", ceil_mode=0, count_include_pad=0, dilations=None,
                 kernel_shape, pads=None, strides=None):
    found = _planes_2d(X, kernel_shape, strides, dilations, pads, auto_pad, ceil_mode)
    if found is None:
        return fall_back(reference_average_pool, X, auto_pad=auto_pad, ceil_mode=ceil_mode,
                         count_include_pad=count_include_pad, dilations=dilations,
                         kernel_shape=kernel_shape, pads=pads, strides=strides)
    planes, g, out_shape = found
    Y = empty((planes.shape[0],) + g.out, X.dtype)
    counts = _counts(planes.shape[1:], g, bool(count_include_pad))
    pool_rows(planes, *_args(g), False, Y)
    np.divide(Y, counts.astype(X.dtype, copy=False), out=Y)
    return Y.reshape(out_shape)
