"""ScatterND: a copy of ``data`` with slices replaced (or reduced) at index tuples.

    k = indices.shape[-1]
    out = copy(data)
    for idx in ndindex(indices.shape[:-1]):
        out[tuple(indices[idx])] = updates[idx]            (reduction "none")
        out[...] = f(out[...], updates[idx])               (add, mul v16+; max, min v18+)
    updates.shape = indices.shape[:-1] + data.shape[k:]

https://onnx.ai/onnx/operators/onnx__ScatterND.html
"""

import numpy as np

from onnxkit.errors import KernelIndexError, KernelInputError
from onnxkit.ops.registry import op
from onnxkit.ops.tensor.scatter import scatter_into


def scatter_nd_impl(data, indices, updates, reduction: str, allowed: tuple) -> np.ndarray:
    k = indices.shape[-1]
    if k > data.ndim:
        raise KernelInputError(f"ScatterND: index tuples of length {k} for data of rank "
                               f"{data.ndim}")
    expected = indices.shape[:-1] + data.shape[k:]
    if updates.shape != expected:
        raise KernelInputError(f"ScatterND: updates has shape {list(updates.shape)}, expected "
                               f"{list(expected)}")
    tuples = indices.astype(np.int64).reshape(-1, k)
    for j in range(k):
        dim = data.shape[j]
        if tuples.size and (tuples[:, j].min() < -dim or tuples[:, j].max() >= dim):
            raise KernelIndexError(f"ScatterND: an index on axis {j} is out of range for size "
                                   f"{dim}")
    index = tuple(tuples[:, j] for j in range(k))
    flat_updates = updates.reshape((tuples.shape[0],) + data.shape[k:])
    flat_updates = flat_updates.astype(data.dtype, copy=False)
    return scatter_into(data.copy(), index, flat_updates, reduction, allowed)


@op("ScatterND", 11, 13)
def scatter_nd_v11(data, indices, updates):
    return scatter_nd_impl(data, indices, updates, "none", ("none",))


@op("ScatterND", 16)
def scatter_nd_v16(data, indices, updates, *, reduction="none"):
    return scatter_nd_impl(data, indices, updates, reduction, ("none", "add", "mul"))


@op("ScatterND", 18)
def scatter_nd(data, indices, updates, *, reduction="none"):
    return scatter_nd_impl(data, indices, updates, reduction, ("none", "add", "mul", "max", "min"))
