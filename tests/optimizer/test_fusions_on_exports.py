"""The convolution, product, normalization and activation fusions on graphs the real
exporters write (TorchScript tracing and dynamo) from torch's own layers: every pass the
layers call for rewrites the graph, none of the nodes it fuses is left, and the optimized
model gives onnxruntime's outputs (the reference and the cpu executor)."""

import numpy as np
import pytest

import onnxkit
from onnxkit.optimizer import optimize
from tests.optimizer._exported import check_against_ort, export, op_types, ort_outputs

EXPORTERS = ["ts", "dynamo"]


def _randomized(torch, module):
    """Random batch-norm statistics and affine parameters (eval mode), seed 0."""
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for layer in module.modules():
            if isinstance(layer, torch.nn.modules.batchnorm._BatchNorm):
                layer.running_mean.copy_(torch.randn(layer.num_features, generator=gen) * 0.1)
                layer.running_var.copy_(torch.rand(layer.num_features, generator=gen) + 0.5)
                layer.weight.copy_(torch.rand(layer.num_features, generator=gen) + 0.5)
                layer.bias.copy_(torch.randn(layer.num_features, generator=gen) * 0.1)
    return module.eval()


def _cnn(torch):
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
            self.conv = nn.Conv2d(8, 8, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(8)
            self.point = nn.Conv2d(8, 16, 1)
            self.depth = nn.Conv2d(16, 16, 3, padding=1, groups=16)
            self.scale = nn.Parameter(torch.linspace(0.8, 1.2, 16).reshape(16, 1, 1))
            self.norm = nn.BatchNorm2d(16)  # after a pooling, not a Conv: stays a BN
            self.gamma = nn.Parameter(torch.linspace(0.5, 1.5, 16).reshape(16, 1, 1))
            self.beta = nn.Parameter(torch.linspace(-0.2, 0.2, 16).reshape(16, 1, 1))
            self.head = nn.Linear(16, 12)
            self.head_norm = nn.BatchNorm1d(12)
            self.columns = nn.Parameter(torch.linspace(0.9, 1.1, 12))
            self.out = nn.Linear(12, 10)

        def forward(self, x):
            y = self.stem(x)
            y = torch.relu(self.bn(self.conv(y)) + y)  # a residual Add into the Conv
            y = self.depth(nn.functional.hardswish(self.point(y))) * self.scale  # layer scale
            y = nn.functional.relu6(y)
            y = nn.functional.max_pool2d(y, 2)
            y = torch.relu(self.norm(y) * self.gamma + self.beta)  # a layer scale on a BN
            y = self.head_norm(self.head(y.mean((2, 3)))) * self.columns
            y = nn.functional.gelu(y)
            return self.out(y)

    return _randomized(torch, Net())


#: pass -> op types none of which may be left after it. Both exporters fold a Conv's
#: BatchNormalization themselves (eval mode): conv_fold takes the layer scale
CNN_PASSES = {
    "conv_fold": (),
    "conv_add_fusion": (),
    "activation_fusion": ("Relu", "Clip", "HardSwish"),
    "batchnorm_affine": ("Mul",),
    "gemm_fold": (),  # the per-column scale (and, TorchScript, the BatchNorm1d)
    "gelu_fusion": ("Erf",),
}


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_cnn_layers_fuse_as_exported(exporter, tmp_path):
    torch = pytest.importorskip("torch")
    x = torch.randn(2, 3, 12, 12, generator=torch.Generator().manual_seed(1))
    m, feeds = export(_cnn(torch), {"x": x}, exporter, tmp_path)
    out, report = optimize(m, 2)
    kinds = op_types(out)
    for name, gone in CNN_PASSES.items():
        assert report.count(name) >= 1, (name, report.by_pass())
        assert not set(gone) & set(kinds), (name, kinds)
    assert kinds.count("BatchNormalization") == 0, kinds  # folded, or fused with its Relu
    assert kinds.count("onnxkit::FusedBatchNormalization") == 1, kinds
    assert "onnxkit::FusedGemm" in kinds or "onnxkit::FusedMatMul" in kinds, kinds
    _check(m, out, feeds)


def _mlp(torch):
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1 = nn.LayerNorm(16)
            self.up = nn.Linear(16, 32)
            self.down = nn.Linear(32, 16)
            self.norm2 = nn.LayerNorm(16)

        def forward(self, h):
            t = self.down(nn.functional.gelu(self.up(self.norm1(h)), approximate="tanh"))
            return self.norm2(h + t)

    block = Block()
    with torch.no_grad():
        for norm in (block.norm1, block.norm2):
            norm.weight.uniform_(0.5, 1.5, generator=torch.Generator().manual_seed(2))
            norm.bias.uniform_(-0.2, 0.2, generator=torch.Generator().manual_seed(3))
    return block.eval()


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_transformer_mlp_block_fuses_as_exported(exporter, tmp_path):
    """3-D Linear layers (MatMul + Add), tanh-GELU written out, the residual Add before
    LayerNormalization."""
    torch = pytest.importorskip("torch")
    h = torch.randn(1, 5, 16, generator=torch.Generator().manual_seed(4))
    m, feeds = export(_mlp(torch), {"h": h}, exporter, tmp_path)
    out, report = optimize(m, 2)
    kinds = op_types(out)
    for name in ("matmul_add_fusion", "gelu_fusion", "activation_fusion",
                 "skip_layer_norm_fusion"):
        assert report.count(name) >= 1, (name, report.by_pass())
    assert not {"Tanh", "Pow", "MatMul", "Add"} & set(kinds), kinds
    assert kinds.count("onnxkit::FusedMatMul") == 2, kinds
    _check(m, out, feeds)


def test_layer_norm_written_out_by_an_older_opset_fuses(tmp_path):
    """TorchScript at opset 14 (before LayerNormalization existed) writes nn.LayerNorm
    out as ReduceMean, Sub, Pow, Sqrt, Div: one node again after level 2."""
    torch = pytest.importorskip("torch")
    import onnx

    h = torch.randn(1, 5, 16, generator=torch.Generator().manual_seed(5))
    path = tmp_path / "ln14.onnx"
    with torch.no_grad():
        torch.onnx.export(_mlp(torch), (h,), str(path), input_names=["h"],
                          output_names=["out0"], opset_version=14, dynamo=False)
    m = onnx.load(str(path))
    assert "ReduceMean" in op_types(m)
    out, report = optimize(m, 2)
    kinds = op_types(out)
    assert report.count("layer_norm_fusion") == 2, report.by_pass()
    assert not {"ReduceMean", "Sqrt", "Pow"} & set(kinds), kinds
    _check(m, out, {"h": h.numpy()})


def _check(original, optimized, feeds):
    check_against_ort(original, optimized, feeds)
    got = onnxkit.Session(original, executor="cpu", level=3).run(None, feeds)
    for g, e in zip(got, ort_outputs(original, feeds)):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5 * float(np.abs(e).max()))
