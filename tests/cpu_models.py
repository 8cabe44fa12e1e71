"""Small float32 models of the families the cpu executor's fast kernels serve, built with
onnx.helper from a fixed seed (no torch, no files): for tests that run several different
models (threads, fresh processes) and compare their outputs bit for bit.

    model, feeds = build("resnet_block")      # one of NAMES
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

OPSET = 18


class _Graph:
    """Nodes and initializers of one model, with names drawn in order."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.count = [], [], 0

    def name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def weight(self, *shape, scale: float | None = None, positive: bool = False) -> str:
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
        values = self.rng.standard_normal(shape) * (scale or fan_in ** -0.5)
        if positive:
            values = np.abs(values) + 0.5
        name = self.name("w")
        self.inits.append(numpy_helper.from_array(values.astype(np.float32), name))
        return name

    def const(self, values, dtype=np.int64) -> str:
        name = self.name("c")
        self.inits.append(numpy_helper.from_array(np.asarray(values, dtype), name))
        return name

    def node(self, op: str, inputs, **attrs) -> str:
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, list(inputs), [out], **attrs))
        return out

    def conv(self, x, cin, cout, k, stride=1, group=1, bias=True, act="Relu"):
        pad = k // 2
        inputs = [x, self.weight(cout, cin // group, k, k)] + ([self.weight(cout)] if bias else [])
        y = self.node("Conv", inputs, pads=[pad] * 4, strides=[stride] * 2, group=group,
                      kernel_shape=[k, k])
        if act == "Relu":
            return self.node("Relu", [y])
        if act == "Clip":
            return self.node("Clip", [y, self.const(0.0, np.float32), self.const(6.0, np.float32)])
        return y

    def batch_norm(self, x, c):
        return self.node("BatchNormalization", [x, self.weight(c, positive=True), self.weight(c),
                                                self.weight(c, scale=0.1),
                                                self.weight(c, positive=True)])

    def model(self, x_shape, out: str):
        graph = helper.make_graph(
            self.nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
            [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)], self.inits)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                 ir_version=10)


def resnet_block(g: _Graph):
    """Two 3x3 convolutions of 16 channels with BatchNorm and a residual (Winograd's
    shapes), then a strided 3x3 and a strided 1x1 shortcut."""
    x = "x"
    y = g.conv(x, 16, 16, 3, bias=False, act=None)
    y = g.node("Relu", [g.batch_norm(y, 16)])
    y = g.batch_norm(g.conv(y, 16, 16, 3, bias=False, act=None), 16)
    y = g.node("Relu", [g.node("Add", [y, x])])
    down = g.conv(y, 16, 32, 3, stride=2, act=None)
    short = g.conv(y, 16, 32, 1, stride=2, act=None)
    return (1, 16, 20, 20), g.node("Relu", [g.node("Add", [down, short])])


def mobilenet_block(g: _Graph):
    """An inverted residual: 1x1 expansion, 3x3 depthwise, 1x1 projection, Clip (ReLU6)."""
    x = "x"
    y = g.conv(x, 16, 64, 1, act="Clip")
    y = g.conv(y, 64, 64, 3, group=64, act="Clip")
    y = g.conv(y, 64, 16, 1, act=None)
    y = g.node("Add", [y, x])
    y = g.conv(y, 16, 48, 3, stride=2, group=16, act="Clip")  # channel multiplier 3
    return (1, 16, 24, 24), g.node("GlobalAveragePool", [y])


def transformer(g: _Graph, d: int = 32, seq: int = 12, heads: int = 4):
    """One encoder layer: attention of ``heads`` heads, residual, LayerNormalization, a
    Gelu MLP (as Erf), residual, LayerNormalization."""
    x = "x"
    shape = g.const([1, seq, heads, d // heads])

    def project(w):
        y = g.node("Add", [g.node("MatMul", [x, g.weight(d, d)]), g.weight(d, scale=0.1)])
        return g.node("Transpose", [g.node("Reshape", [y, shape])], perm=[0, 2, 1, 3])

    q, k, v = project("q"), project("k"), project("v")
    scores = g.node("MatMul", [q, g.node("Transpose", [k], perm=[0, 1, 3, 2])])
    scores = g.node("Mul", [scores, g.const((d // heads) ** -0.5, np.float32)])
    attn = g.node("MatMul", [g.node("Softmax", [scores], axis=-1), v])
    attn = g.node("Reshape", [g.node("Transpose", [attn], perm=[0, 2, 1, 3]),
                              g.const([1, seq, d])])
    y = g.node("Add", [g.node("MatMul", [attn, g.weight(d, d)]), x])
    y = g.node("LayerNormalization", [y, g.weight(d, positive=True), g.weight(d, scale=0.1)],
               axis=-1)
    h = g.node("MatMul", [y, g.weight(d, 2 * d)])
    gelu = g.node("Mul", [g.node("Mul", [h, g.const(0.5, np.float32)]), g.node(
        "Add", [g.node("Erf", [g.node("Mul", [h, g.const(2 ** -0.5, np.float32)])]),
                g.const(1.0, np.float32)])])
    y = g.node("Add", [g.node("MatMul", [gelu, g.weight(2 * d, d)]), y])
    return (1, seq, d), g.node("LayerNormalization", [y, g.weight(d, positive=True),
                                                      g.weight(d, scale=0.1)], axis=-1)


def stem_head(g: _Graph):
    """A 7x7 stride-2 stem with BatchNorm, max pooling, a small-plane 3x3 layer, global
    pooling and a classifier with Softmax."""
    y = g.node("Relu", [g.batch_norm(g.conv("x", 3, 16, 7, stride=2, act=None), 16)])
    y = g.node("MaxPool", [y], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    y = g.conv(y, 16, 32, 3, stride=2)  # 4x4 output pixels
    y = g.node("Flatten", [g.node("GlobalAveragePool", [y])])
    y = g.node("Gemm", [y, g.weight(10, 32), g.weight(10)], transB=1)
    return (1, 3, 32, 32), g.node("Softmax", [y], axis=1)


def mlp(g: _Graph):
    """Gemm, Relu, Gemm, Sigmoid on a batch of 8."""
    y = g.node("Relu", [g.node("Gemm", ["x", g.weight(96, 64), g.weight(96)], transB=1)])
    y = g.node("Gemm", [y, g.weight(96, 24), g.weight(24)])
    return (8, 64), g.node("Sigmoid", [y])


def pool_norm(g: _Graph):
    """Average pooling, InstanceNormalization, Tanh, a pointwise convolution and a mean."""
    y = g.node("AveragePool", ["x"], kernel_shape=[2, 2], strides=[2, 2])
    y = g.node("InstanceNormalization", [y, g.weight(8, positive=True), g.weight(8)])
    y = g.conv(g.node("Tanh", [y]), 8, 24, 1)
    return (2, 8, 32, 32), g.node("ReduceMean", [y, g.const([2, 3])], keepdims=0)


BUILDERS = {f.__name__: f for f in (resnet_block, mobilenet_block, transformer, stem_head,
                                    mlp, pool_norm)}
NAMES = tuple(BUILDERS)


def build(name: str, seed: int = 0):
    """(model, feeds) of the model ``name``, its weights and input drawn from ``seed``."""
    g = _Graph(seed)
    x_shape, out = BUILDERS[name](g)
    x = g.rng.standard_normal(x_shape).astype(np.float32)
    return g.model(list(x_shape), out), {"x": x}
