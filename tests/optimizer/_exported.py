"""Small graphs exported by the real exporters from the real libraries, for fusion tests.

``export(module, inputs, exporter)`` writes ``module`` with TorchScript tracing ("ts",
opset 17) or the dynamo exporter ("dynamo", opset 18), as ``benchmarks.kinds`` does; a
test that needs torch or transformers skips when they are not installed.
``check_against_ort`` runs the optimized model with onnxkit's reference executor and the
original with onnxruntime (graph optimizations off) and compares them.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest

import onnxkit

RTOL = 1e-5


def export(module, inputs: dict, exporter: str, tmp_path, outputs: int = 1
           ) -> tuple[onnx.ModelProto, dict]:
    """``module`` (``outputs`` results) exported with ``exporter``; returns the model and
    the feeds."""
    pytest.importorskip("torch")
    if exporter == "dynamo":
        pytest.importorskip("onnxscript")
    from benchmarks.kinds.export import torch_export

    path = tmp_path / f"model_{exporter}.onnx"
    module.eval()
    feeds = torch_export(module, inputs, [f"out{i}" for i in range(outputs)], path, exporter)
    return onnx.load(str(path)), feeds


def ort_outputs(m: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    ort = pytest.importorskip("onnxruntime")
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def check_against_ort(original: onnx.ModelProto, optimized: onnx.ModelProto, feeds: dict,
                      rtol: float = RTOL) -> None:
    """The optimized model (onnxkit reference executor) gives onnxruntime's outputs, to
    ``rtol`` of each element plus ``rtol`` of the output's largest value (a fusion changes
    the order of float operations, which moves values near zero by a few ulps of the
    largest)."""
    expected = ort_outputs(original, feeds)
    actual = onnxkit.Session(optimized, executor="reference").run(None, feeds)
    assert len(actual) == len(expected)
    for e, a in zip(expected, actual):
        assert e.shape == a.shape and e.dtype == a.dtype
        if e.dtype.kind == "f":
            atol = rtol * float(np.abs(e).max(initial=0.0))
            np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(a, e)


def op_types(m: onnx.ModelProto) -> list[str]:
    return [(f"{n.domain}::" if n.domain else "") + n.op_type for n in m.graph.node]
