"""MatMul: matrix product with numpy.matmul semantics.

    1-D operands gain a dimension (prepended for A, appended for B) that is removed after;
    leading (batch) dimensions broadcast:  [..., M, K] @ [..., K, N] -> [..., M, N]

https://onnx.ai/onnx/operators/onnx__MatMul.html
"""

import numpy as np

from onnxkit.errors import KernelError
from onnxkit.ops.linalg._precision import widened
from onnxkit.ops.registry import op


@op("MatMul", 1, 9, 13)
def matmul(A, B):
    if A.ndim == 0 or B.ndim == 0:
        raise KernelError(f"MatMul needs operands of rank >= 1, got shapes {list(A.shape)} and {list(B.shape)}")
    k_a = A.shape[-1]
    k_b = B.shape[0] if B.ndim == 1 else B.shape[-2]
    if k_a != k_b:
        raise KernelError(f"MatMul: inner dimensions differ: A {list(A.shape)} @ B {list(B.shape)}")
    return np.asarray(np.matmul(widened(A), widened(B))).astype(A.dtype, copy=False)
