"""ArgMax / ArgMin: int64 index of the largest / smallest element along ``axis``.

    ties -> the first index, or the last one when select_last_index=1 (version 12+)
    keepdims=1 keeps the reduced axis with size 1

https://onnx.ai/onnx/operators/onnx__ArgMax.html
https://onnx.ai/onnx/operators/onnx__ArgMin.html
"""

import numpy as np

from onnxkit.errors import KernelError
from onnxkit.ops.reduce._reduce import working
from onnxkit.ops.registry import op


def _arg(find, data, axis, keepdims, select_last_index):
    rank = data.ndim
    if not -rank <= axis < max(rank, 1):
        raise KernelError(f"axis {axis} is out of range for an input of rank {rank}")
    axis = axis % rank if rank else 0
    x = working(data)
    if x.ndim == 0:
        x = x.reshape(1)
    if x.shape[axis] == 0:
        raise KernelError(f"cannot take the arg-extremum of an empty axis {axis} (shape {list(data.shape)})")
    if select_last_index:
        index = x.shape[axis] - 1 - find(np.flip(x, axis), axis=axis)
    else:
        index = find(x, axis=axis)
    if keepdims:
        index = np.expand_dims(index, axis)
    return np.asarray(index, dtype=np.int64)


@op("ArgMax", 1, 11, 12, 13)
def argmax(data, *, axis=0, keepdims=1, select_last_index=0):
    return _arg(np.argmax, data, axis, keepdims, select_last_index)


@op("ArgMin", 1, 11, 12, 13)
def argmin(data, *, axis=0, keepdims=1, select_last_index=0):
    return _arg(np.argmin, data, axis, keepdims, select_last_index)
