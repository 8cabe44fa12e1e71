"""RMSNorm fusion on Llama's and T5's norms as the TorchScript and dynamo exporters write
them (Div(1, Sqrt) and Reciprocal(Sqrt)), checked against onnxruntime."""

from pathlib import Path

import numpy as np
import onnx
import pytest

import onnxkit
from onnxkit.optimizer import optimize
from onnxkit.optimizer.passes import rms_norm_fusion
from tests.optimizer._exported import check_against_ort, export, op_types
from tests.optimizer._helpers import model, rand, run_pass

EXPORTERS = ("ts", "dynamo")
CACHE = Path(__file__).resolve().parents[2] / ".cache" / "kinds"


def _norm(kind: str, hidden: int):
    pytest.importorskip("transformers")
    from benchmarks.kinds.tvshim import import_torchvision

    import_torchvision()  # transformers imports torchvision, whose ops the CPU torch lacks
    if kind == "llama":
        from transformers.models.llama.modeling_llama import LlamaRMSNorm
        return LlamaRMSNorm(hidden, eps=1e-6)
    from transformers.models.t5.modeling_t5 import T5LayerNorm
    return T5LayerNorm(hidden, eps=1e-6)


def _module(kind: str, then_linear: bool):
    """The library's RMSNorm with a random weight, alone (the weight Mul stays) or before
    a Linear (level 1 folds the weight into the MatMul; the bare form is left)."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    norm = _norm(kind, 64)
    with torch.no_grad():
        norm.weight.copy_(torch.rand(64) + 0.5)
    return torch.nn.Sequential(norm, torch.nn.Linear(64, 32)) if then_linear else norm


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("kind", ["llama", "t5"])
@pytest.mark.parametrize("then_linear", [False, True])
def test_exported_rms_norm_fuses(kind, exporter, then_linear, tmp_path):
    torch = pytest.importorskip("torch")
    x = torch.randn(2, 5, 64, generator=torch.Generator().manual_seed(1)) * 3
    m, feeds = export(_module(kind, then_linear), {"x": x}, exporter, tmp_path)
    level1, _ = optimize(m, 1)
    out, report = optimize(m, 2)
    assert report.count("rms_norm_fusion") == 1
    assert op_types(out).count("onnxkit::RMSNormalization") == 1
    for op in ("Pow", "ReduceMean", "Sqrt", "Reciprocal", "Div"):
        assert op not in op_types(out), op
    assert len(out.graph.node) < len(level1.graph.node)
    check_against_ort(m, out, feeds)


@pytest.mark.parametrize("name, norms", [
    ("llama_past_ts", 5), ("llama_past_dynamo", 5), ("t5_step_ts", 12), ("t5_step_dynamo", 12)])
def test_cached_kinds_models(name, norms):
    """The whole models of ``benchmarks.kinds`` when built (``.cache/kinds``): every norm
    fuses and the outputs still match onnxruntime's."""
    path = CACHE / f"{name}.onnx"
    if not path.exists():
        pytest.skip(f"{path} not built (python -m benchmarks.kinds --models {name})")
    m = onnx.load(str(path))
    feeds = dict(np.load(CACHE / f"{name}.npz"))
    out, report = optimize(m, 2)
    assert op_types(out).count("onnxkit::RMSNormalization") == norms
    assert "Pow" not in op_types(out) and "Sqrt" not in op_types(out)
    check_against_ort(m, out, feeds)


H23 = '<ir_version: 10, opset_import: ["" : 23]>'


def test_opset_23_gets_the_standard_operator_and_a_mul_square():
    m = model(H23 + """
    g (float[2,3,8] x) => (float[2,3,8] y) {
        sq = Mul (x, x)
        ms = ReduceMean (sq, axes)
        a = Add (ms, eps)
        s = Sqrt (a)
        r = Reciprocal (s)
        n = Mul (r, x)
        y = Mul (w, n)
    }""", eps=np.array(1e-5, np.float32), w=rand(8, low=0.5),
      axes=np.array([-1], np.int64))
    out, report = run_pass(m, rms_norm_fusion.PASS)
    assert [(n.domain, n.op_type) for n in out.graph.node] == [("", "RMSNormalization")]


@pytest.mark.parametrize("body, reason", [
    ("ms = ReduceMean <axes = [1]> (sq)", "not the last ones"),
    ("ms = ReduceMean <axes = [-1], keepdims = 0> (sq)", "drops the reduced axes"),
])
def test_not_fused_when_it_would_change_the_result(body, reason):
    m = model('<ir_version: 8, opset_import: ["" : 17]>' + f"""
    g (float[2,3,8] x) => (float[2,3,8] y) {{
        sq = Pow (x, two)
        {body}
        a = Add (ms, eps)
        s = Sqrt (a)
        r = Div (one, s)
        y = Mul (x, r)
    }}""", eps=np.array(1e-5, np.float32), two=np.array(2, np.float32), one=np.array(1, np.float32))
    _, report = optimize(m, 1, passes=(rms_norm_fusion.PASS,))
    assert report.count("rms_norm_fusion") == 0
    assert any(reason in r.reason for r in report.rejections), report.rejections


def test_a_symbolic_batch_axis_still_fuses():
    m = model('<ir_version: 8, opset_import: ["" : 17]>' + """
    g (float[N,3,8] x) => (float[N,3,8] y) {
        sq = Pow (x, two)
        ms = ReduceMean <axes = [-1]> (sq)
        a = Add (ms, eps)
        s = Sqrt (a)
        r = Div (one, s)
        n = Mul (x, r)
        y = Mul (n, w)
    }""", eps=np.array(1e-6, np.float32), two=np.array(2, np.float32),
        one=np.array(1, np.float32), w=rand(8, low=0.5))
    x = rand(5, 3, 8)
    out, report = run_pass(m, rms_norm_fusion.PASS, feeds={"x": x})
    assert [(n.domain, n.op_type) for n in out.graph.node] == [("onnxkit", "RMSNormalization")]
    ms = (x.astype(np.float64) ** 2).mean(-1, keepdims=True)  # hand-computed oracle
    y, = onnxkit.Session(out).run(None, {"x": x})
    np.testing.assert_allclose(y, x / np.sqrt(ms + 1e-6) * rand(8, low=0.5), rtol=1e-5)
