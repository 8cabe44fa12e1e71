"""Checks of exercise 1: onnx's backend cases of each operator, then hand-computed values."""

from __future__ import annotations

import numpy as np
import onnx.defs
import pytest

from exercises.tests.kernels import cases_of, check_cases, one_node, run
from exercises.tests.select import exercise

ex = exercise("ex1_kernels")


def registered(op_type: str) -> list[int]:
    return ex.KERNELS.versions("", op_type)


# --- Task 1.1: LeakyRelu ------------------------------------------------------------------

@pytest.mark.task1_1
@pytest.mark.hidden
def test_leaky_relu_onnx_cases():
    check_cases(ex, cases_of("LeakyRelu"))


@pytest.mark.task1_1
def test_leaky_relu_by_hand():
    x = np.array([-2.0, -0.5, 0.0, 3.0], np.float32)
    (y,) = run(ex, one_node("LeakyRelu", 16, x, alpha=0.1), {"x": x})
    np.testing.assert_allclose(y, [-0.2, -0.05, 0.0, 3.0], rtol=1e-6)
    assert y.dtype == np.float32
    (y,) = run(ex, one_node("LeakyRelu", 16, x), {"x": x})     # default alpha 0.01
    np.testing.assert_allclose(y, [-0.02, -0.005, 0.0, 3.0], rtol=1e-6)
    x16 = x.astype(np.float16)
    (y16,) = run(ex, one_node("LeakyRelu", 6, x16, alpha=0.5), {"x": x16})
    assert y16.dtype == np.float16 and y16.tolist() == [-1.0, -0.25, 0.0, 3.0]
    assert registered("LeakyRelu") == [6, 16]


# --- Task 1.2: Softmax-13 -----------------------------------------------------------------

@pytest.mark.task1_2
@pytest.mark.hidden
def test_softmax_onnx_cases():
    check_cases(ex, cases_of("Softmax"))


@pytest.mark.task1_2
def test_softmax_by_hand():
    x = np.array([[0.0, np.log(3.0)], [1.0, 1.0]], np.float32)
    (y,) = run(ex, one_node("Softmax", 13, x), {"x": x})          # last axis: e^0 : e^ln3 = 1 : 3
    np.testing.assert_allclose(y, [[0.25, 0.75], [0.5, 0.5]], rtol=1e-6)
    (y,) = run(ex, one_node("Softmax", 13, x, axis=0), {"x": x})  # down the columns
    np.testing.assert_allclose(y[:, 0], [1 / (1 + np.e), np.e / (1 + np.e)], rtol=1e-6)
    big = np.array([1000.0, 1000.0, -1000.0], np.float32)        # exp(1000) overflows float32
    (y,) = run(ex, one_node("Softmax", 13, big), {"x": big})
    np.testing.assert_allclose(y, [0.5, 0.5, 0.0], atol=1e-7)
    cube = np.arange(24, dtype=np.float64).reshape(2, 3, 4)       # one axis, not a 2-D view
    (y,) = run(ex, one_node("Softmax", 13, cube, axis=1), {"x": cube})
    assert y.dtype == np.float64
    np.testing.assert_allclose(y.sum(axis=1), np.ones((2, 4)), rtol=1e-12)
    assert registered("Softmax") == [13]


# --- Task 1.3: Transpose ------------------------------------------------------------------

@pytest.mark.task1_3
@pytest.mark.hidden
def test_transpose_onnx_cases():
    check_cases(ex, cases_of("Transpose"))


@pytest.mark.task1_3
def test_transpose_by_hand():
    x = np.arange(6, dtype=np.int64).reshape(2, 3)
    (y,) = run(ex, one_node("Transpose", 21, x), {"x": x})
    assert y.tolist() == [[0, 3], [1, 4], [2, 5]] and y.dtype == np.int64
    cube = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    (y,) = run(ex, one_node("Transpose", 13, cube, perm=[1, 0, 2]), {"x": cube})
    assert y.shape == (3, 2, 4) and y[2, 1, 3] == cube[1, 2, 3]
    words = np.array([["a", "b"], ["c", "d"]], dtype=object)
    (y,) = run(ex, one_node("Transpose", 1, words), {"x": words})
    assert y.tolist() == [["a", "c"], ["b", "d"]]
    schema_versions = [s.since_version for s in onnx.defs.get_all_schemas_with_history()
                       if s.name == "Transpose" and s.domain == ""]
    assert registered("Transpose") == sorted(schema_versions)


# --- Task 1.4: Gemm -------------------------------------------------------------------------

@pytest.mark.task1_4
@pytest.mark.hidden
def test_gemm_onnx_cases():
    check_cases(ex, cases_of("Gemm"))


def gemm_model(opset: int, with_c: bool, **attrs):
    inputs = ["a", "b", "c"] if with_c else ["a", "b"]
    node = onnx.helper.make_node("Gemm", inputs, ["y"], **attrs)
    vis = [onnx.helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, None) for n in inputs]
    graph = onnx.helper.make_graph([node], "g", vis, [onnx.helper.make_tensor_value_info(
        "y", onnx.TensorProto.FLOAT, None)])
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", opset)])


@pytest.mark.task1_4
def test_gemm_by_hand():
    a = np.array([[1, 2], [3, 4]], np.float32)              # [[1, 2], [3, 4]]
    b = np.array([[0, 1], [1, 0]], np.float32)              # swaps the columns
    (y,) = run(ex, gemm_model(13, False), {"a": a, "b": b})
    assert y.tolist() == [[2, 1], [4, 3]] and y.dtype == np.float32
    # A.T @ B.T = [[1, 3], [2, 4]] @ [[0, 1], [1, 0]] = [[3, 1], [4, 2]]; * 2 + 10 * [1, -1]
    c = np.array([1, -1], np.float32)
    (y,) = run(ex, gemm_model(11, True, alpha=2.0, beta=10.0, transA=1, transB=1),
               {"a": a, "b": b, "c": c})
    assert y.tolist() == [[16, -8], [18, -6]]
    (y,) = run(ex, gemm_model(9, True, beta=0.5), {"a": a, "b": b, "c": np.array(4, np.float32)})
    assert y.tolist() == [[4, 3], [6, 5]]
    assert registered("Gemm") == [7, 9, 11, 13]


# --- Task 1.5: LayerNormalization ---------------------------------------------------------

@pytest.mark.task1_5
@pytest.mark.hidden
def test_layer_normalization_onnx_cases():
    check_cases(ex, cases_of("LayerNormalization"))


@pytest.mark.task1_5
def test_layer_normalization_by_hand():
    # row [1, 2, 3]: mean 2, var 2/3; row [4, 4, 4]: var 0, inv_std = 1/sqrt(eps)
    x = np.array([[1, 2, 3], [4, 4, 4]], np.float32)
    scale, bias = np.array([1, 2, 3], np.float32), np.array([0, 0, 1], np.float32)
    node = onnx.helper.make_node("LayerNormalization", ["x", "s", "b"], ["y", "m", "i"], epsilon=0.25)
    f = onnx.TensorProto.FLOAT
    graph = onnx.helper.make_graph(
        [node], "g", [onnx.helper.make_tensor_value_info(n, f, None) for n in "xsb"],
        [onnx.helper.make_tensor_value_info(n, f, None) for n in ("y", "m", "i")])
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])
    y, m, i = run(ex, model, {"x": x, "s": scale, "b": bias})
    inv = 1 / np.sqrt(2 / 3 + 0.25)
    np.testing.assert_allclose(m, [[2], [4]], rtol=1e-6)
    np.testing.assert_allclose(i, [[inv], [2.0]], rtol=1e-6)                # 1 / sqrt(0.25)
    np.testing.assert_allclose(y, [[-inv, 0, 3 * inv + 1], [0, 0, 1]], rtol=1e-6, atol=1e-6)
    assert y.dtype == m.dtype == i.dtype == np.float32 and m.shape == (2, 1)
