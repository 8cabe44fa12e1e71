"""Unique: the distinct values (or distinct slices along ``axis``) of X.

    Y        distinct values, ascending (sorted=1) or in first-occurrence order (sorted=0)
    indices  where each Y entry first occurs in X (flattened X, or along axis)
    inverse  for each X entry (or slice), its position in Y
    counts   how often each Y entry occurs
https://onnx.ai/onnx/operators/onnx__Unique.html
"""

import numpy as np

from onnxkit.ops.registry import op
from onnxkit.ops.tensor._util import normalize_axis


def _unique_rows_python(rows: np.ndarray) -> tuple:
    """np.unique(rows, axis=0) for object (string) rows, which numpy cannot do."""
    keys = [tuple(r) for r in rows.tolist()]
    distinct = sorted(set(keys))
    position = {key: i for i, key in enumerate(distinct)}
    inverse = np.array([position[key] for key in keys], dtype=np.int64)
    first = np.array([keys.index(key) for key in distinct], dtype=np.int64)
    counts = np.bincount(inverse, minlength=len(distinct)).astype(np.int64)
    return rows[first], first, inverse, counts


@op("Unique", 11, 28)
def unique(X, *, axis=None, sorted=1):  # noqa: A002 - the attribute's name
    if axis is None:
        y, first, inverse, counts = np.unique(X.reshape(-1), return_index=True,
                                              return_inverse=True, return_counts=True)
        along = 0
    else:
        along = normalize_axis(axis, X.ndim)
        rows = np.moveaxis(X, along, 0).reshape(X.shape[along], -1)
        if X.dtype == object:
            y, first, inverse, counts = _unique_rows_python(rows)
        else:
            y, first, inverse, counts = np.unique(rows, axis=0, return_index=True,
                                                  return_inverse=True, return_counts=True)
        rest = tuple(np.delete(np.array(X.shape, dtype=np.int64), along))
        y = np.moveaxis(y.reshape((len(y),) + rest), 0, along)
    first, inverse, counts = (a.astype(np.int64).reshape(-1) for a in (first, inverse, counts))
    if not sorted:
        order = np.argsort(first, kind="stable")
        new_position = np.empty_like(order)
        new_position[order] = np.arange(len(order))
        y = np.take(y, order, axis=along)
        first, counts, inverse = first[order], counts[order], new_position[inverse]
    return np.ascontiguousarray(y), first, inverse, counts
