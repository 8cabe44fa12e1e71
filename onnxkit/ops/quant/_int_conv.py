"""A small exact integer convolution (any number of spatial axes), by im2col.

    pad x with zeros (x already has its zero point subtracted)
    cols[n, o, (c, j)] = x_pad[n, c, o * stride + j * dilation]     for each group
    y[n, m, o] = sum_(c, j) cols[n, o, (c, j)] * w[m, c, j]

Products and sums run in float64, exact while |sum| < 2**53 (here at most
255 * 255 * C * prod(kernel)), then come back as int64.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from onnxkit.errors import AttributeMismatchError, InputError
from onnxkit.core.limits import check_allocation


def padding(in_shape, kernel, strides, dilations, pads, auto_pad):
    """(begin pads, end pads) per spatial axis, from ``pads`` or ``auto_pad``."""
    n = len(in_shape)
    if auto_pad in ("NOTSET", ""):
        pads = [0] * (2 * n) if pads is None else [int(p) for p in pads]
        if len(pads) != 2 * n:
            raise AttributeMismatchError(f"pads has {len(pads)} values, expected {2 * n}")
        return pads[:n], pads[n:]
    if auto_pad == "VALID":
        return [0] * n, [0] * n
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise AttributeMismatchError(f"auto_pad={auto_pad!r} is not NOTSET, SAME_UPPER, "
                                     "SAME_LOWER or VALID")
    begin, end = [], []
    for size, k, s, d in zip(in_shape, kernel, strides, dilations):
        out = -(-size // s)
        total = max(0, (out - 1) * s + (k - 1) * d + 1 - size)
        small, large = total // 2, total - total // 2
        begin.append(small if auto_pad == "SAME_UPPER" else large)
        end.append(large if auto_pad == "SAME_UPPER" else small)
    return begin, end


def conv_nd(x: np.ndarray, w: np.ndarray, *, group=1, strides=None, dilations=None, pads=None,
            auto_pad="NOTSET", kernel_shape=None) -> np.ndarray:
    """Integer-valued convolution of x [N, C, *S] with w [M, C/group, *K] -> float64 [N, M, *O]."""
    if x.ndim < 3 or w.ndim != x.ndim:
        raise InputError(f"convolution needs x [N, C, ...] and w [M, C/group, ...] of equal "
                         f"rank; got {list(x.shape)} and {list(w.shape)}")
    spatial = x.ndim - 2
    kernel = tuple(w.shape[2:])
    if kernel_shape is not None and tuple(kernel_shape) != kernel:
        raise AttributeMismatchError(f"kernel_shape={list(kernel_shape)} but the weights have "
                                     f"spatial shape {list(kernel)}")
    strides = [1] * spatial if strides is None else list(strides)
    dilations = [1] * spatial if dilations is None else list(dilations)
    n_batch, channels = x.shape[:2]
    n_out = w.shape[0]
    if channels != w.shape[1] * group or n_out % group:
        raise InputError(f"x has {channels} channels, w expects {w.shape[1]} x group={group} "
                         f"and has {n_out} output channels")
    if any(int(v) < 1 for v in list(strides) + list(dilations)):
        raise AttributeMismatchError(f"strides {list(strides)} and dilations {list(dilations)} "
                                     "must be positive")
    begin, end = padding(x.shape[2:], kernel, strides, dilations, pads, auto_pad)
    check_allocation(x.shape[:2] + tuple(size + b + e for size, b, e in zip(x.shape[2:], begin, end)),
                     np.float64, "padded convolution input")
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + list(zip(begin, end)))
    extent = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    if any(p < e for p, e in zip(xp.shape[2:], extent)):
        raise InputError(f"the (padded) input {list(xp.shape[2:])} is smaller than the "
                         f"dilated kernel {extent}")
    axes = tuple(range(2, 2 + spatial))
    windows = sliding_window_view(xp, extent, axis=axes)
    windows = windows[(slice(None), slice(None))
                      + tuple(slice(None, None, s) for s in strides)
                      + tuple(slice(None, None, d) for d in dilations)]
    out_shape = windows.shape[2:2 + spatial]
    per_group_in, per_group_out = channels // group, n_out // group
    positions = int(np.prod(out_shape))
    check_allocation((n_batch, positions, per_group_in * int(np.prod(kernel))), np.float64,
                     "convolution columns")
    check_allocation((n_batch, n_out, positions), np.float64, "convolution output")
    y = np.empty((n_batch, n_out, positions))
    weights = w.astype(np.float64)
    for g in range(group):
        part = windows[:, g * per_group_in:(g + 1) * per_group_in]
        # (N, Cg, *O, *K) -> (N, *O, Cg, *K) -> (N * O, Cg * K)
        order = (0,) + tuple(range(2, 2 + spatial)) + (1,) + tuple(range(2 + spatial, 2 + 2 * spatial))
        cols = part.transpose(order).reshape(n_batch * positions, -1)
        wg = weights[g * per_group_out:(g + 1) * per_group_out].reshape(per_group_out, -1)
        y[:, g * per_group_out:(g + 1) * per_group_out] = (
            (cols @ wg.T).reshape(n_batch, positions, per_group_out).transpose(0, 2, 1))
    return y.reshape(n_batch, n_out, *out_shape)


def per_channel(param, count: int, rank: int, what: str) -> np.ndarray:
    """A scalar or a 1-D per-output-channel parameter, shaped to broadcast over [N, M, ...]."""
    param = np.asarray(param)
    if param.size == 1:
        return param.reshape(())
    if param.ndim != 1 or param.size != count:
        raise InputError(f"{what} must be a scalar or have one value per output channel "
                         f"({count}); got shape {list(param.shape)}")
    return param.reshape((1, count) + (1,) * (rank - 2))
