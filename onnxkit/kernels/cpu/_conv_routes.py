"""The algorithms a 2-D convolution layer can run, each a route called as
``route(X, W, B, bias, Z4, layer)`` (``conv._route`` picks one per layer, by the table of
``_conv_rules``): depthwise, Winograd F(2x2) / F(4x4), few output pixels by dot products,
im2col + BLAS (stems by row bands). The layer (``_conv_layer.Layer``) brings the
geometry, the kernel arguments and the weights transformed for its algorithm."""

from __future__ import annotations

import numpy as np

from onnxkit.kernels.cpu._banded import band_rows, banded_conv, eligible as banded_eligible
from onnxkit.kernels.cpu._banded import scratch_shape
from onnxkit.kernels.cpu._blas import matmul, with_library
from onnxkit.kernels.cpu._buffers import empty, empty_known, read_only
from onnxkit.kernels.cpu._depthwise import depthwise_conv, depthwise_small
from onnxkit.kernels.cpu._dtypes import COMPILED
from onnxkit.kernels.cpu._entry import entry_of
from onnxkit.kernels.cpu._epilogue import epilogue_rows, residual_rows
from onnxkit.kernels.cpu._im2col import im2col, phase_shape, phases
from onnxkit.kernels.cpu._pixel_dots import dots_images, one_call, pixel_dots_conv
from onnxkit.kernels.cpu._pointwise import is_pointwise
from onnxkit.kernels.cpu._winograd import weight_transform as winograd_weights, winograd_conv
from onnxkit.kernels.cpu._winograd4 import weight_transform as winograd4_weights
from onnxkit.kernels.cpu._winograd4 import winograd4_conv
from onnxkit.runtime.limits import check_allocation, current_limits

FLOATS = COMPILED  # the dtypes the compiled conv kernels take
_NO_PHASES = {t: np.zeros((1, 1, 1, 1), t) for t in FLOATS}
_NO_Z4 = _NO_PHASES
_NO_Z3 = {t: np.zeros((1, 1, 1), t) for t in FLOATS}
_NO_Z4_READ = {t: read_only(np.zeros((1, 1, 1, 1), t)) for t in FLOATS}


def _weights(L, W, name: str, build):
    """W as algorithm ``name`` reads it (``build(W)``, read-only): built once and kept on
    the layer when W is a constant, else on every call."""
    laid = L.weights.get(name)
    if laid is None:
        laid = read_only(build(W))
        if L.constant:
            L.weights[name] = laid
    return laid


def _call(L, key, kernel, args) -> None:
    """``kernel(*args)``, after the first call through the compiled variant's entry point
    kept on the layer under ``key`` (``_entry``: no dispatcher typing the dozen
    arguments, the activation code's object among them, on every call). ``key`` names
    what may change the arguments' types between a layer's calls: the route, whether a
    residual is read, whether ``bias`` is contiguous; the rest is fixed by the layer
    (dtype and rank of X, the weights and scratch built for it, C-contiguous arrays)."""
    call = L.entries.get(key)
    if call is None:
        kernel(*args)
        L.entries[key] = entry_of(kernel, args) or False
    elif call is False:  # no variant of exactly these types: the dispatcher converts
        kernel(*args)
    else:
        call(*args)


def depthwise(X, W, B, bias, Z4, L):
    """A depthwise layer (a route, see ``conv._route``): planar kernel, or channels-last
    for small output planes with many channels (``L.last``)."""
    Y = empty_known(L.out_shape, X.dtype, L.out_bytes)
    act = L.code[0]
    z = _NO_Z4_READ[X.dtype] if Z4 is None else read_only(np.ascontiguousarray(Z4))
    if L.last:
        w_last = _weights(L, W, "depthwise", _channels_last_weights)
        _call(L, ("depthwise", Z4 is not None, bias.flags.c_contiguous), depthwise_small,
              (X, w_last, bias, z, Z4 is not None, *L.depthwise_args, act, L.p0, L.p1, Y))
        return Y
    depthwise_conv(X, _weights(L, W, "planar", np.ascontiguousarray), bias, z, Z4 is not None,
                   *L.depthwise_args, act, L.p0, L.p1, Y)
    return Y


def _channels_last_weights(W):
    return np.ascontiguousarray(W[:, 0].transpose(1, 2, 0))


# the paths, each called as route(X, W, B, bias, Z4, layer) (and ``_depthwise``, ``_by_dots``)
def run_winograd(X, W, B, bias, Z4, L):
    u = _weights(L, W, "winograd", winograd_weights)
    return winograd_conv(X, u, bias, Z4, L.code, L.g.begin, L.out_shape)


def run_winograd4(X, W, B, bias, Z4, L):
    u = _weights(L, W, "winograd4", winograd4_weights)
    return winograd4_conv(X, u, bias, Z4, L.code, L.g.begin, L.out_shape)


def run_im2col(X, W, B, bias, Z4, L):
    """im2col (or the input as it lies) and BLAS: by row bands for the stems, else one
    product per image (pointwise layers of one group have their own routes, ``_pointwise``)."""
    m, cg, kh, kw = W.shape
    pixels = L.out_shape[2] * L.out_shape[3]
    if (L.code is not None and not is_pointwise(W, L.g, X.shape[2:])
            and banded_eligible(m, cg * kh * kw, pixels, L.group, X.itemsize)):
        return _by_bands(X, W, bias, Z4, L.code, L.g, empty(L.out_shape, X.dtype))
    return _gemm_conv(X, W, B, Z4, L.group, L.g, L.activation, L.params)


def by_dots(X, W, B, bias, Z4, L):
    """A layer of few output pixels (a route): per image, its patches, one dot product per output
    value and the epilogue in one call (``_pixel_dots``)."""
    if L.patch_bytes > current_limits().max_tensor_bytes:
        check_allocation(L.patch_shape, X.dtype, "Conv patches")  # raises
    patches = empty_known(L.patch_shape, X.dtype, L.patch_bytes)
    Y = empty_known(L.out_shape, X.dtype, L.out_bytes)
    m, pixels = L.out_shape[1], L.patch_shape[0]
    w = _weights(L, W, "dots", _rows)
    if one_call(m, w.shape[1], pixels):  # small: every image in one compiled call
        z = _NO_Z4_READ[X.dtype] if Z4 is None else read_only(np.ascontiguousarray(Z4))
        _call(L, ("dots", Z4 is not None, bias.flags.c_contiguous), dots_images,
              (X, w, bias, z, Z4 is not None, L.code[0], L.p0, L.p1, Y, patches, L.zero,
               L.dots_geo))
        return Y
    act = L.code[0]
    for i in range(X.shape[0]):
        pixel_dots_conv(X[i], w, bias, residual_rows(Z4, i, m, pixels, X.dtype),
                        Z4 is not None, act, L.p0, L.p1, Y[i].reshape(m, pixels), patches,
                        L.zero, *L.dots_args)
    return Y


def _rows(W):
    """W (M, C/group, KH, KW) as the (M, C/group*KH*KW) rows the dot products read."""
    return np.ascontiguousarray(W).reshape(W.shape[0], -1)


def _by_bands(X, W, bias, Z4, code, g, Y):
    """A layer ``_banded.eligible`` for row bands (group 1): im2col, product and
    epilogue band by band, each band in its thread's cache (``_banded``)."""
    n, c = X.shape[:2]
    m, _, kh, kw = W.shape
    oh, ow = Y.shape[2:]
    k = c * kh * kw
    rows = band_rows(k, oh, ow, X.itemsize)
    scratch = empty(scratch_shape(k, ow, rows, oh), X.dtype)
    (sh, sw), (dh, dw) = g.strides, g.dilations
    w = read_only(np.ascontiguousarray(W).reshape(m, k))
    xp = empty(phase_shape(X.shape[1:], sw), X.dtype) if sw > 1 else _NO_PHASES[X.dtype]
    act, p0, p1 = code
    p0, p1 = X.dtype.type(p0), X.dtype.type(p1)
    b = read_only(bias)

    def run(lib):
        for i in range(n):
            if sw > 1:
                phases(X[i], sw, xp)
            z = read_only(_NO_Z3[X.dtype] if Z4 is None else np.ascontiguousarray(Z4[i]))
            banded_conv(X[i], xp, w, b, z, Z4 is not None, act, p0, p1, Y[i], scratch, kh, kw,
                        sh, sw, dh, dw, g.begin[0], g.begin[1], rows, lib)

    with_library(("gemm bands", X.shape, W.shape, g.begin, g.strides, g.dilations), run)
    return Y


def _gemm_conv(X, W, B, Z4, group, g, activation, params):
    """im2col (or the input itself, for pointwise layers) + one BLAS product per image and
    group, then the epilogue over the whole output."""
    n, c, h, w = X.shape
    m, cg, kh, kw = W.shape
    oh, ow = g.out
    out_shape = (n, m, oh, ow)
    Y = empty(out_shape, X.dtype)
    k = cg * kh * kw
    pointwise = is_pointwise(W, g, (h, w))
    weights = np.ascontiguousarray(W).reshape(group, m // group, k)
    sh, sw = g.strides
    # 1x1 with a stride and no padding (a ResNet's downsampling shortcut): the columns
    # are every sh-th row and sw-th column of X, one strided copy (no phase planes)
    subsample = (kh == kw == 1 and not pointwise and not any(g.begin)
                 and tuple(g.out) == ((h - 1) // sh + 1, (w - 1) // sw + 1))
    if not pointwise:
        check_allocation((c * kh * kw, oh * ow), X.dtype, "Conv im2col columns")
        cols = empty((c * kh * kw, oh * ow), X.dtype)
        xp = (empty(phase_shape(X.shape[1:], sw), X.dtype) if sw > 1 and not subsample
              else _NO_PHASES[X.dtype])
    for i in range(n):
        if pointwise:
            src = X[i].reshape(group, k, h * w)
        elif subsample:
            np.copyto(cols.reshape(c, oh, ow), X[i][:, ::sh, ::sw])
            src = cols.reshape(group, k, oh * ow)
        else:
            if sw > 1:
                phases(X[i], sw, xp)
            im2col(X[i], xp, cols, kh, kw, sh, sw, g.dilations[0],
                   g.dilations[1], g.begin[0], g.begin[1], oh, ow)
            src = cols.reshape(group, k, oh * ow)
        matmul(weights, src, Y[i].reshape(group, m // group, oh * ow))
    rows = Y.reshape(n * m, oh * ow)
    zrows = None if Z4 is None else np.ascontiguousarray(Z4).reshape(n * m, oh * ow)
    return epilogue_rows(rows, B, zrows, activation, params).reshape(out_shape)
