"""PyTorch exports of real model families, run by onnxkit, compared with onnxruntime."""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
ort = pytest.importorskip("onnxruntime")

import onnxkit  # noqa: E402
from onnxkit.export.torch_export import export_module  # noqa: E402
from tests import torch_zoo  # noqa: E402

pytestmark = pytest.mark.torch
RTOL, ATOL = 1e-3, 1e-5


def _compare(model, feeds):
    expected = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    actual = onnxkit.Session(model).run(None, feeds)
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    return actual


def _seeded(module):
    torch.manual_seed(0)
    module = module()
    for m in module.modules():  # give BatchNorm non-trivial statistics
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
    return module.eval()


def test_resnet_style_cnn():
    model = export_module(_seeded(torch_zoo.TinyResNet), (torch.randn(2, 3, 32, 32),),
                          input_names=["image"])
    x = np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype(np.float32)
    _compare(model, {"image": x})


def test_transformer_encoder():
    model = export_module(_seeded(torch_zoo.TinyEncoder), (torch.randint(0, 50, (2, 12)),),
                          input_names=["tokens"])
    tokens = np.random.default_rng(1).integers(0, 50, (2, 12)).astype(np.int64)
    _compare(model, {"tokens": tokens})


def test_lstm_and_gru():
    model = export_module(_seeded(torch_zoo.TinyLSTM), (torch.randn(3, 7, 8),), input_names=["seq"])
    x = np.random.default_rng(2).standard_normal((3, 7, 8)).astype(np.float32)
    _compare(model, {"seq": x})


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_scripted_data_dependent_control_flow(sign):
    model = export_module(torch_zoo.DataDependent(), (torch.randn(4), torch.tensor(3)),
                          mode="script", input_names=["x", "steps"])
    assert {"Loop", "If"} <= {n.op_type for n in model.graph.node} | {
        n.op_type for node in model.graph.node for a in node.attribute for n in a.g.node}
    x = (sign * np.abs(np.random.default_rng(3).standard_normal(4))).astype(np.float32)
    out, = _compare(model, {"x": x, "steps": np.array(3, np.int64)})
    # and against the module itself
    want = torch_zoo.DataDependent()(torch.from_numpy(x), torch.tensor(3)).numpy()
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("family", ["TinyResNet", "TinyEncoder", "TinyLSTM"])
def test_command_line_info_and_run_on_exports(family, tmp_path, capsys):
    from onnxkit.cli import main

    module = _seeded(getattr(torch_zoo, family))
    example = {"TinyResNet": torch.randn(1, 3, 32, 32), "TinyEncoder": torch.randint(0, 50, (1, 12)),
               "TinyLSTM": torch.randn(1, 7, 8)}[family]
    model = export_module(module, (example,), input_names=["inp"])
    path = tmp_path / f"{family}.onnx"
    path.write_bytes(model.SerializeToString())
    assert main(["info", str(path)]) == 0
    info = capsys.readouterr().out
    assert f"inp: tensor({'int64' if family == 'TinyEncoder' else 'float'})" in info
    assert main(["run", str(path), "-o", str(tmp_path / "out")]) == 0
    manifest = json.loads((tmp_path / "out" / "outputs.json").read_text())
    (entry,) = manifest["outputs"]  # the manifest names the one output's file
    saved = np.load(tmp_path / "out" / entry["file"], allow_pickle=False)
    # the saved output is what onnxruntime computes on the same (seeded) random input
    from onnxkit.inputs import random_feeds
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, random_feeds(model))[0]
    np.testing.assert_allclose(saved, want, rtol=RTOL, atol=ATOL)
