"""Conv and onnxkit::FusedConv on the ``cpu`` executor: im2col or Winograd + BLAS, depthwise.

    Y = activation(Conv(X, W, B) + Z)          (Conv: no Z, no activation)

    im2col: for each image n:
        1x1, stride 1, no padding:  cols = X[n] seen as (C, H*W)          (no copy)
        1x1, strided, no padding:   cols = X[n][:, ::sh, ::sw]            (one copy)
        otherwise:                  cols = im2col(X[n])  (C*KH*KW, OH*OW) (Numba)
        Y[n] = W (group, M/group, C/group*KH*KW) @ cols (group, ., OH*OW)  (BLAS)
      then bias, residual Z and activation in one pass (``_epilogue``); stems by row
      bands (``_banded``)
    depthwise (group == C, W is (C*mult, 1, KH, KW)): direct Numba loop, epilogue fused
        (planar; channels-last when the output plane has at most 64 pixels, unless the
        layer is 3x3 with padding 1 and stride 1 or 2: ``_depthwise_3x3``)
    winograd4 / winograd: F(4x4, 3x3) (36 BLAS products, ``_winograd4``) or F(2x2, 3x3)
        (16 products, ``_winograd``), epilogue fused
    dots: patches, one dot product per output value and the epilogue in one Numba call
        (``_pixel_dots``), for layers of few output pixels
    bands: a pointwise layer by bands of columns (``_pointwise``, ``_banded``)

Which algorithm serves a layer is the static rule of one table, ``_conv_rules.CONV``
(or, with tuning asked for, the fastest of those that may run, timed on its first call);
it is decided on a layer's first call, with its geometry, activation code and kernel
arguments, and looked up on later calls (``_conv_layer``). 1-D convolutions run as 2-D
ones of height 1. 3-D and up (``_conv_nd``): per image, the columns by one numpy copy
per kernel tap, one BLAS product per group on the Numba threads, then the epilogue.
Non-float dtypes run the reference kernel.
https://onnx.ai/onnx/operators/onnx__Conv.html
"""

from __future__ import annotations

import threading

import numpy as np

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._banded import band_rows, banded_conv, eligible as banded_eligible
from onnxkit.kernels.cpu._banded import scratch_shape
from onnxkit.kernels.cpu._blas import matmul, with_library
from onnxkit.kernels.cpu._buffers import empty, forget_laid_out, keep_laid_out, laid_out, read_only
from onnxkit.kernels.cpu._conv_layer import LAYERS, Layer, layer_key, recall, remember
from onnxkit.kernels.cpu._conv_layer import remember_call
from onnxkit.kernels.cpu._conv_nd import conv_nd
from onnxkit.kernels.cpu._conv_rules import facts, may_run, rule
from onnxkit.kernels.cpu._depthwise import depthwise_conv, depthwise_conv_nhwc
from onnxkit.kernels.cpu._depthwise_3x3 import direct_3x3
from onnxkit.kernels.cpu._epilogue import epilogue_rows, residual_rows
from onnxkit.kernels.cpu._im2col import im2col, phase_shape, phases
from onnxkit.kernels.cpu._pixel_dots import pixel_dots_conv
from onnxkit.kernels.cpu._pointwise import is_pointwise, run_bands, run_product
from onnxkit.kernels.cpu._tuning import chosen, pick, tuning
from onnxkit.kernels.cpu._winograd import TAG as WINOGRAD_TAG, winograd_conv
from onnxkit.kernels.cpu._winograd4 import TAG as WINOGRAD4_TAG, winograd4_conv
from onnxkit.kernels.cpu.activations import activate_in_place
from onnxkit.ops.fused.fused_conv import fused_conv as reference_fused_conv
from onnxkit.ops.nn.conv import conv as reference_conv
from onnxkit.ops.registry import op
from onnxkit.runtime.limits import check_allocation, current_limits

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_NO_PHASES = {t: np.zeros((1, 1, 1, 1), t) for t in FLOATS}
_NO_Z4 = _NO_PHASES
_NO_Z3 = {t: np.zeros((1, 1, 1), t) for t in FLOATS}
SMALL_PLANE = 64  # output pixels; at most this many: channels-last depthwise
_TRANSFORMED = {"winograd": WINOGRAD_TAG, "winograd4": WINOGRAD4_TAG}  # weights laid out
_RAN = threading.local()  # the algorithm of this thread's last Conv (``ran``)


def _supported(X, W, B, Z, group, kernel_shape) -> bool:
    if X.dtype not in FLOATS or W.dtype != X.dtype or X.ndim < 3 or W.ndim != X.ndim:
        return False
    if B is not None and (B.dtype != X.dtype or B.shape != (W.shape[0],)):
        return False
    if Z is not None and Z.dtype != X.dtype:
        return False
    if kernel_shape is not None and tuple(kernel_shape) != tuple(W.shape[2:]):
        return False  # the reference reports the mismatch
    c, m = X.shape[1], W.shape[0]
    return (group >= 1 and c == W.shape[1] * group and m % group == 0 and X.size > 0
            and W.size > 0)


def _as_2d(values, fill: int):
    """A 1-D attribute list as the 2-D one of an input of height 1."""
    return None if values is None else [fill] + list(values)


def _depthwise(X, W, B, bias, Z4, L):
    """A depthwise layer (a route, see ``_route``): planar kernel, or channels-last for small output planes with many channels."""
    Y = empty(L.out_shape, X.dtype)
    act = L.code[0]
    if L.last:
        w_last = read_only(laid_out(W, "depthwise channels-last", _channels_last_weights))
        y_last = np.empty(Y.shape[2:] + Y.shape[1:2], X.dtype)
        for i in range(X.shape[0]):
            x_last = np.ascontiguousarray(X[i].transpose(1, 2, 0))
            z_last = (_NO_Z3[X.dtype] if Z4 is None
                      else np.ascontiguousarray(Z4[i].transpose(1, 2, 0)))
            depthwise_conv_nhwc(x_last, w_last, bias, z_last, Z4 is not None,
                                *L.depthwise_args, act, L.p0, L.p1, y_last)
            np.copyto(Y[i], y_last.transpose(2, 0, 1))
        return Y
    z = read_only(_NO_Z4[X.dtype] if Z4 is None else np.ascontiguousarray(Z4))
    depthwise_conv(X, read_only(np.ascontiguousarray(W)), bias, z, Z4 is not None,
                   *L.depthwise_args, act, L.p0, L.p1, Y)
    return Y


def _channels_last_weights(W):
    return np.ascontiguousarray(W[:, 0].transpose(1, 2, 0))


def conv2d(X, W, B, Z, auto_pad, dilations, group, pads, strides, activation, params,
           attrs=None):
    """The fast path; returns None when the case is left to the reference. ``attrs``: the
    node's attributes as it gave them, for ``recall`` (2-D layers)."""
    one_d = X.ndim == 3
    if one_d:
        if any(v is not None and len(v) != size
               for v, size in ((dilations, 1), (strides, 1), (pads, 2))):
            return None  # the reference names the bad attribute
        X, W = X[:, :, None, :], W[:, :, None, :]
        dilations, strides = _as_2d(dilations, 1), _as_2d(strides, 1)
        if pads is not None:
            pads = [0, pads[0], 0, pads[1]]
    key = layer_key(X, W, Z is not None, auto_pad, dilations, group, pads, strides,
                    activation, params)
    L = LAYERS.get(key)
    if L is None:
        L = Layer(X, W, auto_pad, dilations, group, pads, strides, activation, params)
        _route(L, X, W)
        remember(key, L)
    if attrs is not None and not one_d:
        remember_call(X, W, B, Z is not None, attrs, L)
    if one_d:
        if Z is not None and Z.ndim != 3:
            return None
        Y = _run_layer(X, W, B, None if Z is None else Z[:, :, None, :], L)
        return None if Y is None else Y[:, :, 0, :]
    return _run_layer(X, W, B, Z, L)


def _run_layer(X, W, B, Z, L):
    """Layer ``L``'s route on these inputs (None for a residual of another shape)."""
    if Z is not None and Z.shape != L.out_shape:
        return None
    # what the kernels only read goes to them read-only: one signature per dtype (``read_only``)
    X = read_only(np.ascontiguousarray(X))
    Y = L.route(X, W, B, L.no_bias if B is None else read_only(B), Z, L)
    if L.after is not None:
        activate_in_place(Y, L.after)
    _RAN.algorithm = L.algorithm
    return Y


def ran() -> str | None:
    """The algorithm of the 2-D Conv this thread ran last (``_conv_rules``), once: then
    None until the next one (the executor's ``trace_extra`` reports it per node)."""
    algorithm = getattr(_RAN, "algorithm", None)
    _RAN.algorithm = None
    return algorithm


def _route(L, X, W):
    """Decide, once per layer, which algorithm serves it (``L.route``): the static rule of
    ``_conv_rules.CONV``, or, with tuning on and more than one that may run, the one
    timed fastest on the first call (``_choose``)."""
    g, group = L.g, L.group
    f = facts(X, W, group, g, L.code)
    names = may_run(f)
    L.default = rule(f)
    routes = {"depthwise": _depthwise, "dots": _by_dots, "winograd4": _run_winograd4,
              "winograd": _run_winograd, "bands": run_bands,
              "im2col": run_product if f.pointwise else _run_product}
    if names[0] == "depthwise":
        c, m = X.shape[1], W.shape[0]
        L.last = (f.pixels <= SMALL_PLANE and c >= 32 and m == c
                  and not direct_3x3(W.shape[2:], g.strides, g.dilations, g.begin,
                                     X.shape[2:], g.out))
    if len(names) == 1:
        L.route, L.algorithm = routes[L.default], L.default
        return
    L.candidates = {name: routes[name] for name in names}
    if "winograd" in names:
        L.pick_key = ("conv", X.shape, W.shape, g.begin, g.out)
    elif "dots" in names:
        L.pick_key = ("conv dots", X.shape, W.shape, group, g.begin, g.strides, g.dilations)
    else:
        L.pick_key = ("conv 1x1", X.shape, W.shape)
    L.route = _choose


def _choose(X, W, B, bias, Z4, L):
    """A layer's first call: ``pick`` runs the candidate timed fastest on this machine
    (the static rule's ``L.default`` when tuning is off), which then serves the layer's
    later calls directly. The transformed weights of the algorithms not chosen are
    dropped."""
    Y = pick(L.pick_key, {name: (lambda run=run: run(X, W, B, bias, Z4, L))
                          for name, run in L.candidates.items()}, L.default)
    kept = (chosen(L.pick_key) if tuning() else None) or L.default  # what ``pick`` ran
    L.route, L.algorithm = L.candidates[kept], kept
    if kept in _TRANSFORMED:
        keep_laid_out(W, _TRANSFORMED[kept])
    for name, tag in _TRANSFORMED.items():
        if name != kept and name in L.candidates:  # unless another layer chose it
            forget_laid_out(W, tag)
    return Y


# the paths, each called as route(X, W, B, bias, Z4, layer) (and ``_depthwise``, ``_by_dots``)
def _run_winograd(X, W, B, bias, Z4, L):
    return winograd_conv(X, W, bias, Z4, L.code, L.g.begin, L.out_shape)


def _run_winograd4(X, W, B, bias, Z4, L):
    return winograd4_conv(X, W, bias, Z4, L.code, L.g.begin, L.out_shape)


def _run_product(X, W, B, bias, Z4, L):
    """im2col (or the input as it lies) and BLAS: by row bands for the stems, else one
    product per image (pointwise layers of one group have their own routes, ``_pointwise``)."""
    m, cg, kh, kw = W.shape
    pixels = L.out_shape[2] * L.out_shape[3]
    if (L.code is not None and not is_pointwise(W, L.g, X.shape[2:])
            and banded_eligible(m, cg * kh * kw, pixels, L.group, X.itemsize)):
        return _by_bands(X, W, bias, Z4, L.code, L.g, empty(L.out_shape, X.dtype))
    return _gemm_conv(X, W, B, Z4, L.group, L.g, L.activation, L.params)


def _by_dots(X, W, B, bias, Z4, L):
    """A layer of few output pixels (a route): per image, its patches, one dot product per output
    value and the epilogue in one call (``_pixel_dots``)."""
    if L.patch_bytes > current_limits().max_tensor_bytes:
        check_allocation(L.patch_shape, X.dtype, "Conv patches")  # raises
    patches = empty(L.patch_shape, X.dtype)
    Y = empty(L.out_shape, X.dtype)
    m, pixels = L.out_shape[1], L.patch_shape[0]
    w = read_only(np.ascontiguousarray(W).reshape(m, -1))
    act = L.code[0]
    for i in range(X.shape[0]):
        pixel_dots_conv(X[i], w, bias, residual_rows(Z4, i, m, pixels, X.dtype),
                        Z4 is not None, act, L.p0, L.p1, Y[i].reshape(m, pixels), patches,
                        L.zero, *L.dots_args)
    return Y


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


def _fast(X, W, B, Z, auto_pad, dilations, group, pads, strides, activation, params, attrs):
    """The fast path for X's rank (``attrs`` for ``recall``: 1-D and 2-D layers)."""
    if X.ndim > 4:
        return conv_nd(X, W, B, Z, auto_pad, dilations, group, pads, strides, activation,
                       params)
    return conv2d(X, W, B, Z, auto_pad, dilations, group, pads, strides, activation, params,
                  attrs)


@op("Conv", 1, 11, 22, registry=CPU)
def conv(X, W, B=None, *, auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None,
         pads=None, strides=None):
    attrs = (auto_pad, dilations, group, kernel_shape, pads, strides)
    L = recall(X, W, B, False, attrs)  # a node's later runs: its layer, found at once
    if L is not None:
        return _run_layer(X, W, B, None, L)
    if _supported(X, W, B, None, group, kernel_shape):
        Y = _fast(X, W, B, None, auto_pad, dilations, group, pads, strides, "", None, attrs)
        if Y is not None:
            return Y
    return reference_conv(X, W, B, auto_pad=auto_pad, dilations=dilations, group=group,
                          kernel_shape=kernel_shape, pads=pads, strides=strides)


@op("FusedConv", 1, domain="onnxkit", registry=CPU)
def fused_conv(X, W, B=None, Z=None, *, auto_pad="NOTSET", dilations=None, group=1,
               kernel_shape=None, pads=None, strides=None, activation="", activation_params=None):
    attrs = (auto_pad, dilations, group, kernel_shape, pads, strides, activation,
             activation_params)
    L = recall(X, W, B, Z is not None, attrs)
    if L is not None and (Z is None or Z.dtype is X.dtype):
        Y = _run_layer(X, W, B, Z, L)
        if Y is not None:
            return Y
    if _supported(X, W, B, Z, group, kernel_shape):
        Y = _fast(X, W, B, Z, auto_pad, dilations, group, pads, strides, activation,
                  activation_params, attrs)
        if Y is not None:
            return Y
    return reference_fused_conv(X, W, B, Z, auto_pad=auto_pad, dilations=dilations, group=group,
                                kernel_shape=kernel_shape, pads=pads, strides=strides,
                                activation=activation, activation_params=activation_params)
