"""onnxkit::FusedMatMul: MatMul of operands optionally transposed on their last two axes,
an optional bias added along the last axis, an activation.

    A' = swap the last two axes of A if transA else A      (the same for B and transB)
    Y = activation(MatMul(A', B') + Bias)

MatMul's numpy-style batching is unchanged; Bias broadcasts against the product. A
transposed operand must have rank 2 or more (its batch axes stay where they are).
https://onnx.ai/onnx/operators/onnx__MatMul.html ; see docs/onnxkit-domain.md
"""

import numpy as np

from onnxkit.errors import KernelInputError
from onnxkit.ops.fused._common import activate
from onnxkit.ops.linalg._precision import widened
from onnxkit.ops.registry import op


def transposed(x, trans: int, name: str):
    """x with its last two axes swapped (a view) when ``trans``, else x."""
    if not trans:
        return x
    if np.ndim(x) < 2:
        raise KernelInputError(f"FusedMatMul: trans{name}=1 needs {name} of rank 2 or more, "
                               f"got shape {list(np.shape(x))}")
    return np.swapaxes(x, -1, -2)


@op("FusedMatMul", 1, domain="onnxkit")
def fused_matmul(A, B, Bias=None, *, activation="", activation_params=None, transA=0, transB=0):
    A, B = transposed(A, transA, "A"), transposed(B, transB, "B")
    # float16 in float64, as MatMul: numpy's float16 matmul has no BLAS (tens of times slower)
    Y = np.matmul(widened(A), widened(B)) if A.dtype == np.float16 else np.matmul(A, B)
    if Bias is not None:
        Y = np.add(Y, Bias)
    return activate(Y.astype(A.dtype, copy=False), activation, activation_params)
