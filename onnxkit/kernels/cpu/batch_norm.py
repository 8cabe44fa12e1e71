"""BatchNormalization (inference) on the ``cpu`` executor: one pass, per-channel affine.

    inv[c] = scale[c] / sqrt(var[c] + epsilon)
    Y[n, c, ...] = activation((X[n, c, ...] - mean[c]) * inv[c] + B[c])

The same arithmetic, in the same order, as the reference kernel; the activation (of
onnxkit::FusedBatchNormalization, none for BatchNormalization) is applied to each plane
while it is still in cache. Training mode (and the per-position statistics of
``spatial=0``) and types other than float32 (``COMPILED``) run the reference kernel.
https://onnx.ai/onnx/operators/onnx__BatchNormalization.html
"""

from __future__ import annotations

import numpy as np
from numba import njit

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._buffers import empty, read_only
from onnxkit.kernels.cpu._dtypes import COMPILED
from onnxkit.kernels.cpu import _math
from onnxkit.kernels.cpu._math import FASTMATH, applies, finish
from onnxkit.kernels.cpu._route import fall_back
from onnxkit.kernels.cpu._threads import run_parts
from onnxkit.kernels.cpu.activations import activate_in_place
from onnxkit.ops.fused.fused_batch_norm import fused_batch_normalization as reference_fused
from onnxkit.ops.nn.batch_norm import batch_normalization as reference_batch_normalization
from onnxkit.ops.nn.batch_norm import batch_normalization_legacy as reference_legacy
from onnxkit.ops.registry import op


def affine_planes(x, mean, inv, shift, code, p0, p1, y):
    """x, y (N, C, P): y[n, c, :] = act((x[n, c, :] - mean[c]) * inv[c] + shift[c]), the
    (image, channel) planes shared among the threads."""
    run_parts(_affine, x.shape[0] * x.shape[1], x.size, x, mean, inv, shift, code, p0, p1, y)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH)
def _affine(x, mean, inv, shift, code, p0, p1, y, lo, hi):
    channels = x.shape[1]
    zero = shift[0] * 0
    for plane in range(lo, hi):
        n, c = plane // channels, plane % channels
        m, s, b = mean[c], inv[c], shift[c]
        src, dst = x[n, c], y[n, c]
        for i in range(src.size):
            dst[i] = (src[i] - m) * s + b
        if applies(code):  # a constant: no pass for NONE
            finish(dst, zero, dst, False, code, p0, p1)


def batch_norm_fast(X, scale, B, mean, var, epsilon, activation="", params=None):
    """The inference fast path, or None for the cases left to the reference kernel."""
    code, after = _math.split_activation(activation, params)
    if X.dtype not in COMPILED or X.ndim < 2 or X.size == 0 or code is None:
        return None
    c = X.shape[1]
    params = (scale, B, mean, var)
    if any(p.ndim != 1 or p.shape[0] != c for p in params):
        return None
    work = X.dtype
    inv = scale.astype(work) / np.sqrt(var.astype(work) + work.type(epsilon))
    Y = empty(X.shape, work)
    x3 = read_only(np.ascontiguousarray(X).reshape(X.shape[0], c, -1))
    act, p0, p1 = code
    affine_planes(x3, mean.astype(work), inv.astype(work), B.astype(work), act, work.type(p0),
                  work.type(p1), Y.reshape(x3.shape))
    if after is not None:
        activate_in_place(Y, after)
    return Y


@op("BatchNormalization", 14, 15, registry=CPU)
def batch_normalization(X, scale, B, input_mean, input_var, *, epsilon=1e-5, momentum=0.9,
                        training_mode=0):
    Y = None if training_mode else batch_norm_fast(X, scale, B, input_mean, input_var, epsilon)
    if Y is None:
        return fall_back(reference_batch_normalization, X, scale, B, input_mean, input_var,
                         epsilon=epsilon, momentum=momentum, training_mode=training_mode)
    return Y


@op("BatchNormalization", 1, 6, 7, 9, context=True, registry=CPU)
def batch_normalization_legacy(X, scale, B, mean, var, *, consumed_inputs=None, epsilon=1e-5,
                               is_test=0, momentum=0.9, spatial=1, ctx):
    training = ctx.n_outputs > 1 and not is_test
    Y = None if training or not spatial else batch_norm_fast(X, scale, B, mean, var, epsilon)
    if Y is None:
        return fall_back(reference_legacy, X, scale, B, mean, var,
                         consumed_inputs=consumed_inputs, epsilon=epsilon, is_test=is_test,
                         momentum=momentum, spatial=spatial, ctx=ctx)
    return Y


@op("FusedBatchNormalization", 1, domain="onnxkit", registry=CPU)
def fused_batch_normalization(X, scale, B, mean, var, *, epsilon=1e-5, activation="",
                              activation_params=None):
    Y = batch_norm_fast(X, scale, B, mean, var, epsilon, activation, activation_params)
    if Y is None:
        return fall_back(reference_fused, X, scale, B, mean, var, epsilon=epsilon,
                         activation=activation, activation_params=activation_params)
    return Y
