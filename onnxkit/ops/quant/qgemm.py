"""com.microsoft QGemm: Gemm of 8-bit matrices with an int32 bias, requantized or float.

    acc = (A' - a_zero_point) @ (B' - b_zero_point) + C       exact   (A' = A or A.T, B' too)
    scale[n] = alpha * a_scale * b_scale[n] / y_scale               (float32; no / without y_scale)
    Y = saturate(round(acc * scale) + y_zero_point)     with y_zero_point (Y has its type)
    Y = acc * scale                                     without it (float32)

b_scale and b_zero_point are scalars or one value per column of B'; C broadcasts to
(M, N). https://github.com/microsoft/onnxruntime/blob/main/docs/ContribOperators.md#com.microsoft.QGemm
"""

import numpy as np

from onnxkit.errors import InputError
from onnxkit.ops.quant._contrib import (F32, MS_DOMAIN, eight_bit, saturated, scale_of,
                                        zero_point_of)
from onnxkit.ops.registry import op


def per_column(value, n: int, what: str) -> np.ndarray:
    """A scalar or one value per column -> a 1-D array of 1 or ``n`` values."""
    value = np.asarray(value).reshape(-1)
    if value.size not in (1, n):
        raise InputError(f"{what} must hold 1 or {n} values (one per column), got {value.size}")
    return value


@op("QGemm", 1, domain=MS_DOMAIN)
def qgemm(A, a_scale, a_zero_point, B, b_scale, b_zero_point, C=None, y_scale=None,
          y_zero_point=None, *, alpha=1.0, transA=0, transB=0):
    eight_bit(A, "A")
    eight_bit(B, "B")
    if A.ndim != 2 or B.ndim != 2:
        raise InputError(f"A and B must be matrices, got {list(A.shape)} and {list(B.shape)}")
    a = A.T if transA else A
    b = B.T if transB else B
    if a.shape[1] != b.shape[0]:
        raise InputError(f"A' {list(a.shape)} and B' {list(b.shape)} do not multiply")
    n = b.shape[1]
    zb = per_column(b_zero_point if b_zero_point is not None else np.zeros(1, B.dtype), n,
                    "b_zero_point").astype(np.int64)
    za = zero_point_of(a_zero_point, A.dtype, "a_zero_point")
    # exact: float64 holds these sums (|.| <= 255 * 255 * K) without rounding
    acc = (a.astype(np.float64) - za) @ (b.astype(np.float64) - zb)
    if C is not None:
        try:
            acc = acc + np.broadcast_to(np.asarray(C, np.int64), acc.shape)
        except ValueError:
            raise InputError(f"C {list(np.shape(C))} does not broadcast to {list(acc.shape)}") from None
    scale = F32(alpha) * scale_of(a_scale, "a_scale") * per_column(b_scale, n, "b_scale").astype(F32)
    if y_scale is not None:
        scale = scale / scale_of(y_scale, "y_scale")
    acc = acc.astype(np.int64).astype(F32)  # onnxruntime's int32 accumulator, as float32
    if y_zero_point is None:
        return acc * scale
    zy = np.asarray(y_zero_point)
    return saturated(np.rint(acc * scale) + F32(zero_point_of(zy, zy.dtype, "y_zero_point")),
                     zy.dtype)
