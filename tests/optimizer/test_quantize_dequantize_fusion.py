"""QuantizeLinear -> DequantizeLinear pairs become onnxkit.QuantizeDequantize: on a small
residual CNN exported by TorchScript and quantized by onnxruntime's quantize_static (QDQ),
bit for bit against the unfused model, and on a pair against onnxruntime exactly."""

import numpy as np
import onnx
import pytest

import onnxkit
from onnxkit.optimizer import optimize
from onnxkit.optimizer.passes import quantize_dequantize_fusion
from tests.optimizer._exported import export, op_types, ort_outputs
from tests.optimizer._helpers import model

H = '<ir_version: 8, opset_import: ["" : 17]>'


@pytest.fixture(scope="module")
def qdq_cnn(tmp_path_factory):
    torch = pytest.importorskip("torch")
    quantization = pytest.importorskip("onnxruntime.quantization")
    torch.manual_seed(0)

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.conv = torch.nn.Conv2d(8, 8, 3, padding=1)
            self.head = torch.nn.Linear(8, 4)

        def forward(self, x):
            h = torch.relu(self.stem(x))
            h = torch.relu(self.conv(h) + h)
            return self.head(h.mean((2, 3)))

    folder = tmp_path_factory.mktemp("qdq")
    x = torch.randn(1, 3, 12, 12)
    m, feeds = export(Block(), {"x": x}, "ts", folder)
    onnx.save(m, str(folder / "float.onnx"))

    class Images(quantization.CalibrationDataReader):
        def __init__(self):
            rng = np.random.default_rng(1)
            self.batches = iter([{"x": rng.standard_normal((1, 3, 12, 12), np.float32)}
                                 for _ in range(4)])

        def get_next(self):
            return next(self.batches, None)

    quantization.quantize_static(str(folder / "float.onnx"), str(folder / "qdq.onnx"), Images(),
                                 quant_format=quantization.QuantFormat.QDQ,
                                 activation_type=quantization.QuantType.QUInt8,
                                 weight_type=quantization.QuantType.QInt8)
    return onnx.load(str(folder / "qdq.onnx")), feeds


def test_exported_qdq_cnn(qdq_cnn):
    m, feeds = qdq_cnn
    quantizers = op_types(m).count("QuantizeLinear")
    out, report = optimize(m, 2)
    ops = op_types(out)
    assert "QuantizeLinear" not in ops  # each activation's pair is one node now
    assert ops.count("onnxkit::QuantizeDequantize") == quantizers
    level1, _ = optimize(m, 1)
    assert len(out.graph.node) < len(level1.graph.node) - quantizers + 1
    # level 2 gives level 1's outputs to the bit (the other fusions here change no rounding
    # that a quantizer would see), and onnxruntime's within one quantization step
    want = onnxkit.Session(level1, executor="reference").run(None, feeds)
    got = onnxkit.Session(out, executor="reference").run(None, feeds)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)
    for e, g in zip(ort_outputs(m, feeds), got):
        np.testing.assert_allclose(g, e, rtol=0, atol=2e-2 * float(np.abs(e).max()))


def test_exported_qdq_cnn_fused_is_the_pairs_bit_for_bit(qdq_cnn):
    m, feeds = qdq_cnn
    out, report = optimize(m, 1, passes=(quantize_dequantize_fusion.PASS,))
    assert report.count("quantize_dequantize_fusion") == op_types(m).count("QuantizeLinear")
    want = onnxkit.Session(m, executor="reference").run(None, feeds)
    got = onnxkit.Session(out, executor="reference").run(None, feeds)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("executor", ["reference", "cpu"])
@pytest.mark.parametrize("zero", [np.array(128, np.uint8), np.array(-3, np.int8)])
def test_pair_against_onnxruntime(zero, executor):
    m = model(H + """
    g (float[2,8,6,6] x) => (float[2,8,6,6] y) {
        q = QuantizeLinear (x, s, z)
        y = DequantizeLinear (q, s, z)
    }""", s=np.array(0.0371, np.float32), z=zero)
    out, _ = optimize(m, 2)
    assert op_types(out) == ["onnxkit::QuantizeDequantize"]
    x = (np.random.default_rng(0).standard_normal((2, 8, 6, 6)) * 4).astype(np.float32)
    x.flat[:4] = [0.0371 * 2.5, -0.0371 * 1.5, 1e6, -1e6]  # ties to even, saturation
    got, = onnxkit.Session(out, executor=executor).run(None, {"x": x})
    want, = ort_outputs(m, {"x": x})
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("body, initializers", [
    ("q = QuantizeLinear <axis = 1> (x, sv, z8)\n y = DequantizeLinear <axis = 1> (q, sv, z8)",
     "per-axis"),
    ("q = QuantizeLinear (x, s, z)\n y = DequantizeLinear (q, s, z)\n k = Identity (q)",
     "q read twice"),
])
def test_stays(body, initializers):
    m = model(H + """
    g (float[2,8,6,6] x) => (float[2,8,6,6] y) {
        """ + body + """
    }""", s=np.array(0.5, np.float32), z=np.array(0, np.uint8),
        sv=np.full(8, 0.5, np.float32), z8=np.zeros(8, np.uint8))
    out, report = optimize(m, 1, passes=(quantize_dequantize_fusion.PASS,))
    assert report.count("quantize_dequantize_fusion") == 0
    assert "QuantizeLinear" in op_types(out)
