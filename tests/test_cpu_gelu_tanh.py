"""Gelu's tanh approximation on the ``cpu`` executor: the standalone kernels (opset 20 and
onnxkit::Gelu), the fused MatMul / Gemm epilogue, and GPT-2's MLP as torch exports it.

Oracles: float64 math, written as x * sigmoid(u) (u = 2 sqrt(2/pi) (x + 0.044715 x^3);
the spec's 0.5 x (1 + tanh(u / 2)) without its cancellation, checked equal to it where that
is well conditioned), and onnxruntime's opset-20 Gelu.
"""

from __future__ import annotations

import math

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxkit
from tests.optimizer._exported import export

ort = pytest.importorskip("onnxruntime")

TINY = np.finfo(np.float32).tiny * 1e6  # below: the denormal tail, flushed to 0
ULPS = 3  # measured: 1.7 ulps of float32 at most


def _exact(x) -> np.ndarray:
    d = np.asarray(x, np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        u = 2 * math.sqrt(2 / math.pi) * (d + 0.044715 * d**3)
        y = d / (1 + np.exp(-u))
    return y


def _grid() -> np.ndarray:
    rng = np.random.default_rng(7)
    return np.concatenate([rng.standard_normal(20_000) * 4, np.linspace(-12, 12, 24_001),
                           np.linspace(-1e-3, 1e-3, 201), [1e-30, -1e-30, 5e-8, -5e-8]]
                          ).astype(np.float32)


def _assert_ulps(got, x):
    exact = _exact(x)
    big = np.abs(exact) > TINY
    ulps = np.abs(got[big] - exact[big]) / (np.abs(exact[big]) * np.finfo(np.float32).eps)
    assert ulps.max() <= ULPS, f"{ulps.max():.1f} ulps at x = {x[big][np.argmax(ulps)]!r}"
    assert np.all(np.abs(got[~big]) <= 2 * np.finfo(np.float32).tiny * 1e6)


def _gelu_model(dtype=TensorProto.FLOAT, domain="", shape=(None,)) -> onnx.ModelProto:
    node = helper.make_node("Gelu", ["x"], ["y"], approximate="tanh", domain=domain)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", dtype, shape)],
                              [helper.make_tensor_value_info("y", dtype, shape)])
    opsets = [helper.make_opsetid("", 20)] + [helper.make_opsetid("onnxkit", 1)] * bool(domain)
    return helper.make_model(graph, opset_imports=opsets, ir_version=10)


def _ort(model, feeds, level="ORT_DISABLE_ALL"):
    so = ort.SessionOptions()
    so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
    return ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"]).run(None, feeds)


def _run_traced(sess, feeds):
    """The outputs, and what each node's cpu kernel noted (``"reference"``: handed over)."""
    notes = []
    out = sess.run(None, feeds, trace=lambda ev: notes.append(
        (ev.node.op_type, (ev.extra or {}).get("algorithm"))))
    return out, notes


def test_oracle_is_the_spec_formula():
    x = np.linspace(-3, 12, 3001)
    spec = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    np.testing.assert_allclose(_exact(x), spec, rtol=1e-13, atol=0)


@pytest.mark.parametrize("domain", ["", "onnxkit"])
def test_standalone_gelu_tanh_within_a_few_ulps_of_float64(domain):
    x = _grid()
    sess = onnxkit.Session(_gelu_model(domain=domain), executor="cpu")
    (y,), notes = _run_traced(sess, {"x": x})
    assert notes == [("Gelu", None)]  # compiled: no hand-over to the reference kernel
    assert y.dtype == np.float32
    _assert_ulps(y, x)


SPECIAL = [0.0, -0.0, 1.0, -1.0, 3.0, -3.0, 5.0, -5.0, 9.0, -9.0, 10.1, -10.1, 12.0, -12.0,
           100.0, -100.0, 1e20, -1e20, np.inf, -np.inf, np.nan]


def test_special_values_match_onnxruntime():
    """Large x gives x, large negative x gives -0 (x^3 overflows float32 from 7e12 on);
    +-inf and NaN as onnxruntime: inf, NaN (-inf * 0), NaN."""
    x = np.array(SPECIAL + [3e38, -3e38, 1e-45, -1e-45], np.float32)
    (y,), notes = _run_traced(onnxkit.Session(_gelu_model(), executor="cpu"), {"x": x})
    assert notes == [("Gelu", None)]  # compiled
    want = _ort(_gelu_model(), {"x": x})[0]
    assert np.array_equal(np.isnan(y), np.isnan(want))
    big = np.abs(x) >= 10  # below -10 the result is under float32's normal range
    np.testing.assert_array_equal(y[big], want[big])  # x, or -0 (the sign too)
    assert np.array_equal(np.signbit(y[big]), np.signbit(want[big]))
    assert np.all(y[big & (x > 0)] == x[big & (x > 0)])
    np.testing.assert_array_equal(y[:2], [0.0, -0.0])
    assert np.signbit(y[1])


@pytest.mark.parametrize("oracle", ["onnxruntime", "onnx.reference"])
def test_float32_matches_onnxruntime_and_onnx_reference(oracle):
    """Both compute 0.5 x (1 + tanh(.)) in float32: off by up to about |x| 2^-23 where
    1 + tanh cancels (measured: 1.8 |x| 2^-24); elsewhere they agree with ours to a few
    ulps."""
    x = np.concatenate([_grid(), np.array(SPECIAL, np.float32)])
    (y,), notes = _run_traced(onnxkit.Session(_gelu_model(), executor="cpu"), {"x": x})
    assert notes == [("Gelu", None)]  # compiled
    if oracle == "onnxruntime":
        want = _ort(_gelu_model(), {"x": x})[0]
    else:
        from onnx.reference import ReferenceEvaluator

        with np.errstate(over="ignore", invalid="ignore"):
            want = ReferenceEvaluator(_gelu_model()).run(None, {"x": x})[0]
    assert want.dtype == np.float32
    assert np.array_equal(np.isnan(y), np.isnan(want))
    np.testing.assert_array_equal(y[np.isinf(x)], want[np.isinf(x)])
    ok = np.isfinite(x)
    bound = 4e-7 * np.abs(want[ok]) + 2**-22 * np.abs(x[ok])
    assert np.all(np.abs(y[ok] - want[ok]) <= bound)


def test_float16_matches_onnxruntime():
    """A float16 node (a declared static shape) runs the float32 kernel and rounds once
    (the cpu executor's ``half``): float64 math rounded to float16, but where float32's
    last bit decides a tie. onnxruntime too computes in float32 and rounds, from its
    cancelling formula: at most one float16 ulp away, or 2^-23 |x| near 0."""
    x = np.concatenate([np.linspace(-12, 12, 4801), SPECIAL[:16], [6e4, -6e4, np.inf, -np.inf,
                                                                   np.nan]]).astype(np.float16)
    model = _gelu_model(TensorProto.FLOAT16, shape=x.shape)
    (y,), notes = _run_traced(onnxkit.Session(model, executor="cpu"), {"x": x})
    assert notes == [("Gelu", "float32")]
    assert y.dtype == np.float16
    ok = np.isfinite(x)
    exact = _exact(x[ok]).astype(np.float16)
    assert np.count_nonzero(y[ok] != exact) <= 2
    np.testing.assert_array_equal(np.signbit(y[ok]), np.signbit(exact))
    want = _ort(model, {"x": x})[0]
    assert np.array_equal(np.isnan(y), np.isnan(want))
    np.testing.assert_array_equal(y[np.isinf(x)], want[np.isinf(x)])
    step = np.spacing(np.abs(want[ok])).astype(np.float64)
    err = np.abs(y[ok].astype(np.float64) - want[ok])
    assert np.all(err <= np.maximum(step, 2**-23 * np.abs(x[ok].astype(np.float64))))


def _fused_model() -> onnx.ModelProto:
    """y1 = Gelu_tanh(a @ I + b) and y2 = Gelu_tanh(Gemm(c, W^T, B)), weights on a grid
    of 1/8ths: with inputs on one of 1/64ths every product and sum is exact in float32,
    whatever the order, so float64 math on the exact pre-activation is the oracle."""
    rng = np.random.default_rng(5)
    n = 16
    inits = {"I": np.eye(n, dtype=np.float32),
             "b": (rng.integers(-8, 9, n) / 8).astype(np.float32),
             "W": (rng.integers(-6, 7, (12, n)) / 8).astype(np.float32),
             "B": (rng.integers(-8, 9, 12) / 8).astype(np.float32)}
    model = onnx.parser.parse_model(f"""
        <ir_version: 10, opset_import: ["" : 20]>
        g (float[2, 20, {n}] a, float[20, {n}] c) => (float y1, float y2) {{
            m = MatMul (a, I)
            s = Add (m, b)
            y1 = Gelu <approximate = "tanh"> (s)
            g = Gemm <transB = 1> (c, W, B)
            y2 = Gelu <approximate = "tanh"> (g)
        }}""")
    model.graph.initializer.extend(numpy_helper.from_array(v, k) for k, v in inits.items())
    return model


@pytest.mark.parametrize("level", [2, 3])
def test_fused_matmul_and_gemm_gelu_tanh(level):
    model = _fused_model()
    rng = np.random.default_rng(level)
    a = (rng.integers(-11 * 64, 11 * 64, (2, 20, 16)) / 64).astype(np.float32)  # a + b exact
    c = (rng.integers(-4 * 64, 4 * 64, (20, 16)) / 64).astype(np.float32)
    sess = onnxkit.Session(model, executor="cpu", level=level)
    fused = sorted((n.op_type, [a.s for a in n.attribute if a.name == "activation"])
                   for n in sess.model.graph.node)
    assert fused == [("FusedGemm", [b"GeluTanh"]), ("FusedMatMul", [b"GeluTanh"])]
    y1, y2 = sess.run(None, {"a": a, "c": c})
    w = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer}
    pre = [a + w["b"], c @ w["W"].T + w["B"]]  # exact, in float64 as in float32
    assert np.any(pre[1] < -6)  # where 1 + tanh cancels
    for y, s in zip((y1, y2), pre):
        _assert_ulps(y.reshape(-1), s.reshape(-1))
    # onnxruntime: its cancelling formula's error, as in test_float32_matches_onnxruntime
    for y, want, s in zip((y1, y2), _ort(model, {"a": a, "c": c}), pre):
        assert np.all(np.abs(y - want) <= 4e-7 * np.abs(want) + 2**-22 * np.abs(s))


# --- GPT-2's MLP, as both torch exporters write it ---------------------------------------

def _gpt2_mlp(exporter: str, tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from benchmarks.kinds.tvshim import import_torchvision

    import_torchvision()  # transformers imports it; the CPU torch lacks its operators
    import transformers
    from transformers.models.gpt2.modeling_gpt2 import GPT2MLP

    torch.manual_seed(0)
    config = transformers.GPT2Config(n_embd=32, n_layer=1, n_head=2)
    model, feeds = export(GPT2MLP(4 * 32, config), {"x": torch.randn(1, 6, 32) * 2}, exporter,
                          tmp_path)
    return model, feeds["x"]


@pytest.mark.torch
@pytest.mark.parametrize("exporter", ["ts", "dynamo"])
def test_gpt2_mlp_gelu_is_fused_and_compiled(exporter, tmp_path):
    model, x = _gpt2_mlp(exporter, tmp_path)
    assert "Tanh" in [n.op_type for n in model.graph.node]  # GELU written out
    sess = onnxkit.Session(model, executor="cpu", level=3)
    gelus = [n for n in sess.model.graph.node if any(
        a.name in ("activation", "approximate") and a.s in (b"GeluTanh", b"tanh")
        for a in n.attribute)]
    # in the product's epilogue, though the exporters put a Reshape between the two
    assert [n.op_type for n in gelus] == ["FusedGemm"], [n.op_type for n in sess.model.graph.node]
    assert not any(n.op_type in ("Tanh", "Pow") for n in sess.model.graph.node)
    (y,), notes = _run_traced(sess, {"x": x})
    assert "reference" not in [what for _, what in notes], notes
    want = _ort(model, {"x": x})[0]
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)


def _functional_mlp(exporter: str, tmp_path):
    """Linear -> F.gelu(approximate="tanh") -> Linear: TorchScript writes x * x * x and
    0.5 last, dynamo (opset 18) Pow and 0.5 first; at opset 20 dynamo writes Gelu."""
    torch = pytest.importorskip("torch")

    class Mlp(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc, self.proj = torch.nn.Linear(16, 64), torch.nn.Linear(64, 16)

        def forward(self, x):
            return self.proj(torch.nn.functional.gelu(self.fc(x), approximate="tanh"))

    torch.manual_seed(0)
    model, feeds = export(Mlp(), {"x": torch.randn(2, 5, 16) * 2}, exporter, tmp_path)
    return model, feeds["x"]


@pytest.mark.torch
@pytest.mark.parametrize("exporter", ["ts", "dynamo"])
def test_functional_gelu_tanh_fuses_into_the_matmul(exporter, tmp_path):
    model, x = _functional_mlp(exporter, tmp_path)
    assert "Tanh" in [n.op_type for n in model.graph.node]
    sess = onnxkit.Session(model, executor="cpu", level=3)
    acts = [a.s for n in sess.model.graph.node for a in n.attribute if a.name == "activation"]
    assert acts == [b"GeluTanh"], [n.op_type for n in sess.model.graph.node]
    assert not any(n.op_type in ("Tanh", "Pow", "Gelu") for n in sess.model.graph.node)
    (y,), notes = _run_traced(sess, {"x": x})
    assert "reference" not in [what for _, what in notes], notes
    np.testing.assert_allclose(y, _ort(model, {"x": x})[0], rtol=1e-5, atol=1e-6)
