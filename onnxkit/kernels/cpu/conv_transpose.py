"""ConvTranspose on the ``cpu`` executor: the reference's algorithm, its product on the
Numba threads.

    cols[n] (group, M/group * K, P) = W^T (group, M/group * K, C/group) @ X[n] (group, C/group, P)
    Y[n] = col2im(cols[n]) + B      2-D: ``scatter_planes`` (Numba, the planes shared among
                                    the threads, bias first); else the reference's
                                    ``_windows.scatter_windows`` (one numpy add per tap)

The reference kernel does the same with ``np.matmul``, which gets one BLAS thread during
a run (``runtime.blas_threads``), and numpy's strided adds (``docs/cpu.md``). Types other
than float32 (``COMPILED``) run the reference kernel.
https://onnx.ai/onnx/operators/onnx__ConvTranspose.html
"""

from __future__ import annotations

import numpy as np
from numba import njit

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._blas import matmul
from onnxkit.kernels.cpu._buffers import empty, read_only, zeros_read_only
from onnxkit.kernels.cpu._dtypes import COMPILED
from onnxkit.kernels.cpu._route import fall_back
from onnxkit.kernels.cpu._threads import run_parts
from onnxkit.kernels.indexing import for_cpu, window_taps
from onnxkit.ops.nn._windows import scatter_windows
from onnxkit.ops.nn.conv_transpose import checked_shapes
from onnxkit.ops.nn.conv_transpose import conv_transpose as reference_conv_transpose
from onnxkit.ops.registry import op
from onnxkit.runtime.limits import check_allocation

_taps = for_cpu(window_taps)


@njit(cache=True, nogil=True, error_model="numpy")
def _scatter_range(cols, kh, kw, sh, sw, dh, dw, bh, bw, bias, y, lo, hi):
    """Planes lo .. hi - 1 of y (M, OH, OW) = bias + the window values of cols
    (M, KH * KW, H, W): input (q, r) tap (a, b) lands on (q*sh + a*dh - bh, r*sw + b*dw - bw)."""
    h, w = cols.shape[2], cols.shape[3]
    oh, ow = y.shape[1], y.shape[2]
    for m in range(lo, hi):
        plane = y[m]
        plane[:, :] = bias[m]
        for a in range(kh):
            q0, q1 = _taps(a * dh - bh, sh, h, oh)  # the input rows landing inside
            for b in range(kw):
                r0, r1 = _taps(b * dw - bw, sw, w, ow)
                src = cols[m, a * kw + b]
                first = r0 * sw + b * dw - bw
                for q in range(q0, q1):
                    row = plane[q * sh + a * dh - bh]
                    values = src[q]
                    for r in range(r1 - r0):
                        row[first + r * sw] += values[r0 + r]


def scatter_planes(cols, kh, kw, sh, sw, dh, dw, bh, bw, bias, y):
    """col2im of one image, the output planes shared among the threads."""
    run_parts(_scatter_range, y.shape[0], y.size + cols.size, cols, kh, kw, sh, sw, dh, dw,
              bh, bw, bias, y)


def _fast(X, W, B, group, kernel_shape, strides, dilations, pads, auto_pad, output_padding,
          output_shape):
    if (X.dtype not in COMPILED or W.dtype != X.dtype or X.ndim < 3 or W.ndim != X.ndim
            or X.size == 0 or W.size == 0 or group < 1
            or B is not None and (B.dtype != X.dtype or B.shape != (W.shape[1] * group,))):
        return None
    kernel, m, g, out = checked_shapes(X.shape, W, group, kernel_shape, strides, dilations,
                                       pads, auto_pad, output_padding, output_shape)
    n, c = X.shape[:2]
    positions = int(np.prod(X.shape[2:]))
    rows = m // group * int(np.prod(kernel))
    check_allocation((n, m) + g.kernel + g.out, X.dtype, "ConvTranspose columns")
    check_allocation((n, m) + out, X.dtype, "ConvTranspose output")
    cols = empty((n, group, rows, positions), X.dtype)
    w_t = np.ascontiguousarray(W).reshape(group, c // group, rows).transpose(0, 2, 1)
    x = np.ascontiguousarray(X).reshape(n, group, c // group, positions)
    for i in range(n):
        matmul(w_t, x[i], cols[i])
    if X.ndim != 4:
        Y = scatter_windows(cols.reshape((n, m) + g.kernel + g.out), g, out)
        if B is not None:
            Y = Y + B.reshape((m,) + (1,) * len(kernel))
        return np.ascontiguousarray(Y)
    Y = empty((n, m) + tuple(out), X.dtype)
    bias = zeros_read_only(m, X.dtype) if B is None else read_only(B)
    for i in range(n):
        scatter_planes(read_only(cols[i].reshape((m, -1) + tuple(g.out))), *kernel, *g.strides,
                       *g.dilations, *g.begin, bias, Y[i])
    return Y


@op("ConvTranspose", 1, 11, 22, registry=CPU)
def conv_transpose(X, W, B=None, *, auto_pad="NOTSET", dilations=None, group=1,
                   kernel_shape=None, output_padding=None, output_shape=None, pads=None,
                   strides=None):
    Y = _fast(X, W, B, group, kernel_shape, strides, dilations, pads, auto_pad, output_padding,
              output_shape)
    if Y is None:
        return fall_back(reference_conv_transpose, X, W, B, auto_pad=auto_pad,
                         dilations=dilations, group=group, kernel_shape=kernel_shape,
                         output_padding=output_padding, output_shape=output_shape, pads=pads,
                         strides=strides)
    return Y
