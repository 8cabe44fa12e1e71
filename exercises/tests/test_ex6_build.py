"""Checks of exercise 6: onnx's full checker, onnxruntime's answers against numpy's, and
what the version converter moved, read from the models by hand."""

from __future__ import annotations

import numpy as np
import onnx
import onnx.helper as oh
import onnxruntime
import pytest

from exercises.tests.select import exercise

ex = exercise("ex6_build")
rng = np.random.default_rng(6)


def ort_run(model: onnx.ModelProto, **feeds) -> list:
    return onnxruntime.InferenceSession(model.SerializeToString(),
                                        providers=["CPUExecutionProvider"]).run(None, feeds)


def weights():
    return (rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal(3).astype(np.float32),
            rng.standard_normal((3, 2)).astype(np.float32), rng.standard_normal(2).astype(np.float32))


@pytest.mark.task6_1
def test_mlp_passes_the_full_checker_and_computes():
    w1 = np.array([[1, -1], [0, 2]], np.float32)
    b1 = np.array([0, -1], np.float32)
    w2 = np.array([[1], [1]], np.float32)
    b2 = np.array([10], np.float32)
    model = ex.mlp_model(w1, b1, w2, b2)
    onnx.checker.check_model(model, full_check=True)
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 18)]
    # x = [1, 1]: x @ w1 + b1 = [1, 0], relu [1, 0], @ w2 + 10 = 11;  x = [-1, 1]: [-1, 2] -> [0, 2] -> 12
    (y,) = ort_run(model, x=np.array([[1, 1], [-1, 1]], np.float32))
    assert y.tolist() == [[11.0], [12.0]]


@pytest.mark.task6_1
@pytest.mark.hidden
def test_mlp_signature_and_any_batch():
    w1, b1, w2, b2 = weights()
    model = ex.mlp_model(w1, b1, w2, b2)
    onnx.checker.check_model(model, full_check=True)
    (x_in,) = model.graph.input
    dims = x_in.type.tensor_type.shape.dim
    assert x_in.name == "x" and dims[0].dim_param == "N" and dims[1].dim_value == 4
    assert len(model.graph.initializer) == 4 and len(model.graph.input) == 1
    assert sorted(n.op_type for n in model.graph.node) == ["Gemm", "Gemm", "Relu"]
    for batch in (1, 5):
        x = rng.standard_normal((batch, 4)).astype(np.float32)
        expected = np.maximum(x.astype(np.float64) @ w1 + b1, 0) @ w2 + b2
        (y,) = ort_run(model, x=x)
        assert y.shape == (batch, 2)
        np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)


def old_model(nodes, x_shape, y_shape, opset=11) -> onnx.ModelProto:
    graph = oh.make_graph(nodes, "old", [oh.make_tensor_value_info("x", 1, x_shape)],
                          [oh.make_tensor_value_info("y", 1, y_shape)])
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", opset)], ir_version=6)


@pytest.mark.task6_2
def test_reduce_mean_and_unsqueeze_move_their_axes():
    before = old_model([oh.make_node("Unsqueeze", ["x"], ["u"], axes=[0]),
                        oh.make_node("ReduceMean", ["u"], ["m"], axes=[2], keepdims=0),
                        oh.make_node("Relu", ["m"], ["y"])], [2, 3], [1, 2])
    after = ex.to_opset_18(before)
    onnx.checker.check_model(after, full_check=True)
    assert [(o.domain, o.version) for o in after.opset_import] == [("", 18)]
    assert ex.attributes_now_inputs(before, after) == {"Unsqueeze": ["axes"], "ReduceMean": ["axes"]}
    x = np.array([[-3, 1, 2], [4, 5, 6]], np.float32)     # row means -0, 5
    (y,) = ort_run(after, x=x)
    assert y.tolist() == [[0.0, 5.0]]


@pytest.mark.task6_2
@pytest.mark.hidden
def test_split_squeeze_and_reduce_sum():
    before = old_model([oh.make_node("Split", ["x"], ["a", "b"], axis=1, split=[1, 2]),
                        oh.make_node("ReduceSum", ["b"], ["s"], axes=[1], keepdims=1),
                        oh.make_node("Squeeze", ["s"], ["q"], axes=[1]),
                        oh.make_node("Squeeze", ["a"], ["p"], axes=[1]),
                        oh.make_node("Add", ["p", "q"], ["y"])], [2, 3], [2])
    after = ex.to_opset_18(before)
    onnx.checker.check_model(after, full_check=True)
    assert ex.attributes_now_inputs(before, after) == {
        "Split": ["split"], "ReduceSum": ["axes"], "Squeeze": ["axes"]}
    x = rng.standard_normal((2, 3)).astype(np.float32)
    (y0,) = ort_run(before, x=x)
    (y1,) = ort_run(after, x=x)
    np.testing.assert_array_equal(y1, y0)
    np.testing.assert_allclose(y1, x.sum(axis=1), rtol=1e-6)
