"""ConvTranspose on the GPU (1-D to 3-D, groups, strides, pads, dilations, output_padding):
one thread per output element, gathering the taps that land on it.

    Y[n, m, o] = B[m] + sum over c in m's group, taps j (per axis) with
                 q = transposed_source(o, j, stride, begin, dilation, size) >= 0:
                 X[n, c, q] * W[c, m % (M / group), j]

(input ``q`` scatters to ``q * stride - begin + j * dilation``: the adjoint of Conv). The
geometry (output size, auto_pad, output_shape, output_padding) is the reference's
``output_geometry``; 1-D and 2-D run as 3-D over leading axes of size 1.
https://onnx.ai/onnx/operators/onnx__ConvTranspose.html
"""

from functools import lru_cache

import numpy as np
from numba import cuda

from onnxkit.errors import KernelError
from onnxkit.kernels.cuda import CUDA
from onnxkit.kernels.cuda._device import (FLOAT_DTYPES, HostFallback, device, empty, launch_1d,
                                          need_dtype)
from onnxkit.kernels.indexing import for_cuda, im2col_col_split, spatial3, transposed_source
from onnxkit.ops.nn.conv_transpose import checked_shapes
from onnxkit.ops.registry import op
from onnxkit.runtime.limits import check_allocation

_col_split = for_cuda(im2col_col_split)
_source = for_cuda(transposed_source)


@lru_cache(maxsize=None)
def conv_transpose_kernel(dtype):
    zero = np.dtype(dtype).type(0)

    @cuda.jit
    def kernel(x, w, bias, has_bias, channels, group_in, group_out, in3, k3, s3, d3, p3, o3,
               out):
        i = cuda.grid(1)
        if i < out.size:
            P = o3[0] * o3[1] * o3[2]
            plane = i // P
            od, oh, ow = _col_split(i % P, o3[0], o3[1], o3[2])
            m_all = group_out * (channels // group_in)  # output channels, all groups
            m = plane % m_all
            n = plane // m_all
            mm = m % group_out
            first = (m // group_out) * group_in
            acc = zero
            for j0 in range(k3[0]):
                q0 = _source(od, j0, s3[0], p3[0], d3[0], in3[0])
                if q0 < 0:
                    continue
                for j1 in range(k3[1]):
                    q1 = _source(oh, j1, s3[1], p3[1], d3[1], in3[1])
                    if q1 < 0:
                        continue
                    for j2 in range(k3[2]):
                        q2 = _source(ow, j2, s3[2], p3[2], d3[2], in3[2])
                        if q2 < 0:
                            continue
                        for c in range(first, first + group_in):
                            xv = x[(((n * channels + c) * in3[0] + q0) * in3[1] + q1) * in3[2] + q2]
                            wv = w[(((c * group_out + mm) * k3[0] + j0) * k3[1] + j1) * k3[2] + j2]
                            acc += xv * wv
            if has_bias:
                acc += bias[m]
            out[i] = acc

    return kernel


@op("ConvTranspose", 1, 11, 22, registry=CUDA)
def conv_transpose(X, W, B=None, *, auto_pad="NOTSET", dilations=None, group=1,
                   kernel_shape=None, output_padding=None, output_shape=None, pads=None,
                   strides=None):
    X, W = device(X, "X"), device(W, "W")
    need_dtype(X, FLOAT_DTYPES, "X")
    bias = None if B is None else device(B, "B")
    if W.dtype != X.dtype or (bias is not None and bias.dtype != X.dtype):
        raise HostFallback(f"X is {X.dtype}, W {W.dtype}, B {None if B is None else bias.dtype}")
    if not 3 <= X.ndim <= 5:
        raise HostFallback(f"{X.ndim - 2}-D ConvTranspose: the cuda kernel takes 1-D to 3-D")
    n, c = X.shape[:2]
    kernel, m, g, out_spatial = checked_shapes(X.shape, W, group, kernel_shape, strides,
                                               dilations, pads, auto_pad, output_padding,
                                               output_shape)
    if bias is not None and bias.size != m:
        raise KernelError(f"ConvTranspose: B has {bias.size} values for {m} output channels")
    check_allocation((n, m) + out_spatial, X.dtype, "ConvTranspose output")
    out = empty((n, m) + out_spatial, X.dtype)
    launch_1d(conv_transpose_kernel(X.dtype), out.size, X.flat, W.flat,
              W.flat if bias is None else bias.flat, bias is not None, c, c // group,
              W.shape[1], spatial3(X.shape[2:], 1), spatial3(kernel, 1),
              spatial3(g.strides, 1), spatial3(g.dilations, 1), spatial3(g.begin, 0),
              spatial3(out_spatial, 1), out.flat)
    return out
