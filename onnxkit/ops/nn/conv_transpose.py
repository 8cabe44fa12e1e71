"""ConvTranspose: the adjoint (gradient) of Conv, scattering each input pixel over a window.

    cols[n, m, j..., i...] = sum_{c in group(m)} X[n, c, i...] * W[c, m, j...]
    Y_full[n, m, i*s + j*d] += cols[n, m, j, i]            (col2im)
    Y = Y_full[pads_begin : pads_begin + out] + B

W is (C, M / group, *kernel). Output size per axis, unless output_shape is given:
``s * (n - 1) + output_padding + (k - 1) * d + 1 - pads_begin - pads_end``. With
output_shape (or auto_pad SAME_*, which asks for ``n * s``) the total padding is derived,
its odd half going at the beginning except for SAME_UPPER.

https://onnx.ai/onnx/operators/onnx__ConvTranspose.html
"""

import numpy as np

from onnxkit.errors import KernelError
from onnxkit.ops.nn._windows import Geometry, compute_dtype, listed, scatter_windows
from onnxkit.ops.nn.conv import check_kernel_shape
from onnxkit.ops.linalg._precision import product_dtype
from onnxkit.ops.registry import op
from onnxkit.core.limits import check_allocation


def output_geometry(in_shape, kernel, strides, dilations, pads, auto_pad, output_padding,
                    output_shape):
    """(Geometry of the scatter, spatial output shape) for ConvTranspose."""
    n = len(in_shape)
    strides = listed(strides, n, 1, "strides")
    dilations = listed(dilations, n, 1, "dilations")
    extra = listed(output_padding, n, 0, "output_padding")
    full = [s * (size - 1) + e + (k - 1) * d + 1
            for s, size, e, k, d in zip(strides, in_shape, extra, kernel, dilations)]
    if output_shape is not None or (pads is None and auto_pad in ("SAME_UPPER", "SAME_LOWER")):
        if output_shape is not None:
            out = [int(v) for v in output_shape][-n:]
        else:
            out = [size * s for size, s in zip(in_shape, strides)]
        if pads is not None:
            begin = listed(pads, 2 * n, 0, "pads")[:n]
        else:
            total = [f - o for f, o in zip(full, out)]
            if auto_pad == "SAME_UPPER":
                begin = [t // 2 for t in total]
            else:
                begin = [t - t // 2 for t in total]
    else:
        pads = listed(pads, 2 * n, 0, "pads")
        begin = pads[:n]
        out = [f - b - e for f, b, e in zip(full, pads[:n], pads[n:])]
    if any(o < 1 for o in out):
        raise KernelError(f"ConvTranspose output shape {out} is not positive")
    g = Geometry(tuple(kernel), strides, dilations, tuple(begin), (0,) * n, tuple(in_shape))
    return g, tuple(out)


def checked_shapes(x_shape, W, group, kernel_shape, strides, dilations, pads, auto_pad,
                   output_padding, output_shape):
    """``(kernel, output channels, geometry, output spatial shape)`` of a ConvTranspose, its
    weights checked against X's channels and ``group`` (W is C x M/group x kernel)."""
    kernel = check_kernel_shape(kernel_shape, W)
    c = x_shape[1]
    if W.shape[0] != c or c % group:
        raise KernelError(f"ConvTranspose with group={group}: X has {c} channels, W has "
                          f"shape {list(W.shape)}")
    g, out = output_geometry(x_shape[2:], kernel, strides, dilations, pads, auto_pad,
                             output_padding, output_shape)
    return kernel, W.shape[1] * group, g, out


@op("ConvTranspose", 1, 11, 22)
def conv_transpose(X, W, B=None, *, auto_pad="NOTSET", dilations=None, group=1,
                   kernel_shape=None, output_padding=None, output_shape=None, pads=None,
                   strides=None):
    n, c = X.shape[:2]
    kernel, m, g, out = checked_shapes(X.shape, W, group, kernel_shape, strides, dilations,
                                       pads, auto_pad, output_padding, output_shape)
    work = product_dtype(compute_dtype(X.dtype))  # float64: _precision
    check_allocation((n, m) + g.kernel + g.out, work, "ConvTranspose columns")
    check_allocation((n, m) + out, work, "ConvTranspose output")
    x = X.astype(work, copy=False).reshape(n, group, c // group, -1)
    w = W.astype(work, copy=False).reshape(group, c // group, -1)
    cols = np.matmul(w.transpose(0, 2, 1), x)  # (N, group, M/group * K, P)
    cols = cols.reshape((n, m) + g.kernel + g.out)
    Y = scatter_windows(cols, g, out)
    if B is not None:
        Y = Y + B.astype(work, copy=False).reshape((m,) + (1,) * len(kernel))
    return np.ascontiguousarray(Y.astype(X.dtype, copy=False))
