"""Slices that tile one axis become one Split: RoPE's ``rotate_half`` from ``transformers``
as both exporters write it, checked against onnxruntime, and hand-written edge cases."""

import numpy as np
import pytest

import onnxkit
from onnxkit.optimizer import optimize
from onnxkit.optimizer.passes import slice_split
from tests.optimizer._exported import check_against_ort, export, op_types
from tests.optimizer._helpers import model, run_pass


def _rope():
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from benchmarks.kinds.tvshim import import_torchvision

    import_torchvision()  # transformers imports torchvision, whose ops the CPU torch lacks
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    class Rope(torch.nn.Module):
        def forward(self, q, k, cos, sin):
            return apply_rotary_pos_emb(q, k, cos, sin)

    return Rope()


@pytest.mark.parametrize("exporter", ["ts", "dynamo"])
def test_exported_rotate_half_becomes_split(exporter, tmp_path):
    torch = pytest.importorskip("torch")
    gen = torch.Generator().manual_seed(0)
    inputs = {"q": torch.randn(2, 4, 3, 16, generator=gen), "k": torch.randn(2, 2, 3, 16, generator=gen),
              "cos": torch.randn(2, 3, 16, generator=gen), "sin": torch.randn(2, 3, 16, generator=gen)}
    m, feeds = export(_rope(), inputs, exporter, tmp_path, outputs=2)
    level1, _ = optimize(m, 1)
    out, report = optimize(m, 2)
    assert op_types(level1).count("Slice") == 4
    assert report.count("slice_split") == 2
    assert op_types(out).count("Slice") == 0 and op_types(out).count("Split") == 2
    assert len(out.graph.node) == len(level1.graph.node) - 2
    check_against_ort(m, out, feeds)


H = '<ir_version: 8, opset_import: ["" : 17]>'


def test_three_pieces_with_negative_and_huge_bounds():
    m = model(H + """
    g (float[2,12] x) => (float[2,3] a, float[2,5] b, float[2,4] c) {
        a = Slice (x, z, s3, ax)
        b = Slice (x, s3, m4, ax)
        c = Slice (x, m4, big, ax)
    }""", z=np.array([0]), s3=np.array([3]), m4=np.array([-4]), big=np.array([2**63 - 1]),
        ax=np.array([1]))
    out, report = run_pass(m, slice_split.PASS)
    assert op_types(out) == ["Split"]
    assert report.count("slice_split") == 1


@pytest.mark.parametrize("second", ["Slice (x, h, e, ax, two)", "Slice (x, h3, e, ax)"])
def test_no_split_when_the_slices_do_not_tile_the_axis(second):
    m = model(H + f"""
    g (float[2,8] x) => (float[2,4] a, float[2,?] b) {{
        a = Slice (x, z, h, ax)
        b = {second}
    }}""", z=np.array([0]), h=np.array([4]), h3=np.array([5]), e=np.array([8]),
        ax=np.array([1]), two=np.array([2]))
    out, report = run_pass(m, slice_split.PASS)
    assert op_types(out) == ["Slice", "Slice"]


def test_a_symbolic_batch_axis_still_splits_the_static_one():
    m = model(H + """
    g (float[N,8] x) => (float[N,4] a, float[N,4] b) {
        a = Slice (x, z, h, ax)
        b = Slice (x, h, e, ax)
    }""", z=np.array([0]), h=np.array([4]), e=np.array([8]), ax=np.array([-1]))
    x = np.arange(24, dtype=np.float32).reshape(3, 8)
    out, report = run_pass(m, slice_split.PASS, feeds={"x": x})
    assert op_types(out) == ["Split"]
    a, b = onnxkit.Session(out).run(None, {"x": x})
    np.testing.assert_array_equal(a, x[:, :4])
    np.testing.assert_array_equal(b, x[:, 4:])
