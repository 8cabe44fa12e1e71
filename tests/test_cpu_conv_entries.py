"""Conv layers whose kernel the ``cpu`` executor calls through its compiled entry point
after a layer's first call (the few-pixel dot products, the channels-last depthwise
kernel): every run of a session, each on new inputs, matches onnxruntime, with and
without a residual (level 3 fuses the Add into onnxkit::FusedConv)."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxkit
from onnxkit.runtime.profile import Profiler

RNG = np.random.default_rng(11)

# (input shape, output channels, kernel, group, the algorithm the layer takes)
CASES = [((1, 48, 4, 4), 48, 1, 1, "dots"), ((2, 96, 2, 2), 64, 3, 1, "dots"),
         ((1, 96, 4, 4), 96, 3, 96, "depthwise"), ((2, 48, 3, 3), 48, 3, 48, "depthwise")]


def _model(x_shape, m, k, group, residual):
    c, h, w = x_shape[1:]
    W = RNG.standard_normal((m, c // group, k, k)).astype(np.float32)
    B = RNG.standard_normal(m).astype(np.float32)
    y_shape = [x_shape[0], m, h, w]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], group=group, kernel_shape=[k, k],
                              pads=[k // 2] * 4)]
    if residual:
        inputs.append(helper.make_tensor_value_info("z", TensorProto.FLOAT, y_shape))
        nodes.append(helper.make_node("Add", ["c", "z"], ["y"]))
    else:
        nodes.append(helper.make_node("Relu", ["c"], ["y"]))
    graph = helper.make_graph(nodes, "g", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)],
                              [numpy_helper.from_array(W, "w"), numpy_helper.from_array(B, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    return model.SerializeToString(), y_shape


@pytest.mark.parametrize("residual", [False, True])
@pytest.mark.parametrize("x_shape, m, k, group, algorithm", CASES)
def test_every_run_matches_onnxruntime(x_shape, m, k, group, algorithm, residual):
    model, y_shape = _model(x_shape, m, k, group, residual)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    oracle = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    sess = onnxkit.Session(model, executor="cpu", level=3)
    profiler = Profiler(sess)
    for run in range(4):  # new values each run: a stale or skipped call cannot pass
        feeds = {"x": RNG.standard_normal(x_shape).astype(np.float32)}
        if residual:
            feeds["z"] = RNG.standard_normal(y_shape).astype(np.float32)
        expected = oracle.run(None, feeds)[0]
        got = sess.run(None, feeds, trace=profiler if run == 0 else None)[0]
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())
    assert f"[{algorithm}]" in profiler.table(markdown=False)
