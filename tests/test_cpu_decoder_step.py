"""A decoder step with past key/values on the cpu executor: the small-tensor paths of
Gather, Concat, Transpose, And, Where and onnxkit::Attention.

Oracle: onnxruntime (all its optimizations off) on the same standard-ONNX model; the
cpu executor runs it at level 0 and at level 3 (where the attention is fused). Bad
inputs at these sizes must still give onnxkit's errors, not numpy's.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnxkit import Session
from onnxkit.errors import OnnxkitError

ort = pytest.importorskip("onnxruntime")

F32, I64 = TensorProto.FLOAT, TensorProto.INT64
B, H, D, PAST, VOCAB = 2, 4, 8, 5, 11


def _decoder_step():
    """GPT-2's attention with a KV cache, one token: embedding Gather, qkv projection,
    Split, heads (Reshape, Transpose), Concat of the past, mask Where(And(...)), the
    scores' MatMul / Softmax / MatMul, heads merged back."""
    rng = np.random.default_rng(7)
    hidden = H * D
    inits = [
        numpy_helper.from_array(rng.standard_normal((VOCAB, hidden)).astype(np.float32), "wte"),
        numpy_helper.from_array(rng.standard_normal((hidden, 3 * hidden)).astype(np.float32)
                                * 0.2, "w_qkv"),
        numpy_helper.from_array(np.array([B, 1, H, D], np.int64), "heads"),
        numpy_helper.from_array(np.array([B, 1, hidden], np.int64), "merged"),
        numpy_helper.from_array(np.array([hidden] * 3, np.int64), "sizes"),
        numpy_helper.from_array(np.ones((1, 1, 1, PAST + 1), bool), "causal"),
        numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
        numpy_helper.from_array(np.array(np.finfo(np.float32).min, np.float32), "low"),
        numpy_helper.from_array(np.array(1 / np.sqrt(D), np.float32), "scale"),
    ]
    n = helper.make_node
    nodes = [
        n("Gather", ["wte", "ids"], ["x"]),
        n("MatMul", ["x", "w_qkv"], ["qkv"]),
        n("Split", ["qkv", "sizes"], ["q0", "k0", "v0"], axis=2),
        n("Reshape", ["q0", "heads"], ["q1"]), n("Transpose", ["q1"], ["q"], perm=[0, 2, 1, 3]),
        n("Reshape", ["k0", "heads"], ["k1"]), n("Transpose", ["k1"], ["k"], perm=[0, 2, 1, 3]),
        n("Reshape", ["v0", "heads"], ["v1"]), n("Transpose", ["v1"], ["v"], perm=[0, 2, 1, 3]),
        n("Concat", ["past_k", "k"], ["present_k"], axis=-2),
        n("Concat", ["past_v", "v"], ["present_v"], axis=-2),
        n("Cast", ["mask"], ["mask_b"], to=TensorProto.BOOL),
        n("Unsqueeze", ["mask_b", "axes"], ["mask4"]),
        n("And", ["causal", "mask4"], ["keep"]),
        n("Where", ["keep", "zero", "low"], ["bias"]),
        n("Transpose", ["present_k"], ["kt"], perm=[0, 1, 3, 2]),
        n("MatMul", ["q", "kt"], ["s0"]), n("Mul", ["s0", "scale"], ["s1"]),
        n("Add", ["s1", "bias"], ["s2"]), n("Softmax", ["s2"], ["p"], axis=-1),
        n("MatMul", ["p", "present_v"], ["y0"]),
        n("Transpose", ["y0"], ["y1"], perm=[0, 2, 1, 3]),
        n("Reshape", ["y1", "merged"], ["y"]),
    ]
    inits.append(numpy_helper.from_array(np.array([1, 2], np.int64), "axes"))
    graph = helper.make_graph(nodes, "decoder_step", [
        helper.make_tensor_value_info("ids", I64, [B, 1]),
        helper.make_tensor_value_info("mask", I64, [B, PAST + 1]),
        helper.make_tensor_value_info("past_k", F32, [B, H, PAST, D]),
        helper.make_tensor_value_info("past_v", F32, [B, H, PAST, D]),
    ], [helper.make_tensor_value_info("y", F32, [B, 1, H * D])]
       + [helper.make_tensor_value_info(v, F32, [B, H, PAST + 1, D])
          for v in ("present_k", "present_v")], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.checker.check_model(model)
    feeds = {"ids": np.array([[3], [-2]], np.int64),  # a negative index: Gather wraps it
             "mask": np.array([[1] * (PAST + 1), [0, 0, 1, 1, 1, 1]], np.int64),
             "past_k": rng.standard_normal((B, H, PAST, D)).astype(np.float32),
             "past_v": rng.standard_normal((B, H, PAST, D)).astype(np.float32)}
    return model, feeds


@pytest.mark.parametrize("level", [0, 3])
def test_decoder_step_matches_onnxruntime(level):
    model, feeds = _decoder_step()
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    expected = ort.InferenceSession(model.SerializeToString(), options,
                                    providers=["CPUExecutionProvider"]).run(None, feeds)
    ours = Session(model, executor="cpu", level=level)
    for _ in range(2):  # the second run goes through whatever the first one kept
        got = ours.run(None, feeds)
        for g, e in zip(got, expected):
            assert g.shape == e.shape and g.dtype == e.dtype
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
        # the cache's copy is exact
        np.testing.assert_array_equal(got[1][:, :, :PAST], feeds["past_k"])


def _one(op, inputs, **attrs):
    """A one-node model of float32 / bool / int64 inputs, with its feeds' types."""
    types = {np.dtype(np.float32): F32, np.dtype(bool): TensorProto.BOOL,
             np.dtype(np.int64): I64}
    names = [f"x{i}" for i in range(len(inputs))]
    graph = helper.make_graph(
        [helper.make_node(op, names, ["y"], **attrs)], op,
        [helper.make_tensor_value_info(n, types[a.dtype], None) for n, a in zip(names, inputs)],
        [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), \
        dict(zip(names, inputs))


@pytest.mark.parametrize("op, inputs, attrs", [
    ("Concat", [np.zeros((2, 4, 5, 8), np.float32), np.zeros((2, 3, 1, 8), np.float32)],
     {"axis": -2}),  # the other axes disagree
    ("Concat", [np.zeros((2, 5), np.float32), np.zeros((2, 1, 5), np.float32)],
     {"axis": 1}),  # ranks disagree
    ("Gather", [np.zeros((11, 8), np.float32), np.array([[3], [11]], np.int64)], {}),
    ("Gather", [np.zeros((11, 8), np.float32), np.array([[-12]], np.int64)], {}),
    ("And", [np.ones((2, 3), bool), np.ones((2, 4), bool)], {}),
    ("Where", [np.ones((2, 3), bool), np.zeros((4,), np.float32),
               np.zeros((1,), np.float32)], {}),
    ("Transpose", [np.zeros((2, 3, 4), np.float32)], {"perm": [0, 2, 1, 3]}),
])
def test_small_bad_inputs_give_onnxkit_errors(op, inputs, attrs):
    model, feeds = _one(op, inputs, **attrs)
    with pytest.raises(OnnxkitError):
        Session(model, executor="cpu", level=0).run(None, feeds)


@pytest.mark.parametrize("op, inputs, attrs", [
    ("Gather", [np.arange(6, dtype=np.float32), np.array(-1, np.int64)], {}),  # 0-D out
    ("Gather", [np.arange(24, dtype=np.float32).reshape(2, 3, 4),
                np.array([[2, -3]], np.int64)], {"axis": 1}),
    ("Concat", [np.ones((1, 2, 3), bool), np.zeros((1, 2, 1), bool)], {"axis": 2}),
    ("Concat", [np.arange(6, dtype=np.int64).reshape(2, 3)] * 3, {"axis": 0}),
    ("And", [np.array([True, False]).reshape(2, 1), np.array([True, True, False])], {}),
    ("Where", [np.array([[True], [False]]), np.arange(3, dtype=np.float32),
               np.array(-1.0, np.float32)], {}),
    ("Transpose", [np.arange(24, dtype=np.float32).reshape(2, 3, 4)], {"perm": [2, 0, 1]}),
])
def test_small_ops_match_onnxruntime(op, inputs, attrs):
    model, feeds = _one(op, inputs, **attrs)
    model.graph.output[0].type.tensor_type.elem_type = (
        TensorProto.BOOL if op == "And" or inputs[-1].dtype == bool
        else I64 if inputs[-1].dtype == np.int64 and op == "Concat" else F32)
    expected = ort.InferenceSession(model.SerializeToString(),
                                    providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    got = Session(model, executor="cpu", level=0).run(None, feeds)[0]
    assert isinstance(got, np.ndarray) and got.shape == expected.shape
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
