"""Resize on the ``cpu`` executor: the two trailing axes, separable, in one Numba kernel.

    per resized axis: (taps, weights) from the reference's own helpers
        nearest: one tap (nearest_indices), weight 1
        linear / cubic: filter_taps (antialias and exclude_outside included)
    for each plane p:
        T[oh, w]   = sum_k wh[oh, k] * X[p, th[oh, k], w]        (float64)
        Y[p, oh, ow] = sum_k ww[ow, k] * T[oh, tw[ow, k]]

Resizing any other axis, tf_crop_and_resize, Resize-10 and non-float types run the
reference kernel.
https://onnx.ai/onnx/operators/onnx__Resize.html
"""

from __future__ import annotations

import numpy as np
from numba import njit

from onnxkit.errors import KernelError
from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._buffers import empty, read_only
from onnxkit.kernels.cpu._dtypes import COMPILED
from onnxkit.kernels.cpu._route import fall_back
from onnxkit.ops.registry import op
from onnxkit.ops.spatial import resize as ref_resize
from onnxkit.ops.spatial._resample import filter_taps, nearest_indices, source_coords
from onnxkit.ops.spatial.resize import plan_axes
from onnxkit.runtime.limits import check_allocation



@njit(cache=True, error_model="numpy")
def resample_planes(x, th, wh, tw, ww, y):
    """x (P, H, W) -> y (P, OH, OW) with per-axis taps and weights (see the docstring)."""
    planes, _, width = x.shape
    oh_n, ow_n = y.shape[1], y.shape[2]
    rows = np.empty((oh_n, width), np.float64)
    for p in range(planes):
        for oh in range(oh_n):
            row = rows[oh]
            row[:] = 0.0
            for k in range(th.shape[1]):
                src = x[p, th[oh, k]]
                wv = wh[oh, k]
                for w in range(width):
                    row[w] += wv * src[w]
        for oh in range(oh_n):
            row = rows[oh]
            out = y[p, oh]
            for ow in range(ow_n):
                total = 0.0
                for k in range(tw.shape[1]):
                    total += ww[ow, k] * row[tw[ow, k]]
                out[ow] = total


def _given(t):
    """An empty roi / scales / sizes tensor counts as absent (as in the reference)."""
    return None if t is None or np.asarray(t).size == 0 else np.asarray(t)


def _axis_taps(n, m, scale, mode, coordinate_mode, nearest_mode, cubic_coeff_a,
               exclude_outside, antialias):
    x, _ = source_coords(coordinate_mode, m, n, scale)
    if mode == "nearest":
        taps = nearest_indices(x, n, nearest_mode, scale).reshape(m, 1)
        return taps.astype(np.int64), np.ones((m, 1))
    taps, weights = filter_taps(x, n, mode, scale, antialias, cubic_coeff_a, exclude_outside)
    return taps.astype(np.int64), np.ascontiguousarray(weights, dtype=np.float64)


def resize_fast(X, scales, sizes, axes, policy, **options):
    if X.dtype not in COMPILED or X.ndim < 2 or X.size == 0 or options["mode"] not in (
            "nearest", "linear", "cubic"):
        return None
    rank = X.ndim
    axes = list(range(rank)) if axes is None else [a % rank for a in axes]
    plan = plan_axes(X.shape, axes, _given(scales), _given(sizes), policy)
    resized = {a: (m, s) for a, m, s in plan}
    for a, (m, s) in resized.items():
        if a < rank - 2 and (m != X.shape[a] or s != 1):
            return None
    h, w = X.shape[-2:]
    oh, sh = resized.get(rank - 2, (h, 1.0))
    ow, sw = resized.get(rank - 1, (w, 1.0))
    if oh == 0 or ow == 0:
        return None
    out_shape = X.shape[:-2] + (oh, ow)
    check_allocation(out_shape, X.dtype, "Resize output")
    th, wh = _axis_taps(h, oh, sh, **options)
    tw, ww = _axis_taps(w, ow, sw, **options)
    Y = empty(out_shape, X.dtype)
    planes = read_only(np.ascontiguousarray(X).reshape(-1, h, w))
    resample_planes(planes, th, wh, tw, ww, Y.reshape(-1, oh, ow))
    return Y


@op("Resize", 11, 13, 18, 19, registry=CPU)
def resize(X, roi=None, scales=None, sizes=None, *, antialias=0, axes=None,
           coordinate_transformation_mode="half_pixel", cubic_coeff_a=-0.75,
           exclude_outside=0, extrapolation_value=0.0, keep_aspect_ratio_policy="stretch",
           mode="nearest", nearest_mode="round_prefer_floor"):
    Y = None
    if coordinate_transformation_mode != "tf_crop_and_resize" and (
            axes is None or all(-X.ndim <= a < X.ndim for a in axes)):
        try:
            Y = resize_fast(X, scales, sizes, axes, keep_aspect_ratio_policy, mode=mode,
                            coordinate_mode=coordinate_transformation_mode,
                            nearest_mode=nearest_mode, cubic_coeff_a=cubic_coeff_a,
                            exclude_outside=bool(exclude_outside), antialias=bool(antialias))
        except (KernelError, ValueError, ZeroDivisionError):  # the reference words it
            Y = None
    if Y is None:
        return fall_back(ref_resize.resize, X, roi, scales, sizes, antialias=antialias,
                         axes=axes,
                         coordinate_transformation_mode=coordinate_transformation_mode,
                         cubic_coeff_a=cubic_coeff_a, exclude_outside=exclude_outside,
                         extrapolation_value=extrapolation_value,
                         keep_aspect_ratio_policy=keep_aspect_ratio_policy, mode=mode,
                         nearest_mode=nearest_mode)
    return Y
