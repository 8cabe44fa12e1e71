"""Separable resampling along one axis, shared by Resize and Upsample.

Per axis of input length ``n``, output length ``m`` and scale ``s``:

    1. x = source coordinate of each output index (coordinate_transformation_mode)
    2. nearest: index = round(x) by nearest_mode, clamped to [0, n - 1]
       linear / cubic: taps i = floor(x) + k near x, weight = kernel((i - x) * s')
           kernel = triangle (radius 1) or Keys cubic with coefficient A (radius 2)
           s' = min(s, 1) with antialias (the filter stretches when downsampling), else 1
           taps outside [0, n) read the edge pixel, or get weight 0 with exclude_outside;
           weights are renormalized to sum 1 when antialias or exclude_outside
    3. Y[..., o, ...] = sum_k weight[o, k] * X[..., tap[o, k], ...]

Interpolating axis after axis gives the N-linear / N-cubic result.
"""

from __future__ import annotations

import math

import numpy as np

from onnxkit.errors import KernelError
from onnxkit.core.limits import check_allocation


def source_coords(mode: str, m: int, n: int, scale: float, roi=(0.0, 1.0)):
    """Input coordinate of each output index, and (tf_crop_and_resize) which fall outside."""
    y = np.arange(m, dtype=np.float64)
    resized = scale * n  # the possibly fractional target length
    if mode == "half_pixel":
        return (y + 0.5) / scale - 0.5, None
    if mode == "half_pixel_symmetric":
        offset = n / 2 * (1 - m / resized)
        return offset + (y + 0.5) / scale - 0.5, None
    if mode == "pytorch_half_pixel":
        return ((y + 0.5) / scale - 0.5 if m > 1 else np.zeros(m)), None
    if mode == "align_corners":
        return (y * (n - 1) / (resized - 1) if resized != 1 else np.zeros(m)), None
    if mode == "asymmetric":
        return y / scale, None
    if mode == "tf_half_pixel_for_nn":
        return (y + 0.5) / scale, None
    if mode == "tf_crop_and_resize":
        start, end = roi
        if resized > 1:
            x = start * (n - 1) + y * (end - start) * (n - 1) / (resized - 1)
        else:
            x = np.full(m, 0.5 * (start + end) * (n - 1))
        return x, (x < 0) | (x > n - 1)
    raise KernelError(f"unknown coordinate_transformation_mode {mode!r}")


def nearest_indices(x: np.ndarray, n: int, nearest_mode: str, scale: float) -> np.ndarray:
    if nearest_mode == "round_prefer_floor":
        idx = np.ceil(x - 0.5)
    elif nearest_mode == "round_prefer_ceil":
        idx = np.floor(x + 0.5)
    elif nearest_mode == "floor":
        idx = np.floor(x)
    elif nearest_mode == "ceil":
        idx = np.ceil(x)
    elif nearest_mode == "simple":  # Upsample and Resize-10: floor up, ceil down
        idx = np.floor(x) if scale >= 1 else np.ceil(x)
    else:
        raise KernelError(f"unknown nearest_mode {nearest_mode!r}")
    return np.clip(idx, 0, n - 1).astype(np.intp)


def _triangle(d: np.ndarray, a: float) -> np.ndarray:
    return np.maximum(0.0, 1.0 - np.abs(d))


def _keys_cubic(d: np.ndarray, a: float) -> np.ndarray:
    d = np.abs(d)
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return np.where(d <= 1, near, np.where(d < 2, far, 0.0))


KERNELS = {"linear": (_triangle, 1), "cubic": (_keys_cubic, 2)}


def filter_taps(x: np.ndarray, n: int, mode: str, scale: float, antialias: bool,
                cubic_coeff_a: float, exclude_outside: bool):
    """(tap indices, weights), each (m, taps), for linear or cubic interpolation."""
    kernel, radius = KERNELS[mode]
    stretch = min(scale, 1.0) if antialias else 1.0
    first = math.floor(-radius / stretch) + 1
    check_allocation((len(x), 2 - 2 * first), np.float64, "Resize filter taps")
    base = np.floor(x)
    taps = base[:, None] + np.arange(first, 2 - first)[None, :]
    weights = kernel((taps - x[:, None]) * stretch, cubic_coeff_a)
    if exclude_outside:
        weights = np.where((taps < 0) | (taps > n - 1), 0.0, weights)
    if antialias or exclude_outside:
        total = weights.sum(axis=1, keepdims=True)
        weights = weights / np.where(total == 0, 1.0, total)
    return np.clip(taps, 0, n - 1).astype(np.intp), weights


def resample_axis(data: np.ndarray, axis: int, m: int, scale: float, *, mode: str,
                  coordinate_mode: str, nearest_mode: str = "round_prefer_floor",
                  cubic_coeff_a: float = -0.75, exclude_outside: bool = False,
                  antialias: bool = False, roi=(0.0, 1.0), extrapolation_value: float = 0.0):
    """Resample ``data`` (float64) along ``axis`` to length ``m``."""
    n = data.shape[axis]
    check_allocation((m,), np.float64, "Resize sampling coordinates")
    x, outside = source_coords(coordinate_mode, m, n, scale, roi)
    if mode == "nearest":
        result = np.take(data, nearest_indices(x, n, nearest_mode, scale), axis=axis)
    elif mode in KERNELS:
        taps, weights = filter_taps(x, n, mode, scale, antialias, cubic_coeff_a, exclude_outside)
        moved = np.moveaxis(data, axis, -1)
        result = np.zeros(moved.shape[:-1] + (m,), dtype=data.dtype)
        for k in range(taps.shape[1]):
            result += moved[..., taps[:, k]] * weights[:, k]
        result = np.moveaxis(result, -1, axis)
    else:
        raise KernelError(f"unknown interpolation mode {mode!r} (nearest, linear, cubic)")
    if outside is not None and outside.any():
        where = outside.reshape((-1,) + (1,) * (data.ndim - axis - 1))
        result = np.where(where, extrapolation_value, result)
    return result


def cast_result(y: np.ndarray, dtype) -> np.ndarray:
    """Back to the input type: integers are rounded and saturated."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.clip(np.rint(y), info.min, info.max).astype(dtype)
    if dtype.kind == "b":
        return y != 0
    return y.astype(dtype)
