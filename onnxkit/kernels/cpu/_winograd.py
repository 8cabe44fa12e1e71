"""Winograd F(2x2, 3x3): 3x3 stride-1 convolutions with 2.25x fewer multiplications.

Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks" (CVPR 2016). Each 2x2
block of outputs of one (output channel m, input channel c) pair is

    Y = A^T [ (G g G^T) * (B^T d B) ] A          (* elementwise, 4x4)

with g the 3x3 filter and d the 4x4 input tile the block reads (tiles overlap by 2):

    B^T = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]
    G   = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]]
    A^T = [[1, 1, 1, 0], [0, 1, -1, -1]]

Summed over the input channels, the 16 elementwise products become 16 matrix products,
one per position xi = 4*k + l of the 4x4 tile:

    U[xi] = (G g G^T)[xi]   for every (m, c)    (M, C)   once per weight, on the plan
    V[xi] = (B^T d B)[xi]   for every (c, tile) (C, T)   ``input_transform`` (Numba)
    P[xi] = U[xi] @ V[xi]                       (M, T)   16 BLAS products
    Y     = A^T P A for every (m, tile), then bias, Z and the activation
                                                         ``output_transform`` (Numba)

T = N * ceil(OH/2) * ceil(OW/2) tiles. The products do 16 * M * C * T multiply-adds where
im2col + GEMM does 9 * M * C * OH * OW: 2.25x fewer when OH and OW are even. The price is
memory traffic (V is 4x the input, P 4x the output) and 16/9 as many weight values, so
``conv.py`` takes this path where the static rule says so (``applies``, ``_conv_rules``).
Tile (th, tw) of image n is column ``n * TH * TW + th * TW + tw``; its tap (k, l) reads
input position ``conv_input_coord(2*th, k, 1, pad_top, 1)`` (row) and likewise for columns.
https://arxiv.org/abs/1509.09308
"""

from __future__ import annotations

import numpy as np
from numba import njit

from onnxkit.kernels.cpu._blas import matmul
from onnxkit.kernels.cpu._buffers import empty, read_only
from onnxkit.kernels.cpu._im2col import column_phase_ranges, split_columns
from onnxkit.kernels.cpu._math import FASTMATH, finish
from onnxkit.kernels.cpu._threads import run_parts
from onnxkit.kernels.indexing import conv_input_coord, for_cpu

_coord = for_cpu(conv_input_coord)

G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])
MIN_CHANNELS = 16  # below this (either side) the products are too thin to gain
MAX_WEIGHT_BYTES = 8 << 20  # U above this: the products are bound by reading U
MIN_TILES = 36  # per image (output planes from 11x11) ...
SMALL_WEIGHT_BYTES = 1 << 20  # ... unless U is this small (DenseNet's 128 -> 32 layers)


def eligible(X, W, group, strides, dilations) -> bool:
    """Whether the Winograd path can run: float32 2-D 3x3, stride and dilation 1, one
    group, 16+ channels each side and U at most ``MAX_WEIGHT_BYTES`` (beyond that it
    lost everywhere it was timed). W must also be a constant, U being computed once
    when the plan is built: the caller knows (``_conv_rules``)."""
    return eligible_for(X, W, group, strides, dilations, G, MAX_WEIGHT_BYTES)


def eligible_for(X, W, group, strides, dilations, g_matrix, max_weight_bytes) -> bool:
    """``eligible`` for the F(m x m, 3x3) whose weight transform is ``g_matrix``
    ((m + 2) x 3): U holds (m + 2)^2 values per filter."""
    if X.dtype != np.float32 or X.ndim != 4 or W.shape[2:] != (3, 3) or group != 1:
        return False
    if tuple(strides) != (1, 1) or tuple(dilations) != (1, 1):
        return False
    m, c = W.shape[:2]
    u_bytes = g_matrix.shape[0] ** 2 * m * c * X.dtype.itemsize
    return min(m, c) >= MIN_CHANNELS and u_bytes <= max_weight_bytes


def applies(X, W, group, strides, dilations, out) -> bool:
    """The static rule (``ONNXKIT_CPU_TUNE=0``): ``eligible`` and a layer size where it
    measured faster on the AMD development VM (``out``: the output plane's (OH, OW)).
    With tuning on, ``conv.py`` times both algorithms on every eligible layer instead."""
    return eligible(X, W, group, strides, dilations) and size_rule(W, out)


def size_rule(W, out) -> bool:
    """For an ``eligible`` layer: whether its sizes are ones where Winograd measured
    faster on the AMD development VM (enough tiles, or a small U)."""
    tiles = -(-out[0] // 2) * -(-out[1] // 2)
    u_bytes = 16 * W.shape[0] * W.shape[1] * W.dtype.itemsize
    return tiles >= MIN_TILES or u_bytes <= SMALL_WEIGHT_BYTES


def weight_transform(W: np.ndarray, g_matrix: np.ndarray = G) -> np.ndarray:
    """U (16, M, C): G g G^T of every 3x3 filter, computed in float64 (with another
    ``g_matrix``, (m + 2)^2 positions: ``_winograd4``)."""
    u = np.einsum("ai,mcij,bj->abmc", g_matrix, W.astype(np.float64), g_matrix)
    m, c = W.shape[:2]
    return np.ascontiguousarray(u.reshape(g_matrix.shape[0] ** 2, m, c), dtype=W.dtype)


@njit(cache=True, error_model="numpy", fastmath=FASTMATH)
def _phase_planes(plane, pt, pl, rows, pitch, q):
    """q[2a + b, i*pitch + j] = padded plane[2i + a, 2j + b] (0 in the padding).

    The four stride-2 phases of the zero-padded input: tile (th, tw) reads its value
    (k, l) at q[2*(k % 2) + l % 2, f + (k // 2) * pitch + l // 2], f = th*pitch + tw.
    Row i of row phase a is input row ``conv_input_coord(i, a, 2, pt, 1)``; its column j
    of phase b is input column ``conv_input_coord(j, b, 2, pl, 1)`` (``split_columns``).
    """
    height, width = plane.shape
    lo0, hi0, lo1, hi1, lo, hi = column_phase_ranges(-pl, width, pitch)
    for a in range(2):
        for i in range(rows):
            ih = _coord(i, a, 2, pt, 1)
            even = q[2 * a, i * pitch:(i + 1) * pitch]
            odd = q[2 * a + 1, i * pitch:(i + 1) * pitch]
            if ih < 0 or ih >= height:
                for j in range(pitch):
                    even[j] = 0
                    odd[j] = 0
                continue
            for j in range(lo):  # zeros where a phase reads the padding
                if j < lo0:
                    even[j] = 0
                if j < lo1:
                    odd[j] = 0
            for j in range(hi, pitch):
                if j >= hi0:
                    even[j] = 0
                if j >= hi1:
                    odd[j] = 0
            split_columns(plane[ih], -pl, even, odd, lo0, hi0, lo1, hi1, lo, hi)


@njit(inline="always")
def _sub(dst, a, b):
    for f in range(dst.size):
        dst[f] = a[f] - b[f]


@njit(inline="always")
def _add(dst, a, b):
    for f in range(dst.size):
        dst[f] = a[f] + b[f]


def input_transform(x, pt, pl, th_n, tw_n, v, t0):
    """x (C, H, W), one image -> v[xi, c, t0 + th*(tw_n + 1) + tw] = (B^T d B)[xi], the
    channels shared among the threads (``_input_channels``)."""
    run_parts(_input_channels, x.shape[0], x.size, x, pt, pl, th_n, tw_n, v, t0)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH)
def _input_channels(x, pt, pl, th_n, tw_n, v, t0, lo, hi):
    """``input_transform`` of the channels lo .. hi - 1.

    Tile rows have a pitch of tw_n + 1, so column tw = tw_n of each row is a spare tile
    (its outputs are never read) and every value of a tile is a contiguous stream:
    d[k][l] of tile f is q[2*(k % 2) + l % 2][f + (k // 2) * pitch + l // 2]
    (``_phase_planes``; q is scratch (4, (th_n + 1) * pitch + 1)). B^T acts along k,
    B along l, each as whole-stream sums and differences (loops that vectorize):

        a[2k + b] = (B^T d)[k] on column phase b     (k rows: phase 0 at +0, +pitch; 1 ...)
        v[4k + l] = (a_k B)[l] from a[2k], a[2k + 1] at offsets 0 and +1

    ``a`` is scratch (8, th_n * pitch + 1). ``q`` is zeroed: the last value of each phase
    row is read by the spare tile but never written, and garbage there can be denormal
    and halve the speed of the products.
    """
    pitch = tw_n + 1
    span = th_n * pitch
    n = span + 1
    q = np.zeros((4, (th_n + 1) * pitch + 1), x.dtype)
    a = np.empty((8, span + 1), x.dtype)
    for c in range(lo, hi):
        _phase_planes(x[c], pt, pl, th_n + 1, pitch, q)
        for b in range(2):
            d0, d1 = q[b, 0:n], q[2 + b, 0:n]  # tile rows 0 and 1
            d2, d3 = q[b, pitch:pitch + n], q[2 + b, pitch:pitch + n]  # rows 2 and 3
            _sub(a[b, 0:n], d0, d2)
            _add(a[2 + b, 0:n], d1, d2)
            _sub(a[4 + b, 0:n], d2, d1)
            _sub(a[6 + b, 0:n], d1, d3)
        for k in range(4):
            e, o = a[2 * k], a[2 * k + 1]  # columns l = 0, 2 (+1) and l = 1, 3 (+1)
            e0, o0, e1, o1 = e[0:span], o[0:span], e[1:span + 1], o[1:span + 1]
            _sub(v[4 * k, c, t0:t0 + span], e0, e1)
            _add(v[4 * k + 1, c, t0:t0 + span], o0, e1)
            _sub(v[4 * k + 2, c, t0:t0 + span], e1, o0)
            _sub(v[4 * k + 3, c, t0:t0 + span], o0, o1)


@njit(inline="always")
def _sum3(dst, a, b, c):
    for f in range(dst.size):
        dst[f] = a[f] + b[f] + c[f]


@njit(inline="always")
def _diff3(dst, a, b, c):
    for f in range(dst.size):
        dst[f] = a[f] - b[f] - c[f]


def output_transform(p, t0, th_n, tw_n, bias, z, has_z, code, p0, p1, y):
    """``_output_channels`` with the output channels shared among the threads."""
    run_parts(_output_channels, y.shape[0], y.size, p, t0, th_n, tw_n, bias, z, has_z, code, p0,
              p1, y)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH)
def _output_channels(p, t0, th_n, tw_n, bias, z, has_z, code, p0, p1, y, lo, hi):
    """p (16, M, T) -> y (M, OH, OW) of one image: A^T P A of every tile, then
    act(. + bias[m] + z) on each output row (z (M, OH, OW) when ``has_z``).

    A^T acts along k, A along l, as whole-stream sums and differences over the tiles:

        o[l]     = P[l] + P[4 + l] + P[8 + l]        (A^T row 0)
        o[4 + l] = P[4 + l] - P[8 + l] - P[12 + l]   (A^T row 1)
        o[8 + 2k]     = o[4k] + o[4k + 1] + o[4k + 2]     output (k, 0) of every tile
        o[8 + 2k + 1] = o[4k + 1] - o[4k + 2] - o[4k + 3] output (k, 1)

    then each output row interleaves its tiles' two columns. ``o`` is scratch
    (12, th_n * (tw_n + 1)).
    """
    oh_n, ow_n = y.shape[1], y.shape[2]
    pitch = tw_n + 1
    span = th_n * pitch
    pairs = ow_n // 2
    o = np.empty((12, span), y.dtype)
    for m in range(lo, hi):
        t1 = t0 + span
        for l in range(4):
            _sum3(o[l], p[l, m, t0:t1], p[4 + l, m, t0:t1], p[8 + l, m, t0:t1])
            _diff3(o[4 + l], p[4 + l, m, t0:t1], p[8 + l, m, t0:t1], p[12 + l, m, t0:t1])
        for k in range(2):
            _sum3(o[8 + 2 * k], o[4 * k], o[4 * k + 1], o[4 * k + 2])
            _diff3(o[9 + 2 * k], o[4 * k + 1], o[4 * k + 2], o[4 * k + 3])
        for oh in range(oh_n):
            th, k = oh // 2, oh % 2
            row = y[m, oh]
            even = o[8 + 2 * k, th * pitch:th * pitch + tw_n]
            odd = o[9 + 2 * k, th * pitch:th * pitch + tw_n]
            for tw in range(pairs):
                row[2 * tw] = even[tw]
                row[2 * tw + 1] = odd[tw]
            if ow_n % 2:
                row[ow_n - 1] = even[pairs]
            if has_z:  # a literal mode per call: see ``_math.finish``
                finish(row, bias[m], z[m, oh], True, code, p0, p1)
            else:
                finish(row, bias[m], row, False, code, p0, p1)


_NO_Z = np.zeros((1, 1, 1), np.float32)


def winograd_conv(X, U, bias, Z4, code, begin, out_shape):
    """Y = act(Conv(X, W) + bias + Z4) for a 3x3 stride-1 layer (``applies``), Y new;
    ``U = weight_transform(W)``.

    ``begin`` = (pad_top, pad_left); ``code`` = (activation code, p0, p1) of ``_math``.
    """
    return run_winograd(X, U, bias, Z4, code, begin, out_shape, 2,
                        (input_transform, output_transform))


def run_winograd(X, u, bias, Z4, code, begin, out_shape, block, transforms):
    """The host side of F(block x block, 3x3), here and in ``_winograd4`` (block 4): V
    per image, the (block + 2)^2 products with ``u`` (the transformed weights, computed
    once when the plan is built), the output transform.

    ``transforms`` = (input_transform, output_transform) of the module.
    """
    inputs, outputs = transforms
    n, c = X.shape[:2]
    m = u.shape[1]
    oh, ow = out_shape[2:]
    th_n, tw_n = -(-oh // block), -(-ow // block)
    span = th_n * (tw_n + 1)  # tiles per image, the spare column included
    positions = (block + 2) ** 2
    dtype = X.dtype
    X = read_only(X)  # what the kernels only read, read-only: one signature (``read_only``)
    v = empty((positions, c, n * span), dtype)
    for i in range(n):
        inputs(X[i], begin[0], begin[1], th_n, tw_n, v, i * span)
    p = empty((positions, m, n * span), dtype)
    matmul(u, v, p)
    del v
    act, p0, p1 = code
    p0, p1 = dtype.type(p0), dtype.type(p1)
    Y = empty(out_shape, dtype)
    bias = read_only(bias)  # one signature for every mix of flags (``read_only``)
    for i in range(n):
        z = read_only(_NO_Z if Z4 is None else np.ascontiguousarray(Z4[i]))
        outputs(p, i * span, th_n, tw_n, bias, z, Z4 is not None, act, p0, p1, Y[i])
    return Y
