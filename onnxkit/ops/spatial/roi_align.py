"""RoiAlign: pool each region of interest into an output_height x output_width grid by
bilinear sampling (Mask R-CNN), no rounding of the region.

    start = roi * spatial_scale - 0.5 (half_pixel) or - 0 (output_half_pixel; version 10);
        output_half_pixel forces regions to at least 1 x 1
    bin = (end - start) / output size; samples per bin = sampling_ratio or ceil(bin)
    sample (i + 0.5) / samples of the way through each bin, read bilinearly: samples
        beyond [-1, size] read 0, others are clamped into the image
    avg: mean of a bin's samples; max: max over samples of the largest weighted corner
        (onnxruntime's definition)

https://onnx.ai/onnx/operators/onnx__RoiAlign.html
"""

import math

import numpy as np

from onnxkit.errors import KernelError
from onnxkit.ops.registry import op
from onnxkit.core.limits import check_allocation


def _axis_samples(start: float, length: float, pooled: int, grid: int, size: int):
    """Per sample along one axis: (low index, high index, low weight, high weight)."""
    step = length / pooled
    offsets = (np.arange(pooled)[:, None] * step
               + (np.arange(grid)[None, :] + 0.5) * step / grid).reshape(-1)
    pos = start + offsets
    outside = (pos < -1.0) | (pos > size)
    pos = np.maximum(pos, 0.0)
    low = np.floor(pos).astype(np.int64)
    at_end = low >= size - 1
    low = np.where(at_end, size - 1, low)
    high = np.where(at_end, size - 1, low + 1)
    pos = np.where(at_end, low, pos)
    frac = pos - low
    keep = ~outside
    return low, high, (1 - frac) * keep, frac * keep


def _pool_roi(image, roi, scale, pooled_h, pooled_w, sampling_ratio, mode, half_pixel):
    offset = 0.5 if half_pixel else 0.0
    x1, y1, x2, y2 = (float(v) * scale - offset for v in roi)
    width, height = x2 - x1, y2 - y1
    if not half_pixel:
        width, height = max(width, 1.0), max(height, 1.0)
    grid_h = sampling_ratio if sampling_ratio > 0 else math.ceil(height / pooled_h)
    grid_w = sampling_ratio if sampling_ratio > 0 else math.ceil(width / pooled_w)
    c, height_px, width_px = image.shape
    samples_h, samples_w = max(pooled_h * grid_h, 0), max(pooled_w * grid_w, 0)
    if mode == "avg":
        check_allocation((samples_h, height_px), np.float64, "RoiAlign sample weights")
        check_allocation((samples_w, width_px), np.float64, "RoiAlign sample weights")
    else:
        check_allocation((4, c, samples_h, samples_w), np.float64, "RoiAlign samples")
    rows = _axis_samples(y1, height, pooled_h, grid_h, image.shape[1])
    cols = _axis_samples(x1, width, pooled_w, grid_w, image.shape[2])
    if mode == "avg":
        wy = np.zeros((pooled_h * grid_h, image.shape[1]))
        wx = np.zeros((pooled_w * grid_w, image.shape[2]))
        for w, (low, high, lw, hw) in ((wy, rows), (wx, cols)):
            np.add.at(w, (np.arange(len(low)), low), lw)
            np.add.at(w, (np.arange(len(low)), high), hw)
        wy = wy.reshape(pooled_h, grid_h, -1).sum(axis=1)
        wx = wx.reshape(pooled_w, grid_w, -1).sum(axis=1)
        return wy @ image @ wx.T / max(grid_h * grid_w, 1)
    corners = []
    for ry, wy in ((rows[0], rows[2]), (rows[1], rows[3])):
        for rx, wx in ((cols[0], cols[2]), (cols[1], cols[3])):
            corners.append(image[:, ry[:, None], rx[None, :]] * (wy[:, None] * wx[None, :]))
    best = np.max(corners, axis=0).reshape(c, pooled_h, grid_h, pooled_w, grid_w)
    return best.max(axis=(2, 4))


def _roi_align(X, rois, batch_indices, mode, output_height, output_width, sampling_ratio,
               spatial_scale, half_pixel):
    if mode not in ("avg", "max"):
        raise KernelError(f"RoiAlign mode must be avg or max, got {mode!r}")
    if rois.ndim != 2 or rois.shape[1] != 4 or batch_indices.shape != (rois.shape[0],):
        raise KernelError(f"RoiAlign takes rois (R, 4) and batch_indices (R,), got "
                          f"{list(rois.shape)} and {list(batch_indices.shape)}")
    if X.ndim != 4 or output_height < 1 or output_width < 1 or sampling_ratio < 0:
        raise KernelError(f"RoiAlign takes X (N, C, H, W) and positive output sizes and a "
                          f"sampling_ratio >= 0, got X {list(X.shape)}, output {output_height} x "
                          f"{output_width}, sampling_ratio {sampling_ratio}")
    check_allocation((rois.shape[0], X.shape[1], output_height, output_width), np.float64,
                     "RoiAlign output")
    image = X.astype(np.float64)
    Y = np.zeros((rois.shape[0], X.shape[1], output_height, output_width))
    for r, (roi, b) in enumerate(zip(rois, batch_indices)):
        if not 0 <= b < X.shape[0]:
            raise KernelError(f"RoiAlign batch index {int(b)} out of range [0, {X.shape[0]})")
        Y[r] = _pool_roi(image[int(b)], roi, spatial_scale, output_height, output_width,
                         sampling_ratio, mode, half_pixel)
    return Y.astype(X.dtype)


@op("RoiAlign", 10)
def roi_align_10(X, rois, batch_indices, *, mode="avg", output_height=1, output_width=1,
                 sampling_ratio=0, spatial_scale=1.0):
    return _roi_align(X, rois, batch_indices, mode, output_height, output_width,
                      sampling_ratio, spatial_scale, False)


@op("RoiAlign", 16, 22)
def roi_align(X, rois, batch_indices, *, coordinate_transformation_mode="half_pixel",
              mode="avg", output_height=1, output_width=1, sampling_ratio=0,
              spatial_scale=1.0):
    if coordinate_transformation_mode not in ("half_pixel", "output_half_pixel"):
        raise KernelError("RoiAlign coordinate_transformation_mode must be half_pixel or "
                          f"output_half_pixel, got {coordinate_transformation_mode!r}")
    return _roi_align(X, rois, batch_indices, mode, output_height, output_width,
                      sampling_ratio, spatial_scale, coordinate_transformation_mode == "half_pixel")
