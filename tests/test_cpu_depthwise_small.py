"""Depthwise layers on small planes (the last stages of MobileNets and ShuffleNets at
64x64 inputs), which the ``cpu`` executor runs channels-last: each case is a session
(Conv + bias, then Relu, HardSwish or an Add of a residual, so that level 3 fuses them
into onnxkit::FusedConv) compared with onnxruntime, at levels 0 and 3."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxkit

RNG = np.random.default_rng(3)

# (input shape), kernel, stride, pads, channel multiplier
CASES = [
    ((1, 96, 4, 4), 3, 1, 1, 1),  # 3x3, padding 1: what the planar 3x3 kernel served
    ((1, 576, 2, 2), 3, 1, 1, 1),
    ((1, 40, 1, 1), 3, 1, 1, 1),  # one pixel
    ((1, 72, 8, 8), 3, 2, 1, 1),  # stride 2 to 4x4
    ((1, 48, 8, 8), 3, 1, 1, 1),  # 3x3 on 64 pixels: planar
    ((1, 40, 8, 8), 5, 1, 2, 1),  # 5x5 on 64 pixels: the largest channels-last plane
    ((2, 32, 7, 7), 5, 2, 2, 1),  # a batch, 5x5 stride 2
    ((1, 120, 3, 5), 3, 1, 1, 1),  # not square
    ((1, 32, 4, 4), 3, 1, 1, 2),  # two filters per channel: planar
    ((1, 16, 4, 4), 3, 1, 1, 1),  # few channels: planar
]
AFTER = ["Relu", "HardSwish", "Add"]


def _model(x_shape, k, s, p, mult, after):
    c = x_shape[1]
    W = RNG.standard_normal((c * mult, 1, k, k)).astype(np.float32)
    B = RNG.standard_normal(c * mult).astype(np.float32)
    oh, ow = ((x_shape[2] + 2 * p - k) // s + 1, (x_shape[3] + 2 * p - k) // s + 1)
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], group=c, kernel_shape=[k, k],
                              strides=[s, s], pads=[p] * 4)]
    if after == "Add":
        inputs.append(helper.make_tensor_value_info(
            "z", TensorProto.FLOAT, [x_shape[0], c * mult, oh, ow]))
        nodes.append(helper.make_node("Add", ["c", "z"], ["y"]))
    else:
        nodes.append(helper.make_node(after, ["c"], ["y"]))
    graph = helper.make_graph(nodes, "g", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(W, "w"), numpy_helper.from_array(B, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    feeds = {"x": RNG.standard_normal(x_shape).astype(np.float32)}
    if after == "Add":
        feeds["z"] = RNG.standard_normal((x_shape[0], c * mult, oh, ow)).astype(np.float32)
    return model.SerializeToString(), feeds


@pytest.mark.parametrize("after", AFTER)
@pytest.mark.parametrize("x_shape, k, s, p, mult", CASES)
def test_matches_onnxruntime(x_shape, k, s, p, mult, after):
    model, feeds = _model(x_shape, k, s, p, mult, after)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    expected = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"]).run(
        None, feeds)[0]
    for level in (0, 3):
        sess = onnxkit.Session(model, executor="cpu", level=level)
        for _ in range(2):
            got = sess.run(None, feeds)[0]
            np.testing.assert_allclose(got, expected, rtol=1e-5,
                                       atol=1e-5 * np.abs(expected).max())
