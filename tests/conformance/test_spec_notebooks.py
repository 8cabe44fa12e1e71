"""The spec notebooks: generated from onnx's expected values, a mismatch is an nbval diff."""

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from onnxkit.conformance.spec_cells import render
from onnxkit.conformance.spec_notebooks import write_notebooks

ROOT = Path(__file__).resolve().parents[2]


def test_render_marks_only_values_outside_the_tolerance():
    import numpy as np

    expected = [np.array([1.0, 2.0, 3.0], np.float32)]
    same = render("test_x", "Op", expected, [np.array([1.0004, 2.0, 3.0], np.float32)], 1e-3, 0)
    assert same == render("test_x", "Op", expected, expected, 1e-3, 0)
    wrong = render("test_x", "Op", expected, [np.array([1.0, 2.5, 3.0], np.float32)], 1e-3, 0)
    assert "!2.5" in wrong and "1 values outside rtol=0.001" in wrong
    shape = render("test_x", "Op", expected, [np.zeros(4, np.float32)], 1e-3, 0)
    assert "! got shape (4,) float32" in shape


def _nbval(notebook: Path, runtime: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, ONNXKIT_SPEC_RUNTIME=runtime,
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    lean = ["-p", "no:anyio", "-p", "no:hypothesispytest", "-p", "no:xdist"]  # ~2 s each to load
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *lean,
                           "--nbval", str(notebook)], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=600)


@pytest.mark.slow
def test_a_broken_kernel_is_an_nbval_diff_naming_operator_and_case(tmp_path):
    (path,) = write_notebooks(str(tmp_path), only={"Relu"})
    nb = nbformat.read(path, 4)
    saved = [c.outputs[0]["text"] for c in nb.cells if c.cell_type == "code" and c.outputs]
    assert saved and saved[0].startswith("Relu test_relu\noutput 0: shape (3, 4, 5) float32")
    assert _nbval(Path(path), "reference").returncode == 0
    broken = _nbval(Path(path), "tests.conformance.broken_relu:BrokenRelu")
    assert broken.returncode != 0
    assert "show('test_relu', 'Relu'" in broken.stdout and "values outside rtol=0.001" in broken.stdout


def test_render_reads_numpy_scalars_as_0_d_arrays():
    """onnx's expected outputs of reductions to a scalar are numpy scalars, not arrays."""
    import numpy as np

    text = render("test_x", "Op", [np.float32(1.5)], [np.float32(1.5)], 1e-3, 0)
    assert text == "Op test_x\noutput 0: shape () float32\n  1.500"
