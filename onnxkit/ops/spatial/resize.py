"""Resize: nearest / N-linear / N-cubic resampling of the chosen axes.

    scales given: out[d] = floor(in[d] * scales[d])
    sizes given:  "stretch": out = sizes, scale = out / in
                  "not_larger" / "not_smaller": one scale = min / max(sizes / in) over the
                  axes, out = round_half_up(scale * in)
    then each resized axis is resampled in turn (see ``_resample``).

Version 10 takes (X, scales) and behaves as Upsample (asymmetric coordinates; nearest
floors when upsampling and ceils when downsampling, as onnxruntime does). Empty ``roi``,
``scales`` or ``sizes`` tensors count as absent. As onnxruntime and onnx's reference do,
``roi`` only moves the sampling points of tf_crop_and_resize, not the output size.
https://onnx.ai/onnx/operators/onnx__Resize.html
"""

import numpy as np

from onnxkit.errors import KernelError
from onnxkit.ops.registry import op
from onnxkit.ops.spatial._resample import cast_result, resample_axis
from onnxkit.core.limits import check_allocation


def _given(t):
    return None if t is None or np.asarray(t).size == 0 else np.asarray(t)


def plan_axes(shape, axes, scales, sizes, policy: str):
    """[(axis, out_len, scale)] for every axis that Resize changes or resamples."""
    if (scales is None) == (sizes is None):
        raise KernelError("Resize needs exactly one of 'scales' and 'sizes'")
    given = scales if scales is not None else sizes
    if len(given) != len(axes):
        raise KernelError(f"Resize: {len(given)} scales/sizes for {len(axes)} axes")
    if scales is not None:
        factors = [float(s) for s in scales]
        if any(f <= 0 for f in factors):
            raise KernelError(f"Resize scales must be positive, got {factors}")
        outs = [int(np.floor(shape[a] * f)) for a, f in zip(axes, factors)]
        return list(zip(axes, outs, factors))
    targets = [int(v) for v in sizes]
    if any(t < 0 for t in targets):
        raise KernelError(f"Resize sizes must not be negative, got {targets}")
    if any(shape[a] == 0 for a in axes):
        raise KernelError(f"Resize cannot compute scales for sizes from an empty axis: {list(shape)}")
    if policy == "stretch":
        return [(a, t, t / shape[a]) for a, t in zip(axes, targets)]
    ratios = [t / shape[a] for a, t in zip(axes, targets)]
    if policy == "not_larger":
        scale = min(ratios)
    elif policy == "not_smaller":
        scale = max(ratios)
    else:
        raise KernelError(f"unknown keep_aspect_ratio_policy {policy!r}")
    return [(a, int(scale * shape[a] + 0.5), scale) for a in axes]


def resize_nd(X, plan, roi, **options) -> np.ndarray:
    out_shape = list(X.shape)
    for axis, m, _ in plan:
        if m < 0:
            raise KernelError(f"Resize output length {m} on axis {axis} is negative")
        out_shape[axis] = m
    check_allocation(out_shape, X.dtype, "Resize output")
    if 0 in out_shape:
        try:
            return np.zeros(out_shape, dtype=X.dtype)
        except ValueError:
            raise KernelError(f"Resize output shape {out_shape} is empty but too large for "
                              "numpy to represent") from None
    # resampling goes axis by axis in float64: check every intermediate before it is built
    shape = list(X.shape)
    check_allocation(shape, np.float64, "Resize working copy")
    for axis, m, _ in plan:
        shape[axis] = m
        check_allocation(shape, np.float64, "Resize intermediate")
    y = X.astype(np.float64)
    r = len(plan)
    for i, (axis, m, scale) in enumerate(plan):
        window = (0.0, 1.0) if roi is None else (float(roi[i]), float(roi[r + i]))
        if m == y.shape[axis] and scale == 1 and window == (0.0, 1.0):
            continue
        y = resample_axis(y, axis, m, scale, roi=window, **options)
    return cast_result(y, X.dtype)


@op("Resize", 10)
def resize_10(X, scales, *, mode="nearest"):
    plan = plan_axes(X.shape, list(range(X.ndim)), scales, None, "stretch")
    return resize_nd(X, plan, None, mode=mode, coordinate_mode="asymmetric", nearest_mode="simple")


@op("Resize", 11, 13, 18, 19)
def resize(X, roi=None, scales=None, sizes=None, *, antialias=0, axes=None,
           coordinate_transformation_mode="half_pixel", cubic_coeff_a=-0.75,
           exclude_outside=0, extrapolation_value=0.0, keep_aspect_ratio_policy="stretch",
           mode="nearest", nearest_mode="round_prefer_floor"):
    rank = X.ndim
    if axes is None:
        axes = list(range(rank))
    else:
        if any(not -rank <= a < rank for a in axes):
            raise KernelError(f"Resize axes {axes} out of range for rank {rank}")
        axes = [a % rank for a in axes]
    roi = _given(roi) if coordinate_transformation_mode == "tf_crop_and_resize" else None
    if roi is not None and roi.size != 2 * len(axes):
        raise KernelError(f"Resize roi has {roi.size} values, expected {2 * len(axes)}")
    plan = plan_axes(X.shape, axes, _given(scales), _given(sizes), keep_aspect_ratio_policy)
    return resize_nd(X, plan, roi, mode=mode, coordinate_mode=coordinate_transformation_mode,
                     nearest_mode=nearest_mode, cubic_coeff_a=cubic_coeff_a,
                     exclude_outside=bool(exclude_outside), antialias=bool(antialias),
                     extrapolation_value=extrapolation_value)
