"""Depthwise 3x3 layers with padding 1, stride 1 or 2: the commonest depthwise layers
(MobileNets'), without the stride phases of ``_depthwise``.

    stride 1:  the plane copied into a zero-bordered one; the nine taps read shifted
               views of it, one loop over the whole plane (``_plane_3x3``)
    stride 2:  each output row from three padded rows read at even columns
               (``_plane_3x3_s2``); from output rows of ``S2_APART`` values, each padded
               row split once into its even and odd columns, so that every tap is a
               contiguous run (``_columns_apart``, ``_plane_3x3_s2_apart``)

On planes of any size. The epilogue (bias, residual, activation) runs on each output
plane (``finish_plane``). ``nine_taps``, ``rows_out`` and ``finish_plane`` serve the
phase-plane path of ``_depthwise`` too.
https://onnx.ai/onnx/operators/onnx__Conv.html
"""

from __future__ import annotations

import numpy as np
from numba import njit

from onnxkit.kernels.cpu._math import FASTMATH, finish


@njit(inline="always")
def nine_taps(acc, wk, span, s0, s1, s2, s3, s4, s5, s6, s7, s8):
    """acc[k] = sum of wk[i, j] * s_(3i + j)[k]: nine loads and nine FMAs per output."""
    w0, w1, w2 = wk[0, 0], wk[0, 1], wk[0, 2]
    w3, w4, w5 = wk[1, 0], wk[1, 1], wk[1, 2]
    w6, w7, w8 = wk[2, 0], wk[2, 1], wk[2, 2]
    for k in range(span):
        acc[k] = (w0 * s0[k] + w1 * s1[k] + w2 * s2[k] + w3 * s3[k] + w4 * s4[k]
                  + w5 * s5[k] + w6 * s6[k] + w7 * s7[k] + w8 * s8[k])


@njit(inline="always")
def _into_border(src, pad, wp):
    """The plane ``src`` (H, W) into the inside of the zero-bordered ``pad`` (rows of
    ``wp`` = W + 2 values, one border row and column before it)."""
    height, width = src.shape
    for h in range(height):
        row = pad[(h + 1) * wp + 1:(h + 1) * wp + 1 + width]
        line = src[h]
        for t in range(width):
            row[t] = line[t]


@njit(inline="always")
def rows_out(acc, pitch, dst, rows, width):
    """Rows of ``acc`` (``pitch`` apart, the first ``width`` of each) into ``dst`` (flat
    rows * width)."""
    for h in range(rows):
        out = dst[h * width:(h + 1) * width]
        seg = acc[h * pitch:h * pitch + width]
        for t in range(width):
            out[t] = seg[t]


@njit(inline="always")
def finish_plane(dst, b, z, n, m, has_z, code, p0, p1):
    """The epilogue of output plane (n, m), flat in ``dst``: bias, residual z[n, m] when
    ``has_z``, activation."""
    if has_z:  # a literal mode per call: see ``_math.finish``
        finish(dst, b, z[n, m].reshape(dst.size), True, code, p0, p1)
    else:
        finish(dst, b, dst, False, code, p0, p1)


VECTOR_RUN = 64  # values: LLVM's vector loop body here (16 lanes x 4 interleaved)


@njit(inline="always")
def _whole_vectors(n):
    """n rounded up to a whole number of vector-loop bodies (``VECTOR_RUN``): a loop of
    63 values (a 7x7 plane with its border columns) otherwise runs all of them in the
    scalar remainder."""
    return (n + VECTOR_RUN - 1) // VECTOR_RUN * VECTOR_RUN


@njit(cache=True, error_model="numpy", fastmath=FASTMATH)
def _plane_3x3(src, wk, pad, acc, dst, b, code, p0, p1, epilogue):
    """The commonest layer, 3x3 with stride 1 and padding 1 (output plane = input plane
    (H, W)), on one plane: ``src`` copied into the zero border of ``pad``
    ((H + 3) * (W + 2) + VECTOR_RUN), nine shifted views of it summed into ``acc``
    (H * (W + 2) rounded up to whole vector bodies), bias ``b`` and activation applied
    there when ``epilogue`` (else the caller runs the epilogue), its rows copied out to
    ``dst`` (flat H * W). No phase planes: on the 14x14 and 7x7 planes of a MobileNet the
    per-plane setup is most of the work. The loops run over whole vector bodies: on a
    7x7 plane the 63 values of ``acc`` would all run in the scalar remainder of LLVM's
    64-value loop, and so would the 49 of the epilogue on ``dst`` (docs/cpu.md)."""
    height, width = src.shape
    wp = width + 2
    span = _whole_vectors(height * wp)
    _into_border(src, pad, wp)
    a, b2 = wp, 2 * wp  # tap (i, j) reads pad shifted by i rows and j columns
    nine_taps(acc, wk, span, pad[0:span], pad[1:1 + span], pad[2:2 + span], pad[a:a + span],
              pad[a + 1:a + 1 + span], pad[a + 2:a + 2 + span], pad[b2:b2 + span],
              pad[b2 + 1:b2 + 1 + span], pad[b2 + 2:b2 + 2 + span])
    if epilogue:  # bias and activation over acc's whole vectors, before the copy out
        run = acc[:span]
        finish(run, b, run, False, code, p0, p1)
    rows_out(acc, wp, dst, height, width)


@njit(cache=True, error_model="numpy", fastmath=FASTMATH)
def _plane_3x3_s2(src, wk, pad, dst, ow_n):
    """3x3 with stride 2 and padding 1 (top and left; the output at most
    ((H - 1) // 2 + 1, (W - 1) // 2 + 1)) on one plane: ``src`` copied into the zero
    border of ``pad`` ((H + 2) * (W + 2)), then each output row from three padded rows
    read at even columns (loads LLVM vectorizes as interleaved pairs), no phase planes;
    ``dst`` flat (OH * OW; the caller runs the epilogue)."""
    wp = src.shape[1] + 2
    _into_border(src, pad, wp)
    w0, w1, w2 = wk[0, 0], wk[0, 1], wk[0, 2]
    w3, w4, w5 = wk[1, 0], wk[1, 1], wk[1, 2]
    w6, w7, w8 = wk[2, 0], wk[2, 1], wk[2, 2]
    for oh in range(dst.size // ow_n):
        r = 2 * oh * wp
        a, c, e = pad[r:r + wp], pad[r + wp:r + 2 * wp], pad[r + 2 * wp:r + 3 * wp]
        out = dst[oh * ow_n:(oh + 1) * ow_n]
        for t in range(ow_n):
            out[t] = (w0 * a[2 * t] + w1 * a[2 * t + 1] + w2 * a[2 * t + 2]
                      + w3 * c[2 * t] + w4 * c[2 * t + 1] + w5 * c[2 * t + 2]
                      + w6 * e[2 * t] + w7 * e[2 * t + 1] + w8 * e[2 * t + 2])


S2_APART = 24  # output columns: from this many, stride 2 reads columns set apart


@njit(inline="always")
def _columns_apart(src, ev, od, pitch):
    """The zero-padded plane (padding 1 before each row and column) split into its even
    and odd columns: ``ev[(h + 1) * pitch + t] = src[h, 2t - 1]``, ``od[(h + 1) * pitch + t]
    = src[h, 2t]`` where inside ``src``. Row 0 and the entries past a row's end are the
    padding: the caller zeroes ``ev`` and ``od`` once (``pitch`` >= W // 2 + 2)."""
    height, width = src.shape
    half = width // 2
    for h in range(height):
        line = src[h]
        even = ev[(h + 1) * pitch + 1:(h + 2) * pitch]
        odd = od[(h + 1) * pitch:(h + 2) * pitch]
        for t in range(half):
            odd[t] = line[2 * t]
            even[t] = line[2 * t + 1]
        if width % 2 == 1:
            odd[half] = line[width - 1]


@njit(cache=True, error_model="numpy", fastmath=FASTMATH)
def _plane_3x3_s2_apart(ev, od, pitch, wk, dst, ow_n):
    """3x3, stride 2, padding 1 from the columns set apart (``_columns_apart``): output
    (oh, t) reads padded rows 2oh .. 2oh + 2 at columns 2t, 2t + 1, 2t + 2, that is
    ``ev[t]``, ``od[t]``, ``ev[t + 1]`` of each row: nine contiguous runs, where
    ``_plane_3x3_s2`` reads every other value (on rows of 14 and less it is the slower,
    ``S2_APART``; docs/cpu.md)."""
    w0, w1, w2 = wk[0, 0], wk[0, 1], wk[0, 2]
    w3, w4, w5 = wk[1, 0], wk[1, 1], wk[1, 2]
    w6, w7, w8 = wk[2, 0], wk[2, 1], wk[2, 2]
    for oh in range(dst.size // ow_n):
        r = 2 * oh * pitch
        e0, o0, f0 = ev[r:r + ow_n], od[r:r + ow_n], ev[r + 1:r + 1 + ow_n]
        r += pitch
        e1, o1, f1 = ev[r:r + ow_n], od[r:r + ow_n], ev[r + 1:r + 1 + ow_n]
        r += pitch
        e2, o2, f2 = ev[r:r + ow_n], od[r:r + ow_n], ev[r + 1:r + 1 + ow_n]
        out = dst[oh * ow_n:(oh + 1) * ow_n]
        for t in range(ow_n):
            out[t] = (w0 * e0[t] + w1 * o0[t] + w2 * f0[t] + w3 * e1[t] + w4 * o1[t]
                      + w5 * f1[t] + w6 * e2[t] + w7 * o2[t] + w8 * f2[t])


def direct_kind(kh, kw, sh, sw, dh, dw, pt, pl, height, width, oh_n, ow_n):
    """1: ``_plane_3x3`` (stride 1, padding 1); 2: stride 2 (``_plane_3x3_s2`` or
    ``_plane_3x3_s2_apart``); 0: neither."""
    if kh != 3 or kw != 3 or dh != 1 or dw != 1 or pt != 1 or pl != 1 or sh != sw:
        return 0
    if sh == 1 and oh_n == height and ow_n == width:
        return 1
    if sh == 2 and oh_n <= (height - 1) // 2 + 1 and ow_n <= (width - 1) // 2 + 1:
        return 2
    return 0


def direct_3x3(kernel, strides, dilations, begin, in_hw, out_hw) -> bool:
    """Whether a depthwise layer takes ``_plane_3x3`` or ``_plane_3x3_s2``."""
    return direct_kind(*kernel, *strides, *dilations, *begin[:2], *in_hw, *out_hw) != 0



@njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH)
def planes_3x3(x, w, bias, z, has_z, direct, code, p0, p1, y, lo, hi):
    """The planes lo .. hi - 1 (plane = n * C + c) of a layer ``direct_kind`` found direct
    (1: stride 1, 2: stride 2), the epilogue on each output plane."""
    height, width = x.shape[2], x.shape[3]
    channels, mult = x.shape[1], w.shape[0] // x.shape[1]
    oh_n, ow_n = y.shape[2], y.shape[3]
    if direct == 2 and ow_n >= S2_APART:
        pitch = width // 2 + 2
        rows = max(2 * oh_n + 1, height + 1)
        ev, od = np.zeros(rows * pitch + 1, x.dtype), np.zeros(rows * pitch + 1, x.dtype)
        for plane in range(lo, hi):
            n, c = plane // channels, plane % channels
            _columns_apart(x[n, c], ev, od, pitch)
            for m in range(c * mult, (c + 1) * mult):
                dst = y[n, m].reshape(oh_n * ow_n)
                _plane_3x3_s2_apart(ev, od, pitch, w[m, 0], dst, ow_n)
                finish_plane(dst, bias[m], z, n, m, has_z, code, p0, p1)
        return
    pad = np.zeros((height + 3) * (width + 2) + VECTOR_RUN, x.dtype)
    acc = np.empty(_whole_vectors(height * (width + 2)), x.dtype)
    for plane in range(lo, hi):
        n, c = plane // channels, plane % channels
        for m in range(c * mult, (c + 1) * mult):
            dst = y[n, m].reshape(oh_n * ow_n)
            if direct == 1:  # the epilogue in the plane's loop, unless a residual
                _plane_3x3(x[n, c], w[m, 0], pad, acc, dst, bias[m], code, p0, p1,
                           not has_z)
                if has_z:
                    finish_plane(dst, bias[m], z, n, m, True, code, p0, p1)
            else:
                _plane_3x3_s2(x[n, c], w[m, 0], pad, dst, ow_n)
                finish_plane(dst, bias[m], z, n, m, has_z, code, p0, p1)
