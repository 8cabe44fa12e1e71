"""QuantizeLinear: y = saturate(round(x / y_scale) + y_zero_point).

Rounding is half to even. The zero point's type (else ``output_dtype``, else uint8) is
the output type; integer types saturate to their range, float8 types saturate to their
largest finite value when ``saturate`` = 1. The scale is per tensor (scalar), per axis
(1-D along ``axis``) or blocked (``block_size`` elements along ``axis`` share an entry).
The division runs in the scale's type, or in ``precision`` when set (version 23+).
https://onnx.ai/onnx/operators/onnx__QuantizeLinear.html
"""

import numpy as np

from onnxkit.ops.quant._quant import (
    INT_RANGES, broadcast_param, dtype_of_attribute, saturate_integer, target_dtype,
    to_small_float,
)
from onnxkit.ops.registry import op


@op("QuantizeLinear", 23, 24, 25, 28)
def quantize_linear(x, y_scale, y_zero_point=None, *, axis=1, block_size=0, output_dtype=0,
                    precision=0, saturate=1):
    out = target_dtype(y_zero_point, output_dtype)
    scale = broadcast_param(y_scale, x.shape, axis, block_size, "y_scale")
    work = dtype_of_attribute(precision, "precision") if precision else scale.dtype
    if str(work) not in ("float16", "bfloat16", "float32", "float64"):
        work = np.dtype(np.float32)  # int32 or float8e8m0 scales divide in float32
    scaled = (x.astype(work) / scale.astype(work)).astype(np.float32)
    zero = None if y_zero_point is None else broadcast_param(
        y_zero_point, x.shape, axis, block_size, "y_zero_point").astype(np.float32)
    if out in INT_RANGES:
        q = np.rint(scaled)
        if zero is not None:
            q = q + zero
        return saturate_integer(np.nan_to_num(q), out)
    if zero is not None:
        scaled = scaled + zero
    return to_small_float(scaled, out, bool(saturate))


@op("QuantizeLinear", 21)
def quantize_linear_21(x, y_scale, y_zero_point=None, *, axis=1, block_size=0, output_dtype=0,
                       saturate=1):
    return quantize_linear(x, y_scale, y_zero_point, axis=axis, block_size=block_size,
                           output_dtype=output_dtype, saturate=saturate)


@op("QuantizeLinear", 19)
def quantize_linear_19(x, y_scale, y_zero_point=None, *, axis=1, saturate=1):
    return quantize_linear(x, y_scale, y_zero_point, axis=axis, saturate=saturate)


@op("QuantizeLinear", 13)
def quantize_linear_13(x, y_scale, y_zero_point=None, *, axis=1):
    return quantize_linear(x, y_scale, y_zero_point, axis=axis)


@op("QuantizeLinear", 10)
def quantize_linear_10(x, y_scale, y_zero_point=None):
    return quantize_linear(x, y_scale, y_zero_point)
