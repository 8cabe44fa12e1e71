"""An activation behind a Reshape of a product (a traced nn.Linear on 3-D input: the
exporters flatten, multiply, then reshape back) goes into the product's epilogue; the
Reshape moves after it. Outputs are checked against onnxruntime on the original model."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

import onnxkit

from onnxkit.optimizer import optimize
from tests.optimizer._exported import ort_outputs
from tests.optimizer._helpers import model, ops, rand

LINEAR = """
<ir_version: 9, opset_import: ["" : {opset}]>
g (float[6, 16] a) => (float[1, 6, 32] y) {{
    p = Gemm <transB = 1> (a, W, B)
    r = Reshape (p, shape)
    y = {act}
}}
"""


def _linear(act: str, opset: int = 20, **extra):
    return model(LINEAR.format(act=act, opset=opset), W=rand(32, 16, seed=1),
                 B=rand(32, seed=2), shape=np.array([1, 6, 32], np.int64), **extra)


@pytest.mark.parametrize("act, want", [
    ("Relu (r)", "Relu"),
    ("Gelu <approximate = \"tanh\"> (r)", "GeluTanh"),
    ("Gelu (r)", "Gelu"),
    ("Clip (r, lo, hi)", "Clip"),
    ("LeakyRelu <alpha = 0.2> (r)", "LeakyRelu"),
])
def test_the_activation_goes_into_the_gemm(act, want):
    bounds = {"lo": np.array(-0.5, np.float32), "hi": np.array(0.5, np.float32)} if "Clip" in act else {}
    m = _linear(act, **bounds)
    out, report = optimize(m, 2)
    assert ops(out) == ["onnxkit::FusedGemm", "Reshape"]
    (fused,) = [n for n in out.graph.node if n.op_type == "FusedGemm"]
    assert [a.s.decode() for a in fused.attribute if a.name == "activation"] == [want]
    assert f"Gemm+Reshape+{act.split(' ')[0]} x1" in str(report)  # the rewrite explained
    feeds = {"a": rand(6, 16, seed=3) * 3}
    (expected,) = ort_outputs(m, feeds)
    for executor in ("reference", "cpu"):
        (y,) = onnxkit.Session(out, executor=executor).run(None, feeds)
        assert y.shape == (1, 6, 32)
        np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-6)


def test_a_reshape_read_elsewhere_keeps_the_activation_where_it_is():
    text = """
    <ir_version: 9, opset_import: ["" : 20]>
    g (float[6, 16] a) => (float[1, 6, 32] y, float[1, 6, 32] r) {
        p = Gemm <transB = 1> (a, W, B)
        r = Reshape (p, shape)
        y = Relu (r)
    }
    """
    m = model(text, W=rand(32, 16, seed=1), B=rand(32, seed=2),
              shape=np.array([1, 6, 32], np.int64))
    out, _ = optimize(m, 2)
    assert "Relu" in ops(out) and "onnxkit::FusedGemm" not in ops(out)
    feeds = {"a": rand(6, 16, seed=3)}
    for got, want in zip(onnxkit.Session(out).run(None, feeds), ort_outputs(m, feeds)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_an_opset_13_reshape_stays_valid():
    """allowzero exists from opset 14: the moved Reshape must not gain it."""
    m = _linear("Relu (r)", opset=13)
    out, _ = optimize(m, 2)
    (reshape,) = [n for n in out.graph.node if n.op_type == "Reshape"]
    assert [a.name for a in reshape.attribute] == []
    onnx.checker.check_model(out)

