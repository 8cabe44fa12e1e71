"""ReduceLogSum = log(sum(X)) and ReduceLogSumExp = log(sum(exp(X))) over ``axes``.

Both are -inf over an empty set. LogSumExp subtracts the maximum first so large inputs
do not overflow:  m = max(X); m + log(sum(exp(X - m)))  (m taken as 0 where it is +-inf).
Axes became an input in version 18; version 28 drops integer inputs.
https://onnx.ai/onnx/operators/onnx__ReduceLogSum.html
https://onnx.ai/onnx/operators/onnx__ReduceLogSumExp.html
"""

import numpy as np

from onnxkit.ops.reduce._reduce import finish, reduction_axes, working
from onnxkit.ops.registry import op


def _log_sum(data, axes, keepdims):
    x = working(data, exact_ints=False)
    return finish(np.log(np.add.reduce(x, axis=axes, keepdims=bool(keepdims))), data.dtype)


def _log_sum_exp(data, axes, keepdims):
    x = working(data, exact_ints=False)
    peak = np.maximum.reduce(x, axis=axes, keepdims=True, initial=-np.inf)
    peak = np.where(np.isfinite(peak), peak, 0).astype(x.dtype)
    total = np.add.reduce(np.exp(x - peak), axis=axes, keepdims=True)
    out = np.log(total) + peak
    if not keepdims:
        out = out.reshape([d for i, d in enumerate(out.shape) if i not in axes])
    return finish(out, data.dtype)


@op("ReduceLogSum", 1, 11, 13)
def reduce_log_sum_v1(data, *, axes=None, keepdims=1):
    return _log_sum(data, reduction_axes(data, axes), keepdims)


@op("ReduceLogSum", 18, 28)
def reduce_log_sum(data, axes=None, *, keepdims=1, noop_with_empty_axes=0):
    return _log_sum(data, reduction_axes(data, axes, noop_with_empty_axes), keepdims)


@op("ReduceLogSumExp", 1, 11, 13)
def reduce_log_sum_exp_v1(data, *, axes=None, keepdims=1):
    return _log_sum_exp(data, reduction_axes(data, axes), keepdims)


@op("ReduceLogSumExp", 18, 28)
def reduce_log_sum_exp(data, axes=None, *, keepdims=1, noop_with_empty_axes=0):
    return _log_sum_exp(data, reduction_axes(data, axes, noop_with_empty_axes), keepdims)
