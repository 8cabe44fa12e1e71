"""Clip: Y = min(max(X, min), max) elementwise; an absent bound does not clip.

Opsets 1 and 6 take the bounds as float attributes (default: the float range);
from opset 11 they are optional scalar inputs. When min > max every value becomes max.
https://onnx.ai/onnx/operators/onnx__Clip.html
"""

import numpy as np

from onnxkit.ops.math._common import as_dtype, working
from onnxkit.ops.registry import op

_FLT_MAX = float(np.finfo(np.float32).max)


def _clip(X, low, high):
    y = working(X)
    with np.errstate(over="ignore"):
        if low is not None:
            y = np.maximum(y, np.asarray(low).astype(y.dtype).reshape(()))
        if high is not None:
            y = np.minimum(y, np.asarray(high).astype(y.dtype).reshape(()))
    return as_dtype(y, X.dtype)


@op("Clip", 11, 12, 13)
def clip(input_, min_=None, max_=None):
    return _clip(input_, min_, max_)


@op("Clip", 1, 6)
def clip_attributes(input_, *, min=-_FLT_MAX, max=_FLT_MAX, consumed_inputs=None):  # noqa: A002
    return _clip(input_, min, max)
