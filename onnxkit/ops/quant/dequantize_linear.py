"""DequantizeLinear: y = (x - x_zero_point) * x_scale.

The scale is per tensor, per axis or blocked, as in QuantizeLinear. The output type is
``output_dtype`` when set (version 23+), else the scale's type; int32 inputs have no
zero point. https://onnx.ai/onnx/operators/onnx__DequantizeLinear.html
"""

import numpy as np

from onnxkit.ops.quant._quant import broadcast_param, dtype_of_attribute
from onnxkit.ops.registry import op


@op("DequantizeLinear", 23, 24, 25, 28)
def dequantize_linear(x, x_scale, x_zero_point=None, *, axis=1, block_size=0, output_dtype=0):
    out = dtype_of_attribute(output_dtype, "output_dtype") if output_dtype else x_scale.dtype
    if str(out) not in ("float16", "bfloat16", "float32", "float64"):
        out = np.dtype(np.float32)
    scale = broadcast_param(x_scale, x.shape, axis, block_size, "x_scale").astype(np.float32)
    shifted = x.astype(np.float32)
    if x_zero_point is not None:
        shifted = shifted - broadcast_param(x_zero_point, x.shape, axis, block_size,
                                            "x_zero_point").astype(np.float32)
    return (shifted * scale).astype(out)


@op("DequantizeLinear", 21)
def dequantize_linear_21(x, x_scale, x_zero_point=None, *, axis=1, block_size=0):
    return dequantize_linear(x, x_scale, x_zero_point, axis=axis, block_size=block_size)


@op("DequantizeLinear", 13, 19)
def dequantize_linear_13(x, x_scale, x_zero_point=None, *, axis=1):
    return dequantize_linear(x, x_scale, x_zero_point, axis=axis)


@op("DequantizeLinear", 10)
def dequantize_linear_10(x, x_scale, x_zero_point=None):
    return dequantize_linear(x, x_scale, x_zero_point)
