"""A big graph in a real JupyterLab (headless Chromium): first drawing, search, fold, fit.

The graph is torchvision's swin_t (6,261 nodes, random weights), exported once into
``.cache/bigraph/`` (``tests/widgets/_export_swin_t.py``); without torchvision, the synthetic
``tests/widgets/_big.layered_model`` (3,973 nodes, named as PyTorch names a transformer's
layers) stands in. Another model file: ``ONNXKIT_BIG_GRAPH=model.onnx``.

What the page shows is checked against the model file itself (its node count, the nodes a
search must find). The first drawing's time is printed, not asserted (timings flake on
shared machines): from the Shift+Enter keydown on the ``show`` cell to the second animation
frame after the SVG entered the page, both taken in the page. A one-node graph is drawn
first, in the same kernel, so the big graph's time holds no one-off start-up cost.
"""

from __future__ import annotations

import os
import time

import onnx
import pytest

from tests.widgets._big import layered_model
from tests.widgets._export_swin_t import cached_swin_t
from tests.widgets._lab import browser, jupyterlab

LOAD = "import onnx\nfrom onnxkit.widgets import show\nm = onnx.load({path!r})\nprint('model ready')"
TINY = "show('<ir_version: 8, opset_import: [\"\" : 18]> tiny (float[2] x) => (float[2] y) { y = Relu(x) }')"
SHOW = "w = show(m)\nw"
GRAPH = "svg.onnxkit-graph:not([data-graph='tiny'])"

# in the page: when Shift+Enter went down, and when each graph's SVG was painted after it
TIMER = """
window.onnxkitDrawn = {};
document.addEventListener("keydown", (ev) => {
  if (ev.key === "Enter" && ev.shiftKey) window.onnxkitPressed = performance.now();
}, true);
new MutationObserver((changes) => {
  for (const change of changes) for (const n of change.addedNodes) {
    if (!(n instanceof Element)) continue;
    const svg = n.matches("svg.onnxkit-graph") ? n : n.querySelector("svg.onnxkit-graph");
    if (!svg || svg.dataset.graph in window.onnxkitDrawn) continue;
    const name = svg.dataset.graph, pressed = window.onnxkitPressed;
    window.onnxkitDrawn[name] = null;
    requestAnimationFrame(() => requestAnimationFrame(() => {
      window.onnxkitDrawn[name] = (performance.now() - pressed) / 1000;
    }));
  }
}).observe(document, { childList: true, subtree: true });
"""


def big_graph(tmp_path) -> tuple[str, str]:
    """(path, search query): ONNXKIT_BIG_GRAPH, else swin_t, else the synthetic graph."""
    if os.environ.get("ONNXKIT_BIG_GRAPH"):
        return os.path.abspath(os.environ["ONNXKIT_BIG_GRAPH"]), "Softmax"
    swin_t = cached_swin_t()
    if swin_t is not None:
        return str(swin_t), "Softmax"
    path = tmp_path / "layered.onnx"
    onnx.save(layered_model(12, 66), str(path))
    return str(path), "relu"


def _run_cell(page, index: int, graph: str) -> tuple[float, float]:
    """Seconds from Shift+Enter on cell ``index`` until the SVG named ``graph`` is painted:
    as the page timed it, and as this test saw it (through Playwright's polling)."""
    page.locator(".jp-Cell .jp-InputArea-editor").nth(index).click()
    started = time.monotonic()
    page.keyboard.press("Shift+Enter")
    page.wait_for_function("g => typeof window.onnxkitDrawn[g] === 'number'", arg=graph,
                           timeout=120_000, polling=50)
    seen = time.monotonic() - started
    return page.evaluate("g => window.onnxkitDrawn[g]", graph), seen


def _wait_count(page, selector: str, n: int, timeout: float = 120) -> None:
    page.wait_for_function("([s, n]) => document.querySelectorAll(s).length === n", arg=[selector, n],
                           timeout=timeout * 1000)


@pytest.mark.slow
def test_a_big_graph_draws_folded_searches_unfolds_and_fits(tmp_path):
    path, query = big_graph(tmp_path)
    model = onnx.load(path, load_external_data=False)
    nodes = list(model.graph.node)
    found = [n for n in nodes if query.lower() in n.op_type.lower() or query.lower() in n.name.lower()]
    assert found, f"the test's query {query!r} finds nothing in {path}"
    cells = [LOAD.format(path=path), TINY, SHOW]
    with jupyterlab(tmp_path, cells, "big.ipynb") as url, browser(tmp_path) as page:
        page.add_init_script(TIMER)
        page.goto(url)
        page.locator("#jp-main-statusbar").get_by_text("Idle", exact=False).wait_for(timeout=90_000)
        page.locator(".jp-Cell .jp-InputArea-editor").nth(0).click()
        page.keyboard.press("Shift+Enter")
        # the output's text: the cell's own source also holds the words
        page.locator(".jp-OutputArea-output").get_by_text("model ready", exact=True).wait_for(
            timeout=120_000)
        tiny, tiny_seen = _run_cell(page, 1, "tiny")
        name = model.graph.name
        first, first_seen = _run_cell(page, 2, name)

        # folded: repeated blocks stand for most of the nodes; the minimap shows the drawing
        widget = page.locator(f".onnxkit-graph-widget:has({GRAPH})")
        blocks = f"{GRAPH} g.onnxkit-block"
        folded = page.locator(blocks).count()
        members = page.locator(blocks).evaluate_all("gs => gs.map(g => Number(g.dataset.members))")
        drawn_nodes = page.locator(f"{GRAPH} g.onnxkit-node").count()
        assert folded >= 2 and drawn_nodes + sum(members) <= len(nodes) and drawn_nodes < len(nodes) / 10
        bg = widget.locator(".onnxkit-graph-minimap").evaluate("e => e.style.backgroundImage")
        assert bg.startswith('url("blob:')
        widget.screenshot(path=str(tmp_path / "folded.png"))

        # search: every matching node of the file is counted, folded ones included; the boxes
        # that hold them are marked
        search = widget.locator("input.onnxkit-search")
        search.fill(query)
        search.press("Enter")
        count = widget.locator(".onnxkit-search-count")
        count.get_by_text(f"{len(found)} node{'s' if len(found) != 1 else ''} in",
                          exact=False).wait_for(timeout=60_000)
        marked = page.locator(f"{GRAPH} g.onnxkit-match")
        boxes = int(count.inner_text().split(" in ")[1].split()[0])
        assert 1 <= boxes == marked.count() <= len(found)

        # unfold the first marked block (the first block when no match is folded): what it
        # held is drawn, and the marks follow
        block = marked.evaluate_all("gs => gs.map(g => g.dataset.id).find(i => i.startsWith('block:'))")
        block = block or page.locator(blocks).first.get_attribute("data-id")
        page.locator(f"{GRAPH} text.onnxkit-unfold[data-id='{block}']").click()
        page.wait_for_function("([s, id]) => !document.querySelector(`${s} g[data-id='${id}']`)",
                               arg=[GRAPH, block], timeout=120_000)
        assert marked.count() >= boxes
        assert page.locator(blocks).count() != folded

        # fit: the whole drawing inside the scroll box
        widget.locator("button.onnxkit-fit").click()
        assert widget.locator(".onnxkit-graph-scroll").evaluate(
            "s => s.querySelector('svg').getBoundingClientRect().height <= s.clientHeight")

        # unfold all: one box per node of the file; fold all: the first drawing's blocks
        started = time.monotonic()
        widget.locator("button.onnxkit-unfold-all").click()
        _wait_count(page, f"{GRAPH} g.onnxkit-node", len(nodes), timeout=300)
        unfolded = time.monotonic() - started
        assert page.locator(blocks).count() == 0
        ops = page.locator(f"{GRAPH} g.onnxkit-match").evaluate_all("gs => gs.map(g => g.dataset.op)")
        assert sorted(ops) == sorted(n.op_type for n in found)  # each match its own box now
        widget.locator("button.onnxkit-fold-all").click()
        _wait_count(page, blocks, folded)
    print(f"\n{os.path.basename(path)} ({len(nodes)} nodes): first drawing {first:.2f} s "
          f"({first_seen:.2f} s seen by the test), {folded} blocks; a one-node graph before it "
          f"{tiny:.2f} s ({tiny_seen:.2f} s); {len(found)} {query!r} in {boxes} boxes; every node "
          f"drawn after unfold all {unfolded:.1f} s")
