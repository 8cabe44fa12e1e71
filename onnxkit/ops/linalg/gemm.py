"""Gemm: Y = alpha * A' @ B' + beta * C, with A' = A.T if transA, B' = B.T if transB.

    A' is [M, K], B' is [K, N]; C broadcasts to [M, N] (versions 7+; in versions 1 and 6
    only when broadcast=1, otherwise C must be [M, N]); C is optional from version 11.

https://onnx.ai/onnx/operators/onnx__Gemm.html
"""

import numpy as np

from onnxkit.errors import KernelError
from onnxkit.ops.linalg._precision import widened
from onnxkit.ops.registry import op
from onnxkit.core.limits import check_allocation


def _gemm(A, B, C, alpha, beta, transA, transB):
    if A.ndim != 2 or B.ndim != 2:
        raise KernelError(f"Gemm needs 2-D A and B, got shapes {list(A.shape)} and {list(B.shape)}")
    a = widened(A).T if transA else widened(A)
    b = widened(B).T if transB else widened(B)
    if a.shape[1] != b.shape[0]:
        raise KernelError(
            f"Gemm: A' is {list(a.shape)} and B' is {list(b.shape)} (transA={transA}, "
            f"transB={transB}); their inner dimensions differ"
        )
    check_allocation((a.shape[0], b.shape[1]), np.result_type(a, b), "Gemm output")
    if C is not None:
        try:
            fits = np.broadcast_shapes(C.shape, (a.shape[0], b.shape[1])) == (a.shape[0], b.shape[1])
        except ValueError:
            fits = False
        if not fits:
            raise KernelError(f"Gemm: C of shape {list(C.shape)} does not broadcast to "
                              f"[{a.shape[0]}, {b.shape[1]}]")
    y = a @ b
    if alpha != 1.0:
        y = alpha * y
    if C is not None and beta != 0.0:
        c = widened(C)
        y = y + (c if beta == 1.0 else beta * c)
    return np.asarray(y).astype(A.dtype, copy=False)


@op("Gemm", 1, 6)
def gemm_v1(A, B, C, *, alpha=1.0, beta=1.0, broadcast=0, transA=0, transB=0):
    m = A.shape[1] if transA else A.shape[0]
    n = B.shape[0] if transB else B.shape[1]
    if not broadcast and C.shape != (m, n):
        raise KernelError(f"Gemm: C has shape {list(C.shape)}, expected [{m}, {n}] (broadcast=0)")
    return _gemm(A, B, C, alpha, beta, transA, transB)


@op("Gemm", 7, 9, 11, 13)
def gemm(A, B, C=None, *, alpha=1.0, beta=1.0, transA=0, transB=0):
    return _gemm(A, B, C, alpha, beta, transA, transB)
