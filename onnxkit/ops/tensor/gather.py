"""Gather and GatherElements: pick entries along one axis by index.

    Gather:         out[i_0..i_{q-1}] over axis = data[..., indices[i_0..i_{q-1}], ...]
                    (rank q + r - 1)
    GatherElements: out[i] = data[i with i[axis] replaced by indices[i]] (shape of indices)
Indices may be negative (count from the back); out-of-range indices are an error.

https://onnx.ai/onnx/operators/onnx__Gather.html
https://onnx.ai/onnx/operators/onnx__GatherElements.html
"""

import numpy as np

from onnxkit.errors import KernelIndexError, KernelInputError
from onnxkit.ops.registry import op
from onnxkit.ops.tensor._util import normalize_axis
from onnxkit.core.limits import check_allocation


def checked_indices(indices: np.ndarray, dim: int) -> np.ndarray:
    """Indices in [-dim, dim-1] mapped to [0, dim-1]; anything else is an error."""
    idx = indices.astype(np.int64, copy=False)
    if idx.size and (idx.min() < -dim or idx.max() >= dim):
        bad = idx[(idx < -dim) | (idx >= dim)].reshape(-1)[0]
        raise KernelIndexError(f"index {int(bad)} is out of range for a dimension of size {dim}")
    return np.where(idx < 0, idx + dim, idx)


def element_index(indices: np.ndarray, axis: int, dim: int) -> tuple:
    """The full index tuple that addresses, for each entry of ``indices``, its target."""
    grid = list(np.indices(indices.shape, sparse=True))
    grid[axis] = checked_indices(indices, dim)
    return tuple(grid)


@op("Gather", 1, 11, 13)
def gather(data, indices, *, axis=0):
    axis = normalize_axis(axis, data.ndim)
    # the output multiplies the sizes of data and indices: check before numpy allocates it
    check_allocation(data.shape[:axis] + indices.shape + data.shape[axis + 1:], data.dtype, "Gather output")
    return np.take(data, checked_indices(indices, data.shape[axis]), axis=axis)


@op("GatherElements", 11, 13)
def gather_elements(data, indices, *, axis=0):
    axis = normalize_axis(axis, data.ndim)
    if indices.ndim != data.ndim:
        raise KernelInputError(f"GatherElements: indices of rank {indices.ndim} for data of rank "
                               f"{data.ndim}")
    for i, (n, d) in enumerate(zip(indices.shape, data.shape)):
        if i != axis and n > d:
            raise KernelInputError(f"GatherElements: indices shape {list(indices.shape)} exceeds "
                                   "data shape "
                                   f"{list(data.shape)} on axis {i}")
    return data[element_index(indices, axis, data.shape[axis])]
