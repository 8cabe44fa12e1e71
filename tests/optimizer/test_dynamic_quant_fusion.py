"""The MatMulInteger chains of ``onnxruntime.quantization.quantize_dynamic`` become
onnxkit.MatMulIntegerToFloat / DynamicQuantizeMatMul: on a TorchScript-exported MLP and
a tiny BERT quantized by onnxruntime, checked against onnxruntime and, bit for bit,
against the unfused model on the reference executor."""

import numpy as np
import onnx
import pytest

import onnxkit
from onnxkit.optimizer import optimize
from onnxkit.optimizer.passes import dynamic_quant_fusion
from tests.optimizer._exported import export, op_types, ort_outputs
from tests.optimizer._helpers import model, rand


def _quantized(module, inputs: dict, folder, outputs: int = 1):
    """``module`` exported by TorchScript tracing, then ``quantize_dynamic`` with 7-bit
    int8 weights (``reduce_range``): onnxruntime's u8s8 product saturates on full-range
    weights (docs/optimizer.md, "Dynamic quantization"), so it is exact only then."""
    quantization = pytest.importorskip("onnxruntime.quantization")
    m, feeds = export(module, inputs, "ts", folder, outputs)
    source, target = folder / "float.onnx", folder / "dynamic.onnx"
    onnx.save(m, str(source))
    quantization.quantize_dynamic(str(source), str(target), reduce_range=True,
                                  weight_type=quantization.QuantType.QInt8)
    return onnx.load(str(target)), feeds


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    module = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 16))
    x = torch.randn(2, 5, 32)
    return _quantized(module, {"x": x}, tmp_path_factory.mktemp("mlp"))


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    """A one-layer BERT (hidden 32, 2 heads) with random biases, so the bias Adds stay."""
    pytest.importorskip("transformers")
    from benchmarks.kinds import hf

    torch = hf._torch()
    from transformers import BertConfig, BertModel

    config = BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=16)
    bert = BertModel(config).eval()
    with torch.no_grad():
        for name, p in bert.named_parameters():
            if name.endswith("bias"):
                p.copy_(torch.randn_like(p) * 0.1)

    class Encoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask):
            return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    inputs = {"input_ids": torch.randint(0, 64, (2, 8)),
              "attention_mask": torch.ones(2, 8, dtype=torch.int64)}
    return _quantized(Encoder(), inputs, tmp_path_factory.mktemp("bert"))


def _unfused_equal(m, out, feeds):
    """The fused model gives the unfused one's outputs to the bit (reference executor)."""
    want = onnxkit.Session(m, executor="reference", level=0).run(None, feeds)
    got = onnxkit.Session(out, executor="reference", level=0).run(None, feeds)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)


def test_exported_mlp_against_onnxruntime(mlp):
    m, feeds = mlp
    out, report = optimize(m, 2)
    ops = op_types(out)
    assert ops.count("onnxkit::DynamicQuantizeMatMul") == 2
    assert not any(op in ops for op in ("MatMulInteger", "Cast", "DynamicQuantizeLinear", "Mul", "Add"))
    expected = ort_outputs(m, feeds)
    actual = onnxkit.Session(out, executor="reference").run(None, feeds)
    for e, a in zip(expected, actual):
        np.testing.assert_allclose(a, e, rtol=1e-6, atol=1e-6 * float(np.abs(e).max()))


def test_exported_mlp_fused_is_the_chain_bit_for_bit(mlp):
    m, feeds = mlp
    out, report = optimize(m, 1, passes=(dynamic_quant_fusion.PASS,))
    assert report.count("dynamic_quant_fusion") == 4  # 2 chains with bias, 2 quantizers
    _unfused_equal(m, out, feeds)


def test_exported_bert(bert):
    """Q, K and V share one quantizer (three MatMulIntegerToFloat), the other projections
    take theirs in (DynamicQuantizeMatMul); no chain is left."""
    m, feeds = bert
    out, report = optimize(m, 2)
    ops = op_types(out)
    assert ops.count("onnxkit::MatMulIntegerToFloat") == 3
    assert ops.count("onnxkit::DynamicQuantizeMatMul") == 3
    assert ops.count("DynamicQuantizeLinear") == 1
    assert "MatMulInteger" not in ops
    # the other level-2 fusions (LayerNorm, GELU) change float roundings before the
    # quantizers, which may move a value by one quantization step
    expected = ort_outputs(m, feeds)
    actual = onnxkit.Session(out, executor="reference").run(None, feeds)
    for e, a in zip(expected, actual):
        np.testing.assert_allclose(a, e, rtol=0, atol=2e-2 * float(np.abs(e).max()))
    fused, _ = optimize(m, 1, passes=(dynamic_quant_fusion.PASS,))
    _unfused_equal(m, fused, feeds)


H = '<ir_version: 8, opset_import: ["" : 17]>'
CHAIN_TEXT = """
    g (float[2,3,8] x) => (float[2,3,4] y, float[2,3,4] z) {
        xq, xs, xz = DynamicQuantizeLinear (x)
        p = MatMulInteger (xq, w, xz, wz)
        pf = Cast <to = 1> (p)
        s = Mul (xs, ws)
        y = Mul (pf, s)
        p2 = MatMulInteger (xq, w, xz, wz)
        pf2 = Cast <to = 1> (p2)
        s2 = Mul (ws, xs)
        z2 = Mul (s2, pf2)
        z = Add (z2, bias)
    }"""


def _chain_model(ws_shape=(4,)):
    rng = np.random.default_rng(0)
    return model(H + CHAIN_TEXT, w=rng.integers(-127, 128, (8, 4)).astype(np.int8),
                 wz=rng.integers(-3, 4, (4,)).astype(np.int8),
                 ws=(rng.random(ws_shape) * 0.1 + 0.01).astype(np.float32), bias=rand(4))


def test_per_column_weights_shared_quantizer_and_either_operand_order():
    m = _chain_model()
    out, report = optimize(m, 1, passes=(dynamic_quant_fusion.PASS,))
    assert op_types(out) == ["DynamicQuantizeLinear", "onnxkit::MatMulIntegerToFloat",
                             "onnxkit::MatMulIntegerToFloat"]
    feeds = {"x": rand(2, 3, 8) * 3}
    _unfused_equal(m, out, feeds)
    # and against numpy, written from the operators' definitions
    x = feeds["x"]
    lo, hi = min(0.0, x.min()), max(0.0, x.max())
    scale = np.float32((hi - lo) / np.float32(255))
    zero = np.rint(np.clip(-lo / scale, 0, 255))
    xq = np.clip(np.rint(x / scale) + zero, 0, 255)
    w = {t.name: onnx.numpy_helper.to_array(t) for t in m.graph.initializer}
    product = (xq - zero) @ (w["w"].astype(np.float64) - w["wz"])
    y, z = onnxkit.Session(out).run(None, feeds)
    np.testing.assert_array_equal(y, product.astype(np.float32) * (scale * w["ws"]))
    np.testing.assert_array_equal(z, product.astype(np.float32) * (scale * w["ws"]) + w["bias"])


def test_a_scale_of_rank_two_stays():
    m = _chain_model(ws_shape=(3, 4))
    out, report = optimize(m, 1, passes=(dynamic_quant_fusion.PASS,))
    assert report.count("dynamic_quant_fusion") == 0
    assert op_types(out).count("MatMulInteger") == 2


def test_cpu_executor_gives_the_reference_bits(mlp):
    """The cpu kernels (prepared integer product, the chain's own cpu kernels) agree with
    the reference kernels to the bit, fused and unfused."""
    m, feeds = mlp
    out, _ = optimize(m, 2)
    want = onnxkit.Session(out, executor="reference").run(None, feeds)
    for model_ in (out, m):
        got = onnxkit.Session(model_, executor="cpu").run(None, feeds)
        for w, g in zip(want, got):
            np.testing.assert_array_equal(g, w)
    chain = _chain_model()
    fused, _ = optimize(chain, 1, passes=(dynamic_quant_fusion.PASS,))
    feeds = {"x": rand(2, 3, 8) * 3}
    want = onnxkit.Session(chain, executor="reference").run(None, feeds)
    got = onnxkit.Session(fused, executor="cpu").run(None, feeds)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)
