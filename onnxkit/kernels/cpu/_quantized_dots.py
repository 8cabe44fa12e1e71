"""Integer products for the quantized ops on the ``cpu`` executor: int32 sums, exact.

    xs[n, h, w, c]  = x[n, c, h - top, w - left] - x_zero_point   (int16, 0 in the padding)
    cols[n, g, p, k] = xs[n, oy*sh + i*dh, ox*sw + j*dw, g*Cg + c]   k = (i*KW + j)*Cg + c
    acc[n, m, p]    = sum_k w[m, k] * cols[n, g(m), p, k]            (int32)
    y[n, m, p]      = saturate(rint((acc + bias[m]) * mult[m]) + zero)   (in the same pass)

``conv`` is QLinearConv / ConvInteger's; ``product`` the matrix products' (A's rows are
the patches, B's columns the weight rows). The weights are packed once per node
(``PackedWeights``, ``pack``): (M, KH, KW, Cg) minus their zero point, int8 where every
value fits (symmetric weights: a quarter of float32's bytes, so a ResNet's weights stay
in the last-level cache), else int16; each row padded with zeros to a multiple of
``K_ALIGN`` (cols too), so the k loop has no remainder. The product (``_dots``) takes
four weight rows times two patches per pass over k (``_block_sums``): 16 values at a
time, pairs of 16-bit products added in int32 (the pattern LLVM's x86 back end emits as
``vpmaddwd``; elsewhere plain vector code), eight vector sums held in registers, folded
to eight totals at the end; the requantization is done on the eight totals before they
are stored, the reference's float64 arithmetic. Exact where every partial sum fits int32
(the caller checks ``l1 * V < 2**31``): integer addition is associative, so the order
does not matter. The 4 x 2 blocks of rows and patches are clamped at the edges (a last
block recomputes the last row or patch: same value, stored twice).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from onnxkit.kernels.cpu._buffers import empty, read_only
from onnxkit.kernels.cpu._threads import run_parts

K_ALIGN = 16  # the k loop's vector width (int16 lanes of 256 bits): rows padded to this
ROWS = 4  # weight rows per block (``_dots``)
_NONE = read_only(np.zeros(0))  # no requantization: ``_dots`` stores the int32 sums


class PackedWeights:
    """w (M, Cg, KH, KW) minus its zero point (one value or one per output channel) as
    (M, Kp) int8 / int16 rows in ``cols``' k order, and the largest row L1 norm."""

    def __init__(self, w: np.ndarray, zero_point, group: int):
        m = w.shape[0]
        shifted = w.astype(np.int32)
        if zero_point is not None:
            shifted -= np.asarray(zero_point, np.int32).reshape(-1, 1, 1, 1)
        self.l1 = int(np.abs(shifted).reshape(m, -1).sum(axis=1).max())
        self.rows = pack(shifted.transpose(0, 2, 3, 1).reshape(m, -1))
        self.k = shifted[0].size
        self.group = group
        self.kernel = w.shape[2:]


def pack(rows: np.ndarray) -> np.ndarray:
    """Integer rows (M, K) as read-only (M, Kp) int8 where every value fits, else int16,
    zeros after K up to a multiple of ``K_ALIGN``."""
    small = rows.size == 0 or (rows.min() >= -128 and rows.max() <= 127)
    packed = np.zeros((rows.shape[0], -(-rows.shape[1] // K_ALIGN) * K_ALIGN),
                      np.int8 if small else np.int16)
    packed[:, :rows.shape[1]] = rows
    return read_only(packed)


@njit(cache=True, nogil=True, error_model="numpy")
def _to_nhwc(x, zx, top, left, xs, lo, hi):
    """xs[n, yy, xx, c] = x[n, c, yy - top, xx - left] - zx, 0 outside x: rows
    r = n * Hp + yy in [lo, hi)."""
    height, width, channels = x.shape[2], x.shape[3], x.shape[1]
    rows, wp = xs.shape[1], xs.shape[2]
    for r in range(lo, hi):
        n, yy = r // rows, r % rows
        row = xs[n, yy]
        y = yy - top
        if y < 0 or y >= height:
            row[:, :] = 0
            continue
        row[:left, :] = 0
        row[left + width:wp, :] = 0
        for c in range(channels):
            src = x[n, c, y]
            for j in range(width):
                row[left + j, c] = np.int16(src[j]) - zx


@njit(cache=True, nogil=True, error_model="numpy")
def _gather(xs, channels, groups, kh, kw, sh, sw, dh, dw, ow, cols, lo, hi):
    """cols[n, g, oy*OW + ox, (i*KW + j)*Cg + c] from the padded xs (N, Hp, Wp * C):
    rows r = (n * G + g) * OH + oy in [lo, hi); the padding of k (to Kp) is zeros. One
    group without dilation along the width copies a tap row's KW * C values at once."""
    cg = channels // groups
    oh = cols.shape[2] // ow
    k, kp = kh * kw * cg, cols.shape[3]
    run = kw * cg if groups == 1 and dw == 1 else cg  # values copied at once
    step = run // cg
    for r in range(lo, hi):
        n, g, oy = r // (groups * oh), (r // oh) % groups, r % oh
        for ox in range(ow):
            dst = cols[n, g, oy * ow + ox]
            for i in range(kh):
                src = xs[n, oy * sh + i * dh]
                for j in range(0, kw, step):
                    at, start = (i * kw + j) * cg, (ox * sw + j * dw) * channels + g * cg
                    dst[at:at + run] = src[start:start + run]
            dst[k:kp] = 0


_I16 = ir.VectorType(ir.IntType(16), 16)
_I32 = ir.VectorType(ir.IntType(32), 16)
_I32_HALF = ir.VectorType(ir.IntType(32), 8)
_EVEN = ir.Constant(_I32_HALF, list(range(0, 16, 2)))
_ODD = ir.Constant(_I32_HALF, list(range(1, 16, 2)))


# the sums' folding: each step adds the two halves of a pair of vectors side by side, so
# after three steps lane e of the one vector left is the total of sum vector _LANE[e]
_FOLDS = [(ir.Constant(_I32_HALF, low), ir.Constant(_I32_HALF, high)) for low, high in (
    ([0, 1, 2, 3, 8, 9, 10, 11], [4, 5, 6, 7, 12, 13, 14, 15]),
    ([0, 1, 8, 9, 4, 5, 12, 13], [2, 3, 10, 11, 6, 7, 14, 15]),
    ([0, 8, 2, 10, 4, 12, 6, 14], [1, 9, 3, 11, 5, 13, 7, 15]))]
_LANE = (0, 4, 2, 6, 1, 5, 3, 7)
_ORDER = [_LANE.index(v) for v in range(8)]  # the lane holding sum vector v's total


def _load(builder, data, index, bits):
    """16 values of ``bits`` bits at data[index], as a vector (unaligned)."""
    vector = ir.VectorType(ir.IntType(bits), 16)
    return builder.load(builder.bitcast(builder.gep(data, [index]), vector.as_pointer()),
                        align=1)


def _pair_sums(builder, a, b):
    """a[2i] * b[2i] + a[2i+1] * b[2i+1] (8 int32) of two 16 x int16 vectors: the pattern
    LLVM's x86 back end emits as one ``vpmaddwd`` (exact: 16-bit products in 32 bits)."""
    product = builder.mul(builder.sext(a, _I32), builder.sext(b, _I32))
    undef = ir.Constant(_I32, None)
    return builder.add(builder.shuffle_vector(product, undef, _EVEN),
                       builder.shuffle_vector(product, undef, _ODD))


@intrinsic
def _block_sums(typingctx, w0, w1, w2, w3, x0, x1, kp):
    """(sum_k w_r[k] * x_c[k] for r in 0..3 for c in 0..1) as eight int32, k < kp (a
    multiple of 16): int8 / int16 rows w_r, int16 patches x_c, 1-D C-contiguous."""
    sig = types.UniTuple(types.int32, 8)(w0, w1, w2, w3, x0, x1, kp)
    bits = w0.dtype.bitwidth

    def codegen(context, builder, signature, args):
        data = [context.make_array(t)(context, builder, v).data
                for t, v in zip(signature.args[:6], args[:6])]
        sums = [cgutils.alloca_once_value(builder, ir.Constant(_I32_HALF, [0] * 8))
                for _ in range(8)]
        steps = builder.udiv(args[6], ir.Constant(args[6].type, 16))
        with cgutils.for_range(builder, steps) as loop:
            at = builder.mul(loop.index, ir.Constant(loop.index.type, 16))
            patches = [_load(builder, x, at, 16) for x in data[4:]]
            for r, row in enumerate(data[:4]):
                weights = _load(builder, row, at, bits)
                if bits == 8:
                    weights = builder.sext(weights, _I16)
                for c, patch in enumerate(patches):
                    cell = sums[2 * r + c]
                    builder.store(builder.add(builder.load(cell),
                                              _pair_sums(builder, weights, patch)), cell)
        vectors = [builder.load(cell) for cell in sums]
        for low, high in _FOLDS:  # 8 vectors of 8 -> 4 of 8 -> 2 of 8 -> 1 of 8 totals
            vectors = [builder.add(builder.shuffle_vector(a, b, low),
                                   builder.shuffle_vector(a, b, high))
                       for a, b in zip(vectors[::2], vectors[1::2])]
        totals = [builder.extract_element(vectors[0], ir.Constant(ir.IntType(32), e))
                  for e in _ORDER]
        return context.make_tuple(builder, signature.return_type, totals)
    return sig, codegen


@njit(inline="always")
def _put(y, n, m, p, total, bias, mult, zero, low, high):
    if mult.size:
        v = np.rint((np.float64(total) + bias[m]) * mult[m]) + zero
        y[n, m, p] = min(max(v, low), high)
    else:
        y[n, m, p] = total


@njit(cache=True, nogil=True, error_model="numpy")
def _dots(w, cols, bias, mult, zero, low, high, y, lo, hi):
    """y[n, m, p] for the blocks b in [lo, hi) of ``ROWS`` rows of one group (the last
    rows of a group clamped): the int32 sums, requantized where ``mult`` has values."""
    groups, patches, kp = cols.shape[1], cols.shape[2], cols.shape[3]
    per_group = w.shape[0] // groups
    blocks = (per_group + ROWS - 1) // ROWS
    for b in range(lo, hi):
        g = b // blocks
        first, last = g * per_group + (b % blocks) * ROWS, (g + 1) * per_group - 1
        m0, m1, m2, m3 = first, min(first + 1, last), min(first + 2, last), min(first + 3, last)
        w0, w1, w2, w3 = w[m0], w[m1], w[m2], w[m3]
        for n in range(cols.shape[0]):
            image = cols[n, g]
            for p0 in range(0, patches, 2):
                p1 = min(p0 + 1, patches - 1)
                s = _block_sums(w0, w1, w2, w3, image[p0], image[p1], kp)
                _put(y, n, m3, p0, s[6], bias, mult, zero, low, high)
                _put(y, n, m3, p1, s[7], bias, mult, zero, low, high)
                _put(y, n, m2, p0, s[4], bias, mult, zero, low, high)
                _put(y, n, m2, p1, s[5], bias, mult, zero, low, high)
                _put(y, n, m1, p0, s[2], bias, mult, zero, low, high)
                _put(y, n, m1, p1, s[3], bias, mult, zero, low, high)
                _put(y, n, m0, p0, s[0], bias, mult, zero, low, high)
                _put(y, n, m0, p1, s[1], bias, mult, zero, low, high)


def conv(x, zx: int, weights: PackedWeights, strides, dilations, begin, end, out, y,
         requantization=None):
    """y (N, M, OH, OW) = the requantized (``requantization`` = (bias, mult, zero, low,
    high)) or int32 (None) exact conv(x - zx, w - w_zero) of 8-bit x (N, C, H, W)."""
    n, c, h, width = x.shape
    kh, kw = weights.kernel
    (sh, sw), (dh, dw), (oh, ow) = strides, dilations, out
    group, m, kp = weights.group, weights.rows.shape[0], weights.rows.shape[1]
    hp, wp = h + begin[0] + end[0], width + begin[1] + end[1]
    xs = empty((n, hp, wp, c), np.int16)
    run_parts(_to_nhwc, n * hp, x.size, x, np.int16(zx), begin[0], begin[1], xs)
    if kh == kw == 1 and sh == sw == 1 and group == 1 and hp * wp == oh * ow and kp == c:
        cols = xs.reshape(n, 1, oh * ow, c)  # pointwise: the shifted input is the patches
    else:
        cols = empty((n, group, oh * ow, kp), np.int16)
        run_parts(_gather, n * group * oh, cols.size, xs.reshape(n, hp, wp * c), c, group,
                  kh, kw, sh, sw, dh, dw, ow, cols)
    bias, mult, zero, low, high = (requantization if requantization is not None
                                   else (_NONE, _NONE, 0.0, 0.0, 0.0))
    blocks = group * -(-(m // group) // ROWS)
    run_parts(_dots, blocks, m * n * oh * ow * kp, weights.rows, read_only(cols), bias, mult,
              zero, low, high, y.reshape(n, m, oh * ow))
    return y


@njit(cache=True, nogil=True, error_model="numpy")
def _shifted_rows(a, za, cols, lo, hi):
    """cols[0, 0, r] = a[r] - za as int16, zeros after K: rows r in [lo, hi)."""
    k = a.shape[1]
    for r in range(lo, hi):
        src, dst = a[r], cols[0, 0, r]
        for i in range(k):
            dst[i] = np.int16(src[i]) - za
        dst[k:] = 0


def product(a, za: int, columns, out, requantization=None):
    """out (M, N) = (a - za) (M, K) @ B for 8-bit a, B given as its packed columns
    (N, Kp) (``pack``): int32 sums, or requantized as ``conv`` does. Exact where every
    sum fits int32 (the caller checks)."""
    m, n, kp = a.shape[0], columns.shape[0], columns.shape[1]
    cols = empty((1, 1, m, kp), np.int16)
    run_parts(_shifted_rows, m, cols.size, a, np.int16(za), cols)
    bias, mult, zero, low, high = (requantization if requantization is not None
                                   else (_NONE, _NONE, 0.0, 0.0, 0.0))
    run_parts(_dots, -(-n // ROWS), m * n * kp, columns, read_only(cols), bias, mult, zero,
              low, high, out.T[np.newaxis])
    return out
