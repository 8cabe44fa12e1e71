"""What a convolution layer's calls have in common, worked out on its first call.

    layer = LAYERS.get(key)        # key: shapes, dtype, attributes (``layer_key``)
    layer.route(X, W, B, bias, Z4, layer)

A Conv node is called once per run with the same shapes and attributes, and each call
used to work everything out again before its kernel: the window geometry, the activation
code, which algorithm serves the layer (the rule of ``_conv_rules``, or ``_tuning.pick``
with its candidates), the dtype-typed scalars and argument tuples of the kernel: on the
late layers of a small-input network, more than the kernel itself (``docs/cpu.md``).
``Layer`` holds all of it; the first call fills it, later calls look it up by value and
run the chosen route at once.

The memo forgets everything with ``_tuning.forget()`` (which the choices came from), and
its key holds ``_tuning.tuning()`` (the static rule and the timed choice can differ).

Building that key by value still costs microseconds (the attribute lists made tuples, the
kernel's keyword arguments checked again). A node calls its kernel with the same objects
on every run: the same weight and bias arrays (initializers) and the same attribute
lists. ``recall`` finds the layer again by them: ``(id(W), X.shape)`` then, in the entry,
W and B by weak reference (alive and the same objects), the attributes compared as a
tuple (identical objects compare equal at once), the dtype, residual and tuning flag.
"""

from __future__ import annotations

import weakref

from onnxkit.kernels.cpu._buffers import is_constant, zeros_read_only
from onnxkit.kernels.cpu._geometry import as_key, layer_geometry
from onnxkit.kernels.cpu._math import split_activation
from onnxkit.kernels.cpu._tuning import on_forget, tuning

LAYERS: dict = {}
MAX_LAYERS = 4096  # distinct layer shapes remembered; past this the memo starts again


def layer_key(X, W, has_z, auto_pad, dilations, group, pads, strides, activation, params):
    """The layer's shapes, dtype and attributes, by value. Whether W is a constant counts
    only where the algorithm depends on it (3x3, one group: Winograd needs constant W)."""
    constant = is_constant(W) if group == 1 and W.shape[2:] == (3, 3) else None
    return (X.shape, W.shape, X.dtype, group, auto_pad, activation, as_key(strides),
            as_key(dilations), as_key(pads), as_key(params), has_z, constant, tuning())


class Layer:
    """One layer shape's facts (see the module doc); ``route`` and the fields after it
    are set by ``conv`` when it decides how the layer runs."""

    __slots__ = ("g", "out_shape", "code", "after", "activation", "params", "group",
                 "no_bias", "route", "candidates", "default", "pick_key", "p0", "p1",
                 "zero", "dots_args", "patch_shape", "patch_bytes", "last",
                 "depthwise_args", "algorithm")

    def __init__(self, X, W, auto_pad, dilations, group, pads, strides, activation, params):
        self.g = g = layer_geometry(X.shape[2:], W.shape[2:], strides, dilations, pads,
                                    auto_pad)
        m, kh, kw = W.shape[0], W.shape[2], W.shape[3]
        self.out_shape = (X.shape[0], m, g.out[0], g.out[1])
        self.code, self.after = split_activation(activation, params)
        if self.after is not None:  # Sigmoid, Tanh, Swish: a pass of their own after
            activation, params = "", None
        self.activation, self.params, self.group = activation, params, group
        self.no_bias = zeros_read_only(m, X.dtype)
        self.route = self.candidates = self.default = self.pick_key = None
        self.algorithm = None  # the name of the route, once decided (``_conv_rules``)
        scalar = X.dtype.type
        _, p0, p1 = self.code if self.code is not None else (0, 0.0, 0.0)
        self.p0, self.p1, self.zero = scalar(p0), scalar(p1), scalar(0)
        # the dot-product path's (``_pixel_dots``) patches and trailing arguments
        pixels = g.out[0] * g.out[1]
        self.patch_shape = (pixels, X.shape[1] * kh * kw)
        self.patch_bytes = pixels * X.shape[1] * kh * kw * X.dtype.itemsize
        self.dots_args = (kh, kw, *g.strides, *g.dilations, *g.begin[:2], g.out[1], group)
        # the depthwise path's arguments, and whether it runs channels-last
        self.depthwise_args = g.strides + g.dilations + g.begin[:2]
        self.last = False


def remember(key, layer: Layer) -> None:
    if len(LAYERS) >= MAX_LAYERS:
        LAYERS.clear()
    LAYERS[key] = layer


_RECENT: dict = {}  # (id(W), X.shape) -> _Call


class _Call:
    """What a call was made with (``recall``): W and B weakly, the attributes as given."""

    __slots__ = ("w", "b", "attrs", "dtype", "has_z", "tuning", "layer")


def recall(X, W, B, has_z: bool, attrs: tuple):
    """The layer of an earlier call with the same W and B objects, attributes, input
    shape and dtype, residual or not, and tuning flag; None when there was none."""
    call = _RECENT.get((id(W), X.shape))
    if (call is None or call.w() is not W or call.attrs != attrs or X.dtype is not call.dtype
            or call.has_z is not has_z or call.tuning is not tuning()):
        return None
    if B is None:
        return call.layer if call.b is None else None
    return None if call.b is None or call.b() is not B else call.layer


def remember_call(X, W, B, has_z: bool, attrs: tuple, layer: Layer) -> None:
    """Let ``recall`` find ``layer`` for calls like this one."""
    call = _Call()
    call.w, call.b = weakref.ref(W), None if B is None else weakref.ref(B)
    call.attrs, call.dtype, call.has_z, call.tuning = attrs, X.dtype, has_z, tuning()
    call.layer = layer
    if len(_RECENT) >= MAX_LAYERS:
        _RECENT.clear()
    _RECENT[(id(W), X.shape)] = call


on_forget(LAYERS.clear)
on_forget(_RECENT.clear)
