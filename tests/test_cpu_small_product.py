"""Gemm and MatMul layers of few rows on the cpu executor (``kernels.cpu._small_product``):
the product, the bias (beta * C), alpha and a fused activation in one compiled call, for
nodes whose weights are initializers.

Oracle: onnxruntime (its optimizations off) on the same standard-ONNX model; onnxkit runs
it on the cpu executor at level 0 and at level 2, where the activation is fused into
FusedGemm / FusedMatMul. Row counts cover a decoder step (1, 2), odd counts and a count
past the one-call limit (the split path).
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnxkit import Session

ort = pytest.importorskip("onnxruntime")

F32 = TensorProto.FLOAT
RNG = np.random.default_rng(11)
ACTIVATIONS = [None, "Relu", "Gelu", "Sigmoid", "Tanh", ("LeakyRelu", {"alpha": 0.2}),
               ("Clip", None), ("HardSigmoid", {"alpha": 0.3, "beta": 0.4})]


def _model(nodes, inputs, inits, opset=20):
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("y", F32, None)],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=9)


def _activation(act, src, inits):
    """The activation node reading ``src``, writing "y" (inits gains Clip's bounds)."""
    if act is None:
        return [helper.make_node("Identity", [src], ["y"])]
    name, attrs = act if isinstance(act, tuple) else (act, {})
    if name == "Clip":
        inits["lo"], inits["hi"] = np.float32(-0.5), np.float32(0.75)
        return [helper.make_node("Clip", [src, "lo", "hi"], ["y"])]
    return [helper.make_node(name, [src], ["y"], **(attrs or {}))]


def _check(model, feeds):
    want = ort.InferenceSession(model.SerializeToString(), _options(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    for level in (0, 2):
        got = Session(model, executor="cpu", level=level).run(None, feeds)[0]
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5, err_msg=f"level {level}")
        again = Session(model, executor="cpu", level=level).run(None, feeds)[0]
        np.testing.assert_array_equal(got, again)  # the same bits from a fresh session


def _options():
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return options


@pytest.mark.parametrize("act", ACTIVATIONS, ids=str)
@pytest.mark.parametrize("trans_b", [0, 1])
def test_gemm_layer_matches_onnxruntime(act, trans_b):
    k, n = 50, 42  # (not multiples of 4: the loops' remainders too)
    w = RNG.standard_normal((n, k) if trans_b else (k, n)).astype(np.float32) * 0.3
    inits = {"w": w, "c": RNG.standard_normal(n).astype(np.float32)}
    nodes = [helper.make_node("Gemm", ["a", "w", "c"], ["g"], transB=trans_b)]
    nodes += _activation(act, "g", inits)
    model = _model(nodes, [helper.make_tensor_value_info("a", F32, ["m", k])], inits)
    for m in (1, 2, 5, 2000):  # 2000 rows: past the one-call limit
        _check(model, {"a": RNG.standard_normal((m, k)).astype(np.float32)})


@pytest.mark.parametrize("alpha, beta", [(0.5, 1.0), (1.0, -2.0), (2.0, 0.0)])
@pytest.mark.parametrize("c_shape", [(1, 24), (24,), None])
def test_gemm_alpha_beta_and_bias_shapes(alpha, beta, c_shape):
    inits = {"w": RNG.standard_normal((16, 24)).astype(np.float32)}
    inputs = ["a", "w"]
    if c_shape is not None:
        inits["c"] = RNG.standard_normal(c_shape).astype(np.float32)
        inputs.append("c")
    nodes = [helper.make_node("Gemm", inputs, ["y"], alpha=alpha, beta=beta)]
    model = _model(nodes, [helper.make_tensor_value_info("a", F32, ["m", 16])], inits)
    for m in (1, 3):
        _check(model, {"a": RNG.standard_normal((m, 16)).astype(np.float32)})


def test_gemm_trans_a_reads_the_transposed_rows():
    inits = {"w": RNG.standard_normal((16, 8)).astype(np.float32),
             "c": RNG.standard_normal(8).astype(np.float32)}
    nodes = [helper.make_node("Gemm", ["a", "w", "c"], ["y"], transA=1)]
    model = _model(nodes, [helper.make_tensor_value_info("a", F32, [16, "m"])], inits)
    for m in (1, 2, 7):
        _check(model, {"a": RNG.standard_normal((16, m)).astype(np.float32)})


@pytest.mark.parametrize("act", [None, "Gelu", "Tanh"], ids=str)
@pytest.mark.parametrize("with_bias", [False, True])
def test_matmul_layer_on_3d_input_matches_onnxruntime(act, with_bias):
    inits = {"w": RNG.standard_normal((32, 96)).astype(np.float32) * 0.2}
    nodes = [helper.make_node("MatMul", ["x", "w"], ["p"])]
    src = "p"
    if with_bias:
        inits["b"] = RNG.standard_normal(96).astype(np.float32)
        nodes.append(helper.make_node("Add", ["p", "b"], ["q"]))
        src = "q"
    nodes += _activation(act, src, inits)
    model = _model(nodes, [helper.make_tensor_value_info("x", F32, ["b", "s", 32])], inits)
    for shape in ((2, 1, 32), (1, 1, 32), (3, 4, 32), (4, 600, 32)):
        x = RNG.standard_normal(shape).astype(np.float32)
        _check(model, {"x": x})
        _check(model, {"x": x.transpose(1, 0, 2).copy().transpose(1, 0, 2)})  # strided rows


def test_matmul_weights_fed_at_run_time_take_the_general_path():
    """B a graph input, not an initializer: nothing prepared, the same answers."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"])]
    model = _model(nodes, [helper.make_tensor_value_info("x", F32, ["s", 8]),
                           helper.make_tensor_value_info("w", F32, [8, 6])], {})
    for s in (1, 2):
        _check(model, {"x": RNG.standard_normal((s, 8)).astype(np.float32),
                       "w": RNG.standard_normal((8, 6)).astype(np.float32)})


def test_a_float64_layer_runs_as_before():
    """float64 is not compiled (``_dtypes.COMPILED``): the reference's answer."""
    w = RNG.standard_normal((8, 6))
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["a", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("a", TensorProto.DOUBLE, ["m", 8])],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)],
        [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=9)
    a = RNG.standard_normal((2, 8))
    got = Session(model, executor="cpu").run(None, {"a": a})[0]
    want = ort.InferenceSession(model.SerializeToString(), _options(),
                                providers=["CPUExecutionProvider"]).run(None, {"a": a})[0]
    np.testing.assert_allclose(got, want, rtol=1e-12)
