"""Pointwise convolution layers (1x1, stride 1, no padding, one group): the input is its
own im2col.

    Y[n] (M, H*W) = act(W (M, C) @ X[n] (C, H*W) + bias + Z[n])

Two routes (``conv._route``; both when the layer is ``_banded.pointwise_eligible``,
timed per node and input shape by ``conv._choose`` when tuning is on):

    run_product  one product per image (``_blas.matmul``, on the Numba threads), then the
                 epilogue over its rows (``_epilogue.finish_rows``)
    run_bands    bands of columns, each band's product and epilogue in its thread's
                 cache (``_banded.pointwise_bands``): small weights, 2048+ pixels

``run_product`` is what the generic path (``_conv_routes._gemm_conv``) does for such a
layer, without its per-call work: the tests of which path applies, the im2col and
subsampling checks, the activation looked up by name.
https://onnx.ai/onnx/operators/onnx__Conv.html
"""

from __future__ import annotations

import numpy as np

from onnxkit.kernels.cpu._banded import pointwise_bands, pointwise_width
from onnxkit.kernels.cpu._blas import matmul, with_library
from onnxkit.kernels.cpu._buffers import empty, empty_known, read_only
from onnxkit.kernels.cpu._epilogue import finish_rows, residual_rows
from onnxkit.kernels.cpu._math import NONE

def is_pointwise(W, g, in_hw) -> bool:
    """A 1x1 layer of stride 1 and no padding: its input is its im2col already."""
    return W.shape[2] == W.shape[3] == 1 and g.strides == (1, 1) and not any(g.begin) \
        and tuple(g.out) == tuple(in_hw)


def run_product(X, W, B, bias, Z4, L):
    """The route: per image, one product and the epilogue on its rows."""
    n, c = X.shape[:2]
    m, pixels = W.shape[0], X.shape[2] * X.shape[3]
    Y = empty_known(L.out_shape, X.dtype, L.out_bytes)
    w = W.reshape(m, c)
    act = L.code[0]
    epilogue = B is not None or Z4 is not None or act != NONE
    for i in range(n):
        y = Y[i].reshape(m, pixels)
        matmul(w, X[i].reshape(c, pixels), y)
        if epilogue:
            finish_rows(y, bias, residual_rows(Z4, i, m, pixels, X.dtype), Z4 is not None, act,
                        L.p0, L.p1)
    return Y


def run_bands(X, W, B, bias, Z4, L):
    """The route by bands of columns (see the module doc)."""
    return by_bands(X, W, bias, Z4, L.code)


def by_bands(X, W, bias, Z4, code):
    """A pointwise layer by bands of columns, ``code`` its activation (code, p0, p1)."""
    n, c, h, w = X.shape
    m = W.shape[0]
    Y = empty((n, m, h, w), X.dtype)
    weights = read_only(np.ascontiguousarray(W).reshape(m, c))
    width = pointwise_width(m, h * w, X.itemsize)
    act, p0, p1 = code
    p0, p1 = X.dtype.type(p0), X.dtype.type(p1)
    b = read_only(bias)

    def run(lib):
        for i in range(n):
            pointwise_bands(read_only(X[i].reshape(c, h * w)), weights, b,
                            residual_rows(Z4, i, m, h * w, X.dtype), Z4 is not None, act, p0, p1,
                            Y[i].reshape(m, h * w), width, lib)

    with_library(("gemm 1x1 bands", X.shape, W.shape), run)
    return Y
