"""Conv layers whose kernel taps partly read only padding (a dilated window on a small
input: DeepLabV3's ASPP at 64x64): the ``cpu`` executor cuts such taps from a constant W
when the plan is built. Each case runs a whole session (Conv + bias + Relu, levels 0
and 3, so Conv and onnxkit::FusedConv) and compares with onnxruntime."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxkit

RNG = np.random.default_rng(11)

# (input shape), (W shape), Conv attributes
CASES = [
    ((1, 16, 4, 4), (8, 16, 3, 3), dict(dilations=[12, 12], pads=[12, 12, 12, 12])),  # centre
    ((1, 6, 2, 2), (5, 6, 5, 5), dict(pads=[2, 2, 2, 2])),  # 5x5 -> the middle 3x3
    ((1, 7, 1, 1), (9, 7, 3, 3), dict(pads=[1, 1, 1, 1])),  # one pixel: the centre tap
    ((1, 4, 1, 5), (6, 4, 5, 3), dict(strides=[2, 1], auto_pad="SAME_UPPER")),  # rows cut
    ((1, 8, 4, 4), (8, 1, 3, 3), dict(group=8, dilations=[18, 18],
                                      pads=[18, 18, 18, 18])),  # depthwise
    ((2, 6, 3, 3), (12, 3, 3, 3), dict(group=2, dilations=[5, 5], pads=[5, 4, 5, 6])),
    ((1, 5, 3, 3), (4, 5, 3, 3), dict(pads=[1, 1, 1, 1])),  # every tap live: nothing cut
]
ONE_D = [((1, 8, 3), (4, 8, 7), dict(pads=[9, 9], dilations=[3])),
         ((1, 3, 1), (2, 3, 5), dict(pads=[2, 2]))]


def _model(x_shape, w_shape, attrs):
    W = RNG.standard_normal(w_shape).astype(np.float32)
    B = RNG.standard_normal(w_shape[0]).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], **attrs),
             helper.make_node("Relu", ["c"], ["y"])]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(W, "w"), numpy_helper.from_array(B, "b")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             ir_version=8).SerializeToString()


def _oracle(model, x):
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"]).run(
        None, {"x": x})[0]


@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize("x_shape, w_shape, attrs", CASES + ONE_D)
def test_matches_onnxruntime(x_shape, w_shape, attrs, level):
    model = _model(x_shape, w_shape, attrs)
    x = RNG.standard_normal(x_shape).astype(np.float32)
    expected = _oracle(model, x)
    sess = onnxkit.Session(model, executor="cpu", level=level)
    for _ in range(2):  # the layer decided on the plan, then its second call
        got = sess.run(None, {"x": x})[0]
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())


def test_input_of_another_shape_later():
    """The cut is decided per input shape: a larger input later reads every tap."""
    model = _model(("n", 8, "h", "w"), (4, 8, 3, 3), dict(dilations=[4, 4], pads=[4, 4, 4, 4]))
    sess = onnxkit.Session(model, executor="cpu", level=3)
    for shape in [(1, 8, 3, 3), (1, 8, 12, 12), (2, 8, 3, 3)]:
        x = RNG.standard_normal(shape).astype(np.float32)
        expected = _oracle(model, x)
        np.testing.assert_allclose(sess.run(None, {"x": x})[0], expected, rtol=1e-5,
                                   atol=1e-5 * np.abs(expected).max())
