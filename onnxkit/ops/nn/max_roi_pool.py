"""MaxRoiPool: max-pool each region of interest into a fixed pooled_shape grid (Fast R-CNN).

    rois[r] = (batch, x1, y1, x2, y2); corners are scaled by spatial_scale and rounded
    roi_h = max(y2 - y1 + 1, 1); bin_h = roi_h / pooled_h            (same for w)
    bin (i, j) covers rows [y1 + floor(i * bin_h), y1 + ceil((i + 1) * bin_h)) clipped
        to the image, columns alike; Y[r, c, i, j] = max over it, 0 if it is empty

https://onnx.ai/onnx/operators/onnx__MaxRoiPool.html
"""

import math

import numpy as np

from onnxkit.ops.registry import op
from onnxkit.core.limits import check_allocation


def _round_half_away(v: float) -> int:
    return int(math.floor(abs(v) + 0.5)) * (1 if v >= 0 else -1)


def _bins(start: int, length: int, pooled: int, size: int) -> list[tuple[int, int]]:
    step = length / pooled
    return [(min(max(start + math.floor(i * step), 0), size),
             min(max(start + math.ceil((i + 1) * step), 0), size)) for i in range(pooled)]


@op("MaxRoiPool", 1, 22)
def max_roi_pool(X, rois, *, pooled_shape, spatial_scale=1.0):
    pooled_h, pooled_w = (int(v) for v in pooled_shape)
    height, width = X.shape[2:]
    check_allocation((rois.shape[0], X.shape[1], pooled_h, pooled_w), X.dtype, "MaxRoiPool output")
    Y = np.zeros((rois.shape[0], X.shape[1], pooled_h, pooled_w), dtype=X.dtype)
    for r, roi in enumerate(rois.astype(np.float64)):
        batch = int(roi[0])
        x1, y1, x2, y2 = (_round_half_away(v * spatial_scale) for v in roi[1:5])
        rows = _bins(y1, max(y2 - y1 + 1, 1), pooled_h, height)
        cols = _bins(x1, max(x2 - x1 + 1, 1), pooled_w, width)
        for i, (h0, h1) in enumerate(rows):
            for j, (w0, w1) in enumerate(cols):
                if h1 > h0 and w1 > w0:
                    Y[r, :, i, j] = X[batch, :, h0:h1, w0:w1].max(axis=(1, 2))
    return Y
