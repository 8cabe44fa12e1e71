"""Every argument error of %onnx_run and %%onnx is one line, in a real IPython shell."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

import onnxkit
from onnxkit.magic import MagicError
from tests.hostile.fifos import unblocked

IPython = pytest.importorskip("IPython")

CELL = "\ng (float[N] x) => (float[N] y) { y = Relu(x) }\n"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture
def ns(shell, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    shell.user_ns.update(x=np.array([-1.0, 2.0, -3.0], np.float32),
                         m=onnxkit.load('<ir_version: 8, opset_import: ["" : 18]>' + CELL),
                         fifo_path=str(fifo), folder=str(tmp_path))
    with unblocked(fifo):  # a wrong open of the FIFO fails after a while instead of hanging
        yield shell
    for name in ("x", "m", "g", "fifo_path", "folder"):
        shell.user_ns.pop(name, None)


def one_line_error(shell, capsys, code: str) -> str:
    result = shell.run_cell(code, store_history=False)
    assert isinstance(result.error_in_exec, MagicError), (code, result.error_in_exec)
    captured = capsys.readouterr()
    text = (captured.out + captured.err).strip()
    assert "Traceback" not in text and len(text.splitlines()) == 1, text
    assert text.startswith("onnxkit error: ") and not RAW.search(text), text
    return text


CASES = [
    # %%onnx: every option, bad values
    ("%%onnx g --opset abc" + CELL, "--opset 'abc': give a whole number from 1 to"),
    ("%%onnx g --opset -1" + CELL, "--opset '-1': give a whole number from 1 to"),
    ("%%onnx g --opset 0" + CELL, "--opset '0': give a whole number from 1 to"),
    ("%%onnx g --opset 99999999999999999999" + CELL, "--opset '99999999999999999999'"),
    ("%%onnx g --opset 1.5" + CELL, "--opset '1.5'"),
    ("%%onnx g --opset" + CELL, "--opset needs a value"),
    ("%%onnx g --opset 18 --opset 19" + CELL, "--opset is given twice"),
    ("%%onnx g --executor gpu9" + CELL, "--executor 'gpu9': choose one of cpu, cuda, reference"),
    ("%%onnx g --run=1" + CELL, "--run takes no value"),
    ("%%onnx g --no-show=yes" + CELL, "--no-show takes no value"),
    ("%%onnx g --frob" + CELL, "unknown option --frob"),
    ("%%onnx g --run x=" + CELL, "input 'x' has no value: write x=EXPRESSION"),
    ("%%onnx g --run x=x x=x" + CELL, "input 'x' is given twice"),
    ("%%onnx g --run x=undefined_name" + CELL, "input 'x': cannot evaluate 'undefined_name': NameError"),
    ("%%onnx g --run x=1/0" + CELL, "ZeroDivisionError"),
    ("%%onnx g --run y=x" + CELL, "unknown input name(s) 'y'"),
    ("%%onnx g h" + CELL, "usage: %%onnx [NAME]"),
    ("%%onnx g x='a" + CELL, "unclosed quote"),
    # %onnx_run: every option, bad values
    ("%onnx_run m x=x --level abc", "--level 'abc': give a whole number from 0 to 3"),
    ("%onnx_run m x=x --level 7", "--level '7': give a whole number from 0 to 3"),
    ("%onnx_run m x=x --level -1", "--level '-1'"),
    ("%onnx_run m x=x --level", "--level needs a value"),
    ("%onnx_run m x=x --executor nope", "--executor 'nope': choose one of"),
    ("%onnx_run m x=x --outputs ,", "--outputs ',': give output names separated by commas"),
    ("%onnx_run m x=x --outputs nope", "unknown output name(s) 'nope'"),
    ("%onnx_run m x=x --level=1 --level=2", "--level is given twice"),
    ("%onnx_run", "usage: %onnx_run MODEL name=value"),
    ("%onnx_run m m x=x", "usage: %onnx_run MODEL name=value"),
    ("%onnx_run m x=x x=x", "input 'x' is given twice"),
    ("%onnx_run m x=[[1.0]]", "expects tensor(float) as a numpy array"),
    ("%onnx_run m x=x.astype('int64')", "expects tensor(float) (float32), got an array of int64"),
    ("%onnx_run x x=x", "ModelLoadError: cannot load a model from ndarray"),
    ("%onnx_run no_such_model.onnx x=x", "no model file and no variable named 'no_such_model.onnx'"),
    ("%onnx_run folder x=x", "is a folder, not a model file"),
    ("%onnx_run fifo_path x=x", "is a FIFO (named pipe), not a model file"),
    ("%onnx_run /dev/null x=x", "is a character device, not a model file"),
]


@pytest.mark.parametrize("code, fragment", CASES, ids=[c.split("\n")[0][:50] for c, _ in CASES])
def test_argument_errors_are_one_line(ns, capsys, code, fragment):
    text = one_line_error(ns, capsys, code)
    assert fragment in text, text


def test_model_strings_in_errors_are_escaped(ns, capsys):
    text = one_line_error(ns, capsys, "%%onnx g --run x=x\ng (float[N] x) => (float[N] y) "
                                      "{ y = Relu(x) }\n".replace("Relu", "Relu\x1b[31m"))
    assert "\\x1b[31m" in text


def test_good_arguments_still_run(ns):
    result = ns.run_cell("%%onnx g --opset 18 --no-show --run x=x" + CELL, store_history=False)
    assert result.success, result.error_in_exec
    np.testing.assert_array_equal(result.result, [0.0, 2.0, 0.0])
    result = ns.run_cell("%onnx_run m x=x --level 2 --executor reference --outputs y",
                         store_history=False)
    np.testing.assert_array_equal(result.result, [0.0, 2.0, 0.0])
