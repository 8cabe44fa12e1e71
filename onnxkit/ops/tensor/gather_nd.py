"""GatherND: gather slices of ``data`` addressed by index tuples (the last axis of indices).

    b = batch_dims, k = indices.shape[-1]
    for each batch position n (the first b dims of data and indices agree):
        out[n, j] = data[n][tuple(indices[n, j])]       (a slice of rank r - b - k)
    out.shape = indices.shape[:-1] + data.shape[b + k:]

https://onnx.ai/onnx/operators/onnx__GatherND.html
"""

import math

import numpy as np

from onnxkit.errors import KernelIndexError, KernelInputError
from onnxkit.ops.registry import op
from onnxkit.core.limits import check_allocation


@op("GatherND", 11, 12, 13)
def gather_nd(data, indices, *, batch_dims=0):
    b, k = batch_dims, indices.shape[-1]
    if not 0 <= b < min(data.ndim, indices.ndim):
        raise KernelInputError(f"GatherND: batch_dims {b} must be in [0, min(rank(data), "
                               "rank(indices)))")
    if data.shape[:b] != indices.shape[:b]:
        raise KernelInputError(f"GatherND: the first {b} dims of data {list(data.shape)} and "
                               "indices "
                               f"{list(indices.shape)} differ")
    if k > data.ndim - b:
        raise KernelInputError(f"GatherND: index tuples of length {k} are too long for data of "
                               "rank "
                               f"{data.ndim} with batch_dims={b}")
    # each index tuple copies a slice of data: the output multiplies both sizes
    check_allocation(indices.shape[:-1] + data.shape[b + k:], data.dtype, "GatherND output")
    n_batch = math.prod(data.shape[:b])
    n_tuples = math.prod(indices.shape[b:-1])
    flat_data = data.reshape((n_batch,) + data.shape[b:])
    tuples = indices.astype(np.int64).reshape(n_batch, n_tuples, k)
    for j in range(k):
        dim = data.shape[b + j]
        if tuples.size and (tuples[..., j].min() < -dim or tuples[..., j].max() >= dim):
            raise KernelIndexError(f"GatherND: an index on axis {b + j} is out of range for size "
                                   f"{dim}")
    batch = np.arange(n_batch).reshape(n_batch, 1)
    picked = flat_data[(batch,) + tuple(tuples[..., j] for j in range(k))]
    return picked.reshape(indices.shape[:-1] + data.shape[b + k:])
