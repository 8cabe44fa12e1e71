"""A 4,000-node graph in a real JupyterLab (headless Chromium): first drawing, search, fold.

The graph is ``tests/widgets/_big.layered_model``: 12 layers named as PyTorch names them, the
size of torchvision's swin_t. The first drawing's time (from Shift+Enter on the ``show`` cell
to the SVG in the page) is printed, not asserted (timings flake on shared machines).

A real model instead (torchvision's swin_t, exported once by ``tests/widgets/_export_swin_t.py``)::

    ONNXKIT_BIG_GRAPH=.cache/bigraph/swin_t.onnx \
        pytest -s -k model_file tests/widgets/test_browser_big_graph.py
"""

from __future__ import annotations

import os
import time

import onnx
import pytest

from tests.widgets._lab import browser, jupyterlab

LOAD = "from onnxkit.widgets import show\n{load}\nprint('model ready')"
TINY = "show('<ir_version: 8, opset_import: [\"\" : 18]> tiny (float[2] x) => (float[2] y) { y = Relu(x) }')"
SHOW = "w = show(m)\nw"
GRAPH = "svg.onnxkit-graph"


def _run_cell(page, index: int, drawn: str) -> float:
    """Seconds from Shift+Enter on cell ``index`` until ``drawn`` is in the page and painted."""
    page.locator(".jp-Cell .jp-InputArea-editor").nth(index).click()
    started = time.monotonic()
    page.keyboard.press("Shift+Enter")
    page.wait_for_selector(drawn, state="attached", timeout=120_000)
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    return time.monotonic() - started


def _first_drawing(page, url: str) -> tuple[float, float]:
    """Runs the load cell, then times a one-node graph's drawing (the first widget of the
    kernel pays the widget machinery's start), then the big graph's."""
    page.goto(url)
    page.locator("#jp-main-statusbar").get_by_text("Idle", exact=False).wait_for(timeout=90_000)
    page.locator(".jp-Cell .jp-InputArea-editor").nth(0).click()
    page.keyboard.press("Shift+Enter")
    page.get_by_text("model ready").wait_for(timeout=120_000)
    tiny = _run_cell(page, 1, f"{GRAPH}[data-graph='tiny']")
    return tiny, _run_cell(page, 2, f"{GRAPH}:not([data-graph='tiny'])")


def _wait_count(page, selector: str, n: int, timeout: float = 120) -> None:
    page.wait_for_function("([s, n]) => document.querySelectorAll(s).length === n", arg=[selector, n],
                           timeout=timeout * 1000)


@pytest.mark.slow
def test_a_4000_node_graph_draws_folded_and_searches(tmp_path):
    cells = [LOAD.format(load="from tests.widgets._big import layered_model\nm = layered_model(12, 66)"),
             TINY, SHOW]
    with jupyterlab(tmp_path, cells, "big.ipynb") as url, browser(tmp_path) as page:
        tiny, first = _first_drawing(page, url)
        widget = page.locator(".onnxkit-graph-widget:has(svg[data-graph='layered'])")
        graph = "svg.onnxkit-graph[data-graph='layered']"
        blocks = f"{graph} g.onnxkit-block"
        assert page.locator(blocks).count() == 12
        assert set(page.locator(blocks).evaluate_all("gs => gs.map(g => g.dataset.members)")) == {"331"}
        assert page.locator(f"{graph} g.onnxkit-node").count() == 1  # the Softmax head
        bg = widget.locator(".onnxkit-graph-minimap").evaluate("e => e.style.backgroundImage")
        assert bg.startswith('url("blob:')
        widget.screenshot(path=str(tmp_path / "folded.png"))

        # search: Python finds the 792 Relu nodes, all folded: their 12 blocks are marked
        widget.locator("input.onnxkit-search").fill("relu")
        widget.locator("input.onnxkit-search").press("Enter")
        widget.get_by_text("792 nodes in 12 boxes").wait_for(timeout=60_000)
        assert page.locator(f"{graph} g.onnxkit-match").count() == 12

        # unfold layer 3: its LayerNormalization and 66 units (blocks themselves) appear
        page.locator(f"{graph} text.onnxkit-unfold[data-id='block:layers/layers.3']").click()
        _wait_count(page, blocks, 11 + 66)
        ops = page.locator(f"{graph} g.onnxkit-node").evaluate_all("gs => gs.map(g => g.dataset.op)")
        assert sorted(ops) == ["LayerNormalization", "Softmax"]
        assert page.locator(f"{graph} g.onnxkit-match").count() == 11 + 66  # marks follow

        # fit: the whole drawing inside the scroll box
        widget.locator("button.onnxkit-fit").click()
        fits = widget.locator(".onnxkit-graph-scroll").evaluate(
            "s => s.querySelector('svg').getBoundingClientRect().height <= s.clientHeight")
        assert fits

        # every node: 3,973 boxes drawn
        started = time.monotonic()
        widget.locator("button.onnxkit-unfold-all").click()
        _wait_count(page, f"{graph} g.onnxkit-node", 3973, timeout=300)
        unfolded = time.monotonic() - started
        assert page.locator(blocks).count() == 0
        widget.locator("button.onnxkit-fold-all").click()
        _wait_count(page, blocks, 12)
    print(f"\nbig graph (3973 nodes): first drawing {first:.2f} s (12 blocks; a one-node graph "
          f"before it: {tiny:.2f} s), "
          f"every node drawn after unfold all {unfolded:.1f} s")


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("ONNXKIT_BIG_GRAPH"), reason="set ONNXKIT_BIG_GRAPH=model.onnx")
def test_big_graph_from_a_model_file(tmp_path):
    path = os.path.abspath(os.environ["ONNXKIT_BIG_GRAPH"])
    model = onnx.load(path, load_external_data=False)
    softmax = sum(n.op_type == "Softmax" for n in model.graph.node)
    load = f"import onnx\nm = onnx.load({path!r})"
    with jupyterlab(tmp_path, [LOAD.format(load=load), TINY, SHOW], "model.ipynb") as url, \
            browser(tmp_path) as page:
        tiny, first = _first_drawing(page, url)
        widget = page.locator(".onnxkit-graph-widget:has(svg:not([data-graph='tiny']))")
        graph = "svg.onnxkit-graph:not([data-graph='tiny'])"
        drawn = page.locator(f"{graph} g.onnxkit-block").count()
        widget.locator("input.onnxkit-search").fill("Softmax")
        widget.locator("input.onnxkit-search").press("Enter")
        widget.get_by_text(f"{softmax} node{'s' if softmax != 1 else ''} in", exact=False).wait_for(
            timeout=60_000)
        started = time.monotonic()
        page.locator(f"{graph} text.onnxkit-unfold").first.click()
        page.wait_for_function("([s, n]) => document.querySelectorAll(s).length !== n",
                               arg=[f"{graph} g.onnxkit-block", drawn], timeout=120_000)
        unfold = time.monotonic() - started
        widget.screenshot(path=str(tmp_path / "model.png"))
    print(f"\n{os.path.basename(path)} ({len(model.graph.node)} nodes): first drawing {first:.2f} s "
          f"(a one-node graph before it: {tiny:.2f} s) "
          f"({drawn} blocks), {softmax} Softmax found, one block unfolded in {unfold:.2f} s")
