"""MatMul and onnxkit::FusedMatMul on the ``cpu`` executor.

    Y = activation(A @ B + Bias)       (MatMul: no bias, no activation)

    A (..., M, K) @ B (K, N), A contiguous:  one BLAS call on A seen as (prod(...) * M, K)
    A (..., M, K) @ B (..., K, N), the same leading axes (or B's all 1):
                                             one batch of products on the Numba threads
    other batched shapes:                    numpy.matmul into a reused buffer
    Bias of shape (N,) and the activation:   one pass after the product (``_epilogue``)

1-D operands, non-float types and other bias shapes run the reference kernel.
A node whose B (and Bias) are initializers is prepared with the plan (``prepare``): a
product of few rows (a decoder step) is then one compiled call, product, bias and
activation (``_small_product``).
https://onnx.ai/onnx/operators/onnx__MatMul.html
"""

from __future__ import annotations

import numpy as np

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._blas import matmul as blas_matmul
from onnxkit.kernels.cpu._buffers import empty
from onnxkit.kernels.cpu._dtypes import COMPILED
from onnxkit.kernels.cpu._epilogue import epilogue_cols
from onnxkit.kernels.cpu._route import fall_back
from onnxkit.kernels.cpu._small_product import activation_args, prepared_product
from onnxkit.ops.fused.fused_matmul import fused_matmul as reference_fused_matmul, transposed
from onnxkit.ops.linalg.matmul import matmul as reference_matmul
from onnxkit.ops.registry import op



def matmul_fast(A, B, Bias=None, activation="", params=None):
    """The fast path, or None for the cases left to the reference kernel."""
    if A.dtype not in COMPILED or B.dtype != A.dtype or A.ndim < 2 or B.ndim < 2:
        return None
    k, n = B.shape[-2:]
    if A.shape[-1] != k or A.size == 0 or B.size == 0:
        return None
    if Bias is not None and (Bias.dtype != A.dtype or Bias.size != n or Bias.ndim > 1
                             and Bias.shape != (1,) * (Bias.ndim - 1) + (n,)):
        return None
    if B.ndim == 2:  # a layer's weights: numpy's broadcast_shapes costs microseconds
        lead = A.shape[:-2]
    else:
        try:
            lead = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
        except ValueError:
            return None
    out_shape = lead + (A.shape[-2], n)
    if Bias is not None and len(out_shape) < Bias.ndim:
        return None
    Y = empty(out_shape, A.dtype)
    if B.ndim == 2 and A.flags.c_contiguous:
        blas_matmul(A.reshape(-1, k), B, Y.reshape(-1, n))
    elif len(lead) > 1 and A.shape[:-2] == lead and B.shape[:-2] in (lead, (1,) * len(lead)):
        # 4-D and up (attention's Q @ K^T unfused): one batch, not numpy's matmul, which
        # gets one BLAS thread during a run (docs/cpu.md)
        b = B.reshape(B.shape[-2:]) if B.shape[:-2] != lead else B.reshape((-1,) + B.shape[-2:])
        blas_matmul(A.reshape((-1,) + A.shape[-2:]), b, Y.reshape((-1,) + Y.shape[-2:]))
    else:
        blas_matmul(A, B, Y)
    if Bias is None and not activation:
        return Y
    bias = None if Bias is None else np.ascontiguousarray(Bias.reshape(n))
    return epilogue_cols(Y.reshape(-1, n), bias, None, activation, params).reshape(out_shape)


@op("MatMul", 1, 9, 13, registry=CPU)
def matmul(A, B):
    Y = matmul_fast(A, B)
    return fall_back(reference_matmul, A, B) if Y is None else Y


@op("FusedMatMul", 1, domain="onnxkit", registry=CPU)
def fused_matmul(A, B, Bias=None, *, activation="", activation_params=None, transA=0, transB=0):
    # transA / transB: swapped views, which the BLAS calls read as they lie (``_blas._layout``)
    A, B = transposed(A, transA, "A"), transposed(B, transB, "B")
    Y = matmul_fast(A, B, Bias, activation, activation_params)
    if Y is None:
        return fall_back(reference_fused_matmul, A, B, Bias, activation=activation,
                         activation_params=activation_params)
    return Y


def _prepare_matmul(node, attrs: dict, constants: dict, shapes: dict):
    """MatMul's and FusedMatMul's plan-time hook: the small-product call
    (``_small_product``) when B is a 2-D initializer and Bias absent or an initializer
    of n values."""
    B, Bias = constants.get(1), constants.get(2)
    has_bias = len(node.input) > 2 and bool(node.input[2])
    if B is None or B.ndim != 2 or B.dtype not in COMPILED or (has_bias and Bias is None) \
            or attrs.get("transA", 0):
        return None
    dtype = B.dtype
    b = B.T if attrs.get("transB", 0) else B
    n = b.shape[1]
    bias = None
    if Bias is not None:
        if Bias.dtype != dtype or Bias.size != n or Bias.ndim != 1:
            return None
        bias = np.ascontiguousarray(Bias)
    act = activation_args(attrs.get("activation", ""), attrs.get("activation_params"), dtype)
    if act is None:
        return None
    general = fused_matmul if node.domain == "onnxkit" else matmul
    return prepared_product(general, (B, Bias), b, bias, dtype.type(1), act, False, 0,
                            node.op_type)


matmul.prepare = _prepare_matmul
fused_matmul.prepare = _prepare_matmul
