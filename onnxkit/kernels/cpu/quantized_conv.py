"""QLinearConv and ConvInteger on the ``cpu`` executor: exact integer sums.

    ints:  acc[n, m, p] = sum_k (w - w_zero_point)[m, k] * patches(x - x_zero_point)[p, k]
           in int32 (``_quantized_dots``: the weights packed once per node, int8 where they
           fit; the requantization done on the sums before they are stored)
    blas:  where a sum may not fit int32: cols = im2col(x - x_zero_point) in float64,
           acc[n, g] = (w - w_zero_point)[g] (Mg, Cg*KH*KW) @ cols (Cg*KH*KW, OH*OW)
    QLinearConv:  y = saturate(round((acc + B[m]) * (x_scale * w_scale[m] / y_scale))
                               + y_zero_point)
    ConvInteger:  y = int32(acc)

Exactness: with B = the largest output channel's L1 norm of the shifted weights and
V = the largest |x - zx| x's type allows, every partial sum is an integer of magnitude at
most B * V. The integer products run where B * V < 2**31; else BLAS, in float32 where
B * V <= 2**24 (``quantized_matmul.exact_dtype``), else float64. The requantization is
the reference's float64 arithmetic, so the answers are the same bits. The weights' shift
and layout are made once per node when they are initializers (``prepare``), else per call.
2-D convolutions only; the rest (1-D, 3-D, other dtypes, per-channel x zero points)
runs the reference kernel. https://onnx.ai/onnx/operators/onnx__QLinearConv.html
"""

from __future__ import annotations

import numpy as np

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._blas import matmul
from onnxkit.kernels.cpu._buffers import empty, read_only
from onnxkit.kernels.cpu._im2col import im2col, phase_shape, phases
from onnxkit.kernels.cpu._route import fall_back
from onnxkit.kernels.cpu._quantized_dots import PackedWeights
from onnxkit.kernels.cpu._quantized_dots import conv as dots_conv
from onnxkit.kernels.cpu.quantized_matmul import (EIGHT_BIT, EXACT_IN_INT32, ShiftedWeights,
                                                  exact_dtype, requantize, value_bound)
from onnxkit.ops.quant import conv_integer as ref_conv_integer
from onnxkit.ops.quant import qlinear_conv as ref_qconv
from onnxkit.ops.quant._int_conv import padding
from onnxkit.ops.quant._quant import INT_RANGES
from onnxkit.ops.registry import op

_DEFAULTS = dict(auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None, pads=None,
                 strides=None)


class PreparedQLinearConv:
    """One QLinearConv node: attributes bound, the weights' shifted copy kept when W and
    its zero point are initializers."""

    def __init__(self, attrs: dict, w=None, w_zero=None, fixed: tuple = ()):
        self.attrs = {**_DEFAULTS, **attrs}
        self.constant = None
        self.terms = None  # the requantization's, for the initializer scales (``_terms``)
        self.fixed = fixed  # the node's initializers
        self.shapes_memo = None  # (shapes and types, ``_geometry``'s answer)
        self.packed = None  # (w, w_zero, PackedWeights) for the integer products
        if w is not None and self._weights_ok(w, w_zero):
            self.constant = [w, w_zero, None]  # its ShiftedWeights made on first use
            group = int(self.attrs["group"])
            if group >= 1 and w.shape[0] % group == 0:
                self.packed = (w, w_zero, PackedWeights(w, w_zero, group))

    @staticmethod
    def _weights_ok(w, w_zero) -> bool:
        return (w.ndim == 4 and w.dtype in EIGHT_BIT and w.size > 0
                and (w_zero is None or (np.asarray(w_zero).dtype == w.dtype
                                        and np.size(w_zero) in (1, w.shape[0])
                                        and np.ndim(w_zero) <= 1)))

    def packed_weights(self, w, w_zero, group: int) -> PackedWeights:
        if self.packed is not None and w is self.packed[0] and w_zero is self.packed[1]:
            return self.packed[2]
        return PackedWeights(w, w_zero, group)

    def weights(self, w, w_zero) -> ShiftedWeights:
        if self.constant is not None and w is self.constant[0] and w_zero is self.constant[1]:
            if self.constant[2] is None:
                self.constant[2] = ShiftedWeights(w.reshape(w.shape[0], -1), w_zero, 0)
            return self.constant[2]
        return ShiftedWeights(w.reshape(w.shape[0], -1), w_zero, 0)

    def __call__(self, x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
                 y_zero_point=None, B=None, **_attributes):
        y = self._fast(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
                       y_zero_point, B)
        if y is None:
            return fall_back(ref_qconv.qlinear_conv, x, x_scale, x_zero_point, w, w_scale,
                             w_zero_point, y_scale, y_zero_point, B, **self.attrs)
        return y

    def _fast(self, x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero, B):
        terms = self._terms(x.dtype, x_scale, w_scale, y_scale, y_zero, B, w.shape[0])
        if terms is None:
            return None
        bias, mult, zero, low, high, out_dtype = terms[1:]
        y = self.integer_conv(x, x_zero, w, w_zero, out_dtype, (bias, mult, zero, low, high))
        if y is not None:
            return y
        acc = self.accumulate(x, x_zero, w, w_zero)
        if acc is None:
            return None
        m = w.shape[0]
        y = empty(acc.shape, out_dtype)
        requantize(acc.reshape(x.shape[0], m, -1), bias, mult, zero, low, high,
                   y.reshape(x.shape[0], m, -1))
        return y

    def integer_conv(self, x, x_zero, w, w_zero, out_dtype, requantization=None):
        """y (N, M, OH, OW) by ``_quantized_dots.conv`` (int32 sums; requantized into
        ``out_dtype`` when ``requantization`` is given), or None where a sum may not fit
        int32 or the reference serves."""
        geometry = self._geometry(x, x_zero, w, w_zero)
        if geometry is None:
            return None
        kernel, strides, dilations, begin, end, out = geometry
        weights = self.packed_weights(w, w_zero, int(self.attrs["group"]))
        zx = 0 if x_zero is None else int(np.asarray(x_zero).reshape(()))
        if weights.l1 * value_bound(x.dtype, zx) >= EXACT_IN_INT32:
            return None
        y = empty((x.shape[0], w.shape[0], out[0], out[1]), out_dtype)
        return dots_conv(x, zx, weights, strides, dilations, begin, end, out, y,
                         requantization)

    def _terms(self, x_dtype, x_scale, w_scale, y_scale, y_zero, B, m):
        """((arrays, x dtype, m), bias, mult, zero, low, high, output dtype) of the
        requantization: the reference's multiplier and bias, the same float operations;
        None for what the reference serves. Kept while the scales, zero point and bias are
        the same arrays and the node's initializers (``fixed``): once per node."""
        key = (x_scale, w_scale, y_scale, y_zero, B)
        terms = self.terms
        if (terms is not None and terms[0][1:] == (x_dtype, m)
                and all(a is b for a, b in zip(key, terms[0][0]))):
            return terms
        if (np.size(x_scale) != 1 or np.size(y_scale) != 1
                or np.size(w_scale) not in (1, m) or np.ndim(w_scale) > 1
                or (y_zero is not None and (np.size(y_zero) != 1
                                            or np.asarray(y_zero).dtype not in EIGHT_BIT))
                or (B is not None and (B.dtype != np.int32 or B.shape != (m,)))):
            return None
        ws = np.asarray(w_scale).reshape(-1) if np.size(w_scale) != 1 else np.asarray(w_scale).reshape(())
        mult = (np.asarray(x_scale).reshape(()) * ws / np.asarray(y_scale).reshape(())).astype(np.float64)
        bias = np.zeros(m) if B is None else B.astype(np.float64)
        out_dtype = np.asarray(y_zero).dtype if y_zero is not None else x_dtype
        zero = 0.0 if y_zero is None else float(np.asarray(y_zero).reshape(()))
        low, high = INT_RANGES[np.dtype(out_dtype)]
        terms = ((key, x_dtype, m), read_only(bias),
                 read_only(np.ascontiguousarray(np.broadcast_to(mult, (m,)))),
                 zero, float(low), float(high), out_dtype)
        if all(a is None or any(a is c for c in self.fixed) for a in key):
            self.terms = terms  # initializers only: a fed array may change in place
        return terms

    def _geometry(self, x, x_zero, w, w_zero):
        """(kernel, strides, dilations, begin, end, out) of a 2-D conv the fast paths
        serve, or None; worked out once per shapes and types (``_shapes``)."""
        key = (x.shape, x.dtype, w.shape, w.dtype, _kind(x_zero), _kind(w_zero))
        memo = self.shapes_memo
        if memo is not None and memo[0] == key:
            return memo[1]
        geometry = self._shapes(x, x_zero, w, w_zero)
        self.shapes_memo = (key, geometry)
        return geometry

    def _shapes(self, x, x_zero, w, w_zero):
        a = self.attrs
        group = int(a["group"])
        if (x.ndim != 4 or x.dtype not in EIGHT_BIT or not self._weights_ok(w, w_zero)
                or x.size == 0 or group < 1 or x.shape[1] != w.shape[1] * group
                or w.shape[0] % group
                or (a["kernel_shape"] is not None and tuple(a["kernel_shape"]) != w.shape[2:])
                or (x_zero is not None and (np.size(x_zero) != 1
                                            or np.asarray(x_zero).dtype != x.dtype))):
            return None
        kernel = w.shape[2:]
        strides = [1, 1] if a["strides"] is None else [int(s) for s in a["strides"]]
        dilations = [1, 1] if a["dilations"] is None else [int(d) for d in a["dilations"]]
        if len(strides) != 2 or len(dilations) != 2 or min(strides + dilations) < 1:
            return None
        try:
            begin, end = padding(x.shape[2:], kernel, strides, dilations, a["pads"],
                                 a["auto_pad"])
        except Exception:  # noqa: BLE001  (the reference names the bad attribute)
            return None
        out = [(size + b + e - (k - 1) * d - 1) // s + 1
               for size, b, e, k, d, s in zip(x.shape[2:], begin, end, kernel, dilations, strides)]
        if min(out) < 1 or min(begin + end) < 0:
            return None
        return kernel, strides, dilations, begin, end, out

    def accumulate(self, x, x_zero, w, w_zero):
        """The exact conv(x - x_zero, w - w_zero) (N, M, OH, OW) as float32, float64 or
        int32, or None for what the reference serves."""
        geometry = self._geometry(x, x_zero, w, w_zero)
        if geometry is None:
            return None
        kernel, strides, dilations, begin, end, out = geometry
        group = int(self.attrs["group"])
        weights = self.weights(w, w_zero)
        zx = 0 if x_zero is None else int(np.asarray(x_zero).reshape(()))
        bound = value_bound(x.dtype, zx)
        dtype = exact_dtype(weights.l1, bound)
        return self._products(x, zx, weights.get(dtype), dtype, group, kernel, strides,
                              dilations, begin, out)

    @staticmethod
    def _products(x, zx, wf, dtype, group, kernel, strides, dilations, begin, out):
        """acc (N, M, OH, OW): the shifted input's columns times the shifted weights."""
        n, c, h, width = x.shape
        m, k = wf.shape
        kh, kw = kernel
        (sh, sw), (dh, dw), (oh, ow) = strides, dilations, out
        xs = np.subtract(x, dtype.type(zx), dtype=dtype)  # one pass: exact small integers
        acc = empty((n, m, oh, ow), dtype)
        weights = wf.reshape(group, m // group, k)
        pointwise = kh == kw == 1 and sh == sw == 1 and not any(begin) and (oh, ow) == (h, width)
        if not pointwise:
            cols = empty((c * kh * kw, oh * ow), dtype)
            xp = (empty(phase_shape(xs.shape[1:], sw), dtype) if sw > 1
                  else np.zeros((1, 1, 1, 1), dtype))
        for i in range(n):
            if pointwise:
                src = xs[i].reshape(group, k, h * width)
            else:
                if sw > 1:
                    phases(xs[i], sw, xp)
                im2col(xs[i], xp, cols, kh, kw, sh, sw, dh, dw, begin[0], begin[1], oh, ow)
                src = cols.reshape(group, k, oh * ow)
            matmul(weights, src, acc[i].reshape(group, m // group, oh * ow))
        return acc


def _kind(zero_point):
    """What ``_geometry`` reads of a zero point: its type, size and rank."""
    if zero_point is None:
        return None
    z = np.asarray(zero_point)
    return z.dtype, z.size, z.ndim


def prepare_qlinear_conv(node, attrs, constants, shapes) -> PreparedQLinearConv:
    return PreparedQLinearConv(attrs, constants.get(3), constants.get(5),
                               tuple(constants.values()))


@op("QLinearConv", 10, registry=CPU)
def qlinear_conv(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point,
                 B=None, *, auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None,
                 pads=None, strides=None):
    return PreparedQLinearConv(dict(auto_pad=auto_pad, dilations=dilations, group=group,
                                    kernel_shape=kernel_shape, pads=pads, strides=strides))(
        x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B)


@op("ConvInteger", 10, registry=CPU)
def conv_integer(x, w, x_zero_point=None, w_zero_point=None, *, auto_pad="NOTSET",
                 dilations=None, group=1, kernel_shape=None, pads=None, strides=None):
    return PreparedConvInteger(dict(auto_pad=auto_pad, dilations=dilations, group=group,
                                    kernel_shape=kernel_shape, pads=pads, strides=strides))(
        x, w, x_zero_point, w_zero_point)


class PreparedConvInteger(PreparedQLinearConv):
    """One ConvInteger node: QLinearConv's exact sums, returned as int32."""

    def __call__(self, x, w, x_zero_point=None, w_zero_point=None, **_attributes):
        acc = self.integer_conv(x, x_zero_point, w, w_zero_point, np.int32)
        if acc is None:
            acc = self.accumulate(x, x_zero_point, w, w_zero_point)
        if acc is None:
            return fall_back(ref_conv_integer.conv_integer, x, w, x_zero_point, w_zero_point,
                             **self.attrs)
        return acc.astype(np.int32)


def prepare_conv_integer(node, attrs, constants, shapes) -> PreparedConvInteger:
    return PreparedConvInteger(attrs, constants.get(1), constants.get(3))


qlinear_conv.prepare = prepare_qlinear_conv
conv_integer.prepare = prepare_conv_integer
