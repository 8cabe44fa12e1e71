"""Conv and onnxkit::FusedConv on the GPU: implicit GEMM, or direct for thin groups.

Per group g the convolution is one matrix product over every image at once (im2col)::

    Y[n, g*Mg + m, p] = sum_r W[g*Mg + m, r] * cols[g][r, (n, p)]
        r = (c, kd, kh, kw) over the group's Cg input channels and the kernel taps
        p = (od, oh, ow) over the output positions; columns q = (n, p), Q = N * P of them
        cols[r, q] = X[n, g*Cg + c, od*s - begin + kd*d, ...]   (0 in the padding)

Implicit GEMM never builds ``cols``: the register-tiled loop of ``_tiles`` fetches each
slice of it straight from X. Each thread fetches one column of a slice, so it works out
that column's image and window start once (``im2col_col_split``, ``window_start``); a
row r is a lookup in ``row_table`` (host index math: X offset and tap of each r).
When a group has few output channels (depthwise: Mg = 1) most of a tile would be
wasted, so one thread per output element sums its own window instead (direct).

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
from onnxkit.kernels.cuda import _device
from onnxkit.kernels.cuda._device import (FLOAT_DTYPES, HostFallback, device, empty, launch,
                                          launch_1d, need_dtype)
from onnxkit.kernels.cuda._scalar import activation as activation_formula, identity
from onnxkit.kernels.cuda._tiles import (Tiles, k_splits, multiply_slice, park_rows, pick, slot,
                                         split_chunk, stash_slices)
from onnxkit.kernels.indexing import (contiguous_strides, conv_input_coord, for_cuda,
                                      im2col_col_split, im2col_row_split, spatial3, window_start,
                                      window_taps)
from onnxkit.ops.nn._windows import geometry
from onnxkit.ops.nn.conv import check_kernel_shape
from onnxkit.ops.registry import op

_col_split = for_cuda(im2col_col_split)
_coord = for_cuda(conv_input_coord)
_start = for_cuda(window_start)
_taps = for_cuda(window_taps)
THIN_GROUP = 8  # groups with fewer output channels than this run the direct kernel


def row_table(cg, in3, k3, d3) -> np.ndarray:
    """int32 [R, 4]: per im2col row r = (c, kd, kh, kw), the X offset of its tap relative
    to the window start, and the tap's position along each axis (kd*d0, kh*d1, kw*d2)."""
    rows = np.arange(cg * int(np.prod(k3)), dtype=np.int64)
    c, kd, kh, kw = im2col_row_split(rows, *k3)  # the helper works on arrays too
    taps = np.stack([kd * d3[0], kh * d3[1], kw * d3[2]], axis=1)
    offsets = c * int(np.prod(in3)) + taps @ contiguous_strides(in3)
    if offsets.size and offsets.max() >= 2 ** 31:
        raise HostFallback("a channel group larger than 2**31 elements")
    return np.concatenate([offsets[:, None], taps], axis=1).astype(np.int32)


@lru_cache(maxsize=256)
def _device_row_table(cg, in3, k3, d3):
    """``row_table`` in device memory, made once per geometry (a kernel constant, not data)."""
    return _device._to_device(row_table(cg, in3, k3, d3))


@lru_cache(maxsize=None)
def implicit_gemm_kernel(dtype, formula, tiles: Tiles, split: bool = False):
    """``split``: a split-K part (its share of K from grid z, partial sums out, no
    epilogue); a compile-time choice, so the whole-K kernel keeps its registers."""
    BM, BN, BK, TM, TN = tiles.bm, tiles.bn, tiles.bk, tiles.tm, tiles.tn
    RT, CT, NT = BM // TM, BN // TN, tiles.threads
    LA, LB = BM * BK // NT, BN * BK // NT
    elem = numba.from_dtype(dtype)
    zero = np.dtype(dtype).type(0)
    act = for_cuda(formula)
    stash, multiply, park = stash_slices(tiles), multiply_slice(tiles), park_rows(tiles)

    @cuda.jit
    def kernel(x, w, bias, has_bias, z, has_z, table, C, cg, mg, R, P, Q, group, in3, s3, p3,
               o3, p0, p1, out, splits, kchunk, total):
        As = cuda.shared.array((BK, BM), elem)
        Bs = cuda.shared.array((BK, BN), elem)
        Cs = cuda.shared.array((RT, BN), elem)
        acc = cuda.local.array((TM, TN), elem)
        fa = cuda.local.array(TM, elem)
        fb = cuda.local.array(TN, elem)
        ra = cuda.local.array(LA, elem)
        rb = cuda.local.array(LB, elem)
        t = cuda.threadIdx.x
        tr, tc = t // CT, t % CT
        if split:  # this block's share of R
            g, part = cuda.blockIdx.z // splits, cuda.blockIdx.z % splits
            kbeg = part * kchunk
            kend = min(R, kbeg + kchunk)
        else:
            g, part, kbeg, kend = cuda.blockIdx.z, 0, 0, R
        m0, n0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * BN
        # the one column q of every B slice this thread fetches (NT is a multiple of BN)
        q = n0 + t % BN
        image, p = q // P, q % P
        od, oh, ow = _col_split(p, o3[0], o3[1], o3[2])
        b0, b1, b2 = _start(od, s3[0], p3[0]), _start(oh, s3[1], p3[1]), _start(ow, s3[2], p3[2])
        corner = (((image * C + g * cg) * in3[0] + b0) * in3[1] + b1) * in3[2] + b2
        # the epilogue's column is this same q (NT is a multiple of BN): Y's offset of
        # (q, channel 0) once here, no division per output element
        obase = image * group * mg * P + p
        w0 = g * mg * R
        for i in range(TM):
            for j in range(TN):
                acc[i, j] = zero
        for k0 in range(kbeg - BK, kend, BK):  # k0 = kbeg - BK only fetches the first slice
            if k0 >= kbeg:
                stash(ra, rb, As, Bs, t, True, False)  # W along K, X's columns along N
                cuda.syncthreads()
            if k0 + BK < kend:
                for l in range(LA):
                    m, k = slot(t + l * NT, True, BM, BK)
                    m, k = m0 + m, k0 + BK + k
                    ra[l] = w[w0 + m * R + k] if m < mg and k < kend else zero
                for l in range(LB):
                    r = k0 + BK + (t + l * NT) // BN
                    v = zero
                    if q < Q and r < kend:
                        i0, i1, i2 = b0 + table[r, 1], b1 + table[r, 2], b2 + table[r, 3]
                        if 0 <= i0 < in3[0] and 0 <= i1 < in3[1] and 0 <= i2 < in3[2]:
                            v = x[corner + table[r, 0]]
                    rb[l] = v
            if k0 >= kbeg:
                multiply(As, Bs, acc, fa, fb, tr, tc)
                cuda.syncthreads()
        for i in range(TM):
            park(acc, Cs, i, tr, tc)
            cuda.syncthreads()
            for e in range(t, RT * BN, NT):
                m = m0 + RT * i + e // BN
                if m < mg and q < Q:
                    mo = g * mg + m
                    y = Cs[e // BN, e % BN]
                    o = obase + mo * P
                    if split:  # a partial sum: ``split_sum_kernel`` finishes it
                        out[part * total + o] = y
                    else:
                        if has_bias:
                            y += bias[mo]
                        if has_z:
                            y += z[o]
                        out[o] = act(y, p0, p1)
            cuda.syncthreads()

    return kernel


@lru_cache(maxsize=None)
def split_sum_kernel(dtype, formula):
    """Y[o] = act(sum of the splits' partial sums + B[channel] + Z[o]) (split-K's 2nd pass)."""
    zero = np.dtype(dtype).type(0)
    act = for_cuda(formula)

    @cuda.jit
    def kernel(parts, splits, bias, has_bias, z, has_z, channels, P, p0, p1, out):
        o = cuda.grid(1)
        if o < out.size:
            y = zero
            for s in range(splits):
                y += parts[s * out.size + o]
            if has_bias:
                y += bias[(o // P) % channels]
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
                        r0 = _coord(od, kd, s3[0], p3[0], d3[0])
                        r1 = _coord(oh, kh, s3[1], p3[1], d3[1])
                        xrow = ((xc + r0) * in3[1] + r1) * in3[2]
                        wrow = ((wc + kd) * k3[1] + kh) * k3[2]
                        for kw in range(f2, e2):
                            acc += x[xrow + _coord(ow, kw, s3[2], p3[2], d3[2])] * w[wrow + kw]
            y = acc
            if has_bias:
                y += bias[mo]
            if has_z:
                y += z[i]
            out[i] = act(y, p0, p1)

    return kernel


def conv_nd(X, W, B=None, Z=None, *, auto_pad="NOTSET", dilations=None, group=1,
            kernel_shape=None, pads=None, strides=None, formula=identity, p0=0.0, p1=0.0,
            method=None, tiles=None, splits=None):
    """Y = act(Conv(X, W, B) + Z); ``method`` ("gemm" / "direct"), ``tiles`` and ``splits``
    (split-K parts) force a kernel (tests)."""
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
        raise KernelError(f"Z has shape {list(z.shape)}, the convolution gives {list(out.shape)}")
    if out.size == 0:
        return out
    cg, mg = c // group, m // group
    in3, k3 = spatial3(X.shape[2:], 1), spatial3(g.kernel, 1)
    s3, d3, p3, o3 = (spatial3(g.strides, 1), spatial3(g.dilations, 1), spatial3(g.begin, 0),
                      spatial3(g.out, 1))
    R, P = cg * int(np.prod(k3)), int(np.prod(g.out))
    head = (X.flat, W.flat, X.flat if bias is None else bias.flat, bias is not None,
            X.flat if z is None else z.flat, z is not None)
    if method is None:
        method = "direct" if mg < THIN_GROUP or group > 65535 else "gemm"
    if method == "gemm":
        table = _device_row_table(cg, in3, k3, d3)

        def run(tiles, splits=1):
            kchunk = split_chunk(R, splits, tiles.bk)
            target = out if splits == 1 else empty((splits * out.size,), X.dtype)
            launch(implicit_gemm_kernel(X.dtype, formula, tiles, splits > 1),
                   tiles.blocks(mg, n * P) + (group * splits,), tiles.threads, *head, table, c,
                   cg, mg, R, P, n * P, group, in3, s3, p3, o3, float(p0), float(p1),
                   target.flat, splits, kchunk, out.size)
            if splits > 1:
                launch_1d(split_sum_kernel(X.dtype, formula), out.size, target.flat, splits,
                          *head[2:], m, P, float(p0), float(p1), out.flat)

        key = ("conv", X.shape, W.shape, group, s3, d3, p3, X.dtype)
        tiles = tiles or pick(key, mg, n * P, group, X.dtype, run)
        splits = splits or k_splits(tiles, mg, n * P, group, R)
        run(tiles, splits)
        _device.note_algorithm(f"implicit gemm {tiles.bm}x{tiles.bn}"
                               + (f" split-K {splits}" if splits > 1 else ""))
    else:
        _device.note_algorithm("direct")
        launch_1d(direct_kernel(X.dtype, formula), out.size, *head, c, cg, mg, R, P, group,
                  in3, k3, s3, d3, p3, o3, float(p0), float(p1), out.flat)
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
