"""com.microsoft QLinearGlobalAveragePool on the ``cpu`` executor: one compiled pass; and
MaxPool of 8-bit values (``max_pool_8bit``, which ``pool.max_pool`` hands them to).

    acc[n, c] = sum over the plane of x[n, c, ...] - x_zero_point * plane size   (int64)
    y[n, c]   = saturate(rint(float32(acc) * m) + float32(y_zero_point))
                m = x_scale / (y_scale * float32(plane size))                   (float32)

The reference's float32 operations in its order (``onnxkit.ops.quant.
qlinear_global_average_pool``), so the answers are the same bits. The rows (n, c) are
shared among the threads. Scales that are not one float32 value, zero points of another
type, ranks below 3 run the reference kernel (it names what is wrong).

MaxPool of uint8 / int8 (a QOperator model's pool between QLinearConvs): the largest
input value of each window's taps inside the input, the type's lowest value for a window
with none (the reference pads with it); the planes shared among the threads.
https://github.com/microsoft/onnxruntime/blob/main/docs/ContribOperators.md#com.microsoft.QLinearGlobalAveragePool
"""

from __future__ import annotations

import numpy as np
from numba import njit

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._buffers import empty, read_only
from onnxkit.kernels.cpu._geometry import attrs_fit, layer_geometry
from onnxkit.kernels.cpu._route import fall_back
from onnxkit.kernels.cpu._threads import run_parts
from onnxkit.ops.quant import qlinear_global_average_pool as ref_pool
from onnxkit.ops.quant._contrib import EIGHT_BIT, MS_DOMAIN
from onnxkit.ops.quant._quant import INT_RANGES
from onnxkit.ops.registry import op

F32 = np.dtype(np.float32)


@njit(cache=True, nogil=True, error_model="numpy")
def _pool_rows(x, shift, mult, zero, low, high, y, lo, hi):
    """y[n, c] for rows r = n * C + c in [lo, hi) of x (N, C, S) (any strides)."""
    channels = x.shape[1]
    for r in range(lo, hi):
        n, c = r // channels, r % channels
        total = np.int64(0)
        for s in range(x.shape[2]):
            total += np.int64(x[n, c, s])
        v = np.rint(np.float32(total - shift) * mult) + zero
        if v != v:
            v = np.float32(0.0)  # NaN: 0, as the reference's nan_to_num
        y[n, c] = min(max(v, low), high)


def _one(value, dtype=None) -> bool:
    a = np.asarray(value)
    return a.size == 1 and (dtype is None or a.dtype == dtype)


@op("QLinearGlobalAveragePool", 1, domain=MS_DOMAIN, registry=CPU)
def qlinear_global_average_pool(X, x_scale, x_zero_point, y_scale, y_zero_point, *,
                                channels_last=0):
    if (X.dtype not in EIGHT_BIT or X.ndim < 3 or X.size == 0
            or not _one(x_scale, F32) or not _one(y_scale, F32)
            or not (x_zero_point is None or _one(x_zero_point, X.dtype))
            or not (y_zero_point is None or _one(y_zero_point, X.dtype))):
        return fall_back(ref_pool.qlinear_global_average_pool, X, x_scale, x_zero_point,
                         y_scale, y_zero_point, channels_last=channels_last)
    n = X.shape[0]
    if channels_last:  # [N, *spatial, C] seen as (N, C, S)
        c = X.shape[-1]
        x3 = X.reshape(n, -1, c).transpose(0, 2, 1)
        out_shape = (n,) + (1,) * (X.ndim - 2) + (c,)
    else:
        c = X.shape[1]
        x3 = X.reshape(n, c, -1)
        out_shape = (n, c) + (1,) * (X.ndim - 2)
    size = x3.shape[2]
    zx = 0 if x_zero_point is None else int(np.asarray(x_zero_point).reshape(()))
    zy = 0 if y_zero_point is None else int(np.asarray(y_zero_point).reshape(()))
    mult = np.float32(np.asarray(x_scale).reshape(())) / (
        np.float32(np.asarray(y_scale).reshape(())) * np.float32(size))
    low, high = INT_RANGES[X.dtype]
    y = empty((n, c), X.dtype)
    run_parts(_pool_rows, n * c, X.size, x3, np.int64(zx * size), np.float32(mult),
              np.float32(zy), np.float32(low), np.float32(high), y)
    return y.reshape(out_shape)


@njit(cache=True, nogil=True, error_model="numpy")
def _max_planes(x, kh, kw, sh, sw, dh, dw, top, left, lowest, y, lo, hi):
    """y[p, oh, ow] = the largest x[p, r, c] over the window's taps inside x (``lowest``
    if none), planes p in [lo, hi), in long loops over the flat padded plane:

        buf[(r + top) * wp + c + left] = x[p, r, c]         (``lowest`` elsewhere)
        across[i] = max of buf[i + j*dw], j < kw;  down[i] = max of across[i + k*dh*wp]
        y[p, oh, ow] = down[oh*sh*wp + ow*sw]

    (hp, wp the extent the windows read, so no window runs past its row.)"""
    height, width = x.shape[1], x.shape[2]
    oh_n, ow_n = y.shape[1], y.shape[2]
    hp, wp = (oh_n - 1) * sh + (kh - 1) * dh + 1, (ow_n - 1) * sw + (kw - 1) * dw + 1
    rows, cols = max(0, min(height, hp - top)), max(0, min(width, wp - left))
    n_across = hp * wp - (kw - 1) * dw
    n_down = (oh_n - 1) * sh * wp + (ow_n - 1) * sw + 1
    buf = np.empty(hp * wp, x.dtype)
    across = np.empty(n_across, x.dtype)
    down = np.empty(n_down, x.dtype)
    for p in range(lo, hi):
        buf[:] = lowest
        for r in range(rows):
            at = (r + top) * wp + left
            buf[at:at + cols] = x[p, r, :cols]
        across[:] = buf[:n_across]
        for j in range(1, kw):
            tap = buf[j * dw:j * dw + n_across]
            for i in range(n_across):
                across[i] = max(across[i], tap[i])
        down[:] = across[:n_down]
        for k in range(1, kh):
            tap = across[k * dh * wp:k * dh * wp + n_down]
            for i in range(n_down):
                down[i] = max(down[i], tap[i])
        for oh in range(oh_n):
            row, picked = y[p, oh], down[oh * sh * wp:]
            for ow in range(ow_n):
                row[ow] = picked[ow * sw]


def max_pool_8bit(X, kernel_shape, strides=None, dilations=None, pads=None,
                  auto_pad="NOTSET", ceil_mode=0):
    """MaxPool's Y of 8-bit X (N, C, L) or (N, C, H, W), or None for what the caller's
    other paths serve (other types and ranks, attribute lengths that do not match)."""
    if X.dtype not in EIGHT_BIT or X.ndim not in (3, 4) or X.size == 0:
        return None
    nd = X.ndim - 2
    if not attrs_fit(nd, kernel_shape, strides, dilations, pads):
        return None
    g = layer_geometry(X.shape[2:], kernel_shape, strides, dilations, pads, auto_pad,
                       ceil_mode)
    if nd == 1:  # one row: a window of one tap along the height, no padding
        kernel, steps, dil, begin, out = ((first,) + tuple(v) for first, v in zip(
            (1, 1, 1, 0, 1), (g.kernel, g.strides, g.dilations, g.begin, g.out)))
    else:
        kernel, steps, dil, begin, out = g.kernel, g.strides, g.dilations, g.begin, g.out
    planes = read_only(np.ascontiguousarray(X).reshape((-1,) + (1,) * (nd == 1) + X.shape[2:]))
    y = empty((planes.shape[0],) + tuple(out), X.dtype)
    run_parts(_max_planes, planes.shape[0], y.size * kernel[0] * kernel[1], planes,
              kernel[0], kernel[1], steps[0], steps[1], dil[0], dil[1], begin[0], begin[1],
              X.dtype.type(INT_RANGES[X.dtype][0]), y)
    return y.reshape(X.shape[:2] + tuple(g.out))
