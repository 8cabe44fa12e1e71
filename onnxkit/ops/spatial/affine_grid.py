"""AffineGrid: the sampling grid of a batch of affine transforms (for GridSample).

    base[o] = (x, y[, z], 1), normalized pixel centers in [-1, 1], x along the LAST axis:
        align_corners: linspace(-1, 1, size)      else: (2 i + 1) / size - 1
    grid[n, o..., :] = theta[n] @ base[o]         theta is (N, 2, 3) or (N, 3, 4)

https://onnx.ai/onnx/operators/onnx__AffineGrid.html
"""

import numpy as np

from onnxkit.errors import KernelError
from onnxkit.ops.registry import op
from onnxkit.core.limits import check_allocation


def _steps(size: int, align_corners: int) -> np.ndarray:
    if size <= 1:
        return np.zeros(size)
    if align_corners:
        return np.linspace(-1.0, 1.0, size)
    return (2 * np.arange(size) + 1) / size - 1


@op("AffineGrid", 20)
def affine_grid(theta, size, *, align_corners=0):
    dims = [int(v) for v in size]
    spatial = dims[2:]
    nd = len(spatial)
    if nd not in (2, 3) or theta.shape[1:] != (nd, nd + 1) or theta.shape[0] != dims[0]:
        raise KernelError(f"AffineGrid: theta of shape {list(theta.shape)} does not fit "
                          f"size {dims} (expected theta (N, 2, 3) or (N, 3, 4))")
    check_allocation([dims[0]] + spatial + [nd], theta.dtype, "AffineGrid output")
    axes = np.meshgrid(*(_steps(s, align_corners) for s in spatial), indexing="ij")
    base = np.stack(list(axes[::-1]) + [np.ones(spatial)], axis=-1).reshape(-1, nd + 1)
    grid = np.einsum("nij,pj->npi", theta.astype(np.float64), base)
    return grid.reshape([dims[0]] + spatial + [nd]).astype(theta.dtype)
