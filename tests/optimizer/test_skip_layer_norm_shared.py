"""A residual Add whose sum is read again later (the next layer's residual) still fuses
with its LayerNormalization: onnxkit.SkipLayerNormalization gives the sum as its second
output. Checked on a small graph (the rest of the graph reads the fused node's sum)
against the unfused model, and on the cached GPT-2 steps against onnxruntime."""

from pathlib import Path

import numpy as np
import onnx
import pytest

import onnxkit
from onnxkit.optimizer import optimize
from onnxkit.optimizer.passes import skip_layer_norm_fusion
from tests.optimizer._exported import check_against_ort, op_types, ort_outputs
from tests.optimizer._helpers import model, rand, run_pass

CACHE = Path(__file__).resolve().parents[2] / ".cache" / "kinds"
H = '<ir_version: 8, opset_import: ["" : 17]>'

RESIDUAL = H + """
    g (float[2,3,8] x, float[2,3,8] h) => (float[2,3,8] y, float[2,3,8] r) {
        s = Add (x, h)
        r = Mul (s, two)
        y = LayerNormalization <epsilon = 0.001> (s, scale, bias)
    }"""


def test_shared_sum_is_the_second_output():
    m = model(RESIDUAL, scale=rand(8, seed=1), bias=rand(8, seed=2),
              two=np.array(2, np.float32))
    out, report = run_pass(m, skip_layer_norm_fusion.PASS)  # outputs: the level-0 run's
    assert report.count("skip_layer_norm_fusion") == 1
    assert op_types(out) == ["onnxkit::SkipLayerNormalization", "Mul"]
    fused = out.graph.node[0]
    assert list(fused.output) == ["y", "s"]
    feeds = {"x": rand(2, 3, 8, seed=3), "h": rand(2, 3, 8, seed=4)}
    (y, r), (y0, r0) = (onnxkit.Session(mm, executor="cpu", level=0).run(None, feeds)
                        for mm in (out, m))
    np.testing.assert_allclose(y, y0, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(r, r0)


def test_mean_read_elsewhere_stays():
    m = model(RESIDUAL.replace("float[2,3,8] r) {", "float[2,3,1] mu) {")
              .replace("r = Mul (s, two)\n", "t = Mul (s, two)\n")
              .replace("y = LayerNormalization", "y, mu = LayerNormalization"),
              scale=rand(8, seed=1), bias=rand(8, seed=2), two=np.array(2, np.float32))
    out, report = run_pass(m, skip_layer_norm_fusion.PASS)
    assert report.count("skip_layer_norm_fusion") == 0


@pytest.mark.parametrize("name", ["gpt2_past_ts", "gpt2_past_dynamo"])
def test_cached_gpt2(name):
    """Three of GPT-2's four residual Adds feed a LayerNorm and the next residual."""
    path = CACHE / f"{name}.onnx"
    if not path.exists():
        pytest.skip(f"{path} not built (python -m benchmarks.kinds --models {name})")
    m = onnx.load(str(path))
    feeds = dict(np.load(CACHE / f"{name}.npz"))
    out, _ = optimize(m, 2)
    kinds = op_types(out)
    assert kinds.count("onnxkit::SkipLayerNormalization") == 4, kinds
    check_against_ort(m, out, feeds)
    got = onnxkit.Session(m, executor="cpu", level=3).run(None, feeds)
    for g, e in zip(got, ort_outputs(m, feeds)):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5 * float(np.abs(e).max()))
