"""Big graphs: repeated blocks folded, search, and the static SVG in the display bundle."""

from __future__ import annotations

import base64
import struct
import sys

import pytest
import onnx
import numpy as np
from onnx import TensorProto, helper, numpy_helper

from onnxkit.widgets import GraphWidget
from onnxkit.widgets.raster import RasterError
from onnxkit.widgets.repeats import structural_scopes
from tests.widgets._big import UNIT_NODES, dynamo_style, layered_model
from tests.widgets._models import CHAIN, find_class, hostile_model, parse_svg

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def bundle(w: GraphWidget) -> dict:
    data, _meta = w._repr_mimebundle_()
    return data


def test_display_carries_the_drawing_as_static_svg():
    w = GraphWidget(CHAIN)
    data = bundle(w)
    assert data["text/plain"] == repr(w) and data[WIDGET_VIEW]["model_id"] == w.model_id
    root = parse_svg(data["image/svg+xml"])
    assert len(find_class(root, "g", "onnxkit-node")) == 4  # Relu, Add, Mul, Identity
    # the same model gives the same bytes (saved notebooks compare equal under nbval)
    assert bundle(GraphWidget(CHAIN))["image/svg+xml"] == data["image/svg+xml"]


def test_png_beside_the_svg_when_asked():
    pytest.importorskip("resvg_py", reason="resvg-py is not installed (the 'test' extra)")
    w = GraphWidget(CHAIN, png=True)
    data = bundle(w)
    png = base64.b64decode(data["image/png"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
    width, height = struct.unpack(">II", png[16:24])
    root = parse_svg(data["image/svg+xml"])  # the PNG has the drawing's own size
    assert (width, height) == (round(float(root.get("width"))), round(float(root.get("height"))))
    assert "image/png" not in bundle(GraphWidget(CHAIN))


def test_png_without_resvg_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "resvg_py", None)  # as if not installed
    with pytest.raises(RasterError, match="resvg-py"):
        bundle(GraphWidget(CHAIN, png=True))


def test_static_svg_escapes_model_strings():
    svg = bundle(GraphWidget(hostile_model()))["image/svg+xml"]
    parse_svg(svg)  # well-formed: nothing from the model closed a tag
    assert "<script" not in svg and "<img" not in svg
    assert "&lt;script&gt;" in svg


def test_layers_fold_into_one_box_each():
    layers, units = 12, 66
    m = layered_model(layers, units)
    assert len(m.graph.node) == layers * (1 + UNIT_NODES * units) + 1 == 3973
    w = GraphWidget(m)  # more than FOLD_ABOVE nodes: folded from the start
    root = parse_svg(w.svg)
    blocks = find_class(root, "g", "onnxkit-block")
    assert [b.get("data-id") for b in blocks] == [f"block:layers/layers.{i}" for i in range(layers)]
    assert {b.get("data-members") for b in blocks} == {str(1 + UNIT_NODES * units)}
    assert [g.get("data-op") for g in find_class(root, "g", "onnxkit-node")] == ["Softmax"]
    # x -> layer 0 -> ... -> layer 11 -> Softmax -> y: one edge per hop
    assert len(find_class(root, "path", "onnxkit-edge")) == layers + 2
    labels = [t.text for t in find_class(root, "text", "onnxkit-unfold")]
    assert labels == ["+ unfold"] * layers


def test_unfold_shows_the_blocks_inside_then_every_node():
    layers, units = 3, 4
    w = GraphWidget(layered_model(layers, units), fold=True)
    w.unfold("layers.1")
    root = parse_svg(w.svg)
    ids = [b.get("data-id") for b in find_class(root, "g", "onnxkit-block")]
    assert ids == (["block:layers/layers.0"] + [f"block:layers/layers.1/mlp.{k}" for k in range(units)]
                   + ["block:layers/layers.2"])
    assert sorted(g.get("data-op") for g in find_class(root, "g", "onnxkit-node")) == [
        "LayerNormalization", "Softmax"]
    w.unfold()
    root = parse_svg(w.svg)
    assert not find_class(root, "g", "onnxkit-block")
    assert len(find_class(root, "g", "onnxkit-node")) == layers * (1 + UNIT_NODES * units) + 1
    w.fold("layers.2")
    assert [b.get("data-id") for b in find_class(parse_svg(w.svg), "g", "onnxkit-block")] == [
        "block:layers/layers.2"]
    w.fold()
    assert len(find_class(parse_svg(w.svg), "g", "onnxkit-block")) == layers


def test_search_finds_folded_nodes_and_marks_their_blocks():
    layers, units = 3, 4
    m = layered_model(layers, units)
    w = GraphWidget(m, fold=True)
    names = w.search("relu")  # op types and names, any case
    assert names == [n.name for n in m.graph.node if n.op_type == "Relu"]
    assert w.match_count == layers * units
    assert w.matches == [f"block:layers/layers.{i}" for i in range(layers)]
    assert w.search("layers.2/mlp.3/") == [f"/layers/layers.2/mlp.3/{op}" for op in
                                           ("Constant", "MatMul", "Relu", "Mul", "Add")]
    assert w.matches == ["block:layers/layers.2"]
    w.unfold("layers.2")  # the marks follow the redraw
    assert w.matches == ["block:layers/layers.2/mlp.3"]
    assert w.search("no such op") == [] and w.matches == [] and w.match_count == 0


def test_one_edge_between_blocks_whatever_values_they_pass():
    # three blocks, each passing two values (p, q) to the next: Add(p, q) -> Relu, Neg
    nodes, p, q = [], "x", "y"
    for i in range(3):
        s = f"/layers/layers.{i}"
        nodes += [helper.make_node("Add", [p, q], [f"{s}/t"], name=f"{s}/Add"),
                  helper.make_node("Relu", [f"{s}/t"], [f"{s}/p"], name=f"{s}/Relu"),
                  helper.make_node("Neg", [f"{s}/t"], [f"{s}/q"], name=f"{s}/Neg")]
        p, q = f"{s}/p", f"{s}/q"
    vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in ("x", "y", p, q)]
    m = helper.make_model(helper.make_graph(nodes, "pairs", vi[:2], vi[2:]),
                          opset_imports=[helper.make_opsetid("", 18)])
    root = parse_svg(GraphWidget(m, fold=True).svg)
    assert len(find_class(root, "g", "onnxkit-block")) == 3
    # x and y into block 0, one edge per block pair, two from block 2 to the two outputs
    assert len(find_class(root, "path", "onnxkit-edge")) == 2 + 2 + 2
    unfolded = parse_svg(GraphWidget(m, fold=False).svg)
    # x, y; t to Relu and Neg in each layer; p, q to the next layer; the two outputs
    assert len(find_class(unfolded, "path", "onnxkit-edge")) == 2 + 3 * 2 + 2 * 2 + 2


def test_shared_constants_hidden_and_shape_only_edges_light():
    # a Constant read by every layer; layer i reshapes with the shape layer i-2 computed
    c = numpy_helper.from_array(np.array(1.0, np.float32))
    nodes = [helper.make_node("Constant", [], ["c"], name="Constant_shared", value=c),
             helper.make_node("Shape", ["x"], ["s_in"], name="Shape_in")]
    p, shapes = "x", ["s_in", "s_in"]
    for i in range(3):
        s = f"/layers/layers.{i}"
        nodes += [helper.make_node("Add", [p, "c"], [f"{s}/t"], name=f"{s}/Add"),
                  helper.make_node("Relu", [f"{s}/t"], [f"{s}/r"], name=f"{s}/Relu"),
                  helper.make_node("Reshape", [f"{s}/r", shapes[i]], [f"{s}/p"], name=f"{s}/Reshape"),
                  helper.make_node("Shape", [f"{s}/r"], [f"{s}/s"], name=f"{s}/Shape")]
        p = f"{s}/p"
        shapes.append(f"{s}/s")
    vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in ("x", p)]
    m = helper.make_model(helper.make_graph(nodes, "shapes", vi[:1], vi[1:]),
                          opset_imports=[helper.make_opsetid("", 18)])
    root = parse_svg(GraphWidget(m, fold=True).svg)
    assert len(find_class(root, "g", "onnxkit-block")) == 3
    assert [g.get("data-op") for g in find_class(root, "g", "onnxkit-node")] == ["Shape"]  # no Constant
    edges = find_class(root, "path", "onnxkit-edge")
    # x -> layer 0, x -> Shape_in -> layers 0 and 1, layer 0 -> 1 -> 2, layer 0 -> 2 (a shape), -> y
    assert len(edges) == 8
    faint = [e for e in edges if "onnxkit-faint" in e.get("class").split()]
    assert len(faint) == 1


def test_small_graphs_start_unfolded_and_nameless_graphs_have_no_blocks():
    w = GraphWidget(layered_model(2, 2))
    assert len(w.blocks) == 2 + 4  # two layers, two units in each
    assert not find_class(parse_svg(w.svg), "g", "onnxkit-block")
    w.fold("layers.0")
    assert len(find_class(parse_svg(w.svg), "g", "onnxkit-block")) == 1
    plain = GraphWidget(CHAIN, fold=True)
    assert plain.blocks == [] and not find_class(parse_svg(plain.svg), "g", "onnxkit-block")


def test_scopes_from_the_dynamo_exporters_metadata():
    m = dynamo_style(layered_model(3, 2))
    assert m.graph.node[1].name == "node_Constant_1"
    w = GraphWidget(m, fold=True)
    root = parse_svg(w.svg)
    assert [b.get("data-id") for b in find_class(root, "g", "onnxkit-block")] == [
        f"block:layers/layers.{i}" for i in range(3)]
    w.unfold("layers.1")
    ids = [b.get("data-id") for b in find_class(parse_svg(w.svg), "g", "onnxkit-block")]
    assert ids[1:3] == ["block:layers/layers.1/layers.1.mlp.0", "block:layers/layers.1/layers.1.mlp.1"]


def test_repeated_op_sequences_give_scopes_to_nameless_graphs():
    labels = list("LABCABCLABCABCX")  # two layers of two units, then a head
    scopes = structural_scopes(labels, [f"n{i}" for i in range(len(labels))])
    assert scopes["n0"] == ["run0.0"] and scopes["n7"] == ["run0.1"] and "n14" not in scopes
    assert scopes["n1"] == scopes["n3"] == ["run0.0", "run0.0/run0.0"]
    assert scopes["n4"] == scopes["n6"] == ["run0.0", "run0.0/run0.1"]
    assert scopes["n13"] == ["run0.1", "run0.1/run0.1"]
    assert structural_scopes(list("ABCDEFG"), list("abcdefg")) == {}


def test_a_nameless_big_graph_folds_by_structure():
    m = layered_model(12, 66)
    for node in m.graph.node:
        node.name = ""
    w = GraphWidget(m)
    root = parse_svg(w.svg)
    blocks = find_class(root, "g", "onnxkit-block")
    assert len(blocks) == 12 and {b.get("data-members") for b in blocks} == {str(1 + UNIT_NODES * 66)}
    assert [g.get("data-op") for g in find_class(root, "g", "onnxkit-node")] == ["Softmax"]
    w.unfold(blocks[3].get("data-id"))
    root = parse_svg(w.svg)
    assert len(find_class(root, "g", "onnxkit-block")) == 11 + 66
    assert sorted(g.get("data-op") for g in find_class(root, "g", "onnxkit-node")) == [
        "LayerNormalization", "Softmax"]


def test_a_first_layer_exported_differently_is_still_a_block():
    m = layered_model(3, 2)
    # layer 0 also computes a shape it never uses (exporters leave such nodes behind)
    extra = helper.make_node("Shape", ["x"], ["/layers/layers.0/shape"], name="/layers/layers.0/Shape")
    m.graph.node.insert(0, extra)
    w = GraphWidget(m, fold=True)
    outer = [b for b in w.blocks if b.parent == "layers"]
    assert [b.name for b in outer] == ["layers.0", "layers.1", "layers.2"]
    assert outer[0].signature != outer[1].signature and outer[1].signature == outer[2].signature
    assert all(b.alike == 3 for b in outer)


def test_hostile_scope_names_are_escaped_in_blocks():
    evil = '<b onmouseover=alert(1)>"'  # no "/": that splits scopes
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    nodes, prev = [], "x"
    for i in range(2):
        for op in ("Relu", "Neg", "Abs"):
            out = f"v{i}{op}"
            nodes.append(helper.make_node(op, [prev], [out], name=f"/{evil}/{evil}.{i}/{op}"))
            prev = out
    g = helper.make_graph(nodes, "g", [x], [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [2])])
    w = GraphWidget(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), fold=True)
    assert len(w.blocks) == 2
    svg = bundle(w)["image/svg+xml"]
    root = parse_svg(svg)
    assert [t.text for t in find_class(root, "text", "onnxkit-op")] == [f"{evil}.0", f"{evil}.1"]
    assert "<b " not in svg
    w.select(w.blocks[0].id)
    assert "<b " not in w.details_html() and "&lt;b onmouseover" in w.details_html()


def test_lazy_details_for_big_graphs():
    m = layered_model(12, 66)
    w = GraphWidget(m)
    last = len(m.graph.node) - 1
    w.select(f"n{last}")
    assert "Softmax" in w.details_html()
    assert list(w.details) == [f"n{last}"]  # only the panel asked for was made
    onnx.checker.check_model(m)
