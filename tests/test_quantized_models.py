"""Quantized PyTorch models: onnxkit must reproduce onnxruntime's integer arithmetic.

A small MLP and a small CNN are exported with ``torch.onnx.export(..., dynamo=False)``,
then quantized by onnxruntime's tools:

- ``quantize_dynamic``: DynamicQuantizeLinear + MatMulInteger / ConvInteger;
- ``quantize_static`` (QDQ): QuantizeLinear / DequantizeLinear around float ops;
- ``quantize_static`` (QOperator, MatMul and Conv only): QLinearMatMul / QLinearConv.

Every integer tensor the quantized operators produce is made a graph output and must
equal onnxruntime's exactly; the float outputs must agree within rtol 1e-5 / atol 1e-6.
"""

from __future__ import annotations

import warnings

import numpy as np
import onnx
import pytest

torch = pytest.importorskip("torch")
ort = pytest.importorskip("onnxruntime")
quantization = pytest.importorskip("onnxruntime.quantization")

import onnxkit  # noqa: E402

pytestmark = pytest.mark.torch

RTOL, ATOL = 1e-5, 1e-6
QUANTIZED_OPS = {"DynamicQuantizeLinear", "MatMulInteger", "ConvInteger", "QuantizeLinear",
                 "QLinearMatMul", "QLinearConv"}


class TinyMLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = torch.nn.Linear(16, 32)
        self.out = torch.nn.Linear(32, 8)

    def forward(self, x):
        return self.out(torch.relu(self.hidden(x)))


class TinyCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(8, 8, 3, stride=2, groups=2)
        self.fc = torch.nn.Linear(8 * 6 * 6, 5)

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        x = torch.relu(self.conv2(x))
        return self.fc(torch.flatten(x, 1))


# name -> (module, input shape); the 3-D MLP input makes torch export MatMul + Add
MODELS = {
    "mlp": (TinyMLP, (4, 16)),
    "mlp_3d": (TinyMLP, (2, 5, 16)),
    "cnn": (TinyCNN, (2, 3, 14, 14)),
}


@pytest.fixture(scope="module")
def float_models(tmp_path_factory):
    """Export each float model once: name -> path."""
    folder = tmp_path_factory.mktemp("float_models")
    paths = {}
    for name, (module, shape) in MODELS.items():
        torch.manual_seed(0)
        path = str(folder / f"{name}.onnx")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(module().eval(), (torch.randn(*shape),), path, input_names=["x"],
                              output_names=["y"], dynamic_axes={"x": {0: "batch"}},
                              opset_version=17, dynamo=False)
        paths[name] = path
    return paths


class _Calibration(quantization.CalibrationDataReader):
    def __init__(self, shape):
        rng = np.random.default_rng(1)
        self._feeds = iter([{"x": rng.standard_normal(shape).astype(np.float32)}
                            for _ in range(4)])

    def get_next(self):
        return next(self._feeds, None)


def quantize(float_path: str, out_path: str, method: str, per_channel: bool, shape):
    """``reduce_range``: weights in 7 bits. onnxruntime's uint8 x int8 kernels for AVX2
    without VNNI add pairs of products in int16 and saturate (its quantization docs say
    so); on such a CPU (the EPYC of 2026-11-27) its MatMulInteger then differed from the
    exact integer product that onnxkit and onnx.reference compute. With 7-bit weights a
    pair fits in int16 and onnxruntime is exact on every CPU."""
    q = quantization
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method.startswith("dynamic"):
            weight = q.QuantType.QInt8 if method == "dynamic_int8" else q.QuantType.QUInt8
            q.quantize_dynamic(float_path, out_path, weight_type=weight, per_channel=per_channel,
                               reduce_range=True)
        else:
            fmt = q.QuantFormat.QDQ if method == "static_qdq" else q.QuantFormat.QOperator
            extra = {} if method == "static_qdq" else {"op_types_to_quantize": ["MatMul", "Conv"]}
            q.quantize_static(float_path, out_path, _Calibration(shape), quant_format=fmt,
                              per_channel=per_channel, activation_type=q.QuantType.QUInt8,
                              weight_type=q.QuantType.QInt8, reduce_range=True, **extra)
    return onnx.load(out_path)


def expose_integer_tensors(model: onnx.ModelProto) -> tuple[onnx.ModelProto, list[str]]:
    """Add the outputs of the quantized operators as graph outputs (typed by inference)."""
    inferred = onnx.shape_inference.infer_shapes(model)
    known = {vi.name: vi for vi in inferred.graph.value_info}
    present = {o.name for o in model.graph.output}
    names = []
    for node in model.graph.node:
        if node.op_type not in QUANTIZED_OPS:
            continue
        for name in node.output:
            if name and name in known and name not in present:
                model.graph.output.append(known[name])
                present.add(name)
                names.append(name)
    return model, names


METHODS = ("dynamic_int8", "dynamic_uint8", "static_qdq", "static_qoperator")
# QOperator turns a Gemm into com.microsoft::QGemm (not ONNX): the 2-D MLP is left out
CASES = [(name, method) for name in sorted(MODELS) for method in METHODS
         if (name, method) != ("mlp", "static_qoperator")]


@pytest.mark.parametrize("per_channel", [False, True], ids=["per_tensor", "per_channel"])
@pytest.mark.parametrize("name,method", CASES)
def test_quantized_model_matches_onnxruntime(float_models, tmp_path, name, method, per_channel):
    shape = MODELS[name][1]
    model = quantize(float_models[name], str(tmp_path / "quantized.onnx"), method, per_channel,
                     shape)
    used = {n.op_type for n in model.graph.node}
    assert used & QUANTIZED_OPS, f"{method} quantized nothing: {sorted(used)}"
    model, integer_names = expose_integer_tensors(model)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    expected = ort.InferenceSession(model.SerializeToString(),
                                    providers=["CPUExecutionProvider"]).run(None, {"x": x})
    got = onnxkit.Session(model).run(None, {"x": x})
    names = [o.name for o in model.graph.output]
    checked_integers = 0
    for out_name, g, e in zip(names, got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape, (out_name, g.dtype, e.dtype)
        if e.dtype.kind in "iu":
            np.testing.assert_array_equal(g, e, err_msg=f"integer tensor {out_name!r}")
            checked_integers += 1
        else:
            np.testing.assert_allclose(g, e, rtol=RTOL, atol=ATOL, err_msg=out_name)
    assert checked_integers >= 1, f"no integer tensor among {integer_names}"


def test_dynamic_quantization_stays_close_to_float(float_models, tmp_path):
    """Sanity: quantized and float MLP agree to a quantization step or so."""
    shape = MODELS["mlp"][1]
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    float_y = onnxkit.Session(float_models["mlp"]).run(None, {"x": x})[0]
    model = quantize(float_models["mlp"], str(tmp_path / "q.onnx"), "dynamic_int8", False, shape)
    quant_y = onnxkit.Session(model).run(None, {"x": x})[0]
    assert np.abs(quant_y - float_y).max() < 0.05 * np.abs(float_y).max() + 0.05
