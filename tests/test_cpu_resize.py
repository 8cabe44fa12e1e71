"""Resize on the ``cpu`` executor against onnxruntime: up and down, each mode, sizes
given by the graph (a segmentation head's Shape -> Concat) and by a feed, and one
session meeting several input shapes (its taps are kept per shape and sizes)."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxkit

RNG = np.random.default_rng(5)


def _model(x_shape, attrs, scales=None, sizes_feed=False, opset=19):
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)]
    inits = [numpy_helper.from_array(np.array(scales, np.float32), "scales")] if scales else []
    if sizes_feed:
        inputs.append(helper.make_tensor_value_info("sizes", TensorProto.INT64, [4]))
    names = ["x", "", "scales" if scales else "", "sizes" if sizes_feed else ""]
    while names[-1] == "":
        names.pop()
    node = helper.make_node("Resize", names, ["y"], **attrs)
    graph = helper.make_graph([node], "g", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=9).SerializeToString()


def _check(model, feeds, level=0):
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    expected = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"]).run(
        None, feeds)[0]
    sess = onnxkit.Session(model, executor="cpu", level=level)
    for _ in range(2):  # the layout worked out, then kept
        got = sess.run(None, feeds)[0]
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


LINEAR = dict(mode="linear", coordinate_transformation_mode="half_pixel")
CASES = [
    ((1, 21, 4, 4), LINEAR, [1, 1, 16, 16]),  # a segmentation head's last x16
    ((1, 5, 3, 7), LINEAR, [1, 1, 8, 0.5]),  # rows up, columns down
    ((2, 3, 9, 6), LINEAR, [1, 1, 0.5, 2]),  # rows down, columns up
    ((1, 4, 1, 1), LINEAR, [1, 1, 4, 4]),  # one pixel to 4x4 (LR-ASPP's pooled branch)
    ((1, 3, 5, 5), dict(mode="nearest", nearest_mode="floor"), [1, 1, 3, 3]),
    ((1, 3, 6, 6), dict(mode="nearest"), [1, 1, 0.5, 0.5]),
    ((1, 2, 4, 5), dict(mode="cubic", coordinate_transformation_mode="align_corners"),
     [1, 1, 2.5, 2]),
    ((1, 2, 8, 8), dict(mode="linear", antialias=1), [1, 1, 0.5, 0.25]),
    ((1, 2, 3, 4), dict(mode="cubic", exclude_outside=1), [1, 1, 3, 3]),
]


@pytest.mark.parametrize("x_shape, attrs, scales", CASES)
def test_scales_match_onnxruntime(x_shape, attrs, scales):
    x = RNG.standard_normal(x_shape).astype(np.float32)
    _check(_model(x_shape, attrs, scales=scales), {"x": x})


@pytest.mark.parametrize("level", [0, 3])
def test_sizes_fed_then_other_shapes(level):
    model = _model(["n", "c", "h", "w"], LINEAR, sizes_feed=True)
    for shape, sizes in [((1, 6, 4, 4), (1, 6, 64, 64)), ((1, 6, 4, 4), (1, 6, 32, 48)),
                         ((2, 3, 5, 2), (2, 3, 10, 4)), ((1, 6, 4, 4), (1, 6, 64, 64))]:
        x = RNG.standard_normal(shape).astype(np.float32)
        _check(model, {"x": x, "sizes": np.array(sizes, np.int64)}, level)


def test_sizes_from_the_graph():
    """Sizes built from Shape of another input (as torchvision exports its heads)."""
    nodes = [helper.make_node("Shape", ["like"], ["s"], start=2),
             helper.make_node("Shape", ["x"], ["nc"], end=2),
             helper.make_node("Concat", ["nc", "s"], ["sizes"], axis=0),
             helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], **LINEAR)]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 7, 4, 4]),
                     helper.make_tensor_value_info("like", TensorProto.FLOAT, [1, 3, 64, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=8).SerializeToString()
    feeds = {"x": RNG.standard_normal((1, 7, 4, 4)).astype(np.float32),
             "like": np.zeros((1, 3, 64, 64), np.float32)}
    for level in (0, 3):
        _check(model, feeds, level)
