"""What a convolution layer's calls have in common, worked out on its first call.

    layer = Layer(X, W, ...)       # geometry, activation code, kernel arguments
    layer.route(X, W, B, bias, Z4, layer)

A Conv node is called once per run with the same shapes and attributes. Everything its
kernel needs beyond the arrays is worked out once per input shape: the window geometry,
the activation code, which algorithm serves the layer (the rule of ``_conv_rules``, or
the fastest timed, with tuning on), the dtype-typed scalars and argument tuples of the
kernel, and the weights that algorithm transforms (Winograd's U, the channels-last
depthwise filters). ``Layer`` holds all of it; the node's prepared kernel
(``conv.PreparedConv``, kept on the plan's step) keeps one per input shape it meets.
"""

from __future__ import annotations

import numpy as np

from onnxkit.kernels.cpu._buffers import read_only, zeros_read_only
from onnxkit.kernels.cpu._geometry import layer_geometry
from onnxkit.kernels.cpu._math import split_activation


class Layer:
    """One layer shape's facts (see the module doc); ``route`` and the fields after it
    are set by ``conv`` when it decides how the layer runs."""

    __slots__ = ("g", "out_shape", "out_bytes", "code", "after", "activation", "params",
                 "group", "no_bias", "route", "candidates", "default", "pick_key", "p0", "p1",
                 "zero", "dots_args", "dots_geo", "patch_shape", "patch_bytes", "last",
                 "depthwise_args", "algorithm", "constant", "one_d", "weights", "live_w",
                 "entries")

    def __init__(self, X, W, auto_pad, dilations, group, pads, strides, activation, params):
        self.g = g = layer_geometry(X.shape[2:], W.shape[2:], strides, dilations, pads,
                                    auto_pad)
        m, kh, kw = W.shape[0], W.shape[2], W.shape[3]
        self.out_shape = (X.shape[0], m, g.out[0], g.out[1])
        self.out_bytes = X.shape[0] * m * g.out[0] * g.out[1] * X.dtype.itemsize
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
        self.dots_geo = read_only(np.array(self.dots_args, np.int64))  # as one argument
        # the depthwise path's arguments, and whether it runs channels-last
        self.depthwise_args = g.strides + g.dilations + g.begin[:2]
        self.last = False
        self.constant = False  # W is an initializer: what is derived from it is kept
        self.one_d = False  # a 1-D layer, run as a 2-D one of height 1
        self.weights: dict = {}  # algorithm -> W transformed for it (``conv._weights``)
        self.entries: dict = {}  # kernel call key -> compiled entry point (``_conv_routes``)
        self.live_w = None  # W cut to its live taps (``live_taps``): what the route reads


def live_taps(in_hw, g):
    """Per spatial axis, the range [first, last + 1) of the kernel taps that read the
    input for at least one output position (the others read only padding: on a 4x4
    input, a 3x3 window dilated by 12 and padded by 12 reads the input by its centre
    tap alone), and the pads of the window cut to those taps, which gives the same
    output size; None where every tap is live or a cut pad would be negative.

    A tap that reads only padding adds exact zeros, so the cut layer computes the same
    sums without those terms (a DeepLabV3 ASPP layer on a small input does 1/9 of its
    multiply-adds)."""
    ranges, begin, end = [], [], []
    for size, k, s, d, b, e, o in zip(in_hw, g.kernel, g.strides, g.dilations, g.begin,
                                      g.end, g.out):
        live = [i for i in range(k)
                if any(0 <= oh * s - b + i * d < size for oh in range(o))]
        if not live:
            return None  # every window in the padding: left as it is
        first, last = live[0], live[-1] + 1
        ranges.append((first, last))
        begin.append(b - first * d)
        end.append(e - (k - last) * d)
    if all(r == (0, k) for r, k in zip(ranges, g.kernel)) or min(begin + end) < 0:
        return None
    return ranges, begin + end
