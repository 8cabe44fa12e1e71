"""Winograd F(4x4, 3x3): 3x3 stride-1 convolutions with 4x fewer multiplications.

The larger sibling of ``_winograd`` (F(2x2, 3x3), whose docstring explains the method).
Each 4x4 block of outputs reads a 6x6 input tile (tiles overlap by 2):

    Y = A^T [ (G g G^T) * (B^T d B) ] A          (* elementwise, 6x6)

    B^T = [[4,  0, -5,  0, 1, 0],        G = [[ 1/4,     0,    0],
           [0, -4, -4,  1, 1, 0],             [-1/6, -1/6, -1/6],
           [0,  4, -4, -1, 1, 0],             [-1/6,  1/6, -1/6],
           [0, -2, -1,  2, 1, 0],             [1/24, 1/12,  1/6],
           [0,  2, -1, -2, 1, 0],             [1/24, -1/12, 1/6],
           [0,  4,  0, -5, 0, 1]]             [   0,     0,    1]]

    A^T = [[1, 1,  1, 1,  1, 0],
           [0, 1, -1, 2, -2, 0],
           [0, 1,  1, 4,  4, 0],
           [0, 1, -1, 8, -8, 1]]

36 matrix products P[xi] = U[xi] @ V[xi] (xi = 6k + l) do 36 * M * C * T multiply-adds,
T = ceil(OH/4) * ceil(OW/4) tiles: 4x fewer than im2col's 9 * M * C * OH * OW when the
plane is a multiple of 4 (ResNet's 56x56 and 28x28), fewer still than F(2x2, 3x3)'s
2.25x. The price: V and P are 2.25x the input and output, U is 4x the weight, and the
transforms have more terms. The larger interpolation points (+-2) cost precision: the
error is ~10x F(2x2, 3x3)'s, ~1e-6 of the output's scale in float32. ``conv.py`` offers
it to the timing of ``_tuning`` next to im2col and F(2x2, 3x3).

The transforms run on whole planes as streams, like ``_winograd``: the zero-padded input
is split into 16 phases ``q[4a + b, i * pitch + j] = Xpad[4i + a, 4j + b]`` (pitch =
tiles per row + 1, a spare tile), so value (k, l) of every tile f is the contiguous run
``q[4 (k % 4) + l % 4, f + (k // 4) pitch + l // 4]``; B^T then acts along k and B along
l with sums of whole streams, loops that vectorize. The output transform does the same
with A^T, then interleaves each output row's four tile columns. Tile (th, tw) reads input
row ``conv_input_coord(4 th, k, 1, pad_top, 1)`` (``onnxkit.kernels.indexing``).
https://arxiv.org/abs/1509.09308
"""

from __future__ import annotations

import numpy as np
from numba import njit

from onnxkit.kernels.cpu._im2col import valid_range
from onnxkit.kernels.cpu._math import FASTMATH, finish
from onnxkit.kernels.cpu._threads import run_parts
from onnxkit.kernels.cpu._winograd import eligible_for, run_winograd
from onnxkit.kernels.cpu._winograd import weight_transform as transformed_weights
from onnxkit.kernels.indexing import conv_input_coord, for_cpu

_coord = for_cpu(conv_input_coord)

G = np.array([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6],
              [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]])
B_T = np.array([[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
                [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]], float)
A_T = np.array([[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0],
                [0, 1, -1, 8, -8, 1]], float)
MAX_WEIGHT_BYTES = 16 << 20  # U (36 * M * C values) above this: bound by reading U
MIN_TILES = 49  # per image: the static rule's choice from 28x28 output planes up
_1, _2, _4, _5, _8 = (np.float32(v) for v in (1, 2, 4, 5, 8))


def eligible(X, W, group, strides, dilations) -> bool:
    """float32 2-D 3x3, stride and dilation 1, one group, 16+ channels each side, U at
    most ``MAX_WEIGHT_BYTES`` (W a constant: the caller's part, as in ``_winograd``)."""
    return eligible_for(X, W, group, strides, dilations, G, MAX_WEIGHT_BYTES)


def size_rule(out) -> bool:
    """For an ``eligible`` layer, the static rule (``ONNXKIT_CPU_TUNE=0``): output planes
    of 28x28 and up, where it beat F(2x2, 3x3) and im2col on ResNet's layers (Intel VM)."""
    return -(-out[0] // 4) * -(-out[1] // 4) >= MIN_TILES


def weight_transform(W: np.ndarray) -> np.ndarray:
    """U (36, M, C): G g G^T of every 3x3 filter, computed in float64."""
    return transformed_weights(W, G)


@njit(cache=True, error_model="numpy", fastmath=FASTMATH)
def _phase_planes(plane, pt, pl, rows, pitch, q):
    """q[4a + b, i*pitch + j] = plane[4i + a - pt, 4j + b - pl] where that is inside.

    Only positions inside the plane are written: the caller zeroes ``q`` once, and the
    padding positions are the same for every channel.
    """
    height, width = plane.shape
    for a in range(4):
        i_lo, i_hi = valid_range(a - pt, 4, height, rows)
        for b in range(4):
            j_lo, j_hi = valid_range(b - pl, 4, width, pitch)
            dst = q[4 * a + b]
            for i in range(i_lo, i_hi):
                src = plane[_coord(i, a, 4, pt, 1), _coord(j_lo, b, 4, pl, 1):]
                seg = dst[i * pitch + j_lo:i * pitch + j_hi]
                for t in range(j_hi - j_lo):
                    seg[t] = src[4 * t]


@njit(inline="always")
def _lin3(dst, c0, a0, c1, a1, c2, a2):
    for f in range(dst.size):
        dst[f] = c0 * a0[f] + c1 * a1[f] + c2 * a2[f]


@njit(inline="always")
def _lin4(dst, c0, a0, c1, a1, c2, a2, c3, a3):
    for f in range(dst.size):
        dst[f] = c0 * a0[f] + c1 * a1[f] + c2 * a2[f] + c3 * a3[f]


@njit(inline="always")
def _lin5(dst, c0, a0, c1, a1, c2, a2, c3, a3, c4, a4):
    for f in range(dst.size):
        dst[f] = c0 * a0[f] + c1 * a1[f] + c2 * a2[f] + c3 * a3[f] + c4 * a4[f]


@njit(inline="always")
def _b_t(o0, o1, o2, o3, o4, o5, d0, d1, d2, d3, d4, d5):
    """o_k = (B^T d)[k] for six streams d, one loop per row of B^T.

    Every stream is passed on its own: a row of a strided view would be a non-contiguous
    array to Numba, and its loops would not vectorize.
    """
    _lin3(o0, _4, d0, -_5, d2, _1, d4)
    _lin4(o1, -_4, d1, -_4, d2, _1, d3, _1, d4)
    _lin4(o2, _4, d1, -_4, d2, -_1, d3, _1, d4)
    _lin4(o3, -_2, d1, -_1, d2, _2, d3, _1, d4)
    _lin4(o4, _2, d1, -_1, d2, -_2, d3, _1, d4)
    _lin3(o5, _4, d1, -_5, d3, _1, d5)


@njit(inline="always")
def _a_t(o0, o1, o2, o3, m0, m1, m2, m3, m4, m5):
    """o_i = (A^T m)[i] for six streams m (see ``_b_t``)."""
    _lin5(o0, _1, m0, _1, m1, _1, m2, _1, m3, _1, m4)
    _lin4(o1, _1, m1, -_1, m2, _2, m3, -_2, m4)
    _lin4(o2, _1, m1, _1, m2, _4, m3, _4, m4)
    _lin5(o3, _1, m1, -_1, m2, _8, m3, -_8, m4, _1, m5)


def input_transform(x, pt, pl, th_n, tw_n, v, t0):
    """x (C, H, W), one image -> v[6k + l, c, t0 + th*(tw_n + 1) + tw] = (B^T d B)[k, l],
    the channels shared among the threads (``_input_channels``)."""
    run_parts(_input_channels, x.shape[0], x.size, x, pt, pl, th_n, tw_n, v, t0)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH)
def _input_channels(x, pt, pl, th_n, tw_n, v, t0, lo, hi):
    """``input_transform`` of the channels lo .. hi - 1.

    ``q`` is zeroed scratch (16, (th_n + 2) * pitch); ``r`` scratch (4, 6, span + 1):
    r[b, k'] = B^T along k of the tiles' column-phase-b values (``_b_t``), then B along l
    reads r[l % 4, k'] at offset l // 4.
    """
    pitch = tw_n + 1
    span = th_n * pitch
    n = span + 1
    q = np.zeros((16, (th_n + 2) * pitch), x.dtype)  # every value read is written or zero
    r = np.empty((4, 6, span + 1), x.dtype)
    for c in range(lo, hi):
        _phase_planes(x[c], pt, pl, th_n + 2, pitch, q)
        for b in range(4):
            _b_t(r[b, 0], r[b, 1], r[b, 2], r[b, 3], r[b, 4], r[b, 5],
                 q[b, 0:n], q[4 + b, 0:n], q[8 + b, 0:n], q[12 + b, 0:n],
                 q[b, pitch:pitch + n], q[4 + b, pitch:pitch + n])
        for k in range(6):
            t1 = t0 + span
            _b_t(v[6 * k, c, t0:t1], v[6 * k + 1, c, t0:t1], v[6 * k + 2, c, t0:t1],
                 v[6 * k + 3, c, t0:t1], v[6 * k + 4, c, t0:t1], v[6 * k + 5, c, t0:t1],
                 r[0, k, 0:span], r[1, k, 0:span], r[2, k, 0:span], r[3, k, 0:span],
                 r[0, k, 1:span + 1], r[1, k, 1:span + 1])


def output_transform(p, t0, th_n, tw_n, bias, z, has_z, code, p0, p1, y):
    """p (36, M, T) -> y (M, OH, OW) of one image: A^T P A of every tile, then
    act(. + bias[m] + z) on each output plane (z (M, OH, OW) when ``has_z``); the output
    channels shared among the threads (``_output_channels``)."""
    run_parts(_output_channels, y.shape[0], y.size, p, t0, th_n, tw_n, bias, z, has_z, code, p0,
              p1, y)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH)
def _output_channels(p, t0, th_n, tw_n, bias, z, has_z, code, p0, p1, y, lo, hi):
    """``output_transform`` of the output channels lo .. hi - 1.

    ``s`` is scratch (6, 4, span): s[l, i] = A^T along k; ``o`` (4, 4, span): o[i, j] =
    output (i, j) of every tile; output row 4 th + i interleaves o[i, 0..3] of row th.
    """
    oh_n, ow_n = y.shape[1], y.shape[2]
    pitch = tw_n + 1
    span = th_n * pitch
    t1 = t0 + span
    s = np.empty((6, 4, span), y.dtype)
    o = np.empty((4, 4, span), y.dtype)
    for m in range(lo, hi):
        for l in range(6):
            _a_t(s[l, 0], s[l, 1], s[l, 2], s[l, 3],
                 p[l, m, t0:t1], p[6 + l, m, t0:t1], p[12 + l, m, t0:t1],
                 p[18 + l, m, t0:t1], p[24 + l, m, t0:t1], p[30 + l, m, t0:t1])
        for i in range(4):
            _a_t(o[i, 0], o[i, 1], o[i, 2], o[i, 3],
                 s[0, i], s[1, i], s[2, i], s[3, i], s[4, i], s[5, i])
        for oh in range(oh_n):
            th, i = oh // 4, oh % 4
            row = y[m, oh]
            base = th * pitch
            c0, c1 = o[i, 0, base:base + tw_n], o[i, 1, base:base + tw_n]
            c2, c3 = o[i, 2, base:base + tw_n], o[i, 3, base:base + tw_n]
            full = ow_n // 4
            for tw in range(full):
                row[4 * tw] = c0[tw]
                row[4 * tw + 1] = c1[tw]
                row[4 * tw + 2] = c2[tw]
                row[4 * tw + 3] = c3[tw]
            for ow in range(4 * full, ow_n):
                row[ow] = o[i, ow - 4 * full, base + full]
        plane = y[m].reshape(oh_n * ow_n)
        if has_z:  # a literal mode per call: see ``_math.finish``
            finish(plane, bias[m], z[m].reshape(oh_n * ow_n), True, code, p0, p1)
        else:
            finish(plane, bias[m], plane, False, code, p0, p1)


def winograd4_conv(X, U, bias, Z4, code, begin, out_shape):
    """Y = act(Conv(X, W) + bias + Z4) for a 3x3 stride-1 layer (``eligible``), Y new;
    ``U = weight_transform(W)``.

    ``begin`` = (pad_top, pad_left); ``code`` = (activation code, p0, p1) of ``_math``.
    """
    return run_winograd(X, U, bias, Z4, code, begin, out_shape, 4,
                        (input_transform, output_transform))
