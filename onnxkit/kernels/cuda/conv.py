"""Conv and onnxkit::FusedConv on the GPU: implicit GEMM, or direct for thin groups.

Per image n and group g the convolution is a matrix product (im2col)::

    Y[n, g*Mg + m, p] = sum_r W[g*Mg + m, r] * cols[n, g][r, p]
        r = (c, kd, kh, kw) over the group's Cg input channels and the kernel taps
        p = (od, oh, ow) over the output positions
        cols[r, p] = X[n, g*Cg + c, od*s - begin + kd*d, ...]   (0 in the padding)

Implicit GEMM never builds ``cols``: the tiled loop of ``matmul.py`` loads each tile of it
straight from X with the im2col index math of ``onnxkit.kernels.indexing``. When a group
has few output channels (depthwise: Mg = 1) most of a tile would be wasted, so one
thread per output element sums its own window instead (direct).

1-D and 2-D convolutions run as 3-D ones over leading axes of size 1. The epilogue adds
B[m], then Z (FusedConv), then applies the activation.
https://onnx.ai/onnx/operators/onnx__Conv.html
"""

from functools import lru_cache

import numba
import numpy as np
from numba import cuda

from onnxkit.errors import KernelError
from onnxkit.kernels.cuda import CUDA
from onnxkit.kernels.cuda._device import (FLOAT_DTYPES, HostFallback, device, empty, launch,
                                          launch_1d, need_dtype)
from onnxkit.kernels.cuda._scalar import activation as activation_formula, identity
from onnxkit.kernels.cuda.matmul import TILE
from onnxkit.kernels.indexing import (conv_input_coord, for_cuda, im2col_col_split,
                                      im2col_row_split, spatial3, window_start, window_taps)
from onnxkit.ops.nn._windows import geometry
from onnxkit.ops.nn.conv import check_kernel_shape
from onnxkit.ops.registry import op

_row_split = for_cuda(im2col_row_split)
_col_split = for_cuda(im2col_col_split)
_coord = for_cuda(conv_input_coord)
_start = for_cuda(window_start)
_taps = for_cuda(window_taps)


@lru_cache(maxsize=None)
def implicit_gemm_kernel(dtype, formula):
    T = TILE
    elem = numba.from_dtype(dtype)
    zero = np.dtype(dtype).type(0)
    act = for_cuda(formula)

    @cuda.jit
    def kernel(x, w, bias, has_bias, z, has_z, C, cg, mg, R, P, group, in3, k3, s3, d3, p3, o3,
               p0, p1, out):
        sw = cuda.shared.array((T, T), elem)
        sx = cuda.shared.array((T, T), elem)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        n = cuda.blockIdx.z // group
        g = cuda.blockIdx.z % group
        m = cuda.blockIdx.y * T + ty  # output channel inside the group
        p = cuda.blockIdx.x * T + tx  # output position
        acc = zero
        for r0 in range(0, R, T):
            r = r0 + tx
            if m < mg and r < R:
                sw[ty, tx] = w[(g * mg + m) * R + r]
            else:
                sw[ty, tx] = zero
            r = r0 + ty
            v = zero
            if r < R and p < P:
                c, kd, kh, kw = _row_split(r, k3[0], k3[1], k3[2])
                od, oh, ow = _col_split(p, o3[0], o3[1], o3[2])
                i0 = _coord(od, kd, s3[0], p3[0], d3[0])
                i1 = _coord(oh, kh, s3[1], p3[1], d3[1])
                i2 = _coord(ow, kw, s3[2], p3[2], d3[2])
                if 0 <= i0 < in3[0] and 0 <= i1 < in3[1] and 0 <= i2 < in3[2]:
                    v = x[(((n * C + g * cg + c) * in3[0] + i0) * in3[1] + i1) * in3[2] + i2]
            sx[ty, tx] = v
            cuda.syncthreads()
            for kk in range(T):
                acc += sw[ty, kk] * sx[kk, tx]
            cuda.syncthreads()
        if m < mg and p < P:
            mo = g * mg + m
            y = acc
            if has_bias:
                y += bias[mo]
            o = (n * group * mg + mo) * P + p
            if has_z:
                y += z[o]
            out[o] = act(y, p0, p1)

    return kernel


@lru_cache(maxsize=None)
def direct_kernel(dtype, formula):
    zero = np.dtype(dtype).type(0)
    act = for_cuda(formula)

    @cuda.jit
    def kernel(x, w, bias, has_bias, z, has_z, C, cg, mg, R, P, group, in3, k3, s3, d3, p3, o3,
               p0, p1, out):
        i = cuda.grid(1)
        if i < out.size:
            p = i % P
            mo = (i // P) % (group * mg)
            n = i // (P * group * mg)
            g = mo // mg
            od, oh, ow = _col_split(p, o3[0], o3[1], o3[2])
            b0 = _start(od, s3[0], p3[0])
            b1 = _start(oh, s3[1], p3[1])
            b2 = _start(ow, s3[2], p3[2])
            f0, e0 = _taps(b0, d3[0], k3[0], in3[0])
            f1, e1 = _taps(b1, d3[1], k3[1], in3[1])
            f2, e2 = _taps(b2, d3[2], k3[2], in3[2])
            acc = zero
            for c in range(cg):
                xc = (n * C + g * cg + c) * in3[0]
                wc = (mo * cg + c) * k3[0]
                for kd in range(f0, e0):
                    for kh in range(f1, e1):
                        xrow = ((xc + b0 + kd * d3[0]) * in3[1] + b1 + kh * d3[1]) * in3[2] + b2
                        wrow = ((wc + kd) * k3[1] + kh) * k3[2]
                        for kw in range(f2, e2):
                            acc += x[xrow + kw * d3[2]] * w[wrow + kw]
            y = acc
            if has_bias:
                y += bias[mo]
            if has_z:
                y += z[i]
            out[i] = act(y, p0, p1)

    return kernel


def conv_nd(X, W, B=None, Z=None, *, auto_pad="NOTSET", dilations=None, group=1,
            kernel_shape=None, pads=None, strides=None, formula=identity, p0=0.0, p1=0.0,
            method=None):
    """Y = act(Conv(X, W, B) + Z); ``method`` "gemm" or "direct" forces a kernel (tests)."""
    X, W = device(X, "X"), device(W, "W")
    need_dtype(X, FLOAT_DTYPES, "X")
    if W.dtype != X.dtype:
        raise HostFallback(f"W is {W.dtype}, X is {X.dtype}")
    if not 3 <= X.ndim <= 5:
        raise HostFallback(f"a {X.ndim - 2}-D convolution (the cuda kernel does 1-D to 3-D)")
    kernel = check_kernel_shape(kernel_shape, W)
    n, c = X.shape[:2]
    m = W.shape[0]
    if c != W.shape[1] * group or m % group:
        raise KernelError(f"Conv with group={group}: X has {c} channels, W has shape "
                          f"{list(W.shape)}")
    g = geometry(X.shape[2:], kernel, strides, dilations, pads, auto_pad)
    out = empty((n, m) + g.out, X.dtype)
    bias = _same_dtype(B, X, "B")
    z = _same_dtype(Z, X, "Z")
    if z is not None and z.shape != out.shape:
        raise ValueError(f"Z has shape {list(z.shape)}, the convolution gives {list(out.shape)}")
    if out.size == 0:
        return out
    cg, mg = c // group, m // group
    k3 = spatial3(g.kernel, 1)
    geometry3 = (spatial3(X.shape[2:], 1), k3, spatial3(g.strides, 1), spatial3(g.dilations, 1),
                 spatial3(g.begin, 0), spatial3(g.out, 1))
    R, P = cg * int(np.prod(k3)), int(np.prod(g.out))
    args = (X.flat, W.flat, X.flat if bias is None else bias.flat, bias is not None,
            X.flat if z is None else z.flat, z is not None, c, cg, mg, R, P, group) + geometry3 + (
        float(p0), float(p1), out.flat)
    if method is None:
        method = "direct" if mg < TILE // 2 else "gemm"
    if n * group > 65535:  # the implicit GEMM puts (image, group) on the grid's z axis
        method = "direct"
    if method == "gemm":
        blocks = ((P + TILE - 1) // TILE, (mg + TILE - 1) // TILE, n * group)
        launch(implicit_gemm_kernel(X.dtype, formula), blocks, (TILE, TILE), *args)
    else:
        launch_1d(direct_kernel(X.dtype, formula), out.size, *args)
    return out


def _same_dtype(value, X, what):
    if value is None:
        return None
    value = device(value, what)
    if value.dtype != X.dtype:
        raise HostFallback(f"{what} is {value.dtype}, X is {X.dtype}")
    return value


@op("Conv", 1, 11, 22, registry=CUDA)
def conv(X, W, B=None, *, auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None,
         pads=None, strides=None):
    return conv_nd(X, W, B, auto_pad=auto_pad, dilations=dilations, group=group,
                   kernel_shape=kernel_shape, pads=pads, strides=strides)


@op("FusedConv", 1, domain="onnxkit", registry=CUDA)
def fused_conv(X, W, B=None, Z=None, *, auto_pad="NOTSET", dilations=None, group=1,
               kernel_shape=None, pads=None, strides=None, activation="", activation_params=None):
    formula, p0, p1 = activation_formula(activation, activation_params)
    return conv_nd(X, W, B, Z, auto_pad=auto_pad, dilations=dilations, group=group,
                   kernel_shape=kernel_shape, pads=pads, strides=strides, formula=formula,
                   p0=p0, p1=p1)
