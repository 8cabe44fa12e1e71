"""Depthwise 2-D convolution (one input channel per group), computed directly.

    Y[n, m, oh, ow] = act(B[m] + Z[n, m, oh, ow]
                          + sum_{i, j} X[n, m // mult, oh*sh + i*dh - pt, ow*sw + j*dw - pl]
                                       * W[m, 0, i, j])

im2col would copy every input value KH*KW times for a product with one row per
channel; here each output row is accumulated tap by tap over the clamped range of
``ow`` that reads inside the input (``valid_range``), then the epilogue (bias, residual,
activation) runs on the row while it is in L1.
https://onnx.ai/onnx/operators/onnx__Conv.html
"""

from __future__ import annotations

from numba import njit

from onnxkit.kernels.cpu._im2col import valid_range
from onnxkit.kernels.cpu._math import FASTMATH, activate


@njit(cache=True, error_model="numpy", fastmath=FASTMATH)
def depthwise_conv(x, w, bias, z, y, has_z, sh, sw, dh, dw, pt, pl, code, p0, p1):
    """x (N, C, H, W), w (M, 1, KH, KW), M = C * mult, into y (N, M, OH, OW)."""
    batch, channels, height, width = x.shape
    out_channels, _, kh, kw = w.shape
    oh_n, ow_n = y.shape[2], y.shape[3]
    mult = out_channels // channels
    for n in range(batch):
        for m in range(out_channels):
            c = m // mult
            b = bias[m]
            for oh in range(oh_n):
                row = y[n, m, oh]
                for ow in range(ow_n):
                    row[ow] = b
                for i in range(kh):
                    ih = oh * sh + i * dh - pt
                    if ih < 0 or ih >= height:
                        continue
                    src = x[n, c, ih]
                    for j in range(kw):
                        wv = w[m, 0, i, j]
                        off = j * dw - pl
                        lo, hi = valid_range(off, sw, width, ow_n)
                        if sw == 1:
                            for ow in range(lo, hi):
                                row[ow] += wv * src[ow + off]
                        else:
                            for ow in range(lo, hi):
                                row[ow] += wv * src[ow * sw + off]
                if has_z:
                    res = z[n, m, oh]
                    for ow in range(ow_n):
                        row[ow] = activate(row[ow] + res[ow], code, p0, p1)
                else:
                    for ow in range(ow_n):
                        row[ow] = activate(row[ow], code, p0, p1)
