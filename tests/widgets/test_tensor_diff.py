"""TensorView (statistics, slices, heatmap) and DiffView (node matching, counts, colours)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

import onnxkit
from onnxkit.examples import example_path
from onnxkit.widgets import DiffView, TensorView, model_diff, tensor_html
from onnxkit.widgets.tensor import colour, heatmap_svg, slice_2d, stats
from tests.widgets._models import CHAIN, classes, find_class, model, parse_svg


def test_stats_by_hand():
    x = np.array([[0.0, 1.0], [np.inf, np.nan], [-2.0, 4.0]], np.float32)
    st = stats(x)
    assert st["shape"] == (3, 2) and st["size"] == 6
    assert (st["min"], st["max"], st["zeros"], st["nan"], st["inf"]) == (-2.0, 4.0, 1, 1, 1)
    assert st["mean"] == pytest.approx(0.75)
    assert stats(np.array([True, False, True]))["mean"] == pytest.approx(2 / 3)


def test_slices_and_sampling():
    x = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    plane, spelled = slice_2d(x, (1, 2))
    np.testing.assert_array_equal(plane, x[1, 2])
    assert spelled == "[1, 2, :, :]"
    assert slice_2d(x, (9, 9))[1] == "[1, 2, :, :]"  # clamped
    assert slice_2d(np.float32(3.0).reshape(()), None)[0].shape == (1, 1)
    svg = heatmap_svg(np.arange(100 * 40, dtype=np.float64).reshape(100, 40), max_cells=32)
    root = parse_svg(svg)
    assert (root.get("data-rows"), root.get("data-cols")) == ("32", "32")
    assert len(list(root.iter("{http://www.w3.org/2000/svg}rect"))) == 32 * 32


def test_colour_scale_ends():
    assert colour(0.0) == "#440154" and colour(1.0) == "#fde725" and colour(7.0) == "#fde725"


def test_tensor_html_and_widget():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    html = tensor_html(x, "<x>", (1,))
    assert "&lt;x&gt;" in html and "<x>" not in html
    assert "slice <code>&lt;x&gt;[1, :, :]</code> (3\u00d74)" in html
    view = TensorView(x, name="x")
    assert repr(view) == "<onnxkit TensorView 'x' float32[2,3,4]>"
    assert len(view.sliders) == 1 and view.index == (0,)
    view.sliders[0].value = 1
    assert "x[1, :, :]" in view.html.value
    strings = tensor_html(np.array(["<a>", "b"], dtype=object), "s")
    assert "first values" in strings and "<a>" not in strings
    assert "empty tensor" in tensor_html(np.zeros((0, 3), np.float32))


def test_diff_matches_nodes_by_name():
    before = model(CHAIN)
    for k, node in enumerate(before.graph.node):
        node.name = f"n{k}"
    after = onnx.ModelProto()
    after.CopyFrom(before)
    del after.graph.node[3]  # Identity n3 removed
    after.graph.node[2].op_type = "Add"  # n2 replaced: Mul -> Add
    extra = onnx.helper.make_node("Relu", ["y"], ["y2"], name="new")
    after.graph.node.append(extra)
    d = model_diff(before, after)
    assert (d["removed"], d["added"], d["replaced"], d["kept"]) == (["n3"], ["new"], ["n2"], ["n0", "n1"])
    assert d["counts"] == {"before": 4, "after": 4, "removed": 1, "added": 1, "replaced": 1, "kept": 2}
    assert d["ops"]["Mul"] == (1, 0) and d["ops"]["Add"] == (1, 2)
    view = DiffView(before, after)
    assert repr(view) == "<onnxkit DiffView: 4 -> 4 nodes, 1 removed, 1 added, 1 replaced, 2 kept>"
    left, right = (parse_svg(g.svg) for g in view.graphs)
    assert [g.get("data-id") for g in find_class(left, "g", "onnxkit-removed")] == ["n3"]
    assert [g.get("data-id") for g in find_class(right, "g", "onnxkit-added")] == ["n3"]
    assert [g.get("data-id") for g in find_class(right, "g", "onnxkit-replaced")] == ["n2"]


def test_diff_of_an_optimized_squeezenet():
    optimizer = pytest.importorskip("onnxkit.optimizer")
    m = onnxkit.load(example_path("squeezenet"))
    optimized, report = optimizer.optimize(m, 2)
    d = model_diff(m, optimized)
    c = d["counts"]
    assert c["before"] == len(m.graph.node) and c["after"] == len(optimized.graph.node)
    assert c["kept"] + c["replaced"] + c["removed"] == c["before"]
    assert c["kept"] + c["replaced"] + c["added"] == c["after"]
    view = DiffView(m, optimized, report, graphs=False)
    rows = [r for r in report.to_dict()["by_pass"] if r["rewrites"]]
    for r in rows:
        assert f"<td>{r['pass']}</td><td>{r['rewrites']}</td>" in view.summary.value
    assert d["ops"]["ConstantOfShape"] == (39, 0)  # folded into initializers
    assert d["ops"]["Conv"][1] + d["ops"].get("onnxkit::FusedConv", (0, 0))[1] == 26


def test_unnamed_nodes_match_by_op_and_output():
    a = model(CHAIN)
    d = model_diff(a, a)
    assert d["kept"] == ["Relu->r", "Add->s", "Mul->y", "Identity->z"]
    assert not (d["removed"] or d["added"] or d["replaced"])
    assert "onnxkit-node" in classes(find_class(parse_svg(DiffView(a, a).graphs[0].svg), "g", "onnxkit-node")[0])
