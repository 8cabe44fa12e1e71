"""QLinearMatMul: matrix product of quantized tensors, requantized to y's type.

    acc = (a - a_zero_point) @ (b - b_zero_point)                    exact
    y = saturate(round(acc * (a_scale * b_scale / y_scale)) + y_zero_point)

round is half to even; the multiplier is computed in the scales' type.
https://onnx.ai/onnx/operators/onnx__QLinearMatMul.html
"""

import numpy as np

from onnxkit.ops.quant._quant import INT_RANGES
from onnxkit.ops.quant.matmul_integer import centered, exact_matmul
from onnxkit.ops.registry import op


@op("QLinearMatMul", 10, 21)
def qlinear_matmul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point):
    acc = exact_matmul(centered(a, a_zero_point, True, "a_zero_point"),
                       centered(b, b_zero_point, False, "b_zero_point"))
    scale_a = np.asarray(a_scale)
    if scale_a.ndim == 1 and scale_a.size > 1:  # per row of a
        scale_a = scale_a.reshape(-1, 1)
    multiplier = (scale_a * np.asarray(b_scale) / np.asarray(y_scale)).astype(np.float64)
    out_dtype = y_zero_point.dtype if y_zero_point is not None else a.dtype
    y = np.rint(acc * multiplier)
    if y_zero_point is not None:
        y = y + np.asarray(y_zero_point).astype(np.float64)
    low, high = INT_RANGES[np.dtype(out_dtype)]
    return np.clip(y, low, high).astype(out_dtype)
