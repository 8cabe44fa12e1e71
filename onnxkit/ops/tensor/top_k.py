"""TopK: the k largest (or smallest) elements along ``axis``, and their indices.

    order = a stable sort along axis (descending for largest=1); equal values keep
            the lower index first
    Values = X[order[:k]], Indices = order[:k] (int64)
TopK-1 takes k as an attribute, TopK-10 as an input; largest/sorted arrive in TopK-11.
With sorted=0 the order is unspecified: the sorted order is returned.

https://onnx.ai/onnx/operators/onnx__TopK.html
"""

import numpy as np

from onnxkit.errors import KernelInputError
from onnxkit.ops.registry import op
from onnxkit.ops.tensor._util import normalize_axis, scalar_int


def top_k_impl(x: np.ndarray, k: int, axis: int, largest: int) -> tuple:
    axis = normalize_axis(axis, x.ndim)
    n = x.shape[axis]
    if not 0 <= k <= n:
        raise KernelInputError(f"TopK: k={k} is out of range for axis {axis} of size {n}")
    if largest:
        # A stable ascending sort of the reversed axis, read backwards, is descending with
        # ties in increasing index order (no negation, so unsigned types work too).
        rev = np.flip(x, axis=axis)
        order = (n - 1) - np.flip(np.argsort(rev, axis=axis, kind="stable"), axis=axis)
    else:
        order = np.argsort(x, axis=axis, kind="stable")
    order = np.take(order, np.arange(k), axis=axis).astype(np.int64)
    return np.take_along_axis(x, order, axis=axis), order


@op("TopK", 1)
def top_k_v1(X, *, k, axis=-1):
    return top_k_impl(X, k, axis, largest=1)


@op("TopK", 10)
def top_k_v10(X, K, *, axis=-1):
    return top_k_impl(X, scalar_int(K, "K"), axis, largest=1)


@op("TopK", 11, 24)
def top_k(X, K, *, axis=-1, largest=1, sorted=1):  # noqa: A002 - the attribute's name
    return top_k_impl(X, scalar_int(K, "K"), axis, largest)
