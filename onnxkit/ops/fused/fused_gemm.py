"""onnxkit::FusedGemm: Gemm, then an activation.

    Y = activation(alpha * A' @ B' + beta * C)        (A' = A^T if transA, B' likewise)

https://onnx.ai/onnx/operators/onnx__Gemm.html ; see docs/onnxkit-domain.md
"""

import numpy as np

from onnxkit.ops.fused._common import activate
from onnxkit.ops.registry import op


@op("FusedGemm", 1, domain="onnxkit")
def fused_gemm(A, B, C=None, *, alpha=1.0, beta=1.0, transA=0, transB=0, activation="",
               activation_params=None):
    a = A.T if transA else A
    b = B.T if transB else B
    Y = alpha * np.matmul(a, b)
    if C is not None:
        Y = Y + beta * C
    return activate(Y.astype(A.dtype, copy=False), activation, activation_params)
