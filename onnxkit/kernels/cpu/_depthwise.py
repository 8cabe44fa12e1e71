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

The commonest layers, 3x3 with padding 1 and stride 1 or 2, skip the phase planes
(``_depthwise_3x3``). Small planes (8x8 and less, 4x4 for those 3x3 layers, with 32+
channels) run channels-last instead, in one compiled call (``depthwise_small``): the
values transposed in and out, and the inner loop runs over the channels.

Index math from ``onnxkit.kernels.indexing`` (the index helpers of the cpu and cuda
kernels): ``window_start`` (a window's taps read start + i*dh, as in the cuda direct
kernel), ``conv_input_coord`` and the clamped ranges of ``window_taps`` (``valid_range``).
https://onnx.ai/onnx/operators/onnx__Conv.html
"""

from __future__ import annotations

import numpy as np
from numba import njit

from onnxkit.kernels.cpu._depthwise_3x3 import (direct_kind, finish_plane, nine_taps,
                                                planes_3x3, rows_out)
from onnxkit.kernels.cpu._im2col import (column_phase_ranges, phase_index, split_columns,
                                          valid_range)
from onnxkit.kernels.cpu._math import FASTMATH, finish
from onnxkit.kernels.cpu._threads import run_parts
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


@njit(cache=True, error_model="numpy", fastmath=FASTMATH)
def _taps_3x3(acc, q, wk, dh, dw, sh, sw, wq, span):
    """The 3x3 case in one pass (``_depthwise_3x3.nine_taps``) over the phase planes."""
    nine_taps(acc, wk, span, _view(q, 0, 0, dh, dw, sh, sw, wq, span),
               _view(q, 0, 1, dh, dw, sh, sw, wq, span), _view(q, 0, 2, dh, dw, sh, sw, wq, span),
               _view(q, 1, 0, dh, dw, sh, sw, wq, span), _view(q, 1, 1, dh, dw, sh, sw, wq, span),
               _view(q, 1, 2, dh, dw, sh, sw, wq, span), _view(q, 2, 0, dh, dw, sh, sw, wq, span),
               _view(q, 2, 1, dh, dw, sh, sw, wq, span), _view(q, 2, 2, dh, dw, sh, sw, wq, span))


def depthwise_conv(x, w, bias, z, has_z, sh, sw, dh, dw, pt, pl, code, p0, p1, y):
    """x (N, C, H, W), w (M, 1, KH, KW), M = C * mult, into y (N, M, OH, OW).

    The (image, channel) planes are shared among the threads in runs, each with its own
    scratch planes. A 3x3 layer with padding 1 and stride 1 or 2 (``direct_kind``) runs
    ``planes_3x3``, any other ``_depthwise_planes``: two entry points, so that a model
    compiles only the one its layers take.
    """
    kh, kw = w.shape[2], w.shape[3]
    direct = direct_kind(kh, kw, sh, sw, dh, dw, pt, pl, x.shape[2], x.shape[3], y.shape[2],
                         y.shape[3])
    planes = x.shape[0] * x.shape[1]
    if direct != 0:
        run_parts(planes_3x3, planes, x.size + y.size, x, w, bias, z, has_z, direct, code, p0,
                  p1, y)
        return
    run_parts(_depthwise_planes, planes, x.size + y.size, x, w, bias, z, has_z, sh, sw, dh, dw,
              pt, pl, code, p0, p1, y)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH)
def _depthwise_planes(x, w, bias, z, has_z, sh, sw, dh, dw, pt, pl, code, p0, p1, y, lo, hi):
    """``depthwise_conv`` for the planes lo .. hi - 1 (plane = n * C + c)."""
    batch, channels, height, width = x.shape
    out_channels, _, kh, kw = w.shape
    oh_n, ow_n = y.shape[2], y.shape[3]
    mult = out_channels // channels
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
            rows_out(acc, wq, out, oh_n, ow_n)
            finish_plane(out, bias[m], z, n, m, has_z, code, p0, p1)


@njit(inline="always")
def _nhwc_rows(x, w, bias, z, has_z, sh, sw, dh, dw, pt, pl, code, p0, p1, y):
    """Channels-last: x (H, W, C), w (KH, KW, C), y (OH, OW, C), z (OH, OW, C) when
    ``has_z``. Every output pixel is one loop over the channels per tap (long and
    contiguous), where the planar kernel would pay its per-channel setup on planes of a
    few dozen pixels."""
    height, width, channels = x.shape
    kh, kw = w.shape[0], w.shape[1]
    oh_n, ow_n = y.shape[0], y.shape[1]
    zero = bias[0] * 0
    for oh in range(oh_n):
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


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH)
def depthwise_small(x, w, bias, z, has_z, sh, sw, dh, dw, pt, pl, code, p0, p1, y):
    """A depthwise layer of small planes, channels-last, in one call on one thread (a
    few thousand values: too few to share): x (N, C, H, W), w (KH, KW, C), y (N, C, OH,
    OW), ``z`` (N, C, OH, OW) when ``has_z``. Per image, x (and z) transposed to
    channels-last scratch, ``_nhwc_rows``, and the result transposed back."""
    images, channels, height, width = x.shape
    oh_n, ow_n = y.shape[2], y.shape[3]
    xl = np.empty((height, width, channels), x.dtype)
    yl = np.empty((oh_n, ow_n, channels), x.dtype)
    zl = np.empty((oh_n, ow_n, channels) if has_z else (1, 1, 1), x.dtype)
    for n in range(images):
        _to_last(x[n], xl)
        if has_z:
            _to_last(z[n], zl)
        _nhwc_rows(xl, w, bias, zl, has_z, sh, sw, dh, dw, pt, pl, code, p0, p1, yl)
        pixels = oh_n * ow_n
        src = yl.reshape(pixels * channels)
        for c in range(channels):
            dst = y[n, c].reshape(pixels)
            for t in range(pixels):
                dst[t] = src[t * channels + c]


@njit(inline="always")
def _to_last(src, dst):
    """src (C, H, W) into dst (H, W, C), written in order (written across, at each
    value's channel stride, the copy took 3-5x as long)."""
    channels, height, width = src.shape
    for h in range(height):
        for v in range(width):
            d = dst[h, v]
            for c in range(channels):
                d[c] = src[c, h, v]
