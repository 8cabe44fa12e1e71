"""LayerNormalization, SkipLayerNormalization and RMSNormalization of few rows on the cpu
executor (``kernels.cpu._small_norm``): one compiled call for nodes whose scale and bias
are initializers.

Oracles: onnxruntime (its optimizations off) on standard-ONNX models (LayerNormalization
alone, Add + LayerNormalization, RMSNorm written out as transformers exports it), which
onnxkit runs at level 0 and at level 2 (SkipLayerNormalization / RMSNormalization fused);
onnx.reference for the opset-23 RMSNormalization node. Shapes cover a decoder step, 2-D
to 4-D inputs, a strided input, an axis other than the last and the statistics outputs
(the general kernels).
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from onnxkit import Session

ort = pytest.importorskip("onnxruntime")

F32 = TensorProto.FLOAT
RNG = np.random.default_rng(3)
D = 48
SHAPES = [(2, 1, D), (1, D), (3, 5, D), (2, 2, 3, D), (64, 40, D)]


def _model(nodes, inputs, outputs, inits, opset=17):
    graph = helper.make_graph(nodes, "g", inputs,
                              [helper.make_tensor_value_info(o, F32, None) for o in outputs],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=9)


def _ort(model, feeds):
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), options,
                                providers=["CPUExecutionProvider"]).run(None, feeds)


def _check(model, feeds, want=None, levels=(0, 2)):
    want = _ort(model, feeds) if want is None else want
    for level in levels:
        got = Session(model, executor="cpu", level=level).run(None, feeds)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=f"level {level}")


def _x(name, rank):
    return helper.make_tensor_value_info(name, F32, [f"{name}{i}" for i in range(rank - 1)] + [D])


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("with_bias", [True, False])
def test_layer_norm_matches_onnxruntime(shape, with_bias):
    inits = {"scale": RNG.standard_normal(D).astype(np.float32)}
    inputs = ["x", "scale"]
    if with_bias:
        inits["bias"] = RNG.standard_normal(D).astype(np.float32)
        inputs.append("bias")
    model = _model([helper.make_node("LayerNormalization", inputs, ["y"], epsilon=1e-5)],
                   [_x("x", len(shape))], ["y"], inits)
    _check(model, {"x": RNG.standard_normal(shape).astype(np.float32) * 3 + 1})


def test_layer_norm_axis_given_as_the_last_and_a_strided_input():
    inits = {"scale": RNG.standard_normal(D).astype(np.float32),
             "bias": RNG.standard_normal(D).astype(np.float32)}
    model = _model([helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["y"],
                                     axis=2)], [_x("x", 3)], ["y"], inits)
    x = RNG.standard_normal((5, 2, D)).astype(np.float32)
    _check(model, {"x": x})
    _check(model, {"x": x.transpose(1, 0, 2).copy().transpose(1, 0, 2)})


def test_layer_norm_over_two_axes_and_its_statistics():
    """Scale over the last two axes; Mean and InvStdDev wanted: the general kernel."""
    inits = {"scale": RNG.standard_normal((3, D)).astype(np.float32)}
    model = _model([helper.make_node("LayerNormalization", ["x", "scale"], ["y"], axis=1)],
                   [_x("x", 3)], ["y"], inits)
    _check(model, {"x": RNG.standard_normal((2, 3, D)).astype(np.float32)})
    inits = {"scale": RNG.standard_normal(D).astype(np.float32)}
    model = _model([helper.make_node("LayerNormalization", ["x", "scale"], ["y", "m", "i"])],
                   [_x("x", 3)], ["y", "m", "i"], inits)
    _check(model, {"x": RNG.standard_normal((2, 1, D)).astype(np.float32)})


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("sum_read", [False, True])
def test_skip_layer_norm_matches_onnxruntime(shape, sum_read):
    """Add + LayerNormalization (fused at level 2); the sum read by a later node too
    (GPT-2's residual stream: the fused node's second output)."""
    inits = {"scale": RNG.standard_normal(D).astype(np.float32),
             "bias": RNG.standard_normal(D).astype(np.float32)}
    nodes = [helper.make_node("Add", ["x", "skip"], ["s"]),
             helper.make_node("LayerNormalization", ["s", "scale", "bias"], ["y"])]
    outputs = ["y"]
    if sum_read:
        nodes.append(helper.make_node("Mul", ["s", "s"], ["s2"]))
        outputs.append("s2")
    static = [helper.make_tensor_value_info(n, F32, list(shape)) for n in ("x", "skip")]
    model = _model(nodes, static, outputs, inits)  # (the fusion wants the shapes equal)
    feeds = {"x": RNG.standard_normal(shape).astype(np.float32),
             "skip": RNG.standard_normal(shape).astype(np.float32)}
    _check(model, feeds)
    fused = Session(model, executor="cpu", level=2)
    assert any(s.node.op_type == "SkipLayerNormalization" for s in fused.plan.steps)


def _rms_written_out(rank, with_scale):
    """RMSNorm as transformers exports T5's and Llama's: Pow, ReduceMean, Add, Sqrt, Div."""
    inits = {"two": np.array(2.0, np.float32), "eps": np.array(1e-6, np.float32),
             "one": np.array(1.0, np.float32), "axes": np.array([-1], np.int64)}
    nodes = [helper.make_node("Pow", ["x", "two"], ["sq"]),
             helper.make_node("ReduceMean", ["sq", "axes"], ["ms"], keepdims=1),
             helper.make_node("Add", ["ms", "eps"], ["v"]),
             helper.make_node("Sqrt", ["v"], ["r"]),
             helper.make_node("Div", ["one", "r"], ["inv"]),
             helper.make_node("Mul", ["x", "inv"], ["n" if with_scale else "y"])]
    if with_scale:
        inits["w"] = RNG.standard_normal(D).astype(np.float32)
        nodes.append(helper.make_node("Mul", ["n", "w"], ["y"]))
    return _model(nodes, [_x("x", rank)], ["y"], inits, opset=18)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("with_scale", [True, False])
def test_rms_norm_written_out_matches_onnxruntime(shape, with_scale):
    model = _rms_written_out(len(shape), with_scale)
    _check(model, {"x": RNG.standard_normal(shape).astype(np.float32)})
    fused = Session(model, executor="cpu", level=2)
    assert [s.node.op_type for s in fused.plan.steps] == ["RMSNormalization"]


@pytest.mark.parametrize("shape", [(2, 1, D), (4, D)], ids=str)
def test_rms_norm_opset_23_matches_onnx_reference(shape):
    inits = {"scale": RNG.standard_normal(D).astype(np.float32)}
    model = _model([helper.make_node("RMSNormalization", ["x", "scale"], ["y"], epsilon=1e-6)],
                   [_x("x", len(shape))], ["y"], inits, opset=23)
    feeds = {"x": RNG.standard_normal(shape).astype(np.float32)}
    _check(model, feeds, ReferenceEvaluator(model).run(None, feeds), levels=(0,))
