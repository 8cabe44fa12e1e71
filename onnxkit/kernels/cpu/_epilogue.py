"""The fused epilogue of Conv, Gemm and MatMul: one pass over the product.

    for each row r of Y (rows x cols):
        Y[r, :] = activation(Y[r, :] + bias + Z[r, :])
    bias is per row (Conv: bias[r % M] for output channel r % M) or per column
    (Gemm / MatMul: bias[col]); Z (a residual) and the bias are optional.

The product is still in cache when this runs, so bias, residual and activation cost
one read and one write instead of one of each per operator.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from onnxkit.kernels.cpu._buffers import read_only
from onnxkit.kernels.cpu._dtypes import COMPILED
from onnxkit.kernels.cpu._math import (FASTMATH, NONE, finish_rows_bias, finish_rows_vector,
                                       split_activation)
from onnxkit.kernels.cpu._threads import run_parts
from onnxkit.kernels.cpu.activations import activate_in_place
from onnxkit.ops.fused._common import activate as reference_activate

#: a missing residual as the kernels take it: (1, 1) zeros, read-only, by dtype
NO_MATRIX = {t: read_only(np.zeros((1, 1), t)) for t in COMPILED}


def residual_rows(Z4, i, m, pixels, dtype):
    """Image i's residual as the (M, pixels) rows a kernel reads, or ``NO_MATRIX``."""
    if Z4 is None:
        return NO_MATRIX[dtype]
    return read_only(np.ascontiguousarray(Z4[i]).reshape(m, pixels))
_NO_VECTOR = {t: read_only(np.zeros(1, t)) for t in COMPILED}


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH)
def _finish_rows(y, bias, z, has_z, code, p0, p1, lo, hi):
    finish_rows_bias(y, bias, z, has_z, lo, hi, code, p0, p1)


def finish_rows(y, bias, z, has_z, code, p0, p1):
    """y[r, :] = act(y[r, :] + bias[r % len(bias)] + z[r, :])  (z optional), the rows
    shared among the threads."""
    run_parts(_finish_rows, y.shape[0], y.size, y, bias, z, has_z, code, p0, p1)


def finish_cols(y, bias, z, has_bias, has_z, code, p0, p1):
    """y[r, i] = act(y[r, i] + bias[i] + z[r, i])  (bias, z optional), the rows shared
    among the threads."""
    run_parts(_finish_cols, y.shape[0], y.size, y, bias, z, has_bias, has_z, code, p0, p1)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH)
def _finish_cols(y, bias, z, has_bias, has_z, code, p0, p1, lo, hi):
    if has_bias:
        finish_rows_vector(y, bias, z, has_z, lo, hi, code, p0, p1)
    else:  # no bias: a zero for every row
        finish_rows_bias(y, bias[:1] * 0, z, has_z, lo, hi, code, p0, p1)


def _params(y, p0, p1):
    t = y.dtype.type
    return t(p0), t(p1)


def epilogue_rows(y2d, bias, z2d, activation="", params=None):
    """Bias per row (cycled every ``len(bias)`` rows), residual, activation, in place.

    Returns y2d (or, for an activation left to the reference, a new array).
    """
    code, after = split_activation(activation, params)
    act, p0, p1 = code if code is not None else (NONE, 0.0, 0.0)
    if bias is not None or z2d is not None or act != NONE:
        b = _NO_VECTOR[y2d.dtype] if bias is None else read_only(bias)
        z = NO_MATRIX[y2d.dtype] if z2d is None else read_only(z2d)
        p0, p1 = _params(y2d, p0, p1)
        finish_rows(y2d, b, z, z2d is not None, act, p0, p1)
    return _then(y2d, code, after, activation, params)


def _then(y2d, code, after, activation, params):
    """The activation the epilogue's loops left: its own pass, or the reference's."""
    if after is not None:
        activate_in_place(y2d, after)
    elif code is None:
        return reference_activate(y2d, activation, params)
    return y2d


def epilogue_cols(y2d, bias, z2d, activation="", params=None):
    """Bias per column, residual, activation, in place (see ``epilogue_rows``)."""
    code, after = split_activation(activation, params)
    act, p0, p1 = code if code is not None else (NONE, 0.0, 0.0)
    if bias is not None or z2d is not None or act != NONE:
        b = _NO_VECTOR[y2d.dtype] if bias is None else read_only(bias)
        z = NO_MATRIX[y2d.dtype] if z2d is None else read_only(z2d)
        p0, p1 = _params(y2d, p0, p1)
        finish_cols(y2d, b, z, bias is not None, z2d is not None, act, p0, p1)
    return _then(y2d, code, after, activation, params)
