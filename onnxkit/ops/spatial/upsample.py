"""Upsample: nearest or (bi)linear resampling by per-axis scales (Resize's predecessor).

    out[d] = floor(in[d] * scales[d]);  x_original = x_resized / scale   (asymmetric)
    nearest: floor(x_original) (ceil when a scale is below 1, as onnxruntime does)
    linear: N-linear interpolation, coordinates clamped to the input

Version 1 scales the two last axes by height_scale / width_scale ("bilinear" = linear),
version 7 takes a ``scales`` attribute, versions 9 and 10 a ``scales`` input.
https://onnx.ai/onnx/operators/onnx__Upsample.html
"""

import numpy as np

from onnxkit.errors import KernelError
from onnxkit.ops.registry import op
from onnxkit.ops.spatial.resize import plan_axes, resize_nd


def _upsample(X, scales, mode: str):
    mode = "linear" if mode == "bilinear" else mode
    if mode not in ("nearest", "linear"):
        raise KernelError(f"Upsample mode must be nearest or linear, got {mode!r}")
    scales = [float(s) for s in np.asarray(scales).reshape(-1)]
    if len(scales) != X.ndim:
        raise KernelError(f"Upsample has {len(scales)} scales for an input of rank {X.ndim}")
    plan = plan_axes(X.shape, list(range(X.ndim)), scales, None, "stretch")
    return resize_nd(X, plan, None, mode=mode, coordinate_mode="asymmetric", nearest_mode="simple")


@op("Upsample", 1)
def upsample_1(X, *, height_scale, mode="nearest", width_scale):
    return _upsample(X, [1.0] * (X.ndim - 2) + [height_scale, width_scale], mode)


@op("Upsample", 7)
def upsample_7(X, *, mode="nearest", scales):
    return _upsample(X, scales, mode)


@op("Upsample", 9, 10)
def upsample(X, scales, *, mode="nearest"):
    return _upsample(X, scales, mode)
