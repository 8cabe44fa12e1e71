"""The graph widget drawn by a real JupyterLab in headless Chromium (Playwright).

Recipe: /work/shared/recipes/jupyterlab-browser-test.md. One fresh server per test, with
every Jupyter / IPython / matplotlib state folder in the test's tmp dir. Needs Debian's
``/usr/bin/chromium`` (``make browser`` installs it) and the ``playwright`` package; the
test skips, saying which is missing, without them.
"""

from __future__ import annotations

import re
import time

import pytest

from tests.widgets._lab import browser, jupyterlab

SQUEEZENET_CELL = """\
import onnxkit
from onnxkit.examples import example_path
from onnxkit.widgets import show
model = onnxkit.load(example_path("squeezenet"))
show(model)"""

IF_CELL = """\
show('''<ir_version: 8, opset_import: ["" : 18]>
branchy (bool c, float[2] x) => (float[2] y) {
  t = Relu(x)
  y = If(c) <
    then_branch = then_g () => (float[2] a) { a = Neg(t) },
    else_branch = else_g () => (float[2] b) { u = Abs(t)  b = Sigmoid(u) }
  >
}''')"""


def _expected() -> tuple[int, int, int]:
    """Nodes, edges (one per distinct value and reader, plus outputs), index of the first Conv."""
    import onnxkit
    from onnxkit.examples import example_path

    m = onnxkit.load(example_path("squeezenet"))
    inits = {t.name for t in m.graph.initializer}
    pairs = {(name, k) for k, n in enumerate(m.graph.node) for name in n.input
             if name and name not in inits}
    conv = next(k for k, n in enumerate(m.graph.node) if n.op_type == "Conv")
    return len(m.graph.node), len(pairs) + len(m.graph.output), conv


@pytest.fixture
def lab(tmp_path):
    """A JupyterLab server on a free port, serving a notebook with two graph widgets."""
    with jupyterlab(tmp_path, [SQUEEZENET_CELL, IF_CELL], "graph.ipynb") as url:
        yield url


def _run_all(page, url: str) -> None:
    page.goto(url)
    page.locator("#jp-main-statusbar").get_by_text(re.compile(r"\| Idle")).wait_for(timeout=90_000)
    page.locator("#jp-MainMenu").get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name=re.compile(r"^Run All Cells")).click()


@pytest.mark.slow
def test_graph_widget_injupyterlab(lab, tmp_path):
    started = time.monotonic()
    n_nodes, n_edges, conv = _expected()
    with browser(tmp_path) as page:
        _run_all(page, lab)

        squeeze = "svg.onnxkit-graph[data-graph='squeezenet_old']"
        page.wait_for_selector(squeeze, state="attached", timeout=90_000)
        assert page.locator(f"{squeeze} g.onnxkit-node").count() == n_nodes == 105
        assert page.locator(f"{squeeze} path.onnxkit-edge").count() == n_edges
        assert page.locator(f"{squeeze} g.onnxkit-input").count() == 1
        assert page.locator(f"{squeeze} g.onnxkit-output").count() == 1
        ops = page.locator(f"{squeeze} g.onnxkit-node text.onnxkit-op").all_text_contents()
        assert ops.count("Conv") == 26 and ops.count("Relu") == 26
        page.locator(squeeze).screenshot(path=str(tmp_path / "graph.png"))

        # a click goes to Python and back: the details panel shows that node
        page.locator(f"{squeeze} g.onnxkit-node[data-id='n{conv}']").click()
        panel = page.locator(f".onnxkit-graph-details .onnxkit-details[data-id='n{conv}']")
        panel.wait_for(state="attached", timeout=30_000)
        assert "Conv-1 (opset 9)" in panel.inner_text()
        assert page.locator(f"{squeeze} g.onnxkit-selected").count() == 1
        page.screenshot(path=str(tmp_path / "page.png"))

        # expanding an If: Python lays the bodies out and redraws
        branchy = "svg.onnxkit-graph[data-graph='branchy']"
        page.wait_for_selector(branchy, state="attached", timeout=60_000)
        assert page.locator(f"{branchy} g.onnxkit-subgraph").count() == 0
        page.locator(f"{branchy} text.onnxkit-expander").click()
        page.wait_for_selector(f"{branchy} g.onnxkit-subgraph", state="attached", timeout=30_000)
        assert page.locator(f"{branchy} g.onnxkit-subgraph").count() == 2
        assert page.locator(f"{branchy} g.onnxkit-node[data-depth='1']").count() == 3
        page.locator(branchy).screenshot(path=str(tmp_path / "branchy.png"))
    assert (tmp_path / "graph.png").stat().st_size > 10_000
    print(f"browser test: {time.monotonic() - started:.1f} s in the browser")


# --- every report and view of a markup-laden model: no script runs --------------------------

HOSTILE_CELLS = [
    """\
import onnxkit
from IPython.display import HTML, display
from onnx import helper, TensorProto
from onnxkit.conformance.report import Report
from onnxkit.conformance.runner import CaseResult
from onnxkit.runtime.profile import Profiler
from onnxkit.widgets import DiffView, Stepper, TensorView, TraceRecorder, show
from onnxkit.widgets.profile import ProfileView, profile
from tests.hostile.markup import ALL, PAYLOADS, feeds, markup_model
m = markup_model()
sess = onnxkit.Session(m)
optimized, report = onnxkit.optimize(m, level=2)""",
    "report",  # the optimizer's report, as Markdown
    "prof = Profiler(sess)\nsess.run(None, feeds(), trace=prof)\nprof",
    "Report(ALL, [CaseResult(v, 'node', [v, 'Relu'], 'fail', v, 0.0) for v in PAYLOADS.values()])",
    "w = show(m)\nw.select('n0')",  # the details panel of the hostile function node
    "w2 = show(m)\nw2.selected = next(b.id for b in w2.graph.boxes if b.kind == 'input')\nw2",
    "rec = TraceRecorder(keep_values=True)\ny, s = sess.run(None, feeds(), trace=rec)\n"
    "show(sess, trace=rec).select('n2')",
    "Stepper(show(sess, trace=rec))",
    "display(TensorView(s, name=ALL))\nTensorView(y, name=ALL)",
    "p = profile(sess, feeds(), repeat=2)\ndisplay(p)\nProfileView(p, by='node')",
    "DiffView(m, optimized, report)",
    "print(report)\nprint(report.details())\nprint(prof.table(markdown=False))\nprint(p)",
    # the control: a page where onerror does run (so an unset flag means something)
    "HTML('<img class=\"onnxkit-control\" src=x onerror=\"window.__onnxkit_control=1\">')",
    # last, as Run All stops here: an error naming hostile nodes, shown as a traceback
    "bad = helper.make_node(PAYLOADS['img'] + PAYLOADS['bidi'], ['x'], ['y'], name=ALL)\n"
    "onnxkit.Session(helper.make_model(helper.make_graph([bad], 'g', "
    "[helper.make_tensor_value_info('x', TensorProto.FLOAT, [1])], "
    "[helper.make_tensor_value_info('y', TensorProto.FLOAT, [1])])))",
]

# what would act if a payload got through, inside the notebook's outputs
ACTIVE = ("img, iframe, script, object, embed, details, "
          "a[href^='javascript' i], [onerror], [onload], [ontoggle]")
RAW_INVISIBLE = "[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff\u001b]"


@pytest.mark.slow
def test_no_script_runs_from_any_report_or_view(tmp_path):
    started = time.monotonic()
    with jupyterlab(tmp_path, HOSTILE_CELLS, "hostile.ipynb") as url, browser(tmp_path) as page:
        _run_all(page, url)
        outputs = ".jp-Notebook .jp-OutputArea-output"
        page.wait_for_function("() => window.__onnxkit_control === 1", timeout=120_000)
        page.locator(f"{outputs}[data-mime-type='application/vnd.jupyter.stderr']").first.wait_for(
            state="attached", timeout=60_000)
        # every view is on the page: 6 graph widgets (2 + traced + stepper + diff x2), the
        # three details panels chosen, 2 tensors, 2 profiles, the diff, 3 Markdown reports.
        # (each widget opens with its drawing in its first state: an update sent after it
        # could miss a view made meanwhile, which then stayed empty)
        wanted = {".onnxkit-graph-widget": 6, "svg.onnxkit-graph": 6,
                  ".onnxkit-graph-details .onnxkit-details": 3,
                  ".onnxkit-tensor": 2, ".onnxkit-profile": 2, ".onnxkit-diff": 1,
                  ".jp-OutputArea .jp-RenderedMarkdown": 3, "svg.onnxkit-heatmap": 1}
        count = "s => Object.fromEntries(s.map(q => [q, document.querySelectorAll(q).length]))"
        deadline = time.monotonic() + 120
        while True:
            seen = page.evaluate(count, list(wanted))
            if all(seen[q] >= n for q, n in wanted.items()) or time.monotonic() > deadline:
                break
            page.wait_for_timeout(500)
        page.screenshot(path=str(tmp_path / "hostile.png"), full_page=True)
        per_cell = page.evaluate("() => Array.from(document.querySelectorAll('.jp-Notebook .jp-CodeCell'))"
                                 ".map(c => c.querySelectorAll('svg.onnxkit-graph').length + '/' + "
                                 "c.querySelectorAll('.jp-OutputArea-output').length)")
        assert all(seen[q] >= n for q, n in wanted.items()), f"{seen}; per cell: {per_cell}"
        page.wait_for_timeout(1500)  # a failed image load reports its error asynchronously

        assert page.evaluate("() => window.__onnxkit_pwned") is None, "a payload ran script"
        active = page.evaluate("q => Array.from(document.querySelectorAll(q)).map(e => e.outerHTML.slice(0, 120))",
                               f".jp-Notebook .jp-OutputArea-output :is({ACTIVE}):not(.onnxkit-control)")
        assert active == []
        text = page.evaluate("() => Array.from(document.querySelectorAll("
                             "'.jp-Notebook .jp-OutputArea-output')).map(e => e.textContent).join('\\n')")
        raw = [m.start() for m in re.finditer(RAW_INVISIBLE, text)]
        assert raw == [], [text[max(k - 80, 0):k + 20] for k in raw[:3]]
        # the payloads are shown as text: in the Markdown reports, the drawings and the panels
        for shown in ("onerror=", "javascript:window.__onnxkit_pwned=1", "\\u202e", "<iframe srcdoc="):
            assert shown in text, shown
    print(f"hostile browser test: {time.monotonic() - started:.1f} s")
