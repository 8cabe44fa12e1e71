"""Quantization's elementwise ops on the ``cpu`` executor: one Numba pass each.

    QuantizeLinear      y = saturate(round(x / scale[c]) + zero[c])         float32 math
    DequantizeLinear    y = (x - zero[c]) * scale[c]                        float32 math
    DynamicQuantizeLinear   one pass for min / max, one to quantize (uint8)
    com.microsoft QLinearAdd / QLinearMul   same-shape (or one-value B) 8-bit operands

x is seen as (outer, C, inner): per tensor C = 1, per axis C = x.shape[axis]; the rows
(outer, c) are shared among the threads. Each kernel does the reference's float32
operations in the reference's order (round half to even, NaN to 0 before saturation),
so the answers are the same bits. What a kernel does not cover (blocked or float8 /
int4 quantization, other scale types, broadcasting) runs the reference kernel.
https://onnx.ai/onnx/operators/onnx__QuantizeLinear.html
"""

from __future__ import annotations

import numpy as np
from numba import njit

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._buffers import empty, read_only
from onnxkit.kernels.cpu._route import fall_back
from onnxkit.kernels.cpu._threads import run_parts
from onnxkit.ops.quant import dequantize_linear as ref_dq
from onnxkit.ops.quant import dynamic_quantize_linear as ref_dyn
from onnxkit.ops.quant import qlinear_binary as ref_binary
from onnxkit.ops.quant import quantize_linear as ref_q
from onnxkit.ops.quant._contrib import EIGHT_BIT, MS_DOMAIN
from onnxkit.ops.quant._quant import INT_RANGES, target_dtype
from onnxkit.ops.registry import op

F32 = np.float32
INTEGERS = tuple(np.dtype(t) for t in (np.uint8, np.int8, np.uint16, np.int16))
DEQUANTIZABLE = INTEGERS + (np.dtype(np.int32),)


# ---- the Numba kernels ----------------------------------------------------------------

def quantize_rows(x, scale, zero, low, high, y):
    """y[o, c, i] = clip(rint(x[o, c, i] / scale[c]) + zero[c], low, high) (NaN -> 0)."""
    run_parts(_quantize, x.shape[0] * x.shape[1], x.size, x, scale, zero, low, high, y)


@njit(cache=True, nogil=True, error_model="numpy")
def _quantize(x, scale, zero, low, high, y, lo, hi):
    channels = x.shape[1]
    for r in range(lo, hi):
        o, c = r // channels, r % channels
        s, z = scale[c], zero[c]
        for i in range(x.shape[2]):
            v = np.rint(x[o, c, i] / s) + z
            if v != v:
                v = low - low  # NaN: 0, as the reference's nan_to_num
            y[o, c, i] = min(max(v, low), high)


def dequantize_rows(x, scale, zero, y):
    """y[o, c, i] = (float32(x[o, c, i]) - zero[c]) * scale[c]."""
    run_parts(_dequantize, x.shape[0] * x.shape[1], x.size, x, scale, zero, y)


@njit(cache=True, nogil=True, error_model="numpy")
def _dequantize(x, scale, zero, y, lo, hi):
    channels = x.shape[1]
    for r in range(lo, hi):
        o, c = r // channels, r % channels
        s, z = scale[c], zero[c]
        for i in range(x.shape[2]):
            y[o, c, i] = (np.float32(x[o, c, i]) - z) * s


@njit(cache=True)
def min_max(x):
    """(min, max, any NaN) of a flat float32 array of at least one value."""
    lo = x[0]
    hi = x[0]
    nan = False
    for i in range(x.size):
        v = x[i]
        nan |= v != v
        lo = min(lo, v)
        hi = max(hi, v)
    return lo, hi, nan


BINARY_PART = 1 << 13  # values per part of the QLinearAdd / QLinearMul loops


@njit(cache=True, nogil=True, error_model="numpy")
def _qlinear_add(a, sa, za, b, sb, zb, sc, zc, low, high, y, lo, hi):
    """y = clip(rint((sa * (a - za) + sb * (b - zb)) / sc) + zc) over the parts [lo, hi)
    of ``BINARY_PART`` values; b of one value or a's size. a - za is an integer of at most
    9 bits: exact in float32 whichever way it is formed."""
    start, stop = lo * BINARY_PART, min(hi * BINARY_PART, a.size)
    a_, y_ = a[start:stop], y[start:stop]
    if b.size == a.size:
        b_ = b[start:stop]
        for i in range(a_.size):
            v = np.rint((sa * (np.float32(a_[i]) - za) + sb * (np.float32(b_[i]) - zb))
                        / sc) + zc
            v = v if v == v else low - low  # NaN: 0
            y_[i] = min(max(v, low), high)
    else:
        vb = sb * (np.float32(b[0]) - zb)
        for i in range(a_.size):
            v = np.rint((sa * (np.float32(a_[i]) - za) + vb) / sc) + zc
            v = v if v == v else low - low
            y_[i] = min(max(v, low), high)


@njit(cache=True, nogil=True, error_model="numpy")
def _qlinear_mul(a, za, b, zb, ratio, zc, low, high, y, lo, hi):
    """y = clip(rint((a - za) * (b - zb) * ratio + zc)) over parts [lo, hi); b of one value
    or a's size. The product of two 9-bit integers is exact in float32."""
    start, stop = lo * BINARY_PART, min(hi * BINARY_PART, a.size)
    a_, y_ = a[start:stop], y[start:stop]
    if b.size == a.size:
        b_ = b[start:stop]
        for i in range(a_.size):
            v = np.rint((np.float32(a_[i]) - za) * (np.float32(b_[i]) - zb) * ratio + zc)
            v = v if v == v else low - low
            y_[i] = min(max(v, low), high)
    else:
        vb = np.float32(b[0]) - zb
        for i in range(a_.size):
            v = np.rint((np.float32(a_[i]) - za) * vb * ratio + zc)
            v = v if v == v else low - low
            y_[i] = min(max(v, low), high)


# ---- drivers ------------------------------------------------------------------------

def as_rows(x: np.ndarray, axis: int, per_axis: bool) -> np.ndarray:
    """x seen as (outer, C, inner), C the quantization axis (1 for per tensor)."""
    if not per_axis:
        return x.reshape(1, 1, x.size)
    axis %= x.ndim
    outer = int(np.prod(x.shape[:axis], dtype=np.int64))
    return x.reshape(outer, x.shape[axis], -1)


def channel_params(scale, zero, x, axis):
    """(per_axis, scale (C,), zero (C,)) as float32, or None when the scale is neither one
    value (per tensor) nor one per index of ``axis`` (per axis)."""
    scale = np.asarray(scale)
    per_axis = scale.size != 1
    if per_axis and (scale.ndim != 1 or not -x.ndim <= axis < x.ndim
                     or scale.shape[0] != x.shape[axis]):
        return None
    if zero is not None and np.size(zero) != scale.size:
        return None
    s = np.ascontiguousarray(scale.reshape(-1), dtype=F32)
    z = (np.zeros(s.size, F32) if zero is None
         else np.ascontiguousarray(np.asarray(zero).reshape(-1), dtype=F32))
    return per_axis, read_only(s), read_only(z)


def quantize(x, y_scale, y_zero_point, axis, block_size, output_dtype, precision):
    """The fast QuantizeLinear, or None for the cases the reference serves."""
    if (x.dtype != F32 or np.asarray(y_scale).dtype != F32 or block_size
            or precision not in (0, 1) or x.size == 0):
        return None
    out = target_dtype(y_zero_point, output_dtype)  # (raises as the reference does)
    if out not in INTEGERS:
        return None
    params = channel_params(y_scale, y_zero_point, x, axis)
    if params is None:
        return None
    per_axis, scale, zero = params
    low, high = INT_RANGES[out]
    y = empty(x.shape, out)
    quantize_rows(read_only(as_rows(np.ascontiguousarray(x), axis, per_axis)), scale, zero,
                  F32(low), F32(high), as_rows(y, axis, per_axis))
    return y


def dequantize(x, x_scale, x_zero_point, axis, block_size, output_dtype):
    if (x.dtype not in DEQUANTIZABLE or np.asarray(x_scale).dtype != F32 or block_size
            or output_dtype not in (0, 1) or x.size == 0
            or (x_zero_point is not None and np.asarray(x_zero_point).dtype != x.dtype)):
        return None
    params = channel_params(x_scale, x_zero_point, x, axis)
    if params is None:
        return None
    per_axis, scale, zero = params
    y = empty(x.shape, F32)
    dequantize_rows(read_only(as_rows(np.ascontiguousarray(x), axis, per_axis)), scale, zero,
                    as_rows(y, axis, per_axis))
    return y


# ---- registered kernels -------------------------------------------------------------

@op("QuantizeLinear", 23, 24, 25, 28, registry=CPU)
def quantize_linear(x, y_scale, y_zero_point=None, *, axis=1, block_size=0, output_dtype=0,
                    precision=0, saturate=1):
    y = quantize(x, y_scale, y_zero_point, axis, block_size, output_dtype, precision)
    if y is None:
        return fall_back(ref_q.quantize_linear, x, y_scale, y_zero_point, axis=axis,
                         block_size=block_size, output_dtype=output_dtype, precision=precision,
                         saturate=saturate)
    return y


@op("QuantizeLinear", 21, registry=CPU)
def quantize_linear_21(x, y_scale, y_zero_point=None, *, axis=1, block_size=0, output_dtype=0,
                       saturate=1):
    return quantize_linear(x, y_scale, y_zero_point, axis=axis, block_size=block_size,
                           output_dtype=output_dtype, saturate=saturate)


@op("QuantizeLinear", 19, registry=CPU)
def quantize_linear_19(x, y_scale, y_zero_point=None, *, axis=1, saturate=1):
    return quantize_linear(x, y_scale, y_zero_point, axis=axis, saturate=saturate)


@op("QuantizeLinear", 13, registry=CPU)
def quantize_linear_13(x, y_scale, y_zero_point=None, *, axis=1):
    return quantize_linear(x, y_scale, y_zero_point, axis=axis)


@op("QuantizeLinear", 10, registry=CPU)
def quantize_linear_10(x, y_scale, y_zero_point=None):
    return quantize_linear(x, y_scale, y_zero_point)


@op("DequantizeLinear", 23, 24, 25, 28, registry=CPU)
def dequantize_linear(x, x_scale, x_zero_point=None, *, axis=1, block_size=0, output_dtype=0):
    y = dequantize(x, x_scale, x_zero_point, axis, block_size, output_dtype)
    if y is None:
        return fall_back(ref_dq.dequantize_linear, x, x_scale, x_zero_point, axis=axis,
                         block_size=block_size, output_dtype=output_dtype)
    return y


@op("DequantizeLinear", 21, registry=CPU)
def dequantize_linear_21(x, x_scale, x_zero_point=None, *, axis=1, block_size=0):
    return dequantize_linear(x, x_scale, x_zero_point, axis=axis, block_size=block_size)


@op("DequantizeLinear", 13, 19, registry=CPU)
def dequantize_linear_13(x, x_scale, x_zero_point=None, *, axis=1):
    return dequantize_linear(x, x_scale, x_zero_point, axis=axis)


@op("DequantizeLinear", 10, registry=CPU)
def dequantize_linear_10(x, x_scale, x_zero_point=None):
    return dequantize_linear(x, x_scale, x_zero_point)


@njit(cache=True, error_model="numpy")
def dynamic_quantize_small(x, y):
    """DynamicQuantizeLinear of a flat float32 x into y (uint8) in one call, the same
    float32 operations as the kernel's steps below: (scale, zero point, any NaN); y is
    not written when x holds a NaN."""
    low, high, nan = min_max(x)
    f0, f255 = np.float32(0), np.float32(255)
    if nan:
        return f0, f0, True
    hi = high if high > f0 else f0
    lo = low if low < f0 else f0
    scale = np.float32(1) if hi == lo else np.float32(hi - lo) / f255
    zero = np.rint(min(max(f0 - lo / scale, f0), f255))
    if zero != zero:  # an infinite x: 0 - inf / inf (the steps' uint8 cast gives 0)
        zero = f0
    for i in range(x.size):
        v = np.rint(x[i] / scale) + zero
        y[i] = min(max(v, f0), f255) if v == v else f0  # NaN -> 0, as _quantize
    return scale, zero, False


#: values below which DynamicQuantizeLinear is one call (``dynamic_quantize_small``): above,
#: the quantization is shared among the threads
SMALL_DYNAMIC = 1 << 15


@op("DynamicQuantizeLinear", 11, registry=CPU)
def dynamic_quantize_linear(x):
    if x.dtype != F32 or x.size == 0:
        return fall_back(ref_dyn.dynamic_quantize_linear, x)
    flat = read_only(np.ascontiguousarray(x).reshape(-1))
    if flat.size < SMALL_DYNAMIC:
        y = empty(x.shape, np.uint8)
        scale, zero, nan = dynamic_quantize_small(flat, y.reshape(-1))
        if nan:
            return fall_back(ref_dyn.dynamic_quantize_linear, x)
        return y, np.array(scale, dtype=F32), np.array(zero, dtype=np.uint8)
    low, high, nan = min_max(flat)
    if nan:
        return fall_back(ref_dyn.dynamic_quantize_linear, x)
    # the reference's scalar arithmetic, on the same float32 values
    hi, lo = F32(max(0.0, float(high))), F32(min(0.0, float(low)))
    scale = F32(1.0) if hi == lo else F32(hi - lo) / F32(255)
    zero = np.rint(np.clip(F32(0) - lo / scale, 0, 255))
    y = empty(x.shape, np.uint8)
    quantize_rows(flat.reshape(1, 1, -1), read_only(np.array([scale], F32)),
                  read_only(np.array([zero], F32)), F32(0), F32(255), y.reshape(1, 1, -1))
    return y, np.array(scale, dtype=F32), np.array(zero, dtype=np.uint8)


class PreparedBinary:
    """One com.microsoft QLinearAdd (``add``) or QLinearMul node: the float32 values the
    loop reads of its scales and zero points, worked out once per A type when they are
    initializers (``fixed``: their arrays, None for an absent zero point), else per call."""

    def __init__(self, add: bool, fixed: dict | None = None):
        self.add = add
        self.fixed = fixed
        self.memo = None  # (A's type, the loop's values or None: the reference serves)

    def __call__(self, A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale,
                 C_zero_point=None):
        args = (A_scale, A_zero_point, B_scale, B_zero_point, C_scale, C_zero_point)
        fixed = self.fixed is not None and all(
            a is self.fixed[i] for a, i in zip(args, (1, 2, 4, 5, 6, 7)))
        memo = self.memo
        if fixed and memo is not None and memo[0] == A.dtype:
            values = memo[1]
        else:
            values = self._values(A.dtype, *args)
            if fixed:
                self.memo = (A.dtype, values)
        if (values is None or A.dtype not in EIGHT_BIT or B.dtype != A.dtype or A.size == 0
                or not (B.shape == A.shape or (B.size == 1 and B.ndim <= A.ndim))):
            reference = ref_binary.qlinear_add if self.add else ref_binary.qlinear_mul
            return fall_back(reference, A, A_scale, A_zero_point, B, B_scale, B_zero_point,
                             C_scale, C_zero_point)
        y = empty(A.shape, A.dtype)
        a = read_only(np.ascontiguousarray(A).reshape(-1))
        b = read_only(np.ascontiguousarray(B).reshape(-1))
        run_parts(_qlinear_add if self.add else _qlinear_mul, -(-A.size // BINARY_PART),
                  A.size, a, *values[0], b, *values[1], y.reshape(-1))
        return y

    def _values(self, dtype, sa, za, sb, zb, sc, zc):
        """((A's), (B's and C's)) arguments of the loop, or None."""
        if not (all(np.size(s) == 1 and np.asarray(s).dtype == F32 for s in (sa, sb, sc))
                and all(z is None or (np.size(z) == 1 and np.asarray(z).dtype == dtype)
                        for z in (za, zb, zc))) or dtype not in EIGHT_BIT:
            return None
        low, high = INT_RANGES[dtype]
        if self.add:
            return ((F32(sa), _zero(za)),
                    (F32(sb), _zero(zb), F32(sc), _zero(zc), F32(low), F32(high)))
        ratio = F32(sa) * F32(sb) / F32(sc)
        return ((_zero(za),), (_zero(zb), ratio, _zero(zc), F32(low), F32(high)))


def _prepare_binary(add: bool):
    def prepare(node, attrs, constants, shapes):
        names = list(node.input) + [""] * (8 - len(node.input))
        fixed = {}
        for i in (1, 2, 4, 5, 6, 7):
            if not names[i]:
                fixed[i] = None
            elif i in constants:
                fixed[i] = constants[i]
            else:
                return PreparedBinary(add)  # a fed scale or zero point: per call
        return PreparedBinary(add, fixed)
    return prepare


def _zero(value) -> np.float32:
    """A zero point as float32 (8-bit values are exact in it)."""
    return F32(0 if value is None else np.asarray(value).reshape(()))


@op("QLinearAdd", 1, domain=MS_DOMAIN, registry=CPU)
def qlinear_add(A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale, C_zero_point=None):
    return PreparedBinary(True)(A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale,
                                C_zero_point)


@op("QLinearMul", 1, domain=MS_DOMAIN, registry=CPU)
def qlinear_mul(A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale, C_zero_point=None):
    return PreparedBinary(False)(A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale,
                                 C_zero_point)


qlinear_add.prepare = _prepare_binary(True)
qlinear_mul.prepare = _prepare_binary(False)
