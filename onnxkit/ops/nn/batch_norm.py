"""BatchNormalization: normalize each channel with running (inference) or batch statistics.

    inference: Y = scale * (X - mean) / sqrt(var + epsilon) + B        (per channel c)
    training:  m, v = mean and biased variance of X over all axes but 1
               Y = scale * (X - m) / sqrt(v + epsilon) + B
               running_mean = mean * momentum + m * (1 - momentum)   (running_var alike)

Versions 14/15 choose training with ``training_mode``. Before that, training mode is when
the node asks for the running statistics (more than one output; with ``is_test=0`` in
versions 1/6), as onnxruntime does. Before version 9 ``spatial=0`` gives every (c, d...)
position its own statistics: the parameters then have shape X.shape[1:].
https://onnx.ai/onnx/operators/onnx__BatchNormalization.html
"""

import numpy as np

from onnxkit.ops.nn._stats import check_unidirectional, moments
from onnxkit.ops.nn._windows import compute_dtype
from onnxkit.ops.registry import op


def _per_channel(p: np.ndarray, x_shape: tuple, dtype) -> np.ndarray:
    rank = len(x_shape)
    if p.ndim == 1 and rank >= 2:
        p = p.reshape((-1,) + (1,) * (rank - 2))
    check_unidirectional(x_shape, p, "BatchNormalization parameter")
    return p.astype(dtype, copy=False)


def _infer(X, scale, B, mean, var, epsilon, work):
    x = X.astype(work, copy=False)
    shape = X.shape
    inv = _per_channel(scale, shape, work) / np.sqrt(_per_channel(var, shape, work) + epsilon)
    return ((x - _per_channel(mean, shape, work)) * inv + _per_channel(B, shape, work)).astype(X.dtype)


def _train(X, scale, B, mean, var, epsilon, momentum, work, spatial=1):
    """(Y, running_mean, running_var, batch_mean, batch_var)."""
    r = X.ndim
    axes = (0,) + tuple(range(2, r)) if spatial else (0,)
    x = X.astype(work, copy=False)
    m, v = moments(x, axes)
    Y = ((x - m) / np.sqrt(v + epsilon) * _per_channel(scale, X.shape, work)
         + _per_channel(B, X.shape, work))
    m = m.reshape(mean.shape)
    v = v.reshape(var.shape)
    run_mean = mean.astype(work) * momentum + m * (1 - momentum)
    run_var = var.astype(work) * momentum + v * (1 - momentum)
    return (Y.astype(X.dtype), run_mean.astype(mean.dtype), run_var.astype(var.dtype),
            m.astype(mean.dtype), v.astype(var.dtype))


@op("BatchNormalization", 1, 6, 7, 9, context=True)
def batch_normalization_legacy(X, scale, B, mean, var, *, consumed_inputs=None, epsilon=1e-5,
                               is_test=0, momentum=0.9, spatial=1, ctx):
    work = compute_dtype(X.dtype)
    if ctx.n_outputs > 1 and not is_test:
        outputs = _train(X, scale, B, mean, var, epsilon, momentum, work, spatial)
        return outputs[:ctx.n_outputs]
    return _infer(X, scale, B, mean, var, epsilon, work)


@op("BatchNormalization", 14, 15)
def batch_normalization(X, scale, B, input_mean, input_var, *, epsilon=1e-5, momentum=0.9,
                        training_mode=0):
    work = compute_dtype(X.dtype)
    if training_mode:
        return _train(X, scale, B, input_mean, input_var, epsilon, momentum, work)[:3]
    return _infer(X, scale, B, input_mean, input_var, epsilon, work)
