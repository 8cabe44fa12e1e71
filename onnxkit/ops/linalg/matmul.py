"""MatMul: matrix product with numpy.matmul semantics.

    1-D operands gain a dimension (prepended for A, appended for B) that is removed after;
    leading (batch) dimensions broadcast:  [..., M, K] @ [..., K, N] -> [..., M, N]

https://onnx.ai/onnx/operators/onnx__MatMul.html
"""

import numpy as np

from onnxkit.errors import KernelError
from onnxkit.ops.linalg._precision import widened
from onnxkit.ops.registry import op
from onnxkit.core.limits import check_allocation


def check_matmul(a_shape, b_shape, dtype, what: str = "MatMul output") -> None:
    """Check the [..., M, N] result of a numpy-style matmul before numpy allocates it."""
    a_shape, b_shape = tuple(a_shape), tuple(b_shape)
    if len(a_shape) == 0 or len(b_shape) == 0:
        raise KernelError(f"{what}: operands need rank >= 1, got shapes {list(a_shape)} "
                          f"and {list(b_shape)}")
    rows = a_shape[-2:-1]
    cols = b_shape[-1:] if len(b_shape) > 1 else ()
    try:
        batch = np.broadcast_shapes(a_shape[:-2], b_shape[:-2])
    except ValueError:
        raise KernelError(f"{what}: batch dimensions of {list(a_shape)} and {list(b_shape)} "
                          "do not broadcast") from None
    check_allocation(batch + rows + cols, dtype, what)


@op("MatMul", 1, 9, 13)
def matmul(A, B):
    if A.ndim == 0 or B.ndim == 0:
        raise KernelError(f"MatMul needs operands of rank >= 1, got shapes {list(A.shape)} and {list(B.shape)}")
    k_a = A.shape[-1]
    k_b = B.shape[0] if B.ndim == 1 else B.shape[-2]
    if k_a != k_b:
        raise KernelError(f"MatMul: inner dimensions differ: A {list(A.shape)} @ B {list(B.shape)}")
    a, b = widened(A), widened(B)
    check_matmul(A.shape, B.shape, np.result_type(a, b))
    return np.asarray(np.matmul(a, b)).astype(A.dtype, copy=False)
