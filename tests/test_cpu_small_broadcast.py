"""Add, Sub, Mul and Div of small broadcast operands on the cpu executor (Llama's rotary
cos / sin against the heads): one numpy call, as for equal shapes.

Oracle: onnxruntime (its optimizations off). Shapes cover each broadcast direction, a
scalar, an output too big for the one-call path and shapes that do not broadcast, which
must give onnxkit's error.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from onnxkit import Session
from onnxkit.errors import OnnxkitError

ort = pytest.importorskip("onnxruntime")

F32 = TensorProto.FLOAT
RNG = np.random.default_rng(9)
OPS = ["Add", "Sub", "Mul", "Div"]


def _model(op):
    graph = helper.make_graph(
        [helper.make_node(op, ["a", "b"], ["y"])], "g",
        [helper.make_tensor_value_info(n, F32, None) for n in ("a", "b")],
        [helper.make_tensor_value_info("y", F32, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], ir_version=9)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("sa, sb", [((2, 4, 1, 16), (1, 1, 1, 16)), ((1, 1, 1, 16), (2, 4, 1, 16)),
                                    ((2, 1, 9), (2, 4, 1)), ((3, 5), ()), ((1,), (7, 1)),
                                    ((300, 1), (1, 300)), ((2, 1, 128), (2, 1, 128))])
def test_small_broadcasts_match_onnxruntime(op, sa, sb):
    model = _model(op)
    feeds = {"a": RNG.standard_normal(sa).astype(np.float32),
             "b": RNG.uniform(0.5, 2.0, sb).astype(np.float32)}
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    want = ort.InferenceSession(model.SerializeToString(), options,
                                providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    got = Session(model, executor="cpu").run(None, feeds)[0]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("op", OPS)
def test_shapes_that_do_not_broadcast_give_an_onnxkit_error(op):
    sess = Session(_model(op), executor="cpu")
    with pytest.raises(OnnxkitError, match=op):
        sess.run(None, {"a": np.ones((2, 3), np.float32), "b": np.ones((4,), np.float32)})
