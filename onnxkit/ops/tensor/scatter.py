"""Scatter / ScatterElements: a copy of ``data`` with ``updates`` written at indices.

    out = copy(data)
    for every position i of indices:
        t = i with t[axis] = indices[i]
        out[t] = updates[i]                  (reduction "none")
        out[t] = f(out[t], updates[i])       (f = add, mul (v16+), max, min (v18+))
Scatter is the deprecated name of ScatterElements without reduction.

https://onnx.ai/onnx/operators/onnx__ScatterElements.html
"""

import numpy as np

from onnxkit.errors import AttributeValueError, KernelInputError
from onnxkit.ops.registry import op
from onnxkit.ops.tensor._util import normalize_axis
from onnxkit.ops.tensor.gather import element_index

REDUCERS = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def scatter_into(out: np.ndarray, index: tuple, updates: np.ndarray, reduction: str,
                 allowed: tuple) -> np.ndarray:
    """Write or reduce ``updates`` into ``out`` (already a copy) at ``index``."""
    if reduction not in allowed:
        raise AttributeValueError(f"reduction {reduction!r} is not supported here "
                                  f"(accepted: {', '.join(allowed)})")
    if reduction == "none":
        out[index] = updates
    else:
        REDUCERS[reduction].at(out, index, updates)
    return out


def scatter_elements_impl(data, indices, updates, axis: int, reduction: str,
                          allowed: tuple) -> np.ndarray:
    axis = normalize_axis(axis, data.ndim)
    if indices.shape != updates.shape or indices.ndim != data.ndim:
        raise KernelInputError(f"indices {list(indices.shape)} and updates {list(updates.shape)} "
                               "must "
                               f"have the same shape and the rank of data {list(data.shape)}")
    index = element_index(indices, axis, data.shape[axis])
    return scatter_into(data.copy(), index, updates.astype(data.dtype, copy=False),
                        reduction, allowed)


@op("Scatter", 9, 11)
def scatter(data, indices, updates, *, axis=0):
    return scatter_elements_impl(data, indices, updates, axis, "none", ("none",))


@op("ScatterElements", 11, 13)
def scatter_elements_v11(data, indices, updates, *, axis=0):
    return scatter_elements_impl(data, indices, updates, axis, "none", ("none",))


@op("ScatterElements", 16)
def scatter_elements_v16(data, indices, updates, *, axis=0, reduction="none"):
    return scatter_elements_impl(data, indices, updates, axis, reduction, ("none", "add", "mul"))


@op("ScatterElements", 18)
def scatter_elements(data, indices, updates, *, axis=0, reduction="none"):
    return scatter_elements_impl(data, indices, updates, axis, reduction,
                                 ("none", "add", "mul", "max", "min"))
