"""The graph viewer: SVG structure, escaping, determinism, subgraphs, details, layout."""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest

import onnxkit
from onnxkit.examples import example_path
from onnxkit.widgets import GraphWidget, TraceRecorder, show
from onnxkit.widgets.graphdata import model_graph_data
from onnxkit.widgets.layout import layered_layout
from onnxkit.widgets.svg import DrawOptions, render_svg
from tests.widgets._models import (CHAIN, CHAIN_EDGES, CHAIN_NODES, WITH_IF, classes,
                                   edges_at_depth0, find_class, hostile_model, model, parse_svg)


def expected_edges(m: onnx.ModelProto) -> int:
    """One edge per distinct (value, reader), initializers drawn inside their reader."""
    g = m.graph
    inits = {t.name for t in g.initializer}
    pairs = {(name, k) for k, n in enumerate(g.node) for name in n.input if name and name not in inits}
    return len(pairs) + len(g.output)


def test_chain_counts_match_the_model():
    w = GraphWidget(CHAIN)
    root = parse_svg(w.svg)
    assert "onnxkit-graph" in classes(root)
    assert len(find_class(root, "g", "onnxkit-node")) == CHAIN_NODES
    assert len(find_class(root, "path", "onnxkit-edge")) == CHAIN_EDGES
    assert root.get("data-nodes") == str(CHAIN_NODES) and root.get("data-edges") == str(CHAIN_EDGES)
    values = find_class(root, "g", "onnxkit-value")
    kinds = sorted(c for v in values for c in classes(v) if c != "onnxkit-value")
    assert kinds == ["onnxkit-input", "onnxkit-input", "onnxkit-output", "onnxkit-output"]
    assert repr(w) == "<onnxkit GraphWidget 'chain': 4 nodes, 7 edges>"


def test_squeezenet_counts_match_the_model():
    m = onnxkit.load(example_path("squeezenet"))
    root = parse_svg(GraphWidget(m).svg)
    assert len(find_class(root, "g", "onnxkit-node")) == len(m.graph.node) == 105
    assert len(find_class(root, "path", "onnxkit-edge")) == expected_edges(m)
    ops = sorted(g.get("data-op") for g in find_class(root, "g", "onnxkit-node"))
    assert ops == sorted(n.op_type for n in m.graph.node)


def test_initializers_inline_or_as_boxes():
    m = model(CHAIN.replace("float[3] b)", "float[3] b_unused)").replace("Add(r, b)", "Add(r, w)"),
              w=np.ones(3, np.float32))
    inline = parse_svg(GraphWidget(m).svg)
    assert not find_class(inline, "g", "onnxkit-initializer")
    params = [t.text for t in find_class(inline, "text", "onnxkit-param")]
    assert params == ["w float[3]"]
    boxes = parse_svg(GraphWidget(m, inline_initializers=False).svg)
    assert len(find_class(boxes, "g", "onnxkit-initializer")) == 1
    assert len(find_class(boxes, "path", "onnxkit-edge")) == len(find_class(inline, "path", "onnxkit-edge")) + 1


def test_ir3_initializers_listed_as_inputs_are_not_inputs():
    m = onnxkit.load(example_path("squeezenet"))
    assert m.ir_version == 3 and len(m.graph.input) > 1
    root = parse_svg(GraphWidget(m).svg)
    inputs = find_class(root, "g", "onnxkit-input")
    assert [g.get("data-id") for g in inputs] == ["in:data_0"]


def test_edges_carry_inferred_shapes():
    root = parse_svg(GraphWidget(CHAIN).svg)
    labels = {t.text for t in find_class(root, "text", "onnxkit-edge-label")}
    assert labels == {"float[2,3]", "float[3]"}  # b is float[3], every other value float[2,3]
    titles = {g.find("{http://www.w3.org/2000/svg}title").text
              for g in find_class(root, "g", "onnxkit-edge-group")}
    assert "b: float[3]" in titles and "s: float[2,3]" in titles


def test_hostile_strings_are_escaped():
    w = GraphWidget(hostile_model())
    assert "<script>" not in w.svg and "<img" not in w.svg
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in w.svg
    root = parse_svg(w.svg)  # still well-formed XML
    assert len(find_class(root, "g", "onnxkit-node")) == 2
    for panel in w.details.values():
        assert "<script>" not in panel and "<img" not in panel
    w.select("ok")
    assert "&lt;script&gt;" in w.details_html()  # the attribute value, escaped
    node_id = w.node_id("<script>alert(1)</script>")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in w.details[node_id]  # name and doc string


def test_control_characters_do_not_break_the_svg():
    m = model(CHAIN)
    m.graph.node[0].name = "bad\x00name\x1b"
    parse_svg(GraphWidget(m).svg)


def test_layout_is_deterministic():
    m = onnxkit.load(example_path("squeezenet"))
    assert GraphWidget(m).svg == GraphWidget(onnxkit.load(example_path("squeezenet"))).svg
    gd = model_graph_data(model(WITH_IF))
    a = render_svg(gd, DrawOptions(expanded=frozenset({"*"})))
    b = render_svg(model_graph_data(model(WITH_IF)), DrawOptions(expanded=frozenset({"*"})))
    assert a == b


def test_layout_keeps_boxes_apart_and_edges_downward():
    m = onnxkit.load(example_path("squeezenet"))
    gd = model_graph_data(m)
    sizes = [(b.id, 80.0, 30.0) for b in gd.boxes]
    lay = layered_layout(sizes, [(e.source, e.target) for e in gd.edges])
    rows: dict[float, list] = {}
    for box_id, (x, y) in lay.positions.items():
        rows.setdefault(y, []).append(x)
    for xs in rows.values():
        xs.sort()
        assert all(b - a >= 80.0 for a, b in zip(xs, xs[1:]))
    for e, route in zip(gd.edges, lay.routes):
        assert lay.positions[e.source][1] < lay.positions[e.target][1]
        assert all(p[1] <= q[1] for p, q in zip(route, route[1:]))


def test_layout_survives_a_cycle():
    lay = layered_layout([("a", 10, 10), ("b", 10, 10), ("c", 10, 10)],
                         [("a", "b"), ("b", "c"), ("c", "a")])
    assert set(lay.positions) == {"a", "b", "c"} and len(lay.routes) == 3


def test_subgraphs_fold_and_expand():
    w = GraphWidget(WITH_IF)
    root = parse_svg(w.svg)
    assert len(find_class(root, "g", "onnxkit-node")) == 2
    assert len(find_class(root, "g", "onnxkit-subgraph")) == 0
    expander = find_class(root, "text", "onnxkit-expander")
    assert [e.text for e in expander] == ["+ then_branch, else_branch"]
    # t is read inside both branches: an implicit (dashed) edge t -> If
    assert len([p for p in find_class(root, "path", "onnxkit-edge") if "onnxkit-implicit" in classes(p)]) == 1

    w.expand("n1")  # what clicking the expander does, through the synced trait
    root = parse_svg(w.svg)
    subs = find_class(root, "g", "onnxkit-subgraph")
    assert [s.get("data-attr") for s in subs] == ["then_branch", "else_branch"]
    assert len(find_class(root, "g", "onnxkit-node", depth=0)) == 2
    assert len(find_class(root, "g", "onnxkit-node", depth=1)) == 3  # Neg; Abs, Sigmoid
    assert len(find_class(root, "g", "onnxkit-outer")) == 2  # t, seen from each branch
    assert len(edges_at_depth0(root)) == 4  # x->Relu, c->If, t->If (implicit), If->y
    # then: t->Neg, Neg->a; else: t->Abs, Abs->Sigmoid, Sigmoid->b
    assert len(find_class(root, "path", "onnxkit-edge")) == 4 + 2 + 3
    w.collapse()
    assert not find_class(parse_svg(w.svg), "g", "onnxkit-subgraph")
    assert repr(w) == "<onnxkit GraphWidget 'branchy': 2 nodes (5 with subgraphs), 4 edges>"


def test_trace_details_and_untaken_branch():
    sess = onnxkit.Session(WITH_IF)
    rec = TraceRecorder(keep_values=True)
    x = np.array([1.0, -2.0], np.float32)
    sess.run(None, {"c": np.array(True), "x": x}, trace=rec)
    w = show(sess, trace=rec, expand=True)
    root = parse_svg(w.svg)
    faded = {g.get("data-id") for g in find_class(root, "g", "onnxkit-not-run")}
    assert faded == {"n1/else_branch/n0", "n1/else_branch/n1"}
    w.select("n0")
    panel = w.details_html()
    assert "float32[2] min=0 max=1 mean=0.5" in panel and "ran 1 time" in panel
    assert "not run in the attached trace" in w.details["n1/else_branch/n0"]
    np.testing.assert_array_equal(w.tensor("t").value, np.maximum(x, 0))
    np.testing.assert_array_equal(rec.value("a", "If/then_branch"), -np.maximum(x, 0))
    with pytest.raises(KeyError, match="no value 'nope'"):
        w.tensor("nope")


def test_show_runs_with_feeds_and_accepts_every_model_form(tmp_path):
    m = model(CHAIN)
    path = os.path.join(tmp_path, "chain.onnx")
    onnx.save(m, path)
    feeds = {"x": np.ones((2, 3), np.float32), "b": np.ones(3, np.float32)}
    for source in (m, CHAIN, path, m.SerializeToString(), onnxkit.Session(m)):
        w = show(source, feeds=feeds)
        assert len(w.trace) == 4 and repr(w).endswith("trace of 4 node runs>")


def test_details_name_the_operator_version():
    w = GraphWidget(CHAIN).select("n1")
    assert "Add-14 (opset 18)" in w.details_html()
    with pytest.raises(KeyError, match="no node or value named 'zzz'"):
        w.select("zzz")


def test_stepper_walks_the_trace_in_order():
    from onnxkit.widgets import Stepper

    sess = onnxkit.Session(CHAIN)
    rec = TraceRecorder()
    sess.run(None, {"x": np.ones((2, 3), np.float32), "b": np.ones(3, np.float32)}, trace=rec)
    stepper = Stepper(show(sess, trace=rec))
    assert repr(stepper) == "<onnxkit Stepper: 4 steps over 'chain'>"
    assert stepper.graph.selected == "n0"
    visited = []
    for k in range(4):
        stepper.slider.value = k  # what dragging the slider (or the play button) does
        visited.append((stepper.graph.selected, stepper.records[k].op_type))
    assert visited == [("n0", "Relu"), ("n1", "Add"), ("n2", "Mul"), ("n3", "Identity")]
    assert "ai.onnx::Mul-14" in stepper.step(2).kernel and "Mul-14" in stepper.label.value
    with pytest.raises(ValueError, match="needs a graph widget with a trace"):
        Stepper(show(sess))


def test_nested_loop_and_if_bodies_match_their_trace():
    from tests.test_control_flow import NESTED_IF_IN_LOOP

    sess = onnxkit.Session(NESTED_IF_IN_LOOP)
    rec = TraceRecorder()
    feeds = {"x": np.array([1, 2], np.float32), "bias": np.array([10, 20], np.float32),
             "scale": np.array([2, 3], np.float32), "limit": np.array(0, np.int64)}
    sess.run(None, feeds, trace=rec)
    w = show(sess, trace=rec, expand=True)
    root = parse_svg(w.svg)
    assert len(find_class(root, "g", "onnxkit-node", depth=0)) == 3  # trip, go, Loop
    assert len(find_class(root, "g", "onnxkit-node", depth=1)) == 4  # the Loop body
    assert len(find_class(root, "g", "onnxkit-node", depth=2)) == 2  # Add, Mul in the If
    # every node ran: i=0 takes the else branch, i=1 and i=2 the then branch
    assert not find_class(root, "g", "onnxkit-not-run")
    body_if = next(b for b in w.graph.walk() if b.label == "If")
    assert "ran 3 times" in w.details[body_if.id]
    add = next(b for b in w.graph.walk() if b.label == "Add")
    assert "ran 2 times" in w.details[add.id]
    outer = {g.get("data-id").split(":", 1)[1] for g in find_class(root, "g", "onnxkit-outer")}
    assert outer == {"limit", "bias", "scale", "acc"}
