"""Kernels prepared when the plan is built: what a user of the cpu executor sees.

Each node whose cpu kernel has a ``prepare`` hook (Conv, FusedConv, Reshape, Slice, the
tree ensembles) gets its own prepared kernel on its plan step: the algorithm chosen by
the written rule (``onnxkit/kernels/cpu/_conv_rules.py``), reported by the plan
(``step.algorithm``) and the profiler, and what it derives from the initializers kept
with it. Outputs are checked against onnxruntime (the same model, unoptimized); the
algorithms against the rule's table, worked out by hand for each layer below.
"""

from __future__ import annotations

import gc

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxkit
from onnxkit.runtime.profile import Profiler

RNG = np.random.default_rng(23)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _conv_model(x_shape, w, b=None, *, relu=False, declared=True, w_input=False, **attrs):
    """Conv (+ Relu) of a float32 input; W (and B) initializers unless ``w_input``
    (then W is a graph input, fed at each run); ``declared``: the input's shape is given
    in full (else its batch is a symbol)."""
    inputs = ["x", "w"] + (["b"] if b is not None else [])
    nodes = [helper.make_node("Conv", inputs, ["c" if relu else "y"], name="conv", **attrs)]
    if relu:
        nodes.append(helper.make_node("Relu", ["c"], ["y"], name="relu"))
    dims = list(x_shape) if declared else ["N"] + list(x_shape[1:])
    graph_inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)]
    inits = [] if w_input else [numpy_helper.from_array(w, "w")]
    if w_input:
        graph_inputs.append(helper.make_tensor_value_info("w", TensorProto.FLOAT, list(w.shape)))
    if b is not None:
        inits.append(numpy_helper.from_array(b, "b"))
    graph = helper.make_graph(nodes, "conv", graph_inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


def _ort(model, feeds):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)[0]


def _close(got, want, rtol=1e-4):
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.abs(want).max())


def _conv_step(sess):
    return next(s for s in sess.plan.steps if s.node.op_type in ("Conv", "FusedConv"))


# Each layer and the algorithm the table gives it (read top down, first row whose "the
# rule picks it" holds): 3x3 of 16 channels on 28x28 (49 tiles of 4x4: winograd4); on
# 12x12 (9 tiles of 4x4, 36 of 2x2: winograd); 1x1 on a 2x2 plane (4 pixels <= 16: dots);
# one input channel per filter (depthwise); stride 2 (no Winograd, 49 pixels > 16: im2col).
LAYERS = {
    "winograd4": ((1, 16, 28, 28), (16, 16, 3, 3), dict(pads=[1, 1, 1, 1])),
    "winograd": ((1, 16, 12, 12), (16, 16, 3, 3), dict(pads=[1, 1, 1, 1])),
    "dots": ((1, 12, 2, 2), (20, 12, 1, 1), {}),
    "depthwise": ((1, 8, 10, 10), (8, 1, 3, 3), dict(group=8, pads=[1, 1, 1, 1])),
    "im2col": ((1, 16, 14, 14), (16, 16, 3, 3), dict(pads=[1, 1, 1, 1], strides=[2, 2])),
}


@pytest.mark.parametrize("algorithm", sorted(LAYERS))
def test_the_plan_names_the_rule_s_algorithm_before_any_run(algorithm):
    x_shape, w_shape, attrs = LAYERS[algorithm]
    model = _conv_model(x_shape, f32(*w_shape), f32(w_shape[0]), relu=True, **attrs)
    sess = onnxkit.Session(model, executor="cpu", level=3)  # Conv + Relu -> FusedConv
    assert _conv_step(sess).algorithm == algorithm
    for _ in range(3):  # new inputs each run, the same prepared layer
        x = f32(*x_shape)
        _close(sess.run(None, {"x": x})[0], _ort(model, {"x": x}))
    assert _conv_step(sess).algorithm == algorithm


def test_an_undeclared_shape_is_decided_on_the_first_run_and_shown_by_the_profiler():
    x_shape, w_shape, attrs = LAYERS["winograd"]
    model = _conv_model(x_shape, f32(*w_shape), declared=False, **attrs)
    sess = onnxkit.Session(model, executor="cpu")
    assert _conv_step(sess).algorithm is None  # the batch is a symbol: nothing to decide yet
    prof = Profiler(sess)
    x = f32(*x_shape)
    _close(sess.run(None, {"x": x}, trace=prof)[0], _ort(model, {"x": x}))
    assert _conv_step(sess).algorithm == "winograd"
    (row,) = prof.rows(by="node")
    assert row["kernel"] == "cpu:ai.onnx::Conv-11 [winograd]"
    x2 = f32(3, *x_shape[1:])  # another batch: a layer of its own, by the same rule
    _close(sess.run(None, {"x": x2})[0], _ort(model, {"x": x2}))


def test_a_weight_fed_at_run_time_is_no_constant():
    """W a graph input: the plan knows it is not an initializer, so no Winograd (whose
    transformed weights are computed once), and every run reads the W it is given."""
    x_shape, w_shape, attrs = LAYERS["winograd"]
    model = _conv_model(x_shape, f32(*w_shape), w_input=True, **attrs)
    sess = onnxkit.Session(model, executor="cpu")
    for _ in range(2):
        feeds = {"x": f32(*x_shape), "w": f32(*w_shape)}
        _close(sess.run(None, feeds)[0], _ort(model, feeds))
    assert _conv_step(sess).algorithm == "im2col"


def test_an_initializer_a_feed_may_replace_is_no_constant():
    """An initializer that is also a graph input holds a default only: a run may feed
    another W, and must compute with it."""
    x_shape, w_shape, attrs = LAYERS["winograd"]
    model = _conv_model(x_shape, f32(*w_shape), **attrs)
    model.graph.input.append(helper.make_tensor_value_info("w", TensorProto.FLOAT,
                                                           list(w_shape)))
    sess = onnxkit.Session(model, executor="cpu")
    x = f32(*x_shape)
    _close(sess.run(None, {"x": x})[0], _ort(model, {"x": x}))
    feeds = {"x": x, "w": f32(*w_shape)}
    _close(sess.run(None, feeds)[0], _ort(model, feeds))
    assert _conv_step(sess).algorithm == "im2col"


def test_sessions_of_one_shape_keep_their_own_weights():
    """Two models, the same layer shape, other weights; sessions made and dropped in turn
    (a new array may take a freed one's address): each computes with its own weights."""
    x_shape, w_shape, attrs = LAYERS["winograd4"]
    x = f32(*x_shape)
    for _ in range(3):
        model = _conv_model(x_shape, f32(*w_shape), f32(w_shape[0]), **attrs)
        sess = onnxkit.Session(model, executor="cpu")
        _close(sess.run(None, {"x": x})[0], _ort(model, {"x": x}))
        del sess
        gc.collect()


def test_a_tuned_session_times_the_candidates_and_keeps_one():
    """``tune=True``: the first run times each algorithm the layer may run (F(4x4),
    F(2x2), im2col here) and keeps the fastest, which the plan then reports; its later
    runs give the same bits. An untuned session of the same model keeps the rule."""
    x_shape, w_shape, attrs = LAYERS["winograd"]
    model = _conv_model(x_shape, f32(*w_shape), declared=False, **attrs)
    tuned = onnxkit.Session(model, executor="cpu", tune=True)
    x = f32(*x_shape)
    first = tuned.run(None, {"x": x})[0]
    # F(4x4)'s larger interpolation points: ~1e-6 of the output's scale, ~10x F(2x2)'s
    _close(first, _ort(model, {"x": x}), rtol=1e-3)
    assert _conv_step(tuned).algorithm in ("winograd4", "winograd", "im2col")
    np.testing.assert_array_equal(tuned.run(None, {"x": x})[0], first)
    plain = onnxkit.Session(model, executor="cpu", tune=False)
    plain.run(None, {"x": x})
    assert _conv_step(plain).algorithm == "winograd"


def _reshape_slice_model():
    """Reshape to [0, -1] (the target depends on the data's shape), then Slice with
    constant starts/ends/axes/steps; the data's shape is symbolic."""
    inits = [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in
             (("shape", [0, -1]), ("starts", [1]), ("ends", [-1]), ("axes", [1]),
              ("steps", [2]))]
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["r"]),
             helper.make_node("Slice", ["r", "starts", "ends", "axes", "steps"], ["y"])]
    graph = helper.make_graph(
        nodes, "rs", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["a", "b", "c"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


def test_reshape_and_slice_answer_each_data_shape_as_onnxruntime_does():
    model = _reshape_slice_model()
    sess = onnxkit.Session(model, executor="cpu")
    for shape in [(2, 3, 4), (2, 3, 4), (5, 2, 7), (1, 1, 9), (5, 2, 7)]:
        x = f32(*shape)
        np.testing.assert_array_equal(sess.run(None, {"x": x})[0], _ort(model, {"x": x}))


def test_index_inputs_fed_at_run_time_are_read_on_every_run():
    nodes = [helper.make_node("Slice", ["x", "starts", "ends"], ["y"])]
    graph = helper.make_graph(
        nodes, "s", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6]),
                     helper.make_tensor_value_info("starts", TensorProto.INT64, [1]),
                     helper.make_tensor_value_info("ends", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)
    sess = onnxkit.Session(model, executor="cpu")
    x = f32(4, 6)
    for start, end in [(1, 3), (1, 4), (0, 2)]:
        feeds = {"x": x, "starts": np.array([start], np.int64),
                 "ends": np.array([end], np.int64)}
        np.testing.assert_array_equal(sess.run(None, feeds)[0], x[start:end])


def _tree_model(threshold: float, low: float, high: float):
    node = helper.make_node(
        "TreeEnsembleRegressor", ["X"], ["Y"], domain="ai.onnx.ml",
        nodes_treeids=[0, 0, 0], nodes_nodeids=[0, 1, 2], nodes_featureids=[0, 0, 0],
        nodes_values=[threshold, 0.0, 0.0], nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF"],
        nodes_truenodeids=[1, 0, 0], nodes_falsenodeids=[2, 0, 0], target_treeids=[0, 0],
        target_nodeids=[1, 2], target_ids=[0, 0], target_weights=[low, high], n_targets=1)
    graph = helper.make_graph(
        [node], "t", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, 1])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid("ai.onnx.ml", 3)],
                             ir_version=9)


def test_tree_sessions_keep_their_own_tables():
    """Sessions of different trees, made and dropped in turn, each run twice: each answers
    with its own split and leaf values (worked by hand: x <= threshold -> low)."""
    X = np.array([[0.0], [1.0], [2.0]], np.float32)
    for threshold, low, high in [(0.5, 10.0, 20.0), (1.5, -1.0, 3.0), (0.5, 7.0, 8.0)]:
        sess = onnxkit.Session(_tree_model(threshold, low, high), executor="cpu")
        want = np.where(X[:, 0] <= threshold, low, high).astype(np.float32)[:, None]
        for _ in range(2):
            np.testing.assert_array_equal(sess.run(None, {"X": X})[0], want)
        del sess
        gc.collect()
