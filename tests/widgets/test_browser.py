"""The graph widget drawn by a real JupyterLab in headless Chromium (Playwright).

Recipe: /work/shared/recipes/jupyterlab-browser-test.md. One fresh server per test, with
every Jupyter / IPython / matplotlib state folder in the test's tmp dir. Needs Debian's
``/usr/bin/chromium`` (``make browser`` installs it) and the ``playwright`` package; the
test skips, saying which is missing, without them.
"""

from __future__ import annotations

import os
import re
import secrets
import socket
import subprocess
import sys
import time
import urllib.request

import nbformat
import pytest

CHROMIUM = os.environ.get("ONNXKIT_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

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


def _requirements() -> str | None:
    if not os.path.exists(CHROMIUM):
        return f"{CHROMIUM} is missing (run `make browser`)"
    for module in ("playwright", "jupyterlab", "anywidget"):
        try:
            __import__(module)
        except ImportError:
            return f"the {module!r} package is not installed (pip install {module})"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
    reason = _requirements()
    if reason:
        pytest.skip(reason)
    root = tmp_path / "notebooks"
    root.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(SQUEEZENET_CELL), nbformat.v4.new_code_cell(IF_CELL)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(root / "graph.ipynb"))
    env = dict(os.environ)
    for var, sub in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"),
                     ("JUPYTER_RUNTIME_DIR", "runtime"), ("IPYTHONDIR", "ipython"),
                     ("MPLCONFIGDIR", "mpl")):
        env[var] = str(tmp_path / sub)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.getcwd(), env.get("PYTHONPATH", "")]))
    port, token = _free_port(), secrets.token_hex(16)
    log = open(tmp_path / "lab.log", "w")
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
           "--allow-root", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
           "--LabApp.news_url=None",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    server = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    raise RuntimeError("JupyterLab did not start:\n"
                                       + (tmp_path / "lab.log").read_text()[-3000:])
                time.sleep(0.3)
        yield f"http://127.0.0.1:{port}/lab/tree/graph.ipynb?reset&token={token}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


@pytest.mark.slow
def test_graph_widget_in_jupyterlab(lab, tmp_path):
    from playwright.sync_api import sync_playwright

    started = time.monotonic()
    n_nodes, n_edges, conv = _expected()
    with sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(str(tmp_path / "chromium"), executable_path=CHROMIUM,
                                                   headless=True, args=ARGS,
                                                   viewport={"width": 1400, "height": 1000})
        try:
            page = ctx.pages[0] if ctx.pages else ctx.new_page()
            page.goto(lab)
            page.locator("#jp-main-statusbar").get_by_text(re.compile(r"\| Idle")).wait_for(timeout=90_000)
            page.locator("#jp-MainMenu").get_by_role("menuitem", name="Run", exact=True).click()
            page.get_by_role("menuitem", name=re.compile(r"^Run All Cells")).click()

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
        finally:
            ctx.close()
    assert (tmp_path / "graph.png").stat().st_size > 10_000
    print(f"browser test: {time.monotonic() - started:.1f} s in the browser")
