"""onnxkit::MatMulIntegerToFloat, DynamicQuantizeMatMul and QuantizeDequantize on the
``cpu`` executor: the unfused chain's own cpu kernels, one after the other.

    DynamicQuantizeMatMul:  a, a_scale, a_zero = DynamicQuantizeLinear (A)    (quantized)
    both products:          p = MatMulInteger (a, B, a_zero, b_zero)          (quantized_matmul)
                            Y = Cast (p) * (a_scale * b_scale) [+ bias]       in place
    QuantizeDequantize:     DequantizeLinear (QuantizeLinear (x, ...), ...)   one pass

Every step is what the unfused chain runs on this executor, and those kernels give the
reference's bits, so fused and unfused agree to the bit. The integer product comes as
exact integers in float32 (or float64, ``quantized_matmul.exact_dtype``): float32 is the
Cast's result already; float64 goes through int32 as MatMulInteger's output does. The
scaling is float32 arithmetic in place, each step rounded once as the reference's Mul and
Add are; other types run the reference's tail. B's shifted copy for the integer product
is made once per node when B is an initializer (``prepare``); then a small product runs
the whole chain in one compiled call (``_small_quant``), the same operations.
QuantizeDequantize with per-tensor float32 scales is one compiled pass of both ops' float32
steps (``_round_trip``); other cases run the two kernels.
https://onnx.ai/onnx/operators/onnx__MatMulInteger.html ; docs/onnxkit-domain.md
"""

from __future__ import annotations

import numpy as np
from numba import njit

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._buffers import empty, read_only
from onnxkit.kernels.cpu._route import fall_back, note
from onnxkit.kernels.cpu._small_quant import Vectors, dynamic_product, integer_product
from onnxkit.kernels.cpu._threads import run_parts
from onnxkit.kernels.cpu.quantized import (INTEGERS, dequantize_linear_13,
                                           dynamic_quantize_linear, quantize_linear_13)
from onnxkit.kernels.cpu.quantized_matmul import PreparedProduct
from onnxkit.ops.fused.quant_matmul import scaled
from onnxkit.ops.quant import matmul_integer as ref_mmi
from onnxkit.ops.quant._quant import INT_RANGES
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
    y = _one_pass(x, y_scale, y_zero_point, x_scale, x_zero_point)
    if y is not None:
        return y
    return dequantize_linear_13(quantize_linear_13(x, y_scale, y_zero_point), x_scale,
                                x_zero_point)


CHUNK = 1 << 12  # values per part of ``_round_trip``


def _scalar(value, dtype) -> bool:
    return value is not None and np.size(value) == 1 and np.asarray(value).dtype == dtype


def _one_pass(x, y_scale, y_zero_point, x_scale, x_zero_point):
    """QuantizeDequantize of float32 x with per-tensor float32 scales and 8 / 16-bit zero
    points of one type in one compiled pass (``_round_trip``), or None."""
    q_type = np.dtype(np.uint8) if y_zero_point is None else np.asarray(y_zero_point).dtype
    if (x.dtype != F32 or x.size == 0 or q_type not in INTEGERS
            or not _scalar(y_scale, F32) or not _scalar(x_scale, F32)
            or not (y_zero_point is None or np.size(y_zero_point) == 1)
            or not (x_zero_point is None or _scalar(x_zero_point, q_type))):
        return None
    low, high = INT_RANGES[q_type]
    flat = read_only(np.ascontiguousarray(x).reshape(-1))
    y = empty(x.shape, F32)
    run_parts(_round_trip, -(-flat.size // CHUNK), flat.size, flat,
              np.float32(np.asarray(y_scale).reshape(())), _as_f32(y_zero_point), np.float32(low), np.float32(high),
              np.float32(np.asarray(x_scale).reshape(())), _as_f32(x_zero_point), y.reshape(-1))
    return y


def _as_f32(zero_point):
    return np.float32(0) if zero_point is None else np.float32(np.asarray(zero_point).reshape(()))


@njit(cache=True, nogil=True, error_model="numpy")
def _round_trip(x, scale, zero, low, high, back_scale, back_zero, y, lo, hi):
    """y = (clip(rint(x / scale) + zero, low, high) - back_zero) * back_scale over the
    values of parts [lo, hi) of ``CHUNK``: QuantizeLinear's and DequantizeLinear's float32
    steps (``quantized``), the quantized value an exact integer in float32."""
    for i in range(lo * CHUNK, min(hi * CHUNK, x.size)):
        v = np.rint(x[i] / scale) + zero
        if v != v:
            v = low - low  # NaN: 0, as QuantizeLinear's
        y[i] = (min(max(v, low), high) - back_zero) * back_scale


def _prepare(dynamic: bool, b_zero_index: int):
    def prepare(node, attrs, constants, shapes):
        return PreparedQuantProduct(dynamic, constants.get(1), constants.get(b_zero_index),
                                    tuple(constants.values()))
    return prepare


matmul_integer_to_float.prepare = _prepare(False, 5)
dynamic_quantize_matmul.prepare = _prepare(True, 3)
