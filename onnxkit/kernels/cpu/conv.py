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
        (planar, ``_depthwise_3x3`` for 3x3 with padding 1 and stride 1 or 2;
        channels-last when the output plane has at most 64 pixels - 16 for those 3x3
        layers - and 32+ channels)
    winograd4 / winograd: F(4x4, 3x3) (36 BLAS products, ``_winograd4``) or F(2x2, 3x3)
        (16 products, ``_winograd``), epilogue fused
    dots: patches, one dot product per output value and the epilogue in one Numba call
        (``_pixel_dots``), for layers of few output pixels
    bands: a pointwise layer by bands of columns (``_pointwise``, ``_banded``)

Which algorithm serves a layer is the static rule of one table, ``_conv_rules.CONV``
(or, with tuning asked for, the fastest of those that may run, timed on its first call).
A node's kernel is prepared when the plan is built (``PreparedConv``, kept on its step):
attributes bound, the plan's initializers known as constants (only a constant W gets
Winograd: its transform is computed once), and per input shape one ``Layer``
(``_conv_layer``) with the decision, its geometry, kernel arguments and transformed
weights; decided at plan time where the model declares the input's shape, else on the
first call; taps of a constant W that read only padding for every output (a dilated
window on a small input) are cut from it then (``_conv_layer.live_taps``). 1-D
convolutions run as 2-D ones of height 1. 3-D and up (``_conv_nd``): per image, the columns by one numpy copy
per kernel tap, one BLAS product per group on the Numba threads, then the epilogue.
Non-float dtypes run the reference kernel.
https://onnx.ai/onnx/operators/onnx__Conv.html
"""

from __future__ import annotations

import threading

import numpy as np

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._buffers import read_only
from onnxkit.kernels.cpu._conv_layer import Layer, live_taps
from onnxkit.kernels.cpu._conv_nd import conv_nd
from onnxkit.kernels.cpu._conv_routes import (FLOATS, by_dots, depthwise, run_im2col,
                                              run_winograd, run_winograd4)
from onnxkit.kernels.cpu._conv_rules import facts, may_run, rule
from onnxkit.kernels.cpu._depthwise_3x3 import direct_3x3
from onnxkit.kernels.cpu._pointwise import run_bands, run_product
from onnxkit.kernels.cpu._route import fall_back, note, taken
from onnxkit.kernels.cpu._tuning import timed, tuning
from onnxkit.kernels.cpu.activations import activate_in_place
from onnxkit.ops.fused.fused_conv import fused_conv as reference_fused_conv
from onnxkit.ops.nn.conv import conv as reference_conv
from onnxkit.ops.registry import op
SMALL_PLANE = 64  # output pixels; at most this many: channels-last depthwise
# ... and this many for the 3x3 layers ``_depthwise_3x3`` serves (padding 1, stride 1
# or 2): on 8x8 outputs it was as fast (stride 1) or faster (stride 2, 1.7x)
SMALL_PLANE_3X3 = 16
MAX_LAYERS = 64  # input shapes one node keeps a Layer for; past this it starts again
_CHOOSING = threading.Lock()  # one timing at a time: a session's threads agree on a choice
_ND = "n-d"  # a layer of 3-D and larger inputs (``_conv_nd``)
_MISSING = object()
_CONV_DEFAULTS = dict(auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None, pads=None,
                      strides=None)
_FUSED_DEFAULTS = dict(_CONV_DEFAULTS, activation="", activation_params=None)


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


class PreparedConv:
    """One Conv or FusedConv node's kernel, prepared when the plan is built (see the
    module doc): called as the registered kernel is, ``(X, W, B, Z, **attributes)``, the
    attributes bound here. ``algorithm``: what its layers run (``_conv_rules``)."""

    def __init__(self, fused: bool, attrs: dict, W=None, B=None):
        self.fused = fused
        self.attrs = {**(_FUSED_DEFAULTS if fused else _CONV_DEFAULTS), **attrs}
        self.W, self.B = W, B  # the initializers, when they are (None: given each call)
        self.layers: dict = {}  # (shapes, dtypes, W constant, tuning) -> Layer, _ND or None
        # the same, for calls with the plan's own W and B and no Z: (X shape, dtype, tuning)
        self.quick: dict = {}

    @property
    def op_type(self) -> str:
        return "FusedConv" if self.fused else "Conv"

    @property
    def algorithm(self) -> str | None:
        """The algorithm of each 2-D layer decided so far, "/"-joined; None before any."""
        names = sorted({L.algorithm for L in list(self.layers.values())
                        if isinstance(L, Layer) and L.algorithm})
        return "/".join(names) or None

    def plan(self, x_shape, dtype, z_shape=None) -> None:
        """Decide the layer of an input shape the model declares, before any run (the
        static rule): the plan then shows its algorithm. ``B`` must be absent or constant."""
        like = np.broadcast_to(np.zeros((), dtype), x_shape)
        z = None if z_shape is None else np.broadcast_to(np.zeros((), dtype), z_shape)
        if self.W is None or self.W.ndim != len(x_shape):
            return
        try:
            self._layer(like, self.W, self.B, z, False)
        except Exception:  # noqa: BLE001  (a declared shape the attributes refuse: the
            self.layers.clear()  # first call decides, and the reference names the error)

    def __call__(self, X, W, B=None, Z=None, **_attributes):
        tuned = tuning()
        if W is self.W and B is self.B and Z is None:
            L = self.quick.get((X.shape, X.dtype, tuned), _MISSING)
            if L is _MISSING:
                L = self._layer(X, W, B, Z, tuned)
                self.quick[(X.shape, X.dtype, tuned)] = L
        else:
            L = self._layer(X, W, B, Z, tuned)
        if L is None:
            return self._reference(X, W, B, Z)
        if L is _ND:
            a = self.attrs
            Y = conv_nd(X, W, B, Z, a["auto_pad"], a["dilations"], a["group"], a["pads"],
                        a["strides"], a.get("activation", ""), a.get("activation_params"))
            if Y is None:
                return self._reference(X, W, B, Z)
            note(_ND)  # reported as "n-d"
            return Y
        if L.one_d:
            Z4 = None if Z is None else Z[:, :, None, :]
            return _run_layer(X[:, :, None, :], W[:, :, None, :], B, Z4, L)[:, :, 0, :]
        return _run_layer(X, W, B, Z, L)

    def _layer(self, X, W, B, Z, tuned: bool):
        key = (X.shape, X.dtype, W.shape, W.dtype, None if B is None else (B.shape, B.dtype),
               None if Z is None else (Z.shape, Z.dtype), W is self.W, tuned)
        L = self.layers.get(key, _MISSING)
        if L is _MISSING:
            self.quick.clear()  # holds only what ``layers`` holds
            L = self._decide(X, W, B, Z, W is self.W, tuned)
            if len(self.layers) >= MAX_LAYERS:
                self.layers.clear()
            self.layers.pop(key[:-1] + (not tuned,), None)  # the rule's, or the timed one
            self.layers[key] = L
        return L

    def _decide(self, X, W, B, Z, constant: bool, tuned: bool):
        """The layer for these inputs: a ``Layer``, ``_ND``, or None (the reference)."""
        a = self.attrs
        if not _supported(X, W, B, Z, a["group"], a["kernel_shape"]):
            return None
        if X.ndim > 4:
            return _ND
        dilations, pads, strides = a["dilations"], a["pads"], a["strides"]
        one_d = X.ndim == 3
        if one_d:
            if any(v is not None and len(v) != size
                   for v, size in ((dilations, 1), (strides, 1), (pads, 2))):
                return None  # the reference names the bad attribute
            if Z is not None and Z.ndim != 3:
                return None
            X, W = X[:, :, None, :], W[:, :, None, :]
            Z = None if Z is None else Z[:, :, None, :]
            dilations, strides = _as_2d(dilations, 1), _as_2d(strides, 1)
            if pads is not None:
                pads = [0, pads[0], 0, pads[1]]
        L = Layer(X, W, a["auto_pad"], dilations, a["group"], pads, strides,
                  a.get("activation", ""), a.get("activation_params"))
        if Z is not None and Z.shape != L.out_shape:
            return None  # a residual of another shape: the reference broadcasts or reports
        live = live_taps(X.shape[2:], L.g) if constant else None
        if live is not None:  # taps that read only padding: W cut to the others, once
            (i0, i1), (j0, j1) = live[0]
            W = read_only(np.ascontiguousarray(W[:, :, i0:i1, j0:j1]))
            L = Layer(X, W, "NOTSET", L.g.dilations, a["group"], live[1], L.g.strides,
                      a.get("activation", ""), a.get("activation_params"))
            L.live_w = W
        L.one_d, L.constant = one_d, constant
        _route(L, X, W, tuned)
        return L

    def _reference(self, X, W, B, Z):
        if self.fused:
            return fall_back(reference_fused_conv, X, W, B, Z, **self.attrs)
        return fall_back(reference_conv, X, W, B, **self.attrs)


def prepare_conv(node, attrs: dict, constants: dict, shapes: dict) -> PreparedConv:
    """``Conv``'s plan-time hook: ``constants`` (input index -> the initializer) and
    ``shapes`` (input index -> (shape, dtype) the model declares, where fully known)."""
    return _prepared(False, node, attrs, constants, shapes)


def prepare_fused_conv(node, attrs: dict, constants: dict, shapes: dict) -> PreparedConv:
    return _prepared(True, node, attrs, constants, shapes)


def _prepared(fused, node, attrs, constants, shapes) -> PreparedConv:
    kernel = PreparedConv(fused, attrs, constants.get(1), constants.get(2))
    given = list(node.input) + [""] * 4
    declared = shapes.get(0)
    if (declared is None or kernel.W is None or (given[2] and kernel.B is None)
            or (given[3] and 3 not in shapes)):
        return kernel  # decided on the first call
    kernel.plan(declared[0], declared[1], shapes[3][0] if given[3] else None)
    return kernel


def _run_layer(X, W, B, Z, L):
    """Layer ``L``'s route on these inputs (2-D)."""
    # what the kernels only read goes to them read-only: one signature per dtype (``read_only``)
    X = read_only(np.ascontiguousarray(X))
    if L.live_w is not None:
        W = L.live_w
    Y = L.route(X, W, B, L.no_bias if B is None else read_only(B), Z, L)
    if L.after is not None:
        activate_in_place(Y, L.after)
    note(L.algorithm)
    return Y


ran = taken  # what this thread's last Conv ran, once (``_route``; the executor's ``trace_extra``)


def _route(L, X, W, tuned: bool):
    """Decide, once per layer, which algorithm serves it (``L.route``): the static rule of
    ``_conv_rules.CONV``, or, with tuning on and more than one that may run, the one
    timed fastest on the first call (``_choose``)."""
    g, group = L.g, L.group
    f = facts(X, W, group, g, L.code, L.constant)
    names = may_run(f)
    L.default = rule(f)
    routes = {"depthwise": depthwise, "dots": by_dots, "winograd4": run_winograd4,
              "winograd": run_winograd, "bands": run_bands,
              "im2col": run_product if f.pointwise else run_im2col}
    if names[0] == "depthwise":
        c, m = X.shape[1], W.shape[0]
        direct = direct_3x3(W.shape[2:], g.strides, g.dilations, g.begin, X.shape[2:], g.out)
        L.last = f.pixels <= (SMALL_PLANE_3X3 if direct else SMALL_PLANE) and c >= 32 and m == c
    if len(names) == 1 or not tuned:
        L.route, L.algorithm = routes[L.default], L.default
        return
    L.candidates = {name: routes[name] for name in names}
    L.pick_key = ("conv", X.shape, W.shape, group, g.begin, g.strides, g.dilations)
    if names[0] == "bands":
        L.pick_key = ("conv 1x1", X.shape, W.shape)
    L.route = _choose


def _choose(X, W, B, bias, Z4, L):
    """A tuned layer's first call: every candidate timed, the fastest then serves the
    layer's later calls; the transformed weights of the others are dropped."""
    with _CHOOSING:
        if L.route is not _choose:  # another thread of the session has chosen meanwhile
            return L.route(X, W, B, bias, Z4, L)
        winner, Y = timed(L.pick_key, {name: (lambda run=run: run(X, W, B, bias, Z4, L))
                                       for name, run in L.candidates.items()})
        for name in [n for n in L.weights if n != winner]:
            del L.weights[name]
        L.route, L.algorithm = L.candidates[winner], winner
    return Y


@op("Conv", 1, 11, 22, registry=CPU)
def conv(X, W, B=None, *, auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None,
         pads=None, strides=None):
    """Called outside a plan (no initializers known: W is no constant), as a plan's step
    calls its ``PreparedConv``."""
    attrs = dict(auto_pad=auto_pad, dilations=dilations, group=group,
                 kernel_shape=kernel_shape, pads=pads, strides=strides)
    return PreparedConv(False, attrs)(X, W, B)


@op("FusedConv", 1, domain="onnxkit", registry=CPU)
def fused_conv(X, W, B=None, Z=None, *, auto_pad="NOTSET", dilations=None, group=1,
               kernel_shape=None, pads=None, strides=None, activation="", activation_params=None):
    attrs = dict(auto_pad=auto_pad, dilations=dilations, group=group,
                 kernel_shape=kernel_shape, pads=pads, strides=strides, activation=activation,
                 activation_params=activation_params)
    return PreparedConv(True, attrs)(X, W, B, Z)


conv.prepare = prepare_conv
fused_conv.prepare = prepare_fused_conv
