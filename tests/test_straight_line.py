"""A graph run as one straight-line function gives what the evaluator's loop gives.

A traced run takes the loop (it reports every node); a plain run of a graph without
control flow takes the straight-line function. Both are checked against onnx.reference,
and against each other on errors and on the memory budget.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import onnxkit
from onnxkit.errors import GraphError, KernelError, LimitExceededError
from onnxkit.runtime.limits import Limits

F = TensorProto.FLOAT


def _model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _vi(name, shape=None, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def _both(sess, feeds):
    """(plain run, traced run) of ``sess`` on ``feeds``."""
    events = []
    return sess.run(None, feeds), sess.run(None, feeds, trace=events.append), events


# names a code generator must never paste into source
HOSTILE = ['x"); __import__("os").system("false")  #', "def run(feeds):", "\n\tv1", "F[0](x)"]


def _tricky_model():
    """Multi-output Split, an unused output, an absent optional input, an initializer a
    feed may replace, a graph output that is a graph input, hostile value names."""
    a, b, c, d = HOSTILE
    nodes = [
        helper.make_node("Add", ["x", "w"], [a], name="add"),
        helper.make_node("Split", [a], [b, c], axis=1, name="split"),
        helper.make_node("Clip", [b, "", "hi"], [d], name="clip"),  # min absent
        helper.make_node("Mul", [d, c], ["y"], name="mul"),
        helper.make_node("TopK", [a, "k"], ["top", ""], axis=1, name="topk"),  # indices dropped
    ]
    inits = [helper.make_tensor("w", F, [2, 4], np.linspace(-1, 1, 8)),
             helper.make_tensor("hi", F, [], [0.25]),
             helper.make_tensor("k", TensorProto.INT64, [1], [2])]
    inputs = [_vi("x", [2, 4]), _vi("w", [2, 4])]  # w: an initializer listed as an input
    return _model(nodes, inputs, [_vi("y"), _vi("top"), _vi("x", [2, 4])], inits)


@pytest.mark.parametrize("executor", ["reference", "cpu"])
def test_outputs_match_onnx_reference_and_the_traced_loop(executor):
    model = _tricky_model()
    sess = onnxkit.Session(model, executor=executor)
    x = np.arange(8, dtype=np.float32).reshape(2, 4) / 3
    for feeds in ({"x": x}, {"x": x, "w": np.full((2, 4), 2.0, np.float32)}):
        plain, traced, events = _both(sess, feeds)
        expected = ReferenceEvaluator(model).run(None, feeds)
        assert len(events) == 5
        for got, loop, want in zip(plain, traced, expected):
            np.testing.assert_allclose(got, want, rtol=1e-6)
            np.testing.assert_array_equal(got, loop)


def test_a_failing_kernel_names_its_node_on_both_paths():
    model = _model([helper.make_node("Relu", ["x"], ["r"], name="relu"),
                    helper.make_node("MatMul", ["r", "x"], ["y"], name="bad_matmul")],
                   [_vi("x", None)], [_vi("y")])
    sess = onnxkit.Session(model)
    x = np.ones((2, 3), np.float32)  # [2, 3] @ [2, 3]: no such product
    for trace in (None, [].append):
        with pytest.raises(KernelError, match="bad_matmul"):
            sess.run(None, {"x": x}, trace=trace)


def test_the_memory_budget_stops_the_same_node_on_both_paths():
    # 4 KiB input; each Concat doubles: the third one's output passes 40 KiB live
    nodes, prev = [], "x"
    for i in range(4):
        nodes.append(helper.make_node("Concat", [prev, prev], [f"c{i}"], axis=0, name=f"cat{i}"))
        prev = f"c{i}"
    model = _model(nodes, [_vi("x", [32, 32])], [_vi(prev)])
    sess = onnxkit.Session(model, limits=Limits(max_run_bytes=40_000))
    x = np.zeros((32, 32), np.float32)
    messages = []
    for trace in (None, [].append):
        with pytest.raises(LimitExceededError, match="cat2") as info:
            sess.run(None, {"x": x}, trace=trace)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_a_value_no_one_feeds_is_an_error_naming_its_reader():
    body_free = _model([helper.make_node("Neg", ["x"], ["y"], name="neg")],
                       [_vi("x", [2])], [_vi("y")])
    sess = onnxkit.Session(body_free)
    with pytest.raises(onnxkit.OnnxkitError, match="x"):
        sess.run(None, {})


def test_a_loop_body_runs_straight_and_reads_outer_values():
    # y = x * scale^3, the body reading ``scale`` from the enclosing graph
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Mul", ["acc_in", "scale"], ["acc_out"]),
         helper.make_node("Cast", ["i"], ["i_f"], to=F),
         helper.make_node("Identity", ["i_f"], ["seen"])],
        "body", [_vi("i", [], TensorProto.INT64), _vi("cond_in", [], TensorProto.BOOL),
                 _vi("acc_in", [3])],
        [_vi("cond_out", [], TensorProto.BOOL), _vi("acc_out", [3]), _vi("seen", [])])
    loop = helper.make_node("Loop", ["M", "go", "x"], ["y", "iters"], body=body)
    model = _model([loop], [_vi("x", [3]), _vi("scale", [3])], [_vi("y"), _vi("iters")],
                   [helper.make_tensor("M", TensorProto.INT64, [], [3]),
                    helper.make_tensor("go", TensorProto.BOOL, [], [True])])
    feeds = {"x": np.array([1.0, -2.0, 0.5], np.float32),
             "scale": np.array([2.0, 3.0, -1.0], np.float32)}
    expected = ReferenceEvaluator(model).run(None, feeds)
    for executor in ("reference", "cpu"):
        y, iters = onnxkit.Session(model, executor=executor).run(None, feeds)
        np.testing.assert_allclose(y, expected[0], rtol=1e-6)
        np.testing.assert_array_equal(iters, [0.0, 1.0, 2.0])


def test_a_loop_of_more_iterations_than_one_block_of_numbers():
    # the iteration number goes past the first block the Loop kernel makes (1024)
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["acc_in", "i"], ["acc_out"])],
        "body", [_vi("i", [], TensorProto.INT64), _vi("cond_in", [], TensorProto.BOOL),
                 _vi("acc_in", [], TensorProto.INT64)],
        [_vi("cond_out", [], TensorProto.BOOL), _vi("acc_out", [], TensorProto.INT64)])
    loop = helper.make_node("Loop", ["M", "", "zero"], ["total"], body=body)
    model = _model([loop], [], [_vi("total", [], TensorProto.INT64)],
                   [helper.make_tensor("M", TensorProto.INT64, [], [2500]),
                    helper.make_tensor("zero", TensorProto.INT64, [], [0])])
    (total,) = onnxkit.Session(model).run(None, {})
    assert int(total) == sum(range(2500))


def test_names_from_the_model_never_enter_the_written_source():
    from onnxkit.runtime.straight_line import vetted

    sess = onnxkit.Session(_tricky_model())
    source = sess.plan.straight.source  # the graph did take the straight-line path
    assert vetted(source)
    for name in HOSTILE:
        assert name not in source
    assert not vetted(source + "\n    __import__('os')\n")
    assert not vetted(source.replace("return", "open"))
