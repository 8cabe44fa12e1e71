"""Whole runs replayed as CUDA graphs: right answers on every replay, eager where a graph
cannot replay the run. (In the simulator the "graph" is the recorded launches, replayed.)"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import onnxkit
from onnxkit.kernels.cuda import make_executor

RNG = np.random.default_rng(7)
W = RNG.standard_normal((8, 4)).astype(np.float32)


def _model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _mlp():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4])
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Relu", ["m"], ["r"]),
             helper.make_node("Add", ["r", "m"], ["y"])]
    return _model(nodes, [x], [y], [numpy_helper.from_array(W, "w")])


def _session(model):
    return onnxkit.Session(model, executor=make_executor(synchronize_each_node=False))


def test_replays_give_each_runs_answer():
    model = _mlp()
    sess, oracle = _session(model), ReferenceEvaluator(model)
    for _ in range(5):
        x = RNG.standard_normal((3, 8)).astype(np.float32)
        got, = sess.run(None, {"x": x})
        want, = oracle.run(None, {"x": x})
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    notes = sess.executor.graph_notes()
    assert list(notes.values()) == ["CUDA graph of 3 launches, replayed 4 times"]
    # each replay copies the feed in and the output out, nothing per node
    sess.executor.reset_stats()
    sess.run(None, {"x": x})
    stats = sess.executor.stats()
    assert (stats["h2d_count"], stats["d2h_count"], stats["cuda_nodes"]) == (1, 1, 0)


def test_each_feed_shape_has_its_graph_and_outputs_are_fresh():
    model = _mlp()
    sess, oracle = _session(model), ReferenceEvaluator(model)
    for n in (1, 2, 1, 2, 1, 2):
        x = RNG.standard_normal((n, 8)).astype(np.float32)
        got, = sess.run(None, {"x": x})
        got_before = got.copy()
        got[...] = 1e9  # the caller owns what it got: the next replay must not see it
        np.testing.assert_allclose(got_before, oracle.run(None, {"x": x})[0], rtol=1e-5, atol=1e-6)
    assert len(sess.executor.graph_notes()) == 2
    again, = sess.run(None, {"x": x})
    np.testing.assert_allclose(again, got_before, rtol=0, atol=0)


def test_a_traced_run_is_eager():
    sess = _session(_mlp())
    x = RNG.standard_normal((2, 8)).astype(np.float32)
    events = []
    for _ in range(3):
        sess.run(None, {"x": x}, trace=events.append)
    assert sess.executor.graph_notes() == {}
    assert len(events) == 9  # three nodes, three runs: every node seen every time


def test_a_run_that_reads_device_data_on_the_host_stays_eager():
    # TopK has no cuda kernel: its input comes down from the device every run
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])
    v = helper.make_tensor_value_info("v", TensorProto.FLOAT, [2, 3])
    k = numpy_helper.from_array(np.array([3], np.int64), "k")
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("TopK", ["r", "k"], ["v", "i"])]
    model = _model(nodes, [x], [v], [k])
    sess, oracle = _session(model), ReferenceEvaluator(model)
    for _ in range(3):
        feed = RNG.standard_normal((2, 8)).astype(np.float32)
        got, = sess.run(None, {"x": feed})
        np.testing.assert_allclose(got, oracle.run(None, {"x": feed})[0], rtol=1e-6)
    note, = sess.executor.graph_notes().values()
    assert note.startswith("not captured: the run made a d2h copy")


def test_graphs_can_be_switched_off():
    sess = onnxkit.Session(_mlp(), executor=make_executor(synchronize_each_node=False, graphs=False))
    x = RNG.standard_normal((2, 8)).astype(np.float32)
    for _ in range(3):
        sess.run(None, {"x": x})
    assert sess.executor.graph_notes() == {}
    assert sess.executor.stats()["cuda_nodes"] == 9


@pytest.mark.parametrize("value", [np.float32(np.nan), np.float32(-np.inf)])
def test_replay_keeps_non_finite_values(value):
    model = _mlp()
    sess, oracle = _session(model), ReferenceEvaluator(model)
    x = RNG.standard_normal((2, 8)).astype(np.float32)
    x[0, 0] = value
    for _ in range(3):
        got, = sess.run(None, {"x": x})
    np.testing.assert_allclose(got, oracle.run(None, {"x": x})[0], rtol=1e-5, atol=1e-6)
    assert "replayed 2 times" in next(iter(sess.executor.graph_notes().values()))


def test_a_bad_index_is_still_an_error_when_replayed():
    # Gather's indices come from the device (a feed): the kernel flags a bad index, and the
    # graph reads the flag after each replay
    data = helper.make_tensor_value_info("data", TensorProto.FLOAT, [5, 3])
    idx = helper.make_tensor_value_info("idx", TensorProto.INT64, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 3])
    model = _model([helper.make_node("Gather", ["data", "idx"], ["y"])], [data, idx], [y])
    sess, oracle = _session(model), ReferenceEvaluator(model)
    table = RNG.standard_normal((5, 3)).astype(np.float32)
    for _ in range(3):
        good = RNG.integers(-5, 5, 4).astype(np.int64)
        got, = sess.run(None, {"data": table, "idx": good})
        np.testing.assert_array_equal(got, oracle.run(None, {"data": table, "idx": good})[0])
    assert "replayed 2 times" in next(iter(sess.executor.graph_notes().values()))
    with pytest.raises(onnxkit.errors.OnnxkitError, match=r"Gather: index 7 is out of range"):
        sess.run(None, {"data": table, "idx": np.array([0, 7, 1, 2], np.int64)})
    got, = sess.run(None, {"data": table, "idx": good})  # and the next replay is right again
    np.testing.assert_array_equal(got, oracle.run(None, {"data": table, "idx": good})[0])
