"""Gemm and onnxkit::FusedGemm on the ``cpu`` executor: one BLAS call, one epilogue.

    Y = activation(alpha * A' @ B' + beta * C)     (A' = A^T if transA, B' likewise)

The product is written into a reused buffer; a B stored transposed (transB=1, as torch
exports Linear) is read in place, BLAS's "T" operand: a contiguous copy of the weights
would cost their size again in memory and was no faster (``docs/cpu.md``). ``alpha`` scales the product, then C (a row vector, a full matrix or
anything broadcastable) and the activation are applied in one pass. Versions 1 and 6
(``broadcast``) and non-float types run the reference kernel.

A node whose B and C are initializers is prepared with the plan (``prepare``): beta * C
as a bias vector, the activation's code and the most rows a product may have to run as
one call are worked out once, and a product of that few rows (a decoder step) is one
compiled call, product and epilogue (``_small_product``).
https://onnx.ai/onnx/operators/onnx__Gemm.html
"""

from __future__ import annotations

import numpy as np

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._blas import matmul
from onnxkit.kernels.cpu._broadcast import broadcast_shape
from onnxkit.kernels.cpu._buffers import empty
from onnxkit.kernels.cpu._dtypes import COMPILED
from onnxkit.kernels.cpu._epilogue import epilogue_cols
from onnxkit.kernels.cpu._route import fall_back
from onnxkit.kernels.cpu._small_product import activation_args, prepared_product
from onnxkit.ops.fused.fused_gemm import fused_gemm as reference_fused_gemm
from onnxkit.ops.linalg.gemm import gemm as reference_gemm
from onnxkit.ops.registry import op



def gemm_fast(A, B, C, alpha, beta, transA, transB, activation="", params=None):
    """The fast path, or None for the cases left to the reference kernel."""
    if (A.dtype not in COMPILED or B.dtype != A.dtype or A.ndim != 2 or B.ndim != 2
            or (C is not None and C.dtype != A.dtype)):
        return None
    a = A.T if transA else A
    b = B.T if transB else B
    m, k = a.shape
    if b.shape[0] != k or m == 0 or k == 0 or b.shape[1] == 0:
        return None
    n = b.shape[1]
    if C is not None and broadcast_shape(C.shape, (m, n)) != (m, n):
        return None
    Y = empty((m, n), A.dtype)
    matmul(a, b, Y)
    if alpha != 1.0:
        Y *= A.dtype.type(alpha)
    bias = z = None
    if C is not None and beta != 0.0:
        c = C if beta == 1.0 else C * A.dtype.type(beta)
        if c.ndim == 2 and c.shape == (m, n):
            z = np.ascontiguousarray(c)
        elif c.size == n and (c.ndim == 1 or c.shape[0] == 1):
            bias = np.ascontiguousarray(c.reshape(n))
        else:
            Y += c
    if bias is None and z is None and not activation:
        return Y
    return epilogue_cols(Y, bias, z, activation, params)


@op("Gemm", 7, 9, 11, 13, registry=CPU)
def gemm(A, B, C=None, *, alpha=1.0, beta=1.0, transA=0, transB=0):
    Y = gemm_fast(A, B, C, alpha, beta, transA, transB)
    if Y is None:
        return fall_back(reference_gemm, A, B, C, alpha=alpha, beta=beta, transA=transA,
                         transB=transB)
    return Y


@op("FusedGemm", 1, domain="onnxkit", registry=CPU)
def fused_gemm(A, B, C=None, *, alpha=1.0, beta=1.0, transA=0, transB=0, activation="",
               activation_params=None):
    Y = gemm_fast(A, B, C, alpha, beta, transA, transB, activation, activation_params)
    if Y is None:
        return fall_back(reference_fused_gemm, A, B, C, alpha=alpha, beta=beta, transA=transA,
                         transB=transB, activation=activation,
                         activation_params=activation_params)
    return Y


def _prepare_gemm(node, attrs: dict, constants: dict, shapes: dict):
    """Gemm's and FusedGemm's plan-time hook: the small-product call (``_small_product``)
    when B is a 2-D initializer and C is absent or an initializer of n values."""
    B, C = constants.get(1), constants.get(2)
    has_c = len(node.input) > 2 and bool(node.input[2])
    if B is None or B.ndim != 2 or B.dtype not in COMPILED or (has_c and C is None):
        return None
    dtype = B.dtype
    b = B.T if attrs.get("transB", 0) else B
    k, n = b.shape
    beta = attrs.get("beta", 1.0)
    bias = None
    if C is not None and beta != 0.0:
        if C.dtype != dtype or C.size != n or C.ndim > 2 or C.ndim == 2 and C.shape[0] != 1:
            return None
        bias = np.ascontiguousarray(C.reshape(n) * dtype.type(beta), dtype)
    act = activation_args(attrs.get("activation", ""), attrs.get("activation_params"), dtype)
    if act is None:
        return None
    general = fused_gemm if node.domain == "onnxkit" else gemm
    return prepared_product(general, (B, C), b, bias, dtype.type(attrs.get("alpha", 1.0)),
                            act, bool(attrs.get("transA", 0)), 2, node.op_type)


gemm.prepare = _prepare_gemm
fused_gemm.prepare = _prepare_gemm
