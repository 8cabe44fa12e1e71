"""com.microsoft QLinearAdd and QLinearMul: elementwise, numpy broadcasting, 8-bit.

    a = (A - A_zero_point) * A_scale;  b = (B - B_zero_point) * B_scale      (float32)
    QLinearAdd:  C = saturate(round((a + b) / C_scale) + C_zero_point)
    QLinearMul:  C = saturate(round((A - za) * (B - zb) * (A_scale * B_scale / C_scale)
                                    + C_zero_point))       (the zero point added before rounding)

round is half to even; C has A's type. onnxruntime's vector kernels round the same
values through fixed-point multipliers and may land one step away on ties.
https://github.com/microsoft/onnxruntime/blob/main/docs/ContribOperators.md#com.microsoft.QLinearAdd
"""

import numpy as np

from onnxkit.errors import InputError
from onnxkit.ops.quant._contrib import (F32, MS_DOMAIN, dequantized, eight_bit, quantized,
                                        saturated, scale_of, zero_point_of)
from onnxkit.ops.registry import op


def _operands(A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale, C_zero_point):
    eight_bit(A, "A")
    if np.asarray(B).dtype != A.dtype:
        raise InputError(f"A is {A.dtype} but B is {np.asarray(B).dtype}; they must agree")
    try:
        np.broadcast_shapes(A.shape, B.shape)
    except ValueError:
        raise InputError(f"A {list(A.shape)} and B {list(B.shape)} do not broadcast") from None
    return (scale_of(A_scale, "A_scale"), zero_point_of(A_zero_point, A.dtype, "A_zero_point"),
            scale_of(B_scale, "B_scale"), zero_point_of(B_zero_point, A.dtype, "B_zero_point"),
            scale_of(C_scale, "C_scale"), zero_point_of(C_zero_point, A.dtype, "C_zero_point"))


@op("QLinearAdd", 1, domain=MS_DOMAIN)
def qlinear_add(A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale, C_zero_point=None):
    sa, za, sb, zb, sc, zc = _operands(A, A_scale, A_zero_point, B, B_scale, B_zero_point,
                                       C_scale, C_zero_point)
    return quantized(dequantized(A, sa, za) + dequantized(B, sb, zb), sc, zc, A.dtype)


@op("QLinearMul", 1, domain=MS_DOMAIN)
def qlinear_mul(A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale, C_zero_point=None):
    sa, za, sb, zb, sc, zc = _operands(A, A_scale, A_zero_point, B, B_scale, B_zero_point,
                                       C_scale, C_zero_point)
    product = (A.astype(np.int32) - za) * (B.astype(np.int32) - zb)  # |.| <= 2**16: exact
    return saturated(np.rint(product.astype(F32) * (sa * sb / sc) + F32(zc)), A.dtype)
