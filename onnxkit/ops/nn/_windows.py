"""Sliding-window arithmetic shared by the convolution and pooling kernels.

For each spatial axis with input size ``n``, kernel ``k``, stride ``s``, dilation ``d``::

    extent = (k - 1) * d + 1                        # span of one dilated window
    NOTSET: out = floor((n + begin + end - extent) / s) + 1   (ceil with ceil_mode,
            minus one if the last window would start in the end padding)
    SAME_UPPER / SAME_LOWER: out = ceil(n / s), total = max(0, (out - 1) * s + extent - n),
            the odd pad goes at the end (UPPER) or at the beginning (LOWER)
    VALID:  out = floor((n - extent) / s) + 1, no padding

Window ``o`` reads input positions ``o * s + j * d - begin`` for ``j`` in ``range(k)``.

(onnxruntime's pools differ at two edges of SAME: they compute the padding without the
dilation, and they do not clamp a negative total, which shifts windows; we follow the spec.)
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import numpy as np
from numpy.lib.stride_tricks import as_strided

from onnxkit.errors import KernelError
from onnxkit.core.limits import check_allocation


@dataclass(frozen=True)
class Geometry:
    """Where the windows of one operator call fall, per spatial axis."""

    kernel: tuple
    strides: tuple
    dilations: tuple
    begin: tuple  # padding before each axis
    end: tuple  # padding after each axis (as declared or computed by auto_pad)
    out: tuple  # number of windows per axis

    @property
    def extent(self) -> tuple:
        return tuple((k - 1) * d + 1 for k, d in zip(self.kernel, self.dilations))

    @property
    def needed(self) -> tuple:
        """Padded length each axis must have so every window fits."""
        return tuple((o - 1) * s + e for o, s, e in zip(self.out, self.strides, self.extent))


def listed(values, n: int, fill: int, what: str = "attribute") -> tuple:
    """An attribute list of length ``n``, or ``n`` copies of ``fill`` when it is absent."""
    if values is None:
        return (fill,) * n
    if len(values) != n:
        raise KernelError(f"{what} has {len(values)} values, expected {n} "
                          f"(one per spatial axis{', twice' if what == 'pads' else ''})")
    return tuple(int(v) for v in values)


def geometry(in_shape, kernel, strides=None, dilations=None, pads=None, auto_pad="NOTSET",
             ceil_mode=0) -> Geometry:
    """Output size and padding of the sliding windows over ``in_shape`` (spatial dims)."""
    n = len(in_shape)
    kernel = listed(kernel, n, 1, "kernel_shape")
    strides = listed(strides, n, 1, "strides")
    dilations = listed(dilations, n, 1, "dilations")
    for what, values in (("kernel_shape", kernel), ("strides", strides), ("dilations", dilations)):
        if any(v < 1 for v in values):
            raise KernelError(f"{what} must be positive, got {list(values)}")
    extent = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        out = [-(-size // s) for size, s in zip(in_shape, strides)]
        total = [max(0, (o - 1) * s + e - size)
                 for o, s, e, size in zip(out, strides, extent, in_shape)]
        small = [t // 2 for t in total]
        big = [t - t // 2 for t in total]
        begin, end = (small, big) if auto_pad == "SAME_UPPER" else (big, small)
    elif auto_pad == "VALID":
        begin = end = [0] * n
        out = [(size - e) // s + 1 for size, e, s in zip(in_shape, extent, strides)]
    elif auto_pad in ("NOTSET", ""):
        pads = listed(pads, 2 * n, 0, "pads")
        begin, end = list(pads[:n]), list(pads[n:])
        out = []
        for size, b, e_pad, e, s in zip(in_shape, begin, end, extent, strides):
            span = size + b + e_pad - e
            o = (-(-span // s) if ceil_mode else span // s) + 1
            if ceil_mode and (o - 1) * s >= size + b:
                o -= 1  # the last window must start inside the input or its begin padding
            out.append(o)
    else:
        raise KernelError(
            f"auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, got {auto_pad!r}")
    if any(o < 1 for o in out):
        raise KernelError(
            f"the windows (kernel {list(kernel)}, dilations {list(dilations)}) do not fit the "
            f"input of spatial shape {list(in_shape)} with pads {list(begin) + list(end)}"
        )
    return Geometry(kernel, strides, dilations, tuple(begin), tuple(end), tuple(out))


def pad_for_windows(x: np.ndarray, g: Geometry, value=0) -> np.ndarray:
    """``x`` (N, C, *spatial) padded by ``g.begin`` and cut or padded to ``g.needed``."""
    check_allocation(x.shape[:2] + g.needed, x.dtype, "padded input of the windows")
    keep = tuple(slice(None, max(0, need - b)) for need, b in zip(g.needed, g.begin))
    x = x[(slice(None), slice(None)) + keep]
    widths = [(0, 0), (0, 0)] + [(b, need - b - size)
                                 for b, need, size in zip(g.begin, g.needed, x.shape[2:])]
    if not any(w for pair in widths for w in pair):
        return x
    return np.pad(x, widths, mode="constant", constant_values=value)


def sliding(xp: np.ndarray, g: Geometry) -> np.ndarray:
    """Read-only view (N, C, *out, *kernel) of the windows of a padded input."""
    lead, spatial = xp.strides[:2], xp.strides[2:]
    shape = xp.shape[:2] + g.out + g.kernel
    strides = (lead + tuple(st * s for st, s in zip(spatial, g.strides))
               + tuple(st * d for st, d in zip(spatial, g.dilations)))
    return as_strided(xp, shape, strides, writeable=False)


def tap_slices(g: Geometry, tap) -> tuple:
    """Index of the padded input read by kernel tap ``tap`` in every window (N, C, *out)."""
    return (slice(None), slice(None)) + tuple(
        slice(j * d, j * d + (o - 1) * s + 1, s)
        for j, d, o, s in zip(tap, g.dilations, g.out, g.strides))


def reduce_windows(xp: np.ndarray, g: Geometry, combine) -> np.ndarray:
    """Fold every window of a padded input with a binary ufunc (np.add, np.maximum).

        out = xp[tap 0]; for each further tap j: out = combine(out, xp[tap j])

    One strided slice per tap: much faster than reducing the 2*ndim-axis window view.
    """
    check_allocation(xp.shape[:2] + g.out, xp.dtype, "windowed output")
    taps = product(*(range(k) for k in g.kernel))
    out = np.array(xp[tap_slices(g, next(taps))])
    for tap in taps:
        combine(out, xp[tap_slices(g, tap)], out=out)
    return out


def window_counts(in_shape, g: Geometry, include_pad: bool) -> np.ndarray:
    """How many positions each window covers inside the input (or the declared padding)."""
    check_allocation(g.out, np.int64, "window counts")
    per_axis = []
    for size, k, s, d, b, e, o in zip(in_shape, g.kernel, g.strides, g.dilations, g.begin,
                                      g.end, g.out):
        check_allocation((o, k), np.int64, "window positions")
        pos = np.arange(o)[:, None] * s + np.arange(k)[None, :] * d - b
        lo, hi = (-b, size + e) if include_pad else (0, size)
        per_axis.append(((pos >= lo) & (pos < hi)).sum(axis=1))
    counts = np.ones((), dtype=np.int64)
    for c in per_axis:
        counts = np.multiply.outer(counts, c)
    return counts


def scatter_windows(cols: np.ndarray, g: Geometry, out_shape) -> np.ndarray:
    """Adjoint of ``sliding``: add window values back into an image (col2im).

    ``cols`` is (N, C, *kernel, *g.out); returns (N, C, *out_shape) where output position
    ``p`` receives every ``cols[..., j, o]`` with ``o * s + j * d - begin == p``.
    """
    full = g.needed
    lo = [min(0, b) for b in g.begin]
    hi = [max(f, b + size) for f, b, size in zip(full, g.begin, out_shape)]
    shape = cols.shape[:2] + tuple(h - low for h, low in zip(hi, lo))
    check_allocation(shape, cols.dtype, "ConvTranspose accumulator")
    buf = np.zeros(shape, dtype=cols.dtype)
    for j in product(*(range(k) for k in g.kernel)):
        where = tuple(slice(jj * d - low, jj * d - low + (o - 1) * s + 1, s)
                      for jj, d, low, o, s in zip(j, g.dilations, lo, g.out, g.strides))
        buf[(slice(None), slice(None)) + where] += cols[(slice(None), slice(None)) + j]
    crop = tuple(slice(b - low, b - low + size) for b, low, size in zip(g.begin, lo, out_shape))
    return buf[(slice(None), slice(None)) + crop]


def compute_dtype(dtype) -> np.dtype:
    """Half-precision types are computed in float32 (numpy has no fast float16 matmul)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f" and dtype.itemsize >= 4:
        return dtype
    if dtype.kind in "iub":
        return np.dtype(np.float64)
    return np.dtype(np.float32)
