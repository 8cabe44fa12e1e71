"""How the softmax family picks the values it normalizes together.

    version 1, 11: coerce X to 2-D [prod(shape[:axis]), prod(shape[axis:])] and work on
                   each row (so every axis from ``axis`` on is normalized jointly)
    version 13:    work along the single axis ``axis``
"""

from __future__ import annotations

import math
from typing import Callable

import ml_dtypes
import numpy as np

from onnxkit.errors import KernelError

# bfloat16 is computed in float32; float16 natively, as onnx's reference (and its
# expected outputs, e.g. the fp16 Attention cases) does.
_WIDEN = (np.dtype(ml_dtypes.bfloat16),)


def _axis(x: np.ndarray, axis: int) -> int:
    rank = x.ndim
    if not -rank <= axis < max(rank, 1):
        raise KernelError(f"axis {axis} is out of range for an input of rank {rank}")
    return axis % rank if rank else 0


def along_axis(x: np.ndarray, axis: int, fn: Callable) -> np.ndarray:
    """``fn(values, axis)`` along one axis (version 13); bfloat16 computed in float32."""
    work = x.astype(np.float32) if x.dtype in _WIDEN else x
    if work.ndim == 0:
        return fn(work.reshape(1), 0).reshape(()).astype(x.dtype, copy=False)
    return fn(work, _axis(x, axis)).astype(x.dtype, copy=False)


def coerced_2d(x: np.ndarray, axis: int, fn: Callable) -> np.ndarray:
    """``fn`` on the rows of X seen as a 2-D matrix split at ``axis`` (versions 1 and 11)."""
    a = _axis(x, axis) if x.ndim else 0
    rows = math.prod(x.shape[:a])
    matrix = x.reshape(rows, math.prod(x.shape[a:]))
    return along_axis(matrix, 1, fn).reshape(x.shape)
