"""onnxkit::FusedMatMul: MatMul, an optional bias added along the last axis, an activation.

    Y = activation(MatMul(A, B) + Bias)

MatMul's numpy-style batching is unchanged; Bias broadcasts against the product.
https://onnx.ai/onnx/operators/onnx__MatMul.html ; see docs/onnxkit-domain.md
"""

import numpy as np

from onnxkit.ops.fused._common import activate
from onnxkit.ops.linalg._precision import widened
from onnxkit.ops.registry import op


@op("FusedMatMul", 1, domain="onnxkit")
def fused_matmul(A, B, Bias=None, *, activation="", activation_params=None):
    # float16 in float64, as MatMul: numpy's float16 matmul has no BLAS (tens of times slower)
    Y = np.matmul(widened(A), widened(B)) if A.dtype == np.float16 else np.matmul(A, B)
    if Bias is not None:
        Y = np.add(Y, Bias)
    return activate(Y.astype(A.dtype, copy=False), activation, activation_params)
