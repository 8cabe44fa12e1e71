"""Integer matrix products on the ``cpu`` executor: MatMulInteger, QLinearMatMul, QGemm.

    acc = (A - a_zero_point) @ (B - b_zero_point)          exact integer sums
    MatMulInteger:  Y = int32(acc)
    QLinearMatMul:  Y = saturate(round(acc * (a_scale * b_scale[n] / y_scale)) + y_zero_point)
    com.microsoft QGemm: acc + C, then the reference's float32 scaling

Exactness rule: the operands' shifted values are small integers. Every partial sum is an
integer bounded by ``sum_k |b[k, n] - zb[n]| * max |a - za|`` (the largest column's L1
norm times the largest shifted value A's type allows). Where that bound is below 2**31
the product is int32 sums (``_quantized_dots.product``: B's columns packed as int8 /
int16 rows, 16-bit pair products), exact in any order, except a small product (at most
``SMALL_PRODUCT`` multiply-adds) whose bound is at most 2**24: numpy's float32 matmul.
Beyond 2**31, BLAS in float64 (exact to 2**53, beyond any 8-bit product of fewer than
2**37 terms; ``exact_dtype``). The requantization (``requantize``) is the
reference's float64 arithmetic on the same exact sums, so the answers are the same bits.

B's shifted copy (and its bound) is made once per node when B is an initializer
(``prepare``), else on each call. Batched B, per-row scales of A and other dtypes run
the reference kernel. https://onnx.ai/onnx/operators/onnx__QLinearMatMul.html
"""

from __future__ import annotations

import numpy as np
from numba import njit

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._blas import matmul
from onnxkit.kernels.cpu._buffers import empty, read_only
from onnxkit.kernels.cpu._route import fall_back
from onnxkit.kernels.cpu._threads import run_parts
from onnxkit.kernels.cpu._quantized_dots import pack
from onnxkit.kernels.cpu._quantized_dots import product as int_product
from onnxkit.ops.quant import matmul_integer as ref_mmi
from onnxkit.ops.quant import qgemm as ref_qgemm
from onnxkit.ops.quant import qlinear_matmul as ref_qmm
from onnxkit.ops.quant._contrib import EIGHT_BIT, MS_DOMAIN
from onnxkit.ops.quant._quant import INT_RANGES
from onnxkit.ops.registry import op

F32 = np.float32
EXACT_IN_FLOAT32 = 1 << 24  # integers up to this magnitude are exact in float32
# multiply-adds; at most this many, exact in float32: numpy's matmul (one thread during a
# run; less to set up than the integer products: docs/cpu.md, quantized products)
SMALL_PRODUCT = 1 << 17
EXACT_IN_INT32 = 1 << 31


def requantize(acc, bias, mult, zero, low, high, y):
    """y[o, c, i] = clip(rint((acc[o, c, i] + bias[c]) * mult[c]) + zero, low, high) in
    float64; acc holds exact integers (float32 or float64), c is the channel axis."""
    run_parts(_requantize, acc.shape[0] * acc.shape[1], acc.size, acc, bias, mult, zero, low,
              high, y)


@njit(cache=True, nogil=True, error_model="numpy")
def _requantize(acc, bias, mult, zero, low, high, y, lo, hi):
    channels = acc.shape[1]
    for r in range(lo, hi):
        o, c = r // channels, r % channels
        b, m = bias[c], mult[c]
        for i in range(acc.shape[2]):
            v = np.rint((np.float64(acc[o, c, i]) + b) * m) + zero
            y[o, c, i] = min(max(v, low), high)


def value_bound(dtype: np.dtype, zero_points) -> int:
    """The largest |x - zero point| that x's integer type allows."""
    low, high = INT_RANGES[np.dtype(dtype)]
    if zero_points is None or np.size(zero_points) == 1:  # the usual scalar: no arrays
        z = 0 if zero_points is None else int(np.asarray(zero_points).reshape(()))
        return max(abs(low - z), abs(high - z))
    z = np.asarray(zero_points, np.int64).reshape(-1)
    return int(max(np.abs(low - z).max(), np.abs(high - z).max()))


def exact_dtype(column_l1: int, bound: int) -> np.dtype:
    """float32 where every partial sum stays within 2**24 (the rule above), else float64."""
    return np.dtype(F32 if column_l1 * bound <= EXACT_IN_FLOAT32 else np.float64)


class ShiftedWeights:
    """B - b_zero_point as float32 / float64 (made on demand) and its largest column L1 norm.
    ``b`` is (K, N); ``columns`` the axis of the zero point's values (-1: columns)."""

    def __init__(self, b: np.ndarray, zero_point, axis: int = -1):
        shifted = b.astype(np.int64)
        if zero_point is not None:
            zp = np.asarray(zero_point, np.int64)
            if zp.size != 1:
                shape = [1] * b.ndim
                shape[axis] = zp.size
                zp = zp.reshape(shape)
            shifted = shifted - zp.reshape(zp.shape if zp.size != 1 else ())
        self.shifted = shifted
        other = tuple(a for a in range(b.ndim) if a != axis % b.ndim)
        self.l1 = int(np.abs(shifted).sum(axis=other).max()) if shifted.size else 0
        self.as_float: dict = {}
        self.columns = None  # (``packed_columns``)

    def get(self, dtype: np.dtype) -> np.ndarray:
        if dtype not in self.as_float:
            self.as_float[dtype] = read_only(np.ascontiguousarray(self.shifted, dtype=dtype))
        return self.as_float[dtype]

    def packed_columns(self) -> np.ndarray:
        """The shifted (K, N) weights' columns as packed rows (N, Kp), int8 where every
        value fits, else int16 (``_quantized_dots.pack``): what the integer products read."""
        if self.columns is None:
            self.columns = pack(self.shifted.T)
        return self.columns


def _zero_ok(zero_point, dtype, sizes) -> bool:
    return zero_point is None or (np.asarray(zero_point).dtype == dtype
                                  and np.size(zero_point) in sizes
                                  and np.ndim(zero_point) <= 1)


class PreparedProduct:
    """One MatMulInteger / QLinearMatMul node (``quantized``: the latter): B's shifted copy
    kept when B is an initializer (``constant``)."""

    def __init__(self, quantized: bool, b=None, b_zero=None, trans_b: bool = False):
        self.quantized = quantized
        self.trans_b = trans_b  # B is given (N, K) (QGemm's transB)
        self.constant = None
        if b is not None and b.ndim == 2 and b.dtype in EIGHT_BIT:
            bk = b.T if trans_b else b
            if _zero_ok(b_zero, b.dtype, (1, bk.shape[1])):
                self.constant = (b, b_zero, ShiftedWeights(bk, b_zero))

    def weights(self, b, b_zero) -> ShiftedWeights:
        if self.constant is not None and b is self.constant[0] and b_zero is self.constant[1]:
            return self.constant[2]
        return ShiftedWeights(b.T if self.trans_b else b, b_zero)

    def product(self, a, a_zero, b, b_zero):
        """The exact (…, M, N) product as int32 / float32 / float64, or None (reference)."""
        if a.dtype not in EIGHT_BIT or b.dtype not in EIGHT_BIT or b.ndim != 2 or a.ndim < 2:
            return None
        k, n = b.shape[::-1] if self.trans_b else b.shape
        if (a.shape[-1] != k or a.size == 0 or b.size == 0
                or not _zero_ok(a_zero, a.dtype, (1,)) or not _zero_ok(b_zero, b.dtype, (1, n))):
            return None
        w = self.weights(b, b_zero)
        bound = value_bound(a.dtype, a_zero)
        dtype = exact_dtype(w.l1, bound)
        rows = a.reshape(-1, a.shape[-1])
        small = rows.shape[0] * n * k <= SMALL_PRODUCT and dtype == F32
        if w.l1 * bound < EXACT_IN_INT32 and not small:  # ``_quantized_dots.product``
            za = 0 if a_zero is None else int(np.asarray(a_zero).reshape(()))
            acc = empty((rows.shape[0], n), np.int32)
            int_product(read_only(np.ascontiguousarray(rows)), za, w.packed_columns(), acc)
            return acc.reshape(a.shape[:-1] + (n,))
        shifted = rows.astype(dtype)
        if a_zero is not None:
            shifted -= dtype.type(int(np.asarray(a_zero).reshape(())))
        acc = empty((rows.shape[0], n), dtype)
        if small:
            np.matmul(shifted, w.get(dtype), out=acc)  # a BERT-mini product: less to set up
        else:
            matmul(shifted, w.get(dtype), acc)
        return acc.reshape(a.shape[:-1] + (n,))

    def __call__(self, *inputs):
        if self.quantized:
            return self.qlinear(*inputs)
        a, b, a_zero, b_zero = (list(inputs) + [None, None])[:4]
        acc = self.product(a, a_zero, b, b_zero)
        if acc is None:
            return fall_back(ref_mmi.matmul_integer, a, b, a_zero, b_zero)
        return acc.astype(np.int32)

    def qlinear(self, a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero):
        scales_ok = (np.size(a_scale) == 1 and np.size(y_scale) == 1
                     and np.size(b_scale) in (1, np.shape(b)[-1]) and np.ndim(b_scale) <= 1
                     and (y_zero is None or (np.size(y_zero) == 1
                                             and np.asarray(y_zero).dtype in EIGHT_BIT)))
        acc = self.product(a, a_zero, b, b_zero) if scales_ok else None
        if acc is None:
            return fall_back(ref_qmm.qlinear_matmul, a, a_scale, a_zero, b, b_scale, b_zero,
                             y_scale, y_zero)
        # the reference's multiplier: the scales' own type, then float64
        mult = (np.asarray(a_scale) * np.asarray(b_scale) / np.asarray(y_scale)).astype(np.float64)
        n = b.shape[1]
        out = np.asarray(y_zero).dtype if y_zero is not None else a.dtype
        zero = 0.0 if y_zero is None else float(np.asarray(y_zero).reshape(()))
        low, high = INT_RANGES[np.dtype(out)]
        y = empty(acc.shape, out)
        requantize(acc.reshape(-1, n, 1), read_only(np.zeros(n)),
                   read_only(np.ascontiguousarray(np.broadcast_to(mult.reshape(-1), (n,)))),
                   zero, float(low), float(high), y.reshape(-1, n, 1))
        return y


class PreparedQGemm(PreparedProduct):
    """One com.microsoft QGemm node: the product as MatMulInteger's, then the reference's
    float32 scaling (``ops/quant/qgemm.py``) on the exact sums. transA and biases that
    are not one value per column run the reference kernel."""

    def __init__(self, attrs: dict, b=None, b_zero=None):
        self.attrs = {"alpha": 1.0, "transA": 0, "transB": 0, **attrs}
        super().__init__(False, b, b_zero, bool(self.attrs["transB"]))

    def __call__(self, A, a_scale, a_zero_point, B, b_scale, b_zero_point, C=None,
                 y_scale=None, y_zero_point=None, **_attributes):
        n = B.shape[0] if self.trans_b else B.shape[-1]
        ok = (not self.attrs["transA"] and A.ndim == 2 and np.size(a_scale) == 1
              and np.size(b_scale) in (1, n) and np.ndim(b_scale) <= 1
              and (y_scale is None or np.size(y_scale) == 1)
              and (y_zero_point is None or (y_scale is not None and np.size(y_zero_point) == 1
                                            and np.asarray(y_zero_point).dtype in EIGHT_BIT))
              and (C is None or (C.dtype == np.int32 and C.ndim <= 2
                                 and (C.size == 1 or C.shape[-1:] == (C.size,) == (n,)))))
        acc = self.product(A, a_zero_point, B, b_zero_point) if ok else None
        if acc is None:
            return fall_back(ref_qgemm.qgemm, A, a_scale, a_zero_point, B, b_scale,
                             b_zero_point, C, y_scale, y_zero_point, **self.attrs)
        acc = acc.astype(np.int64)
        if C is not None:
            acc = acc + C.reshape(-1)
        scale = (F32(self.attrs["alpha"]) * F32(np.asarray(a_scale).reshape(()))
                 * np.asarray(b_scale).reshape(-1).astype(F32))
        if y_scale is not None:
            scale = scale / F32(np.asarray(y_scale).reshape(()))
        acc = acc.astype(F32)  # onnxruntime's int32 sums, as float32
        if y_zero_point is None:
            return acc * scale
        zy = np.asarray(y_zero_point)
        low, high = INT_RANGES[zy.dtype]
        return np.clip(np.rint(acc * scale) + F32(zy.reshape(())), low, high).astype(zy.dtype)


def prepare_qgemm(node, attrs, constants, shapes):
    return PreparedQGemm(attrs, constants.get(3), constants.get(5))


def prepare_matmul_integer(node, attrs, constants, shapes):
    return PreparedProduct(False, constants.get(1), constants.get(3))


def prepare_qlinear_matmul(node, attrs, constants, shapes):
    return PreparedProduct(True, constants.get(3), constants.get(5))


@op("MatMulInteger", 10, registry=CPU)
def matmul_integer(A, B, a_zero_point=None, b_zero_point=None):
    return PreparedProduct(False)(A, B, a_zero_point, b_zero_point)


@op("QLinearMatMul", 10, 21, registry=CPU)
def qlinear_matmul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point):
    return PreparedProduct(True)(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale,
                                 y_zero_point)


@op("QGemm", 1, domain=MS_DOMAIN, registry=CPU)
def qgemm(A, a_scale, a_zero_point, B, b_scale, b_zero_point, C=None, y_scale=None,
          y_zero_point=None, *, alpha=1.0, transA=0, transB=0):
    return PreparedQGemm(dict(alpha=alpha, transA=transA, transB=transB))(
        A, a_scale, a_zero_point, B, b_scale, b_zero_point, C, y_scale, y_zero_point)


matmul_integer.prepare = prepare_matmul_integer
qgemm.prepare = prepare_qgemm
qlinear_matmul.prepare = prepare_qlinear_matmul
