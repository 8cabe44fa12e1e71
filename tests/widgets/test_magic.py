"""%onnx_run and %%onnx in a real IPython InteractiveShell."""

from __future__ import annotations


import numpy as np
import onnx
import pytest

import onnxkit
from onnxkit.magic import MagicError, parse_options, split_line
from onnxkit.widgets import GraphWidget
from tests.widgets._models import CHAIN, model

IPython = pytest.importorskip("IPython")


@pytest.fixture
def ns(shell):
    shell.user_ns.update(x=np.array([-1.0, 2.0, -3.0], np.float32))
    yield shell
    for name in ("x", "b", "np", "tiny", "m", "chain_path", "res"):
        shell.user_ns.pop(name, None)


def run(shell, code: str):
    result = shell.run_cell(code, store_history=False)
    return result


def test_cell_magic_stores_shows_and_runs(ns, capsys):
    r = run(ns, "%%onnx tiny --run x=x\ntiny (float[N] x) => (float[N] y) { y = Relu(x) }\n")
    assert r.success, r.error_in_exec
    np.testing.assert_array_equal(r.result, [0.0, 2.0, 0.0])
    assert isinstance(ns.user_ns["tiny"], onnx.ModelProto)
    assert ns.user_ns["tiny"].opset_import[0].version == onnx.defs.onnx_opset_version()
    assert "<onnxkit GraphWidget 'tiny': 1 nodes, 2 edges, trace of 1 node runs>" in capsys.readouterr().out


def test_cell_magic_without_run_returns_the_widget(ns):
    r = run(ns, "%%onnx m --opset 18\ng (float[N] a, float[N] b) => (float[N] c) { c = Add(a, b) }")
    assert r.success and isinstance(r.result, GraphWidget)
    assert ns.user_ns["m"].opset_import[0].version == 18
    r = run(ns, f"%%onnx --no-show\n{CHAIN}")
    assert r.success and r.result is None


def test_line_magic_runs_a_file_and_a_variable(ns, tmp_path):
    path = tmp_path / "chain.onnx"
    onnx.save(model(CHAIN), str(path))
    ns.user_ns["chain_path"] = str(path)
    ns.user_ns["m"] = model(CHAIN)
    x, b = np.ones((2, 3), np.float32), np.full(3, 2.0, np.float32)
    ns.user_ns.update(x=x, b=b, np=np)
    for target in (f"'{path}'", "chain_path", "m"):
        r = run(ns, f"%onnx_run {target} x=x b=b")
        assert r.success, r.error_in_exec
        assert set(r.result) == {"y", "z"}  # two outputs: a dict
        np.testing.assert_array_equal(r.result["y"], (x + b) ** 2)
    r = run(ns, "res = %onnx_run m x=x*2 b=b[::1] --outputs z")
    np.testing.assert_array_equal(ns.user_ns["res"], 2 * x)  # one output: the value itself
    r = run(ns, "%onnx_run m x=x.astype('float32') b=np.asarray(b, dtype='float32')")
    assert r.success, r.error_in_exec


@pytest.mark.parametrize("code, message", [
    ("%%onnx bad\ng (float[N] x) => (float[N] y) { y = Relu(x }",
     "onnxkit error: ModelLoadError: invalid ONNX text syntax: [ParseError at position (line: 1"),
    ("%%onnx bad\ng (float[N] x) => (float[N] y) { y = Frobnicate(x) }",
     "onnxkit error: the model is not valid ONNX: No Op registered for Frobnicate"),
    ("%onnx_run tiny_missing x=x", "onnxkit error: no model file and no variable named 'tiny_missing'"),
    ("%onnx_run m x=nothing", "onnxkit error: input 'x': cannot evaluate 'nothing': NameError"),
    ("%onnx_run m x=x.astype('float64')", "onnxkit error: InputError: input 'x' expects tensor(float)"),
    ("%onnx_run m x=x --frob 1", "onnxkit error: unknown option --frob"),
    ("%%onnx 1abc\ng (float[N] x) => (float[N] y) { y = Relu(x) }", "is not a valid Python variable name"),
    ("%%onnx\n  \n", "onnxkit error: the %%onnx cell is empty"),
])
def test_errors_are_one_line(ns, capsys, code, message):
    ns.user_ns["m"] = model("<ir_version: 8, opset_import: [\"\" : 18]>\n"
                            "g (float[N] x) => (float[N] y) { y = Relu(x) }")
    r = run(ns, code)
    assert isinstance(r.error_in_exec, MagicError)
    out = capsys.readouterr()
    text = (out.out + out.err).strip()
    assert message in text
    assert "Traceback" not in text and len(text.splitlines()) == 1


def test_argument_splitting_keeps_expressions_whole():
    assert split_line("m x=a[0, 1] y=f('a b') --executor cpu") == [
        "m", "x=a[0, 1]", "y=f('a b')", "--executor", "cpu"]
    positional, feeds, options = parse_options(split_line("'my model.onnx' x=x --level=2"),
                                               set(), {"level"})
    assert (positional, feeds, options) == (["my model.onnx"], {"x": "x"}, {"level": "2"})
    with pytest.raises(MagicError, match="unclosed quote"):
        split_line("m x='a")


def test_load_ext_onnxkit_registers_the_magics(shell):
    if not hasattr(onnxkit, "load_ipython_extension"):
        pytest.skip("onnxkit/__init__.py does not export load_ipython_extension yet")
    shell.run_line_magic("load_ext", "onnxkit")
    assert "onnx_run" in shell.magics_manager.magics["line"]
    assert "onnx" in shell.magics_manager.magics["cell"]
