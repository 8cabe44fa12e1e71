"""What every Reduce* kernel shares: which axes, in which precision, back to which dtype.

    axes given (attribute or input)  -> those axes, negatives counted from the end
    axes absent or empty             -> every axis, or none at all when noop_with_empty_axes=1
                                        (reducing over no axes is elementwise: ReduceSumSquare
                                        then returns X*X, ReduceLogSum log(X))
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from onnxkit.errors import KernelError

_HALF = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def reduction_axes(data: np.ndarray, axes, noop_with_empty_axes: int = 0) -> tuple[int, ...]:
    """The axes to reduce, sorted and non-negative."""
    listed = [] if axes is None else [int(a) for a in np.asarray(axes).reshape(-1)]
    if not listed:
        return () if noop_with_empty_axes else tuple(range(data.ndim))
    rank = data.ndim
    for a in listed:
        if not -rank <= a < rank:
            raise KernelError(
                f"reduction axis {a} is out of range for an input of rank {rank} "
                f"(accepted: {-rank}..{rank - 1})"
            )
    return tuple(sorted({a % rank for a in listed}))


def working(data: np.ndarray, exact_ints: bool = True) -> np.ndarray:
    """The data in the precision to compute in: float32 for 16-bit floats; float64 for
    integers when the result is not an integer operation (mean, norms, logs)."""
    if data.dtype in _HALF:
        return data.astype(np.float32)
    if data.dtype.kind in "iub" and not exact_ints:
        return data.astype(np.float64)
    return data


def finish(result, dtype: np.dtype) -> np.ndarray:
    """An array (never a numpy scalar) of the input's dtype."""
    return np.asarray(result).astype(dtype, copy=False)


def count(data: np.ndarray, axes: tuple[int, ...]) -> int:
    """How many elements each output element reduces."""
    n = 1
    for a in axes:
        n *= data.shape[a]
    return n
