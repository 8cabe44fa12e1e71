"""MatMuls of one input by constant weights merge into one MatMul and a Split: on small
graphs against numpy, the cases that must stay apart, and on the transformers models of
``benchmarks.kinds`` against onnxruntime (the cpu executor at level 3 too)."""

from pathlib import Path

import numpy as np
import onnx
import pytest

import onnxkit
from onnxkit.optimizer import optimize
from onnxkit.optimizer.passes import matmul_merge
from tests.optimizer._exported import check_against_ort, op_types, ort_outputs
from tests.optimizer._helpers import model, rand, run_pass

CACHE = Path(__file__).resolve().parents[2] / ".cache" / "kinds"
H = '<ir_version: 8, opset_import: ["" : 17]>'


def test_three_projections_become_one_product():
    m = model(H + """
    g (float[2,5,8] x) => (float[2,5,8] q, float[2,5,4] k, float[2,5,4] v) {
        q = MatMul (x, Wq)
        k = MatMul (x, Wk)
        v = MatMul (x, Wv)
    }""", Wq=rand(8, 8, seed=1), Wk=rand(8, 4, seed=2), Wv=rand(8, 4, seed=3))
    out, report = run_pass(m, matmul_merge.PASS)
    assert report.count("matmul_merge") == 1
    assert op_types(out) == ["MatMul", "Split"]
    x = rand(2, 5, 8, seed=4)
    q, k, v = onnxkit.Session(out).run(None, {"x": x})
    for got, w in ((q, rand(8, 8, seed=1)), (k, rand(8, 4, seed=2)), (v, rand(8, 4, seed=3))):
        np.testing.assert_allclose(got, x @ w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("second, why", [
    ("k = MatMul (y, Wk)", "another input"),
    ("k = MatMul (x, W3)", "a 3-D B"),
    ("k = MatMul (x, y8)", "B not a constant"),
])
def test_stays_apart(second, why):
    m = model(H + f"""
    g (float[2,8] x, float[2,8] y, float[8,4] y8) => (float[2,4] q, float[?,?] k) {{
        q = MatMul (x, Wq)
        {second}
    }}""", Wq=rand(8, 4, seed=1), Wk=rand(8, 4, seed=2), W3=rand(1, 8, 4, seed=3))
    out, report = run_pass(m, matmul_merge.PASS)
    assert report.count("matmul_merge") == 0, why
    assert op_types(out) == ["MatMul", "MatMul"]


@pytest.mark.parametrize("name, merges", [("bert_ts", 2), ("t5_step_ts", 5),
                                          ("llama_past_dynamo", 2), ("t5_step_dynamo", 5)])
def test_cached_transformers(name, merges):
    """One merge per attention's q/k/v, and one for the cross-attention keys and values
    all of T5's decoder layers read from the encoder output."""
    path = CACHE / f"{name}.onnx"
    if not path.exists():
        pytest.skip(f"{path} not built (python -m benchmarks.kinds --models {name})")
    m = onnx.load(str(path))
    feeds = dict(np.load(CACHE / f"{name}.npz"))
    out, report = optimize(m, 2)
    assert report.count("matmul_merge") == merges
    check_against_ort(m, out, feeds)
    expected = ort_outputs(m, feeds)
    got = onnxkit.Session(m, executor="cpu", level=3).run(None, feeds)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5 * float(np.abs(e).max()))
