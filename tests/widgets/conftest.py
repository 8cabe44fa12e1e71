"""Fixtures shared by the widget and magic tests."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="module")
def shell(tmp_path_factory):
    """A real IPython InteractiveShell with onnxkit's magics loaded."""
    pytest.importorskip("IPython")
    os.environ.setdefault("IPYTHONDIR", str(tmp_path_factory.mktemp("ipython")))
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "onnxkit.magic")
    return ip
