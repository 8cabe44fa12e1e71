"""A fresh JupyterLab server and a headless Chromium for the browser tests.

Recipe: /work/shared/recipes/jupyterlab-browser-test.md. Every Jupyter / IPython / matplotlib
state folder lives in the test's tmp dir; every cell is attached to the page (windowing mode
"none"), so off-screen outputs are rendered too. A test skips, saying what is missing,
without Debian's ``/usr/bin/chromium`` (``make browser``) or the ``playwright`` package.
"""

from __future__ import annotations

import contextlib
import os
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


def requirements() -> str | None:
    if not os.path.exists(CHROMIUM):
        return f"{CHROMIUM} is missing (run `make browser`)"
    for module in ("playwright", "jupyterlab", "anywidget"):
        try:
            __import__(module)
        except ImportError:
            return f"the {module!r} package is not installed (pip install {module})"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def jupyterlab(tmp_path, cells: list[str], notebook: str):
    """A JupyterLab server on a free port serving one notebook of ``cells``; yields its URL.

    Every cell is attached to the page (windowing mode "none"), so off-screen outputs are
    rendered too."""
    reason = requirements()
    if reason:
        pytest.skip(reason)
    root = tmp_path / "notebooks"
    root.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(root / notebook))
    env = dict(os.environ)
    for var, sub in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"),
                     ("JUPYTER_RUNTIME_DIR", "runtime"), ("IPYTHONDIR", "ipython"),
                     ("MPLCONFIGDIR", "mpl"), ("JUPYTERLAB_SETTINGS_DIR", "lab-settings"),
                     ("JUPYTERLAB_WORKSPACES_DIR", "lab-workspaces")):
        env[var] = str(tmp_path / sub)
    tracker = tmp_path / "lab-settings" / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.getcwd(), env.get("PYTHONPATH", "")]))
    port, token = free_port(), secrets.token_hex(16)
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
        yield f"http://127.0.0.1:{port}/lab/tree/{notebook}?reset&token={token}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


@contextlib.contextmanager
def browser(tmp_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(str(tmp_path / "chromium"), executable_path=CHROMIUM,
                                                   headless=True, args=ARGS,
                                                   viewport={"width": 1400, "height": 1000})
        try:
            yield ctx.pages[0] if ctx.pages else ctx.new_page()
        finally:
            ctx.close()
