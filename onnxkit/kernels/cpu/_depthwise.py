"""Depthwise 2-D convolution (one input channel per group), computed directly.

    Y[n, m, oh, ow] = act(B[m] + Z[n, m, oh, ow]
                          + sum_{i, j} Xpad[n, m // mult, oh*sh + i*dh, ow*sw + j*dw] * W[m, 0, i, j])

im2col would copy every input value KH*KW times for a product with one row per
channel. Instead each input plane is copied once, zero-padded and split into its
stride phases ``Q[a, b][h, w] = Xpad[h*sh + a, w*sw + b]``; then every tap (i, j) reads
one phase plane at a fixed offset, so it is one long loop over the whole output plane
laid out with the phase width ``wq``:

    acc[oh*wq + ow] += W[m, 0, i, j] * Q[(i*dh) % sh, (j*dw) % sw][oh*wq + ow + offset(i, j)]

(the columns ow >= OW of ``acc`` are computed and dropped). The padding positions of
``Q`` are zeroed once per call; each channel only copies its plane in. The epilogue
(bias, residual, activation) runs on each output plane once it is written.

The commonest layers, 3x3 with padding 1 and stride 1 or 2, skip the phase planes:
the plane is copied into a zero-bordered one, and the nine taps read shifted views of
it (``_plane_3x3``) or its rows at even columns (``_plane_3x3_s2``), on planes of any
size; stride 2 with output rows of ``S2_APART`` values or more splits each padded row
into its even and odd columns once instead (``_columns_apart``), so that every tap is a
contiguous run (``_plane_3x3_s2_apart``). Other small planes (7x7 and less, with 32+
channels) run channels-last instead (``depthwise_conv_nhwc``): the caller transposes
the few thousand values in and out, and the inner loop runs over the channels.

Index math from ``onnxkit.kernels.indexing`` (the index helpers of the cpu and cuda
kernels): ``window_start`` (a window's taps read start + i*dh, as in the cuda direct
kernel), ``conv_input_coord`` and the clamped ranges of ``window_taps`` (``valid_range``).
https://onnx.ai/onnx/operators/onnx__Conv.html
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from onnxkit.kernels.cpu._im2col import (column_phase_ranges, phase_index, split_columns,
                                          valid_range)
from onnxkit.kernels.cpu._math import FASTMATH, finish
from onnxkit.kernels.cpu._threads import split
from onnxkit.kernels.indexing import conv_input_coord, for_cpu, window_start

_coord = for_cpu(conv_input_coord)
_start = for_cpu(window_start)


@njit(cache=True, error_model="numpy", fastmath=FASTMATH)
def _phase_planes(plane, q, sh, sw, pt, pl, hq, wq):
    """q[a, b, h*wq + w] = plane[h*sh + a - pt, w*sw + b - pl] where that is inside.

    Only the positions inside the input are written: the caller zeroes ``q`` once,
    and the padding positions are the same for every channel. Row h of phase a is input
    row h*sh + a - pt: what tap a of window h reads, at dilation 1.
    """
    height, width = plane.shape
    if sw == 2:  # both column phases of a row in one pass, pairwise
        lo0, hi0, lo1, hi1, lo, hi = column_phase_ranges(-pl, width, wq)
        for a in range(sh):
            h_lo, h_hi = valid_range(_coord(0, a, sh, pt, 1), sh, height, hq)
            for h in range(h_lo, h_hi):
                split_columns(plane[_coord(h, a, sh, pt, 1)], -pl, q[a, 0, h * wq:(h + 1) * wq],
                              q[a, 1, h * wq:(h + 1) * wq], lo0, hi0, lo1, hi1, lo, hi)
        return
    for a in range(sh):
        h_lo, h_hi = valid_range(_coord(0, a, sh, pt, 1), sh, height, hq)
        for b in range(sw):
            lo, hi = valid_range(_coord(0, b, sw, pl, 1), sw, width, wq)
            for h in range(h_lo, h_hi):
                seg = q[a, b, h * wq + lo:h * wq + hi]
                src = plane[_coord(h, a, sh, pt, 1), _coord(lo, b, sw, pl, 1):]
                if sw == 1:
                    for t in range(hi - lo):
                        seg[t] = src[t]
                else:
                    for t in range(hi - lo):
                        seg[t] = src[t * sw]


@njit(cache=True, error_model="numpy", fastmath=FASTMATH)
def _taps(acc, q, wk, dh, dw, sh, sw, wq, span):
    """acc = sum over the taps of wk[i, j] * (phase plane of tap (i, j), shifted)."""
    kh, kw = wk.shape
    for k in range(span):
        acc[k] = 0
    for i in range(kh):
        a, qi = phase_index(i * dh, sh)
        for j in range(kw):
            b, qj = phase_index(j * dw, sw)
            wv = wk[i, j]
            base = qi * wq + qj
            src = q[a, b, base:base + span]
            for k in range(span):
                acc[k] += wv * src[k]


@njit(inline="always")
def _view(q, i, j, dh, dw, sh, sw, wq, span):
    a, qi = phase_index(i * dh, sh)
    b, qj = phase_index(j * dw, sw)
    base = qi * wq + qj
    return q[a, b, base:base + span]


@njit(inline="always")
def _nine_taps(acc, wk, span, s0, s1, s2, s3, s4, s5, s6, s7, s8):
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
def _rows_out(acc, pitch, dst, rows, width):
    """Rows of ``acc`` (``pitch`` apart, the first ``width`` of each) into ``dst`` (flat
    rows * width)."""
    for h in range(rows):
        out = dst[h * width:(h + 1) * width]
        seg = acc[h * pitch:h * pitch + width]
        for t in range(width):
            out[t] = seg[t]


@njit(inline="always")
def _finish_plane(dst, b, z, n, m, has_z, code, p0, p1):
    """The epilogue of output plane (n, m), flat in ``dst``: bias, residual z[n, m] when
    ``has_z``, activation."""
    if has_z:  # a literal mode per call: see ``_math.finish``
        finish(dst, b, z[n, m].reshape(dst.size), True, code, p0, p1)
    else:
        finish(dst, b, dst, False, code, p0, p1)


@njit(cache=True, error_model="numpy", fastmath=FASTMATH)
def _taps_3x3(acc, q, wk, dh, dw, sh, sw, wq, span):
    """The 3x3 case in one pass (``_nine_taps``) over the phase planes."""
    _nine_taps(acc, wk, span, _view(q, 0, 0, dh, dw, sh, sw, wq, span),
               _view(q, 0, 1, dh, dw, sh, sw, wq, span), _view(q, 0, 2, dh, dw, sh, sw, wq, span),
               _view(q, 1, 0, dh, dw, sh, sw, wq, span), _view(q, 1, 1, dh, dw, sh, sw, wq, span),
               _view(q, 1, 2, dh, dw, sh, sw, wq, span), _view(q, 2, 0, dh, dw, sh, sw, wq, span),
               _view(q, 2, 1, dh, dw, sh, sw, wq, span), _view(q, 2, 2, dh, dw, sh, sw, wq, span))


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
    per-plane setup is most of the work (one thread, 576 planes of 14x14: 142 -> 87 us;
    960 of 7x7: 149 -> 100 us). The loops run over whole vector bodies: on a 7x7 plane
    the 63 values of ``acc`` all ran in the scalar remainder of LLVM's 64-value loop, and
    so did the 49 of the epilogue on ``dst`` (AMD VM, two threads, the layer with its
    epilogue: 960 x 7x7 102 -> 59 us, 192 x 28x28 93 -> 60, 144 x 56x56 190 -> 130)."""
    height, width = src.shape
    wp = width + 2
    span = _whole_vectors(height * wp)
    _into_border(src, pad, wp)
    a, b2 = wp, 2 * wp  # tap (i, j) reads pad shifted by i rows and j columns
    _nine_taps(acc, wk, span, pad[0:span], pad[1:1 + span], pad[2:2 + span], pad[a:a + span],
               pad[a + 1:a + 1 + span], pad[a + 2:a + 2 + span], pad[b2:b2 + span],
               pad[b2 + 1:b2 + 1 + span], pad[b2 + 2:b2 + 2 + span])
    if epilogue:  # bias and activation over acc's whole vectors, before the copy out
        run = acc[:span]
        finish(run, b, run, False, code, p0, p1)
    _rows_out(acc, wp, dst, height, width)


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
    ``_plane_3x3_s2`` reads every other value (96 planes of 112x112 on the AMD VM, two
    threads: 361 -> 174 us; on rows of 14 and less it is the slower, ``S2_APART``)."""
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


@njit(cache=True)
def _direct_3x3(kh, kw, sh, sw, dh, dw, pt, pl, height, width, oh_n, ow_n):
    """1: ``_plane_3x3`` (stride 1, padding 1); 2: ``_plane_3x3_s2``; 0: neither."""
    if kh != 3 or kw != 3 or dh != 1 or dw != 1 or pt != 1 or pl != 1 or sh != sw:
        return 0
    if sh == 1 and oh_n == height and ow_n == width:
        return 1
    if sh == 2 and oh_n <= (height - 1) // 2 + 1 and ow_n <= (width - 1) // 2 + 1:
        return 2
    return 0


def direct_3x3(kernel, strides, dilations, begin, in_hw, out_hw) -> bool:
    """Whether a depthwise layer takes ``_plane_3x3`` or ``_plane_3x3_s2``."""
    return _direct_3x3(*kernel, *strides, *dilations, *begin[:2], *in_hw, *out_hw) != 0


@njit(cache=True, parallel=True)
def depthwise_conv(x, w, bias, z, has_z, sh, sw, dh, dw, pt, pl, code, p0, p1, y):
    """x (N, C, H, W), w (M, 1, KH, KW), M = C * mult, into y (N, M, OH, OW).

    The (image, channel) planes are shared among the threads in runs, each with its own
    scratch planes.
    """
    planes = x.shape[0] * x.shape[1]
    parts, per = split(planes, x.size + y.size)
    if parts == 1:  # small work: no parallel region
        _depthwise_planes(x, w, bias, z, has_z, sh, sw, dh, dw, pt, pl, code, p0, p1, y, 0,
                          planes)
        return
    for p in prange(parts):
        _depthwise_planes(x, w, bias, z, has_z, sh, sw, dh, dw, pt, pl, code, p0, p1, y,
                          p * per, min(planes, (p + 1) * per))


@njit(cache=True, error_model="numpy", fastmath=FASTMATH)
def _depthwise_planes(x, w, bias, z, has_z, sh, sw, dh, dw, pt, pl, code, p0, p1, y, lo, hi):
    """``depthwise_conv`` for the planes lo .. hi - 1 (plane = n * C + c)."""
    batch, channels, height, width = x.shape
    out_channels, _, kh, kw = w.shape
    oh_n, ow_n = y.shape[2], y.shape[3]
    mult = out_channels // channels
    direct = _direct_3x3(kh, kw, sh, sw, dh, dw, pt, pl, height, width, oh_n, ow_n)
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
                _finish_plane(dst, bias[m], z, n, m, has_z, code, p0, p1)
        return
    if direct != 0:
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
                        _finish_plane(dst, bias[m], z, n, m, True, code, p0, p1)
                else:
                    _plane_3x3_s2(x[n, c], w[m, 0], pad, dst, ow_n)
                    _finish_plane(dst, bias[m], z, n, m, has_z, code, p0, p1)
        return
    hp = _coord(oh_n - 1, kh - 1, sh, 0, dh) + 1  # padded extent the windows read
    wp = _coord(ow_n - 1, kw - 1, sw, 0, dw) + 1
    hq = (hp + sh - 1) // sh + 1  # one slack row: reads past the last row stay inside
    wq = (wp + sw - 1) // sw
    q = np.zeros((sh, sw, hq * wq), x.dtype)
    span = oh_n * wq
    acc = np.empty(span, x.dtype)
    for plane in range(lo, hi):
        n, c = plane // channels, plane % channels
        _phase_planes(x[n, c], q, sh, sw, pt, pl, hq, wq)
        for m in range(c * mult, (c + 1) * mult):
            out = y[n, m].reshape(oh_n * ow_n)
            if kh == 3 and kw == 3:
                _taps_3x3(acc, q, w[m, 0], dh, dw, sh, sw, wq, span)
            else:
                _taps(acc, q, w[m, 0], dh, dw, sh, sw, wq, span)
            _rows_out(acc, wq, out, oh_n, ow_n)
            _finish_plane(out, bias[m], z, n, m, has_z, code, p0, p1)


@njit(cache=True, parallel=True)
def depthwise_conv_nhwc(x, w, bias, z, has_z, sh, sw, dh, dw, pt, pl, code, p0, p1, y):
    """Channels-last, for small planes: x (H, W, C), w (KH, KW, C), y (OH, OW, C).

    Every output pixel is one loop over the channels per tap (long and contiguous), where
    the planar kernel would pay its per-channel setup on planes of a few dozen pixels.
    The output rows are shared among the threads.
    """
    rows = y.shape[0]
    parts, per = split(rows, x.size + y.size)
    if parts == 1:  # small work: no parallel region
        _nhwc_rows(x, w, bias, z, has_z, sh, sw, dh, dw, pt, pl, code, p0, p1, y, 0, rows)
        return
    for p in prange(parts):
        _nhwc_rows(x, w, bias, z, has_z, sh, sw, dh, dw, pt, pl, code, p0, p1, y, p * per,
                   min(rows, (p + 1) * per))


@njit(cache=True, error_model="numpy", fastmath=FASTMATH)
def _nhwc_rows(x, w, bias, z, has_z, sh, sw, dh, dw, pt, pl, code, p0, p1, y, lo, hi):
    height, width, channels = x.shape
    kh, kw = w.shape[0], w.shape[1]
    ow_n = y.shape[1]
    zero = bias[0] * 0
    for oh in range(lo, hi):
        top = _start(oh, sh, pt)
        for ow in range(ow_n):
            left = _start(ow, sw, pl)
            out = y[oh, ow]
            for c in range(channels):
                out[c] = bias[c]
            for i in range(kh):
                ih = top + i * dh
                if ih < 0 or ih >= height:
                    continue
                for j in range(kw):
                    iw = left + j * dw
                    if iw < 0 or iw >= width:
                        continue
                    src = x[ih, iw]
                    wt = w[i, j]
                    for c in range(channels):
                        out[c] += wt[c] * src[c]
            if has_z:
                finish(out, zero, z[oh, ow], True, code, p0, p1)
            else:
                finish(out, zero, out, False, code, p0, p1)
