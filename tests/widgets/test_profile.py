"""Profile aggregation against hand-computed numbers, and the recorder it reads."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

import onnxkit
from onnxkit.runtime.trace import TraceEvent
from onnxkit.widgets import Profile, ProfileView, TraceRecorder, profile, summarize
from onnxkit.widgets.profile import bars_svg, profile_html
from tests.widgets._models import CHAIN, WITH_IF, model, parse_svg


def event(name: str, op: str, out: str, elapsed: float, path: str = "") -> TraceEvent:
    node = onnx.helper.make_node(op, ["in"], [out], name=name)
    return TraceEvent(node, path, f"ai.onnx::{op}-1", (np.zeros(2, np.float32),),
                      (np.ones(2, np.float32),), elapsed)


# two runs of conv1 -> relu1 -> conv2, plus a body node inside a Loop (path "loop/body")
EVENTS = [
    event("conv1", "Conv", "a", 0.004), event("relu1", "Relu", "b", 0.001),
    event("conv2", "Conv", "c", 0.002), event("loop", "Loop", "d", 0.003),
    event("inner", "Add", "e", 0.0005, path="loop/body"),
    event("conv1", "Conv", "a", 0.006), event("relu1", "Relu", "b", 0.001),
    event("conv2", "Conv", "c", 0.002), event("loop", "Loop", "d", 0.003),
    event("inner", "Add", "e", 0.0005, path="loop/body"),
]


def test_per_node_and_per_op_type_totals():
    prof = Profile(EVENTS)
    assert prof.total == pytest.approx(0.022)  # (4 + 1 + 2 + 3) + (6 + 1 + 2 + 3) ms
    by_name = {n.name: n for n in prof.nodes}
    assert [n.name for n in prof.nodes] == ["conv1", "relu1", "conv2", "loop"]  # first-run order
    assert by_name["conv1"].calls == 2 and by_name["conv1"].seconds == pytest.approx(0.010)
    assert by_name["conv1"].mean == pytest.approx(0.005)
    assert by_name["conv1"].share == pytest.approx(10 / 22)
    ops = [(o.op_type, o.nodes, o.calls, round(o.seconds, 6)) for o in prof.ops]
    assert ops == [("Conv", 2, 4, 0.014), ("Loop", 1, 2, 0.006), ("Relu", 1, 2, 0.002)]
    assert sum(o.share for o in prof.ops) == pytest.approx(1.0)
    assert [n.name for n in prof.top(2)] == ["conv1", "loop"]


def test_nested_nodes_are_listed_only_when_asked():
    prof = Profile(EVENTS, nested=True)
    assert prof.total == pytest.approx(0.022)  # the body's time is already inside Loop's
    inner = [n for n in prof.nodes if n.name == "inner"]
    assert len(inner) == 1 and inner[0].calls == 2 and inner[0].seconds == pytest.approx(0.001)
    assert inner[0].label == "loop/body/inner (Add)"
    assert {o.op_type for o in prof.ops} == {"Conv", "Loop", "Relu", "Add"}


def test_recorder_feeds_the_profile_like_raw_events():
    rec = TraceRecorder()
    for e in EVENTS:
        rec(e)
    assert Profile(rec).to_dict() == Profile(EVENTS).to_dict()
    assert rec.calls(("", ("a",))) == 2 and rec.seconds(("", ("a",))) == pytest.approx(0.010)
    assert repr(rec) == "<onnxkit TraceRecorder: 10 node executions, 5 distinct nodes>"


def test_text_and_html_tables():
    prof = Profile(EVENTS)
    lines = str(prof).splitlines()
    assert lines[1].split() == ["Conv", "2", "4", "14.000", "63.6%"]
    assert lines[-1].split() == ["total", "4", "8", "22.000"]
    html = profile_html(prof, "node")
    assert "<td>conv1 (Conv)</td><td>2</td><td>10.000</td><td>5.000</td><td>45.5%</td>" in html
    view = ProfileView(prof)
    assert repr(view) == "<onnxkit ProfileView: 4 nodes, 3 op types>"
    view.switch.value = "node"
    assert "conv1 (Conv)" in view.html.value
    with pytest.raises(ValueError, match="by must be"):
        profile_html(prof, "layer")


def test_bar_chart_lengths_are_proportional():
    root = parse_svg(bars_svg([("a", 0.004), ("b", 0.001), ("<b>", 0.002)], bar_width=200))
    bars = [el for el in root.iter("{http://www.w3.org/2000/svg}rect")]
    assert [float(b.get("width")) for b in bars] == [200.0, 50.0, 100.0]
    assert "<b>" not in bars_svg([("<b>", 1.0)])


def test_profile_helper_runs_a_session():
    sess = onnxkit.Session(CHAIN)
    feeds = {"x": np.ones((2, 3), np.float32), "b": np.ones(3, np.float32)}
    prof = profile(sess, feeds, repeat=3)
    assert [n.calls for n in prof.nodes] == [3, 3, 3, 3]
    assert sorted(o.op_type for o in prof.ops) == ["Add", "Identity", "Mul", "Relu"]
    assert prof.total > 0


def test_if_bodies_in_a_real_run():
    sess = onnxkit.Session(model(WITH_IF))
    rec = TraceRecorder()
    sess.run(None, {"c": np.array(False), "x": np.ones(2, np.float32)}, trace=rec)
    prof = Profile(rec, nested=True)
    assert [n.label for n in prof.nodes] == [  # unnamed nodes: labelled by their output
        "t (Relu)", "If/else_branch/u (Abs)", "If/else_branch/b (Sigmoid)", "y (If)"]


def test_summaries():
    s = summarize(np.array([[1.0, np.nan], [3.0, -1.0]], np.float32))
    assert (s.shape, s.min, s.max, s.mean, s.nan) == ((2, 2), -1.0, 3.0, 1.0, 1)
    assert str(s) == "float32[2,2] min=-1 max=3 mean=1 nan=1"
    assert str(summarize(None)) == "absent"
    assert str(summarize([np.zeros(2), np.zeros(3)])) == "sequence of 2"
    assert str(summarize(np.array(["a", "b"], dtype=object))) == "object[2]"
    import ml_dtypes

    assert summarize(np.array([1.5, 2.5], dtype=ml_dtypes.bfloat16)).max == 2.5
