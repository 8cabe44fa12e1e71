"""onnxkit::MatMulIntegerToFloat, DynamicQuantizeMatMul and QuantizeDequantize on the
``cpu`` executor: the unfused chain's own cpu kernels, one after the other.

    DynamicQuantizeMatMul:  a, a_scale, a_zero = DynamicQuantizeLinear (A)    (quantized)
    both products:          p = MatMulInteger (a, B, a_zero, b_zero)          (quantized_matmul)
                            Y = Cast (p) * (a_scale * b_scale) [+ bias]       in place
    QuantizeDequantize:     DequantizeLinear (QuantizeLinear (x, ...), ...)   (quantized)

Every step is what the unfused chain runs on this executor, and those kernels give the
reference's bits, so fused and unfused agree to the bit. The integer product comes as
exact integers in float32 (or float64, ``quantized_matmul.exact_dtype``): float32 is the
Cast's result already; float64 goes through int32 as MatMulInteger's output does. The
scaling is float32 arithmetic in place, each step rounded once as the reference's Mul and
Add are; other types run the reference's tail. B's shifted copy for the integer product
is made once per node when B is an initializer (``prepare``); then a small product runs
the whole chain in one compiled call (``_small_quant``), the same operations.
https://onnx.ai/onnx/operators/onnx__MatMulInteger.html ; docs/onnxkit-domain.md
"""

from __future__ import annotations

import numpy as np

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._route import fall_back, note
from onnxkit.kernels.cpu._small_quant import Vectors, dynamic_product, integer_product
from onnxkit.kernels.cpu.quantized import (dequantize_linear_13, dynamic_quantize_linear,
                                           quantize_linear_13)
from onnxkit.kernels.cpu.quantized_matmul import PreparedProduct
from onnxkit.ops.fused.quant_matmul import scaled
from onnxkit.ops.quant import matmul_integer as ref_mmi
from onnxkit.ops.registry import op


F32 = np.dtype(np.float32)
SMALL = "one call"  # what the profiler shows for a product ``_small_quant`` ran


class PreparedQuantProduct:
    """One MatMulIntegerToFloat (``dynamic`` False) or DynamicQuantizeMatMul node."""

    def __init__(self, dynamic: bool, b=None, b_zero=None, fixed: tuple = ()):
        self.dynamic = dynamic
        self.product = PreparedProduct(False, b, b_zero)
        self.vectors = Vectors(fixed)  # b_scale and bias as the one call reads them

    def __call__(self, *inputs):
        if self.dynamic:
            A, B, b_scale, b_zero, bias = (list(inputs) + [None] * 5)[:5]
        else:
            a, B, a_scale, b_scale, a_zero, b_zero, bias = (list(inputs) + [None] * 7)[:7]
        constant = self.product.constant
        if constant is not None and B is constant[0] and b_zero is constant[1]:
            # a small product with B an initializer: the whole chain in one call
            Y = (dynamic_product(A, constant[2], self.vectors, b_scale, bias) if self.dynamic
                 else integer_product(a, a_scale, a_zero, constant[2], self.vectors, b_scale,
                                      bias))
            if Y is not None:
                note(SMALL)
                return Y
        if self.dynamic:
            a, a_scale, a_zero = dynamic_quantize_linear(A)
        acc = self.product.product(a, a_zero, B, b_zero)
        if acc is None:
            return scaled(fall_back(ref_mmi.matmul_integer, a, B, a_zero, b_zero), a_scale,
                          b_scale, bias)
        if not _float32(a_scale, b_scale, bias):
            return scaled(acc.astype(np.int32), a_scale, b_scale, bias)
        Y = acc if acc.dtype == F32 else acc.astype(np.int32).astype(F32)
        np.multiply(Y, np.multiply(a_scale, b_scale), out=Y)
        if bias is not None:
            np.add(Y, bias, out=Y)
        return Y


def _float32(a_scale, b_scale, bias) -> bool:
    """Scales and bias float32, of rank <= 1 (so the product keeps its shape)."""
    return all(x is None or (x.dtype == F32 and x.ndim <= 1) for x in (a_scale, b_scale, bias))


@op("MatMulIntegerToFloat", 1, domain="onnxkit", registry=CPU)
def matmul_integer_to_float(A, B, a_scale, b_scale, a_zero_point=None, b_zero_point=None,
                            bias=None):
    return PreparedQuantProduct(False)(A, B, a_scale, b_scale, a_zero_point, b_zero_point, bias)


@op("DynamicQuantizeMatMul", 1, domain="onnxkit", registry=CPU)
def dynamic_quantize_matmul(A, B, b_scale, b_zero_point=None, bias=None):
    return PreparedQuantProduct(True)(A, B, b_scale, b_zero_point, bias)


@op("QuantizeDequantize", 1, domain="onnxkit", registry=CPU)
def quantize_dequantize(x, y_scale, y_zero_point, x_scale, x_zero_point=None):
    return dequantize_linear_13(quantize_linear_13(x, y_scale, y_zero_point), x_scale,
                                x_zero_point)


def _prepare(dynamic: bool, b_zero_index: int):
    def prepare(node, attrs, constants, shapes):
        return PreparedQuantProduct(dynamic, constants.get(1), constants.get(b_zero_index),
                                    tuple(constants.values()))
    return prepare


matmul_integer_to_float.prepare = _prepare(False, 5)
dynamic_quantize_matmul.prepare = _prepare(True, 3)
