"""LayerNormalization and onnxkit::SkipLayerNormalization on the ``cpu`` executor.

    for each row r (the trailing axes from ``axis`` flattened, D values):
        s = X[r] (+ Skip[r])                      S[r] = s  (SkipLayerNormalization)
        mean = sum(s) / D; var = sum((s - mean)^2) / D       (accumulated in float64,
                                                              in any order: vectorized)
        inv = 1 / sqrt(var + epsilon)
        Y[r] = (s - mean) * inv * Scale + B

Scale and B must hold D values (any shape); float32 only (``COMPILED``: float64 with
stash_type=1 normalizes in float32); other cases run the reference kernel.
A node whose Scale and B are initializers is prepared with the plan: few rows normalized
over the last axis are one compiled call (``_small_norm``).
https://onnx.ai/onnx/operators/onnx__LayerNormalization.html
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._buffers import SMALL, empty, read_only, zeros_read_only
from onnxkit.kernels.cpu._dtypes import COMPILED
from onnxkit.kernels.cpu._math import FASTMATH, mean_inv_std
from onnxkit.kernels.cpu._route import fall_back
from onnxkit.kernels.cpu._small_norm import install_prepare
from onnxkit.kernels.cpu._threads import min_parallel, run_parts
from onnxkit.ops.fused import layer_norm as ref_fused
from onnxkit.ops.nn import layer_norm as ref_layer_norm
from onnxkit.ops.registry import op


def normalize_rows(x, skip, has_skip, scale, bias, eps, y, mean_out, inv_out, s_out):
    """x, skip, y, s_out: (R, D); mean_out, inv_out: (R,); see the module docstring. The
    rows are shared among the threads (small work: one call here, no split worked out)."""
    if x.size < min_parallel():
        _normalize(x, skip, has_skip, scale, bias, eps, y, mean_out, inv_out, s_out, 0,
                   x.shape[0])
        return
    run_parts(_normalize, x.shape[0], x.size, x, skip, has_skip, scale, bias, eps, y,
              mean_out, inv_out, s_out)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH)
def _normalize(x, skip, has_skip, scale, bias, eps, y, mean_out, inv_out, s_out, lo, hi):
    d = x.shape[1]
    for r in range(lo, hi):
        if has_skip:
            for i in range(d):
                s_out[r, i] = x[r, i] + skip[r, i]
            src = s_out[r]
        else:
            src = x[r]
        mean, inv = mean_inv_std(src, eps)
        mean_out[r] = mean
        inv_out[r] = inv
        for i in range(d):
            y[r, i] = (src[i] - mean) * inv * scale[i] + bias[i]


def _out(shape, dtype, nbytes):
    """An output buffer: the session pool's, or numpy's own for small ones (``SMALL``)."""
    return np.empty(shape, dtype) if nbytes < SMALL else empty(shape, dtype)


def layer_norm_fast(X, Skip, Scale, B, axis, epsilon, stats_dtype):
    if X.dtype not in COMPILED or X.size == 0 or not -X.ndim <= axis < X.ndim:
        return None
    start = axis % X.ndim
    d = Scale.size
    if math.prod(X.shape[start:]) != d or Scale.dtype != X.dtype \
            or (B is not None and (B.size != d or B.dtype != X.dtype)):
        return None
    if Skip is not None and (Skip.shape != X.shape or Skip.dtype != X.dtype):
        return None
    x = (X if X.flags.c_contiguous else np.ascontiguousarray(X)).reshape(-1, d)
    rows = x.shape[0]
    Y = _out(X.shape, X.dtype, X.nbytes)
    S = _out(X.shape, X.dtype, X.nbytes) if Skip is not None else None
    # what is only read, read-only: one signature for every mix of flags (``read_only``);
    # without a skip, nothing is written to S: Y stands in for it
    x = read_only(x)
    if Skip is not None:
        skip = read_only((Skip if Skip.flags.c_contiguous else np.ascontiguousarray(Skip))
                         .reshape(rows, d))
    else:
        skip = x
    bias = zeros_read_only(d, X.dtype) if B is None else read_only(B.reshape(d))
    stat_shape = X.shape[:start] + (1,) * (X.ndim - start)
    mean = np.empty(stat_shape, stats_dtype)
    inv = np.empty(stat_shape, stats_dtype)
    normalize_rows(x, skip, Skip is not None, read_only(Scale.reshape(d)), bias, float(epsilon),
                   Y.reshape(rows, d), mean.reshape(rows), inv.reshape(rows),
                   (S if Skip is not None else Y).reshape(rows, d))
    return Y, mean, inv, S


@op("LayerNormalization", 17, registry=CPU)
def layer_normalization(X, Scale, B=None, *, axis=-1, epsilon=1e-5, stash_type=1):
    if stash_type == 1:
        found = layer_norm_fast(X, None, Scale, B, axis, epsilon, np.float32)
        if found is not None:
            return found[:3]
    return fall_back(ref_layer_norm.layer_normalization, X, Scale, B, axis=axis,
                     epsilon=epsilon, stash_type=stash_type)


@op("LayerNormalization", 1, domain="onnxkit", registry=CPU)
def onnxkit_layer_normalization(X, Scale, B=None, *, axis=-1, epsilon=1e-5, stash_type=1):
    return layer_normalization(X, Scale, B, axis=axis, epsilon=epsilon, stash_type=stash_type)


@op("SkipLayerNormalization", 1, domain="onnxkit", registry=CPU)
def skip_layer_normalization(X, Skip, Scale, B=None, *, axis=-1, epsilon=1e-5):
    found = layer_norm_fast(X, Skip, Scale, B, axis, epsilon, np.float32)
    if found is None:
        return fall_back(ref_fused.skip_layer_normalization, X, Skip, Scale, B, axis=axis,
                         epsilon=epsilon)
    Y, _, _, S = found
    return Y, S


install_prepare(layer_normalization, "layer")
install_prepare(onnxkit_layer_normalization, "layer")
install_prepare(skip_layer_normalization, "skip")
