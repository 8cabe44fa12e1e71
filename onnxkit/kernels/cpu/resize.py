"""Resize on the ``cpu`` executor: the two trailing axes, separable, in one Numba kernel.

    per resized axis: (taps, weights) from the reference's own helpers
        nearest: one tap (nearest_indices), weight 1
        linear / cubic: filter_taps (antialias and exclude_outside included)
    for each plane p, the height first where the output has at most the input's rows:
        T[oh, w]   = sum_k wh[oh, k] * X[p, th[oh, k], w]        (float64, whole rows)
        Y[p, oh, ow] = sum_k ww[ow, k] * T[oh, tw[ow, k]]         (OH*OW gathers)
    else (upsampling the height: a segmentation head's x8 or x16) the width first:
        T[h, ow]   = sum_k ww[ow, k] * X[p, h, tw[ow, k]]        (float64, H*OW gathers)
        Y[p, oh, :] = sum_k wh[oh, k] * T[th[oh, k], :]           (whole rows)

The taps and weights of an input shape and scales / sizes are computed once per node
(``PreparedResize``, kept on the plan's step); the planes are shared among the threads.

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
from onnxkit.kernels.cpu._threads import run_parts
from onnxkit.ops.registry import op
from onnxkit.ops.spatial import resize as ref_resize
from onnxkit.ops.spatial._resample import filter_taps, nearest_indices, source_coords
from onnxkit.ops.spatial.resize import plan_axes
from onnxkit.runtime.limits import check_allocation



@njit(cache=True, nogil=True, error_model="numpy")
def resample_planes(x, th, wh, tw, ww, y, lo, hi):
    """x (P, H, W) -> y (P, OH, OW) for the planes lo .. hi - 1, with per-axis taps and
    weights (see the module doc: the width first where OH > H)."""
    height, width = x.shape[1], x.shape[2]
    oh_n, ow_n = y.shape[1], y.shape[2]
    if oh_n > height:
        cols = np.empty((height, ow_n), np.float64)
        acc = np.empty(ow_n, np.float64)
        for p in range(lo, hi):
            for h in range(height):
                src = x[p, h]
                row = cols[h]
                for ow in range(ow_n):
                    total = 0.0
                    for k in range(tw.shape[1]):
                        total += ww[ow, k] * src[tw[ow, k]]
                    row[ow] = total
            for oh in range(oh_n):
                acc[:] = 0.0
                for k in range(th.shape[1]):
                    src = cols[th[oh, k]]
                    wv = wh[oh, k]
                    for ow in range(ow_n):
                        acc[ow] += wv * src[ow]
                out = y[p, oh]
                for ow in range(ow_n):
                    out[ow] = acc[ow]
        return
    rows = np.empty((oh_n, width), np.float64)
    for p in range(lo, hi):
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


def _layout(shape, dtype, scales, sizes, axes, policy, options):
    """(output shape, (th, wh, tw, ww)) of an input ``shape`` resized by the compiled
    kernel, or None where the reference serves it (another axis resized, other dtypes)."""
    if dtype not in COMPILED or len(shape) < 2 or 0 in shape or options["mode"] not in (
            "nearest", "linear", "cubic"):
        return None
    rank = len(shape)
    axes = list(range(rank)) if axes is None else [a % rank for a in axes]
    plan = plan_axes(shape, axes, _given(scales), _given(sizes), policy)
    resized = {a: (m, s) for a, m, s in plan}
    for a, (m, s) in resized.items():
        if a < rank - 2 and (m != shape[a] or s != 1):
            return None
    h, w = shape[-2:]
    oh, sh = resized.get(rank - 2, (h, 1.0))
    ow, sw = resized.get(rank - 1, (w, 1.0))
    if oh == 0 or ow == 0:
        return None
    out_shape = tuple(shape[:-2]) + (oh, ow)
    check_allocation(out_shape, dtype, "Resize output")
    th, wh = _axis_taps(h, oh, sh, **options)
    tw, ww = _axis_taps(w, ow, sw, **options)
    return out_shape, tuple(read_only(a) for a in (th, wh, tw, ww))


def _run(X, layout):
    out_shape, (th, wh, tw, ww) = layout
    h, w = X.shape[-2:]
    oh, ow = out_shape[-2:]
    Y = empty(out_shape, X.dtype)
    planes = read_only(np.ascontiguousarray(X).reshape(-1, h, w))
    # per plane: a pass over the input or output rows and the gathers of the other
    work = planes.shape[0] * (h * ow + oh * max(w, ow)) * (th.shape[1] + tw.shape[1])
    run_parts(resample_planes, planes.shape[0], work, planes, th, wh, tw, ww,
              Y.reshape(-1, oh, ow))
    return Y


def resize_fast(X, scales, sizes, axes, policy, **options):
    layout = _layout(X.shape, X.dtype, scales, sizes, axes, policy, options)
    return None if layout is None else _run(X, layout)


def _key(t):
    """An optional scales / sizes input as a hashable value."""
    t = _given(t)
    return None if t is None else (t.dtype.str, t.shape, t.tobytes())


class PreparedResize:
    """One Resize node's kernel (``resize.prepare``): the attributes bound, and per input
    shape and scales / sizes values the output shape, taps and weights, worked out on
    the first call that meets them (sizes often come from a Shape of the graph)."""

    MAX_LAYOUTS = 64  # input shapes one node keeps; past this it starts again

    def __init__(self, attrs: dict):
        self.attrs = attrs
        self.layouts: dict = {}

    def __call__(self, X, roi=None, scales=None, sizes=None, **_attributes):
        key = (X.shape, X.dtype, _key(scales), _key(sizes))
        layout = self.layouts.get(key, _MISSING)
        if layout is _MISSING:
            layout = self._decide(X, scales, sizes)
            if len(self.layouts) >= self.MAX_LAYOUTS:
                self.layouts.clear()
            self.layouts[key] = layout
        if layout is None:
            return resize(X, roi, scales, sizes, **self.attrs)
        return _run(X, layout)

    def _decide(self, X, scales, sizes):
        a = self.attrs
        mode = a.get("coordinate_transformation_mode", "half_pixel")
        axes = a.get("axes")
        if mode == "tf_crop_and_resize" or (
                axes is not None and not all(-X.ndim <= v < X.ndim for v in axes)):
            return None
        try:
            return _layout(X.shape, X.dtype, scales, sizes, axes,
                           a.get("keep_aspect_ratio_policy", "stretch"),
                           dict(mode=a.get("mode", "nearest"), coordinate_mode=mode,
                                nearest_mode=a.get("nearest_mode", "round_prefer_floor"),
                                cubic_coeff_a=a.get("cubic_coeff_a", -0.75),
                                exclude_outside=bool(a.get("exclude_outside", 0)),
                                antialias=bool(a.get("antialias", 0))))
        except (KernelError, ValueError, ZeroDivisionError):  # the reference words it
            return None


_MISSING = object()


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


def _prepare_resize(node, attrs: dict, constants: dict, shapes: dict) -> PreparedResize:
    """Resize's plan-time hook: the node's attributes bound (``PreparedResize``)."""
    return PreparedResize(dict(attrs))


resize.prepare = _prepare_resize
