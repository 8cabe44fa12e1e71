"""Squeeze, Unsqueeze and Flatten on the cpu executor (``kernels.cpu.reshape_slice``): views
whose output shape a prepared node keeps per data shape.

Oracle: onnxruntime (its optimizations off). A node meets several data shapes in turn,
the same one again, axes fed at run time, and inputs it must reject with onnxkit's error.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnxkit import Session
from onnxkit.errors import OnnxkitError

ort = pytest.importorskip("onnxruntime")

F32 = TensorProto.FLOAT
RNG = np.random.default_rng(5)


def _model(op, axes=None, rank=4, axes_input=False, **attrs):
    inputs = [helper.make_tensor_value_info("x", F32, [f"d{i}" for i in range(rank)])]
    inits, names = [], ["x"]
    if axes is not None:
        names.append("axes")
        if axes_input:
            inputs.append(helper.make_tensor_value_info("axes", TensorProto.INT64, ["n"]))
        else:
            inits.append(numpy_helper.from_array(np.array(axes, np.int64), "axes"))
    graph = helper.make_graph([helper.make_node(op, names, ["y"], **attrs)], "g", inputs,
                              [helper.make_tensor_value_info("y", F32, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=9)


def _ort(model, feeds):
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), options,
                                providers=["CPUExecutionProvider"]).run(None, feeds)[0]


def _same(sess, model, feeds):
    got = sess.run(None, feeds)[0]
    want = _ort(model, feeds)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op, axes, shapes", [
    ("Squeeze", [1], [(2, 1, 3, 4), (5, 1, 1, 2), (2, 1, 3, 4)]),
    ("Squeeze", [-1, 0], [(1, 3, 2, 1), (1, 1, 1, 1)]),
    ("Squeeze", None, [(2, 1, 3, 1), (1, 4, 1, 1)]),
    ("Unsqueeze", [0], [(2, 3, 4, 5), (1, 1, 2, 2)]),
    ("Unsqueeze", [1, -1], [(2, 3, 4, 5), (3, 1, 1, 7)]),
])
def test_squeeze_and_unsqueeze_match_onnxruntime(op, axes, shapes):
    model = _model(op, axes)
    sess = Session(model, executor="cpu", level=0)
    for shape in shapes:
        _same(sess, model, {"x": RNG.standard_normal(shape).astype(np.float32)})


def test_axes_fed_at_run_time_are_read_on_every_run():
    model = _model("Squeeze", [1], axes_input=True)
    sess = Session(model, executor="cpu", level=0)
    x = RNG.standard_normal((1, 1, 3, 1)).astype(np.float32)
    for axes in ([1], [0], [3, 0]):
        _same(sess, model, {"x": x, "axes": np.array(axes, np.int64)})


@pytest.mark.parametrize("axis", [0, 1, 3, 4, -1, -4])
def test_flatten_matches_onnxruntime(axis):
    model = _model("Flatten", axis=axis)
    sess = Session(model, executor="cpu", level=0)
    for shape in ((2, 3, 4, 5), (1, 1, 6, 2), (2, 3, 4, 5)):
        _same(sess, model, {"x": RNG.standard_normal(shape).astype(np.float32)})


def test_bad_inputs_give_onnxkit_errors_every_time():
    sess = Session(_model("Squeeze", [1]), executor="cpu", level=0)
    sess.run(None, {"x": np.zeros((2, 1, 3, 4), np.float32)})
    for _ in range(2):  # (an answer kept for a good shape does not cover a bad one)
        with pytest.raises(OnnxkitError, match="Squeeze"):
            sess.run(None, {"x": np.zeros((2, 3, 3, 4), np.float32)})
    sess = Session(_model("Flatten", axis=5), executor="cpu", level=0)
    with pytest.raises(OnnxkitError, match="Flatten"):
        sess.run(None, {"x": np.zeros((2, 3, 3, 4), np.float32)})
