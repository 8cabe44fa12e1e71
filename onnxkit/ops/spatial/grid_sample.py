"""GridSample: sample X at the normalized locations of ``grid`` (N-d spatial transformer).

    grid[n, o..., :] = (x, y, ...) in [-1, 1], the LAST spatial axis first
    pixel coordinate: align_corners ? (g + 1) / 2 * (size - 1) : ((g + 1) * size - 1) / 2
    coordinates beyond the borders ([0, size-1], or [-0.5, size-0.5] without align_corners)
        are clamped (padding_mode border; not for cubic) or mirrored (reflection) first,
        as onnxruntime and PyTorch do
    nearest: round half to even; linear: 2 taps per axis; cubic: 4 taps (Keys, A = -0.75)
    taps outside the image read 0 (zeros), the edge (border) or the mirror (reflection)

Version 16 names the modes bilinear / nearest / bicubic and takes 4-D inputs only.
https://onnx.ai/onnx/operators/onnx__GridSample.html
"""

from itertools import product

import numpy as np

from onnxkit.errors import KernelError
from onnxkit.ops.registry import op
from onnxkit.core.limits import check_allocation
from onnxkit.ops.spatial._resample import cast_result

MODES = {"bilinear": "linear", "bicubic": "cubic", "linear": "linear", "cubic": "cubic",
         "nearest": "nearest"}


def reflect(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Mirror ``x`` at ``lo`` and ``hi`` until it lies between them."""
    span = hi - lo
    if span <= 0:
        return np.full_like(x, lo)
    below = x < lo
    dx = np.where(below, lo - x, x - hi)
    flips = np.floor(dx / span)
    rest = dx - flips * span
    even = flips % 2 == 0
    from_low, from_high = lo + rest, hi - rest
    mirrored = np.where(below, np.where(even, from_low, from_high),
                        np.where(even, from_high, from_low))
    return np.where((x < lo) | (x > hi), mirrored, x)


def _keys(t: np.ndarray, a: float = -0.75) -> list[np.ndarray]:
    """Cubic weights of the taps at offsets -1, 0, 1, 2 from floor(x), t = x - floor(x)."""
    def near(d):
        return ((a + 2) * d - (a + 3)) * d * d + 1

    def far(d):
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _axis_taps(x: np.ndarray, mode: str):
    """[(tap index as float, weight)] along one axis for coordinates ``x``."""
    if mode == "nearest":
        return [(np.rint(x), np.ones_like(x))]
    base = np.floor(x)
    t = x - base
    if mode == "linear":
        return [(base, 1 - t), (base + 1, t)]
    return [(base + k, w) for k, w in zip((-1, 0, 1, 2), _keys(t))]


def _read_index(i: np.ndarray, size: int, padding_mode: str, lo: float, hi: float):
    """(integer index to read, validity) of tap positions ``i`` on an axis of ``size``."""
    if padding_mode == "zeros":
        valid = (i >= 0) & (i < size)
    else:
        valid = np.ones(i.shape, dtype=bool)
        if padding_mode == "reflection":
            i = np.trunc(reflect(i, lo, hi))
    return np.clip(i, 0, size - 1).astype(np.intp), valid


def grid_sample_nd(X, grid, mode: str, padding_mode: str, align_corners: int):
    if mode not in MODES:
        raise KernelError(f"GridSample mode must be one of {sorted(MODES)}, got {mode!r}")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise KernelError(f"GridSample padding_mode must be zeros, border or reflection, "
                          f"got {padding_mode!r}")
    mode = MODES[mode]
    n, c = X.shape[:2]
    spatial = X.shape[2:]
    nd = len(spatial)
    if grid.ndim != nd + 2 or grid.shape[0] != n or grid.shape[-1] != nd:
        raise KernelError(f"GridSample grid of shape {list(grid.shape)} does not fit X of "
                          f"shape {list(X.shape)}: expected (N, *out, {nd})")
    out = grid.shape[1:-1]
    g = grid.astype(np.float64).reshape(n, -1, nd)[..., ::-1]  # axis order of X
    coords, bounds = [], []
    for axis, size in enumerate(spatial):
        gi = g[..., axis]
        if align_corners:
            x, lo, hi = (gi + 1) / 2 * (size - 1), 0.0, size - 1.0
        else:
            x, lo, hi = ((gi + 1) * size - 1) / 2, -0.5, size - 0.5
        if mode == "nearest":
            x = np.rint(x)
        if padding_mode == "border" and mode != "cubic":  # cubic clamps each tap instead
            x = np.clip(x, 0, size - 1)
        elif padding_mode == "reflection":
            x = reflect(x, lo, hi)
        coords.append(x)
        bounds.append((lo, hi))
    check_allocation((n, c, g.shape[1]), np.float64, "GridSample output")
    flat = X.astype(np.float64).reshape(n, c, -1)
    Y = np.zeros((n, c, g.shape[1]))
    per_axis = [_axis_taps(x, mode) for x in coords]
    for taps in product(*per_axis):
        weight = np.ones(g.shape[:2])
        index = np.zeros(g.shape[:2], dtype=np.intp)
        for axis, (i, w) in enumerate(taps):
            idx, valid = _read_index(i, spatial[axis], padding_mode, *bounds[axis])
            weight = weight * w * valid
            index = index * spatial[axis] + idx
        Y += np.take_along_axis(flat, index[:, None, :], axis=2) * weight[:, None, :]
    return cast_result(Y.reshape((n, c) + out), X.dtype)


@op("GridSample", 16)
def grid_sample_16(X, grid, *, align_corners=0, mode="bilinear", padding_mode="zeros"):
    if X.ndim != 4:
        raise KernelError(f"GridSample-16 takes a 4-D input, got rank {X.ndim}")
    return grid_sample_nd(X, grid, mode, padding_mode, align_corners)


@op("GridSample", 20, 22)
def grid_sample(X, grid, *, align_corners=0, mode="linear", padding_mode="zeros"):
    return grid_sample_nd(X, grid, mode, padding_mode, align_corners)
