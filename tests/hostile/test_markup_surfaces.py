"""Every report and view of a markup-laden model shows its strings and obeys none of them.

Markdown outputs are rendered to HTML by real Markdown renderers (raw HTML passed through,
as JupyterLab does for trusted output); HTML outputs are read with an HTML parser. Neither
may hold a tag that runs script or loads something, an ``on*`` handler, a link, or a raw
bidi override / zero-width / terminal control character. Text outputs may hold no raw
control or invisible character. The payloads: ``tests/hostile/markup.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

import onnxkit
from onnxkit.conformance.report import Report as ConformanceReport
from onnxkit.conformance.runner import CaseResult
from onnxkit.runtime.profile import Profiler
from tests.hostile.markup import (ALL, PAYLOADS, feeds, invisible, live_markup, markup_model,
                                  render_markdown, text_of)


@pytest.fixture(scope="module")
def model():
    return markup_model()


@pytest.fixture(scope="module")
def session(model):
    return onnxkit.Session(model, executor="reference")


def assert_inert_html(html: str, where: str, shows: str | None = "onerror"):
    assert live_markup(html) == [], f"{where}: live markup {live_markup(html)}"
    assert invisible(html) == [], f"{where}: raw {invisible(html)}"
    if shows is not None:  # the payload is shown as text, not dropped
        assert shows in text_of(html), f"{where}: {shows!r} not shown"


def assert_inert_markdown(text: str, where: str, shows: str | None = "onerror"):
    for renderer, html in render_markdown(text).items():
        assert_inert_html(html, f"{where} ({renderer})", shows)


def assert_inert_text(text: str, where: str):
    assert invisible(text) == [], f"{where}: raw {invisible(text)}"


# --- the checks themselves can fail ------------------------------------------------------


@pytest.mark.parametrize("key", [k for k in PAYLOADS if k not in ("bidi", "zero_width", "terminal",
                                                                  "math")])
def test_each_payload_is_live_when_not_escaped(key):
    text = "| a |\n|---|\n| x |\n\n" + PAYLOADS[key]
    found = [live_markup(html) for html in render_markdown(text).values()]
    assert any(found), f"{key}: no renderer made live markup of the raw payload"


def test_raw_invisible_characters_are_found():
    assert invisible(PAYLOADS["bidi"] + PAYLOADS["zero_width"] + PAYLOADS["terminal"]) != []


# --- Markdown reports ---------------------------------------------------------------------


def test_optimizer_report_markdown(model):
    optimized, report = onnxkit.optimize(model, level=2)
    assert report.count("identity_elimination") == 1  # a rewrite of a hostile node happened
    assert_inert_markdown(report._repr_markdown_(), "optimize(m)[1]._repr_markdown_")
    assert report.to_markdown() == report._repr_markdown_()
    for text, where in ((str(report), "str(report)"), (report.details(), "report.details()")):
        assert_inert_text(text, where)
        assert "javascript:window.__onnxkit_pwned=1" in text  # shown, escapes only for controls


def test_profiler_markdown(session):
    prof = Profiler(session)
    session.run(None, feeds(), trace=prof)
    assert prof.events == 5  # four nodes and the function's body
    assert_inert_markdown(prof._repr_markdown_(), "Profiler._repr_markdown_")
    for by in ("op", "node"):
        assert_inert_markdown(prof.table(by=by), f"Profiler.table({by!r})")
        assert_inert_text(prof.table(by=by, markdown=False), f"Profiler.table({by!r}, markdown=False)")


@pytest.mark.parametrize("key", sorted(PAYLOADS))
def test_conformance_markdown_report(key):
    payload = PAYLOADS[key]
    report = ConformanceReport(payload, [
        CaseResult(payload, "node", [payload, "Relu"], "fail", payload + " was wrong", 0.0),
        CaseResult("test_" + payload, "node", [payload], "error", "Error: " + payload, 0.0),
        CaseResult("test_relu", "node", ["Relu"], "pass", "", 0.0)])
    shown = {"img": "onerror", "md_link": "javascript", "bidi": "\\u202e", "zero_width": "\\u200b",
             "terminal": "red", "math": "href"}.get(key)
    assert_inert_markdown(report.to_markdown(), f"conformance report, {key}", shows=shown)


def test_conformance_chart_draws_hostile_labels(tmp_path):
    report = ConformanceReport(ALL, [CaseResult("t", "node", [ALL, "$\\frac{1}$"], "fail", ALL, 0.0)])
    report.plot(str(tmp_path / "chart.png"))  # '$' starts no mathtext: it used to raise
    assert (tmp_path / "chart.png").stat().st_size > 1000


# --- HTML views (widgets) -----------------------------------------------------------------


def _widget_strings(widget) -> list[tuple[str, str]]:
    """Every string in a widget's synced state (what the browser receives), by trait."""
    out = []

    def walk(value, where):
        if isinstance(value, str):
            out.append((where, value))
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{where}[{k!r}]")
        elif isinstance(value, (list, tuple)):
            for k, v in enumerate(value):
                walk(v, f"{where}[{k}]")

    for name, value in widget.get_state().items():
        if name not in ("_esm", "_css", "_anywidget_id"):
            walk(value, name)
    return out


def assert_inert_graph_widget(widget, where: str):
    for trait, value in _widget_strings(widget):
        assert live_markup(value) == [], f"{where}.{trait}: {live_markup(value)}"
        assert invisible(value) == [], f"{where}.{trait}: raw {invisible(value)}"
    assert "onerror" in text_of(widget.svg)
    assert "\\u202e" in text_of(widget.svg)  # the bidi override is shown as its escape
    for box in widget.graph.walk():
        assert box.id in widget.details  # every node's panel, found by the id a click sends
    assert_inert_text(repr(widget), f"repr({where})")
    bundle = widget._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    for mime, value in data.items():  # the static drawing shown where widgets are not
        if isinstance(value, str) and mime != "text/plain":
            assert_inert_html(value, f"{where} {mime}", shows="onerror")


def test_graph_widget_state_svg_and_details(model):
    from onnxkit.widgets import GraphWidget

    widget = GraphWidget(model)
    assert_inert_graph_widget(widget, "GraphWidget")
    for box_id, html in widget.details.items():
        assert_inert_html(html, f"details[{box_id!r}]", shows=None)
    # the ids the drawing carries are the ids Python knows: a click finds its panel
    import re

    ids = re.findall(r'<g class="onnxkit-(?:node|value)[^"]*" data-id="([^"]*)"', widget.svg)
    assert ids and all(i in widget.details for i in ids)


def test_traced_views(model, session):
    from onnxkit.widgets import Stepper, TensorView, TraceRecorder, show
    from onnxkit.widgets.profile import ProfileView, profile, profile_html
    from onnxkit.widgets.tensor import tensor_html

    rec = TraceRecorder(keep_values=True)
    y, strings = session.run(None, feeds(), trace=rec)
    assert list(strings) == list(PAYLOADS.values())
    graph = show(session, trace=rec)
    assert_inert_graph_widget(graph, "show(sess, trace=rec)")
    stepper = Stepper(graph)
    for k in range(len(stepper.records)):
        stepper.step(k)
        assert_inert_html(stepper.label.value, f"Stepper step {k}", shows=None)
        assert_inert_graph_widget(graph, f"Stepper step {k}")
    for value, name in ((strings, ALL), (y, ALL), (rec.value("s"), "s")):
        view = TensorView(value, name=name)
        assert_inert_html(view.html.value, f"TensorView {name[:10]!r}")
        assert_inert_html(tensor_html(value, name), "tensor_html")
        assert_inert_text(repr(view), "repr(TensorView)")
    prof = profile(session, feeds(), repeat=2)
    assert_inert_html(prof._repr_html_(), "Profile._repr_html_")
    assert_inert_html(profile_html(prof, "node"), "profile_html(by='node')")
    assert_inert_text(str(prof), "str(Profile)")
    pview = ProfileView(prof)
    pview.switch.value = "node"
    assert_inert_html(pview.html.value, "ProfileView per node")


def test_diff_view(model):
    from onnxkit.widgets import DiffView

    optimized, report = onnxkit.optimize(model, level=2)
    view = DiffView(model, optimized, report)
    # removed: the Identity and the call of the model-local function, both hostile-named;
    # added: the function's inlined Relu (level 1 inlines it), hostile-named too
    counts = view.diff["counts"]
    assert (counts["removed"], counts["added"], counts["kept"]) == (2, 1, 2)
    assert_inert_html(view.summary.value, "DiffView summary")
    for k, graph in enumerate(view.graphs):
        assert_inert_graph_widget(graph, f"DiffView graph {k}")
    assert_inert_text(repr(view), "repr(DiffView)")


def test_error_messages_shown_in_a_page_are_inert():
    from onnxkit.html import escape_text, markdown_text, terminal_text
    from onnx import helper, TensorProto

    node = helper.make_node(PAYLOADS["img"] + PAYLOADS["bidi"], ["x"], ["y"], name=ALL)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    with pytest.raises(onnxkit.OnnxkitError) as info:
        onnxkit.Session(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]))
    message = str(info.value)
    assert_inert_html(escape_text(message), "escape_text(message)")
    assert_inert_markdown(markdown_text(message), "markdown_text(message)")
    assert_inert_text(terminal_text(message), "terminal_text(message)")
    assert np.isfinite(len(message))


def test_versioning_support_table_text(model):
    from onnxkit.versioning import format_support, support_table

    text = format_support(support_table(model))
    assert_inert_text(text, "format_support")
    assert "onerror" in text  # the op type is listed, its controls and bidi as escapes
