"""DeformConv: a convolution whose kernel taps are moved by learned offsets.

    p = o * s - pads_begin + j * d + offset[n, og(c), j, :, o]      (fractional position)
    cols[n, c, j, o] = mask[n, og(c), j, o] * bilinear(X[n, c], p)  (0 outside the image)
    Y = grouped matmul of W with cols, + B                          (as Conv)

offset is (N, offset_group * K * ndim, *out), mask (N, offset_group * K, *out); K is the
number of kernel taps. https://onnx.ai/onnx/operators/onnx__DeformConv.html
"""

from itertools import product

import numpy as np

from onnxkit.errors import KernelError
from onnxkit.ops.nn._windows import compute_dtype, geometry
from onnxkit.ops.nn.conv import check_kernel_shape
from onnxkit.ops.linalg._precision import product_dtype
from onnxkit.ops.registry import op
from onnxkit.core.limits import check_allocation


def sample_linear(x: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """N-linear samples of ``x`` (N, G, Cg, *spatial) at ``pos`` (N, G, Q, ndim); 0 outside.

    Returns (N, G, Cg, Q).
    """
    spatial = x.shape[3:]
    flat = x.reshape(x.shape[:3] + (-1,))
    base = np.floor(pos)
    frac = pos - base
    base = base.astype(np.int64)
    total = np.zeros(x.shape[:3] + pos.shape[2:3], dtype=x.dtype)
    for corner in product((0, 1), repeat=len(spatial)):
        idx = base + np.array(corner)
        weight = np.prod(np.where(np.array(corner) == 1, frac, 1 - frac), axis=-1)
        inside = np.all((idx >= 0) & (idx < np.array(spatial)), axis=-1)
        flat_idx = np.ravel_multi_index(tuple(np.moveaxis(idx, -1, 0)), spatial, mode="clip")
        values = np.take_along_axis(flat, flat_idx[:, :, None, :], axis=3)
        total += values * (weight * inside).astype(x.dtype)[:, :, None, :]
    return total


@op("DeformConv", 19, 22)
def deform_conv(X, W, offset, B=None, mask=None, *, dilations=None, group=1,
                kernel_shape=None, offset_group=1, pads=None, strides=None):
    kernel = check_kernel_shape(kernel_shape, W)
    nd = len(kernel)
    n, c = X.shape[:2]
    m = W.shape[0]
    taps = int(np.prod(kernel))
    if c != W.shape[1] * group or m % group or c % offset_group:
        raise KernelError(f"DeformConv: X has {c} channels, W has shape {list(W.shape)}, "
                          f"group={group}, offset_group={offset_group}")
    if offset.shape[1] != offset_group * taps * nd:
        raise KernelError(f"DeformConv: offset has {offset.shape[1]} channels, expected "
                          f"offset_group * prod(kernel) * ndim = {offset_group * taps * nd}")
    g = geometry(X.shape[2:], kernel, strides, dilations, pads)
    out = tuple(offset.shape[2:])
    if out != g.out:
        raise KernelError(f"DeformConv: offset spatial shape {list(out)} differs from the "
                          f"output shape {list(g.out)}")
    work = product_dtype(compute_dtype(X.dtype))  # float64: _precision
    positions = int(np.prod(out))
    # regular grid: (K, P, ndim) = start of window + tap offset
    starts = np.stack(np.meshgrid(*(np.arange(o) * s - b for o, s, b in
                                    zip(out, g.strides, g.begin)), indexing="ij"), -1)
    taps_at = np.stack(np.meshgrid(*(np.arange(k) * d for k, d in
                                     zip(kernel, g.dilations)), indexing="ij"), -1)
    grid = taps_at.reshape(taps, 1, nd) + starts.reshape(1, positions, nd)
    shift = offset.astype(work).reshape(n, offset_group, taps, nd, positions)
    pos = grid[None, None] + shift.transpose(0, 1, 2, 4, 3)  # N, og, K, P, ndim
    x = X.astype(work, copy=False).reshape((n, offset_group, c // offset_group) + X.shape[2:])
    check_allocation((n, c, taps, positions), work, "DeformConv columns")
    check_allocation((n, m) + out, work, "DeformConv output")
    cols = sample_linear(x, pos.reshape(n, offset_group, taps * positions, nd))
    cols = cols.reshape(n, offset_group, c // offset_group, taps, positions)
    if mask is not None:
        cols = cols * mask.astype(work).reshape(n, offset_group, 1, taps, positions)
    cols = cols.reshape(n, group, -1, positions)
    weights = W.astype(work, copy=False).reshape(group, m // group, -1)
    Y = np.matmul(weights, cols).reshape((n, m) + out)
    if B is not None:
        Y += B.astype(work, copy=False).reshape((m,) + (1,) * nd)
    return Y.astype(X.dtype, copy=False)
