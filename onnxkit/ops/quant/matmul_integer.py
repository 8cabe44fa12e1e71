"""MatMulInteger: exact int32 matrix product of 8-bit tensors with zero points.

    Y = (A - a_zero_point) @ (B - b_zero_point)        numpy-style batched matmul

a_zero_point is a scalar or one value per row of A; b_zero_point a scalar or one value
per column of B. https://onnx.ai/onnx/operators/onnx__MatMulInteger.html
"""

import numpy as np

from onnxkit.errors import InputError
from onnxkit.ops.linalg.matmul import check_matmul
from onnxkit.ops.registry import op


def centered(a: np.ndarray, zero_point, rows: bool, what: str) -> np.ndarray:
    """a - zero_point as float64 (exact); a 1-D zero point runs along rows or columns."""
    out = a.astype(np.float64)
    if zero_point is None:
        return out
    zp = np.asarray(zero_point).astype(np.float64)
    if zp.size == 1:
        return out - zp.reshape(())
    if zp.ndim == 1:
        axis = -2 if rows else -1
        if a.ndim < 2 or a.shape[axis] != zp.size:
            raise InputError(f"{what} has {zp.size} values; the operand's "
                             f"{'rows' if rows else 'columns'} number {a.shape[axis] if a.ndim >= 2 else 0}")
        return out - (zp.reshape(-1, 1) if rows else zp)
    try:
        fits = np.broadcast_shapes(a.shape, zp.shape) == a.shape
    except ValueError:
        fits = False
    if not fits:
        raise InputError(f"{what} of shape {list(zp.shape)} does not fit the operand {list(a.shape)}")
    return out - zp


def exact_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Product of integer-valued float64 arrays; exact while sums stay below 2**53."""
    if a.ndim == 0 or b.ndim == 0:
        raise InputError("MatMul operands must have rank >= 1")
    check_matmul(a.shape, b.shape, np.float64, "integer MatMul output")
    return np.matmul(a, b)


@op("MatMulInteger", 10)
def matmul_integer(A, B, a_zero_point=None, b_zero_point=None):
    a = centered(A, a_zero_point, True, "a_zero_point")
    b = centered(B, b_zero_point, False, "b_zero_point")
    return exact_matmul(a, b).astype(np.int32)
