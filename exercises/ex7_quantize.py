"""Exercise 7: quantize a model's weights to int8 and bound the error it makes.

Symmetric per-tensor quantization keeps one float ``scale`` per tensor and int8 values:

    scale = max |w| / 127          (1.0 for an all-zero w: any scale works, none divides by 0)
    q     = round(w / scale)       rounding half to even, as ONNX's QuantizeLinear does
    w ~ q * scale                  each weight off by at most scale / 2

ONNX runs such a model with ``DequantizeLinear(q, scale)`` (y = q * scale) in front of
the MatMul: the weights are stored four times smaller. Background:
https://onnx.ai/onnx/operators/onnx__QuantizeLinear.html

Check your work:   python -m exercises.check 7.1
"""

from __future__ import annotations

import numpy as np
import onnx
import onnx.helper  # noqa: F401  (for your model)
import onnx.numpy_helper  # noqa: F401


def quantize_int8(w: np.ndarray) -> tuple[np.ndarray, np.float32]:
    """``(q, scale)``: q an int8 array of w's shape in [-127, 127], scale a np.float32."""
    # ## Task 7.1
    # Hint: np.rint rounds half to even; compute in float32 as the runtimes do.
    raise NotImplementedError("Need to implement for Task 7.1")


def quantized_matmul_model(w: np.ndarray) -> onnx.ModelProto:
    """A model ``y = x @ w`` importing opset 18 (ir_version=8) whose weights are stored as
    int8: initializers ``q`` (int8) and ``scale`` (a float32 scalar) from quantize_int8,
    ``DequantizeLinear(q, scale)`` then ``MatMul(x, ...)``. x is float[N, K], y float[N, M]."""
    # ## Task 7.2
    raise NotImplementedError("Need to implement for Task 7.2")


def error_bound(x: np.ndarray, scale: float) -> np.ndarray:
    """The largest |y - x @ w| the quantized model can make, per row of y (before float
    rounding): each weight is off by at most scale / 2, and row n of y adds K of them,
    each multiplied by x[n, k]. An array of shape [N]."""
    # ## Task 7.2
    raise NotImplementedError("Need to implement for Task 7.2")
