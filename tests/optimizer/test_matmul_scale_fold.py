"""Scalar factors on both MatMul operands fold into one: the scaling that both exporters
write for ``torch.nn.functional.scaled_dot_product_attention``, checked against
onnxruntime, and the cases that must stay."""

from pathlib import Path

import numpy as np
import onnx
import pytest

import onnxkit
from onnxkit.optimizer import optimize
from onnxkit.optimizer.levels import BASIC
from onnxkit.optimizer.passes import matmul_scale_fold
from tests.optimizer._exported import check_against_ort, export, op_types
from tests.optimizer._helpers import model, rand, run_pass

CACHE = Path(__file__).resolve().parents[2] / ".cache" / "kinds"


def _sdpa():
    torch = pytest.importorskip("torch")

    class Attention(torch.nn.Module):
        def forward(self, q, k, v, mask):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)

    return Attention()


@pytest.mark.parametrize("exporter", ["ts", "dynamo"])
def test_exported_sdpa_scaling_folds(exporter, tmp_path):
    torch = pytest.importorskip("torch")
    gen = torch.Generator().manual_seed(0)
    inputs = {"q": torch.randn(2, 4, 1, 16, generator=gen), "k": torch.randn(2, 4, 9, 16, generator=gen),
              "v": torch.randn(2, 4, 9, 16, generator=gen), "mask": torch.randn(2, 1, 1, 9, generator=gen)}
    m, feeds = export(_sdpa(), inputs, exporter, tmp_path)
    # level 1 and this pass: at level 2 the attention fusion takes this plain attention whole
    out, report = optimize(m, 1, passes=BASIC + (matmul_scale_fold.PASS,))
    level1, _ = optimize(m, 1)
    assert report.count("matmul_scale_fold") == 1
    assert len(out.graph.node) == len(level1.graph.node) - 1
    check_against_ort(m, out, feeds)


@pytest.mark.parametrize("name", ["llama_past_ts", "llama_past_dynamo"])
def test_cached_llama_steps(name):
    """Grouped-query attention with past keys (not fused into Attention): one Mul less per
    layer, outputs still onnxruntime's (models built by ``python -m benchmarks.kinds``)."""
    path = CACHE / f"{name}.onnx"
    if not path.exists():
        pytest.skip(f"{path} not built (python -m benchmarks.kinds --models {name})")
    m = onnx.load(str(path))
    out, report = optimize(m, 2)
    assert report.count("matmul_scale_fold") == 2
    check_against_ort(m, out, dict(np.load(CACHE / f"{name}.npz")))


@pytest.mark.parametrize("s2", [
    "s2v",  # a vector: not one factor
    "s2r",  # shape [1,1,1] on a rank-2 operand: the Mul raises the rank
])
def test_stays_when_a_factor_is_no_scalar(s2):
    m = model('<ir_version: 8, opset_import: ["" : 17]>' + f"""
    g (float[3,4] a, float[4,5] b) => (float[?,?,?] y) {{
        qa = Mul (a, s1)
        kb = Mul (b, {s2})
        y = MatMul (qa, kb)
    }}""", s1=np.array(0.5, np.float32), s2v=rand(5, low=0.5), s2r=np.full((1, 1, 1), 3, np.float32))
    out, report = run_pass(m, matmul_scale_fold.PASS)
    assert report.count("matmul_scale_fold") == 0
    assert op_types(out) == ["Mul", "Mul", "MatMul"]


def test_hand_computed():
    m = model('<ir_version: 8, opset_import: ["" : 17]>' + """
    g (float[3,4] a, float[4,5] b) => (float[3,5] y) {
        qa = Mul (a, s1)
        kb = Mul (s2, b)
        y = MatMul (qa, kb)
    }""", s1=np.array(0.5, np.float32), s2=np.array([3.0], np.float32))
    out, _ = run_pass(m, matmul_scale_fold.PASS)
    assert op_types(out) == ["MatMul", "Mul"]
    a, b = rand(3, 4), rand(4, 5)
    y, = onnxkit.Session(out).run(None, {"a": a, "b": b})
    np.testing.assert_allclose(y, (a @ b) * 1.5, rtol=1e-6, atol=1e-6)


def test_float16_stays_scaled_before_the_product():
    """In float16 the factors keep q @ k in range: 300 * 300 * 4 overflows, 4.5 * 4.5 * 4 not."""
    m = model('<ir_version: 8, opset_import: ["" : 17]>' + """
    g (float16[1,4] a, float16[4,1] b) => (float16[1,1] y) {
        qa = Mul (a, s)
        kb = Mul (b, s)
        y = MatMul (qa, kb)
    }""", s=np.array(0.015, np.float16))
    out, report = optimize(m, 2)
    assert report.count("matmul_scale_fold") == 0
    a, b = np.full((1, 4), 300, np.float16), np.full((4, 1), 300, np.float16)
    y, = onnxkit.Session(out).run(None, {"a": a, "b": b})
    assert np.isfinite(y).all() and abs(float(y[0, 0]) - 81.0) < 0.5  # 4 * (300 * 0.015)^2
