"""GroupNormalization: split the channels into ``num_groups`` and normalize each group.

    Xg = X reshaped (N, G, C / G, *spatial)
    Y = (Xg - mean(Xg)) / sqrt(var(Xg) + epsilon), statistics over all axes but N, G
    version 18: Y * scale[g] + bias[g]          (one parameter per group)
    version 21: Y * scale[c] + bias[c]          (one parameter per channel; stash_type)

https://onnx.ai/onnx/operators/onnx__GroupNormalization.html
"""

import numpy as np

from onnxkit.errors import KernelError
from onnxkit.ops.nn._stats import moments, stash_dtype
from onnxkit.ops.registry import op


def _check_params(scale, bias, count: int, per: str) -> None:
    if scale.size != count or bias.size != count:
        raise KernelError(f"GroupNormalization: scale {list(scale.shape)} and bias "
                          f"{list(bias.shape)} need one value per {per} ({count})")


def _normalized_groups(X, num_groups: int, epsilon: float, work) -> np.ndarray:
    n, c = X.shape[:2]
    if c % num_groups:
        raise KernelError(f"GroupNormalization: {c} channels do not split into {num_groups} groups")
    x = X.astype(work, copy=False).reshape((n, num_groups, c // num_groups) + X.shape[2:])
    mean, var = moments(x, tuple(range(2, x.ndim)))
    return (x - mean) / np.sqrt(var + epsilon)


@op("GroupNormalization", 18)
def group_normalization_18(X, scale, bias, *, epsilon=1e-5, num_groups):
    work = np.dtype(np.float32) if X.dtype.itemsize < 4 else X.dtype
    _check_params(scale, bias, num_groups, "group")
    y = _normalized_groups(X, num_groups, epsilon, work)
    shape = (num_groups,) + (1,) * (y.ndim - 2)
    y = y * scale.astype(work).reshape(shape) + bias.astype(work).reshape(shape)
    return y.reshape(X.shape).astype(X.dtype)


@op("GroupNormalization", 21)
def group_normalization(X, scale, bias, *, epsilon=1e-5, num_groups, stash_type=1):
    work = stash_dtype(stash_type, X.dtype)
    _check_params(scale, bias, X.shape[1] if X.ndim > 1 else 0, "channel")
    y = _normalized_groups(X, num_groups, epsilon, work).reshape(X.shape)
    shape = (-1,) + (1,) * (X.ndim - 2)
    y = y * scale.astype(work).reshape(shape) + bias.astype(work).reshape(shape)
    return y.astype(X.dtype)
