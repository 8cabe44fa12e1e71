"""torch's scaled_dot_product_attention as both exporters write it, with its NaN guard
``Where (IsNaN (p), 0, p)`` after the Softmax, fuses into one Attention: on graphs
exported from torch (a boolean mask that empties whole rows, so the guard matters) and
on the transformers models of ``benchmarks.kinds``, checked against onnxruntime."""

from pathlib import Path

import numpy as np
import onnx
import pytest

import onnxkit
from onnxkit.optimizer import optimize
from tests.optimizer._exported import check_against_ort, export, op_types, ort_outputs

CACHE = Path(__file__).resolve().parents[2] / ".cache" / "kinds"


def _sdpa(torch):
    class Attention(torch.nn.Module):
        def forward(self, q, k, v, mask):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)

    return Attention()


@pytest.mark.parametrize("exporter", ["ts", "dynamo"])
def test_exported_sdpa_with_a_bool_mask_fuses(exporter, tmp_path):
    torch = pytest.importorskip("torch")
    gen = torch.Generator().manual_seed(0)
    mask = torch.rand(2, 1, 5, 9, generator=gen) > 0.4
    mask[0, 0, 2] = False  # a query that sees no key: softmax gives NaN, the guard 0
    inputs = {"q": torch.randn(2, 4, 5, 16, generator=gen),
              "k": torch.randn(2, 4, 9, 16, generator=gen),
              "v": torch.randn(2, 4, 9, 16, generator=gen), "mask": mask}
    m, feeds = export(_sdpa(torch), inputs, exporter, tmp_path)
    assert "IsNaN" in op_types(m)
    out, report = optimize(m, 2)
    kinds = op_types(out)
    assert kinds.count("onnxkit::Attention") == 1 and "IsNaN" not in kinds, kinds
    assert any("NaN->0" in r.rule for r in report.rewrites)
    check_against_ort(m, out, feeds)
    (expected,) = ort_outputs(m, feeds)
    if exporter == "ts":  # a -inf mask: the emptied row is 0, as the guard makes it (the
        assert np.all(expected[0, :, 2] == 0)  # dynamo exporter's finfo.min: uniform)
    (got,) = onnxkit.Session(m, executor="cpu", level=3).run(None, feeds)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["bert_ts", "bert_dynamo", "gpt2_past_ts", "gpt2_past_dynamo",
                                  "llama_past_ts", "llama_past_dynamo"])
def test_cached_transformers_fuse_their_attention(name):
    """One Attention per layer (two layers), no NaN guard left; onnxruntime's outputs
    (models built by ``python -m benchmarks.kinds``)."""
    path = CACHE / f"{name}.onnx"
    if not path.exists():
        pytest.skip(f"{path} not built (python -m benchmarks.kinds --models {name})")
    m = onnx.load(str(path))
    out, _ = optimize(m, 2)
    kinds = op_types(out)
    assert kinds.count("onnxkit::Attention") == 2 and "IsNaN" not in kinds, kinds
    check_against_ort(m, out, dict(np.load(CACHE / f"{name}.npz")))


def test_cached_llama_dynamo_reads_its_kv_heads_in_place():
    """The dynamo exporter repeats Llama's 2 key/value heads for its 4 query heads
    (Unsqueeze, Expand, Reshape, and two Transposes for K^T): the Attention reads the
    present keys and values themselves, grouped-query, and gives onnxruntime's outputs
    on the reference and the cpu executor."""
    name = "llama_past_dynamo"
    path = CACHE / f"{name}.onnx"
    if not path.exists():
        pytest.skip(f"{path} not built (python -m benchmarks.kinds --models {name})")
    m = onnx.load(str(path))
    feeds = dict(np.load(CACHE / f"{name}.npz"))
    out, report = optimize(m, 2)
    kinds = op_types(out)
    assert "Expand" not in kinds and "Unsqueeze" not in kinds, kinds
    assert report.count("attention_fusion") >= 4  # two layers: SDPA, then the repeats
    attention = [n for n in out.graph.node if n.op_type == "Attention"]
    assert [list(n.input[1:3]) for n in attention] == [["present_k0", "present_v0"],
                                                       ["present_k1", "present_v1"]]
    check_against_ort(m, out, feeds)
    got = onnxkit.Session(m, executor="cpu", level=3).run(None, feeds)
    for g, e in zip(got, ort_outputs(m, feeds)):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5 * float(np.abs(e).max()))
