"""Conv of few output pixels: one dot product per output value, in one Numba call.

    for each image:
        P[n, :] = the window of output pixel n, flattened   (N x K, K = C*KH*KW: a patch
                                                             per row, zeros in the padding)
        Y[m, n] = activation(W[m, :] . P[n, g*Kg : (g+1)*Kg] + bias[m] (+ Z[m, n]))
                  (g = m's group, Kg = K / group; the rows m shared among the threads)

A layer late in a small-input network has an output plane of 3x3 or 7x7 pixels and
hundreds of channels: SqueezeNet 1.1 at 64x64 ends on 256 x 576 x 9 products. A BLAS
product that narrow spends its time packing its operands (``docs/cpu.md``, "Few output
pixels").

Here W is read as it is stored (M x K, each row contiguous) and each patch is a
contiguous row of P, so every output value is a dot product of two contiguous rows:
two rows of W against four patches at a time (eight sums, each a vectorized
reduction), both threads on their own pairs of rows. Patches, products and epilogue
are one call: no Python between them.

The static rule (``_conv_rules``) runs this path for at most ``PIXELS`` output pixels;
with tuning on it is timed against im2col + BLAS per layer (``conv.PreparedConv``).
"""

from __future__ import annotations

from numba import njit

from onnxkit.kernels.cpu._im2col import fill_run
from onnxkit.kernels.cpu._math import FASTMATH, finish_rows_bias
from onnxkit.kernels.cpu._threads import parts_of, run_parts
from onnxkit.kernels.indexing import conv_input_coord, for_cpu, im2col_row, window_taps

_coord = for_cpu(conv_input_coord)
_row = for_cpu(im2col_row)
_window_taps = for_cpu(window_taps)

PIXELS = 16  # output pixels per image, at most: the static rule (tuning off)
# multiply-adds counted as one value of ``_threads.min_parallel``: the four-patch loop
# does eight per pair of loads, so a split pays off only past four times the values of the
# element-wise kernels (measurements: docs/cpu.md, "Few-pixel convolutions")
MACS_PER_VALUE = 4


def rule(pixels: int) -> bool:
    """Whether a layer of ``pixels`` output pixels runs by dot products (tuning off)."""
    return pixels <= PIXELS


def eligible(pixels: int) -> bool:
    """Whether the path is worth timing for a layer of ``pixels`` output pixels: up to an
    8x8 plane (the 7x7 planes of networks at 224x224 included); on larger planes im2col +
    BLAS is the faster (docs/cpu.md)."""
    return pixels <= 64


@njit(cache=True, nogil=True, error_model="numpy")
def patches(x, p, kh, kw, sh, sw, dh, dw, top, left, ow_n):
    """x (C, H, W) -> p (N, C*kh*kw): p[n, im2col_row(c, 0, i, j)] = x[c, ih, iw] for
    output pixel n = oh * ow_n + ow (0 where (ih, iw) falls in the padding).

    Per pixel, the taps inside the input are one range of rows and one of columns
    (``window_taps``); a patch with taps outside is zeroed first. The innermost loop
    runs over the channels (one tap of each): over the taps instead, its few iterations
    would cost more in loop setup than in copying (docs/cpu.md).
    """
    channels, height, width = x.shape
    plane, taps = height * width, kh * kw
    flat = x.reshape(channels * plane)
    for n in range(p.shape[0]):
        oh = n // ow_n
        ow = n - oh * ow_n
        dst = p[n]
        ih0 = _coord(oh, 0, sh, top, dh)
        iw0 = _coord(ow, 0, sw, left, dw)
        i0, i1 = _window_taps(ih0, dh, kh, height)
        j0, j1 = _window_taps(iw0, dw, kw, width)
        if i0 > 0 or i1 < kh or j0 > 0 or j1 < kw:
            fill_run(dst, 0, dst.size)
        for i in range(i0, i1):
            for j in range(j0, j1):
                src = flat[(ih0 + i * dh) * width + iw0 + j * dw:]
                at = dst[_row(0, 0, i, j, 1, kh, kw):]
                for c in range(channels):  # a long loop: a short one costs its setup
                    at[c * taps] = src[c * plane]


@njit(inline="always", fastmath=FASTMATH, error_model="numpy")
def _dots(w, p, y, zero, lo, hi, per_group):
    """y[m, n] = w[m] . p[n, g*Kg : (g+1)*Kg] for the rows m in [lo, hi): two rows of w
    against four patches per pass, then the last N % 4 patches one at a time (with the
    four-patch pass clamped onto them instead, a 3x3 plane's products took 22% longer,
    a 1x1 plane's 1.7-2.3x)."""
    k = w.shape[1]
    pixels = p.shape[0]
    full = pixels - pixels % 4
    m = lo
    while m < hi:
        g = m // per_group
        two = m + 1 < hi and (m + 1) // per_group == g
        wa = w[m]
        wb = w[m + 1] if two else wa
        at = g * k
        for n in range(0, full, 4):
            p0, p1 = p[n, at:at + k], p[n + 1, at:at + k]
            p2, p3 = p[n + 2, at:at + k], p[n + 3, at:at + k]
            a0 = a1 = a2 = a3 = b0 = b1 = b2 = b3 = zero
            for t in range(k):
                x0, x1, x2, x3 = p0[t], p1[t], p2[t], p3[t]
                u, v = wa[t], wb[t]
                a0 += u * x0
                a1 += u * x1
                a2 += u * x2
                a3 += u * x3
                b0 += v * x0
                b1 += v * x1
                b2 += v * x2
                b3 += v * x3
            y[m, n], y[m, n + 1], y[m, n + 2], y[m, n + 3] = a0, a1, a2, a3
            if two:
                y[m + 1, n], y[m + 1, n + 1], y[m + 1, n + 2], y[m + 1, n + 3] = b0, b1, b2, b3
        for n in range(full, pixels):
            p0 = p[n, at:at + k]
            a0 = b0 = zero
            for t in range(k):
                x0 = p0[t]
                a0 += wa[t] * x0
                b0 += wb[t] * x0
            y[m, n] = a0
            if two:
                y[m + 1, n] = b0
        m += 2 if two else 1


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH)
def _pairs(w, p, bias, z, has_z, code, p0, p1, y, zero, per_group, lo, hi):
    """Output rows 2 lo .. 2 hi - 1 (row pairs lo .. hi - 1): dots, then the epilogue."""
    first, last = 2 * lo, min(w.shape[0], 2 * hi)
    _dots(w, p, y, zero, first, last, per_group)
    finish_rows_bias(y, bias, z, has_z, first, last, code, p0, p1)


def pixel_dots_conv(x, w, bias, z, has_z, code, p0, p1, y, p, zero, kh, kw, sh, sw, dh, dw,
                    top, left, ow_n, group):
    """One image: x (C, H, W) -> y (M, N), N = OH * OW output pixels (row-major, ``ow_n``
    per row).

    ``w`` (M, C/group*kh*kw) contiguous; ``z`` (M, N) when ``has_z``; ``p`` (N, C*kh*kw)
    scratch for the patches; ``zero``: 0 in x's dtype. The output rows are shared among
    the threads, in pairs.
    """
    patches(x, p, kh, kw, sh, sw, dh, dw, top, left, ow_n)
    rows = w.shape[0]
    run_parts(_pairs, (rows + 1) // 2, _work(rows, w.shape[1], y.shape[1]), w, p, bias, z,
              has_z, code, p0, p1, y, zero, rows // group)


def _work(rows: int, k: int, pixels: int) -> int:
    """An image's products as values of ``min_parallel`` (``MACS_PER_VALUE``)."""
    return rows * k * pixels // MACS_PER_VALUE


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH)
def dots_images(x, w, bias, z, has_z, code, p0, p1, y, p, zero, geo):
    """Every image of x (N, C, H, W) -> y (N, M, OH, OW) in this one call and thread:
    per image, what ``pixel_dots_conv`` computes with a single part (the same bits).
    ``z`` (N, M, OH, OW) when ``has_z``, else any 4-D array; ``geo``: int64
    (kh, kw, sh, sw, dh, dw, top, left, ow_n, group)."""
    kh, kw, sh, sw, dh, dw = geo[0], geo[1], geo[2], geo[3], geo[4], geo[5]
    top, left, ow_n, group = geo[6], geo[7], geo[8], geo[9]
    m, pixels = y.shape[1], p.shape[0]
    for i in range(x.shape[0]):
        patches(x[i], p, kh, kw, sh, sw, dh, dw, top, left, ow_n)
        yi = y[i].reshape(m, pixels)
        _dots(w, p, yi, zero, 0, m, m // group)
        if has_z:
            finish_rows_bias(yi, bias, z[i].reshape(m, pixels), True, 0, m, code, p0, p1)
        else:
            finish_rows_bias(yi, bias, yi, False, 0, m, code, p0, p1)


def one_call(rows: int, k: int, pixels: int) -> bool:
    """Whether an image's products (``rows`` x ``k`` by ``pixels``) run in one part: then
    every image is one call of ``dots_images``."""
    return parts_of((rows + 1) // 2, _work(rows, k, pixels))[0] == 1
