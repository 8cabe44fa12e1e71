"""com.microsoft QLinearSigmoid and QLinearLeakyRelu: a float function on 8-bit values.

    x' = (X - X_zero_point) * X_scale                                     (float32)
    Y = saturate(round(f(x') / Y_scale) + Y_zero_point)
    f = sigmoid, or leaky relu: x' if x' >= 0 else alpha * x'

onnxruntime evaluates f once per possible input value (a 256-entry table); its sigmoid
is an approximation, so a value next to a rounding tie may come out one step apart.
https://github.com/microsoft/onnxruntime/blob/main/docs/ContribOperators.md#com.microsoft.QLinearSigmoid
"""

import numpy as np

from onnxkit.ops.quant._contrib import (F32, MS_DOMAIN, dequantized, eight_bit, quantized,
                                        scale_of, zero_point_of)
from onnxkit.ops.registry import op


def _apply(f, X, X_scale, X_zero_point, Y_scale, Y_zero_point):
    eight_bit(X, "X")
    x = dequantized(X, scale_of(X_scale, "X_scale"),
                    zero_point_of(X_zero_point, X.dtype, "X_zero_point"))
    return quantized(f(x), scale_of(Y_scale, "Y_scale"),
                     zero_point_of(Y_zero_point, X.dtype, "Y_zero_point"), X.dtype)


@op("QLinearSigmoid", 1, domain=MS_DOMAIN)
def qlinear_sigmoid(X, X_scale, X_zero_point, Y_scale, Y_zero_point=None):
    return _apply(lambda x: F32(1) / (F32(1) + np.exp(-x)), X, X_scale, X_zero_point,
                  Y_scale, Y_zero_point)


@op("QLinearLeakyRelu", 1, domain=MS_DOMAIN)
def qlinear_leaky_relu(X, X_scale, X_zero_point, Y_scale, Y_zero_point=None, *, alpha=0.01):
    return _apply(lambda x: np.where(x >= 0, x, x * F32(alpha)), X, X_scale, X_zero_point,
                  Y_scale, Y_zero_point)
