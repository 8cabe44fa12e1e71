"""Nothing in a model runs code: no eval/exec of model strings, no unpickling, no processes.

Two checks: the source never calls the dangerous functions at all (an AST scan), and
models whose every string is a Python or pickle payload load and run in the sandboxed
worker, whose audit hook reports any compile, unpickle, process or socket.
"""

from __future__ import annotations

import ast
import os
import pickle
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import onnxkit
from tests.hostile.sandbox import Case, Sandbox

PACKAGE = Path(onnxkit.__file__).parent

# dynamic imports of onnxkit's own modules or onnx's case modules (names from the package
# or from onnx, never from a model)
IMPORT_MODULE_ALLOWED = {"ops/__init__.py", "kernels/cpu/__init__.py", "kernels/cuda/__init__.py",
                         "cli/__init__.py", "conformance/backends.py", "conformance/runtimes/__init__.py",
                         "conformance/spec_cells.py", "conformance/spec_notebooks.py",
                         "runtime/executors.py"}  # (its BACKENDS table's fixed module names)
# processes started with fixed code, never with anything from a model
SPAWN_ALLOWED = {"conformance/spec_notebooks.py"}  # lists onnx's case modules in a fresh interpreter
SPAWNS = {("subprocess", "run"), ("subprocess", "Popen"), ("subprocess", "call"),
          ("subprocess", "check_output")}
NEVER = {"eval", "exec", "compile", "__import__", "breakpoint"}
# compiles source it wrote itself from a fixed list of words, checked before it compiles
# (``straight_line.vetted``): a graph run as one function; no string of a model is in it
COMPILE_ALLOWED = {"runtime/straight_line.py"}
NEVER_ATTR = {("pickle", "load"), ("pickle", "loads"), ("pickle", "Unpickler"), ("marshal", "load"),
              ("marshal", "loads"), ("shelve", "open"), ("yaml", "load"), ("dill", "load"),
              ("dill", "loads"), ("os", "system"), ("os", "popen"), ("subprocess", "run"),
              ("subprocess", "Popen"), ("subprocess", "call"), ("subprocess", "check_output"),
              ("jsonpickle", "decode")}


def _calls(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            yield node


def _keyword(call: ast.Call, name: str):
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


def test_source_never_evaluates_unpickles_or_spawns():
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        for call in _calls(ast.parse(path.read_text(), str(path))):
            func = call.func
            where = f"{rel}:{call.lineno}: {ast.unparse(call)[:80]}"
            if isinstance(func, ast.Name) and func.id in NEVER:
                if not (func.id in ("exec", "compile") and rel in COMPILE_ALLOWED):
                    problems.append(where)
            if not isinstance(func, ast.Attribute):
                continue
            base = ast.unparse(func.value)
            called = (base.split(".")[-1], func.attr)
            if called in NEVER_ATTR and not (called in SPAWNS and rel in SPAWN_ALLOWED):
                problems.append(where)
            if func.attr == "load" and base in ("np", "numpy"):
                flag = _keyword(call, "allow_pickle")
                if not (isinstance(flag, ast.Constant) and flag.value is False):
                    problems.append(where + "  (np.load needs allow_pickle=False)")
            if func.attr == "load" and base == "torch":
                flag = _keyword(call, "weights_only")
                if not (isinstance(flag, ast.Constant) and flag.value is True):
                    problems.append(where + "  (torch.load needs weights_only=True)")
            if func.attr == "import_module" and rel not in IMPORT_MODULE_ALLOWED:
                problems.append(where + "  (dynamic import outside the allowed modules)")
    assert not problems, "code that could run what a model says:\n" + "\n".join(problems)


class _Payload:
    """Unpickling this runs a shell command: the test fails if the marker file appears."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def code_model(marker: str) -> bytes:
    """Every string slot holds code; a STRING initializer and a uint8 one hold a pickle."""
    py = f"__import__('pathlib').Path({marker!r}).touch()"
    blob = pickle.dumps(_Payload(marker))
    text_blob = pickle.dumps(_Payload(marker), protocol=0)  # ASCII: valid in a STRING tensor
    words = helper.make_tensor("words", TensorProto.STRING, [3], [py.encode(), text_blob, b"{{7*7}}"])
    raw = onnx.numpy_helper.from_array(np.frombuffer(blob, np.uint8).copy(), "raw")
    nodes = [
        helper.make_node("StringNormalizer", ["words"], ["norm"], name=py, doc_string=py,
                         case_change_action="LOWER", stopwords=[py]),
        helper.make_node("RegexFullMatch", ["words"], ["match"], name=py, pattern=py.replace("(", "\\(")
                         .replace(")", "\\)").replace("[", "\\[").replace(".", "\\.")),
        helper.make_node("Cast", ["raw"], ["as_float"], to=TensorProto.FLOAT),
        helper.make_node("Relu", ["x"], ["y"], name=py),
    ]
    graph = helper.make_graph(nodes, py, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info(n, t, None) for n, t in
                               [("y", TensorProto.FLOAT), ("norm", TensorProto.STRING),
                                ("match", TensorProto.BOOL), ("as_float", TensorProto.FLOAT)]],
                              initializer=[words, raw], doc_string=py)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], doc_string=py,
                              producer_name=py)
    helper.set_model_props(model, {"exec": py, "pickle": blob.decode("latin-1")})
    model.ir_version = 10
    return model.SerializeToString()


def test_models_made_of_code_run_no_code(tmp_path):
    marker = str(tmp_path / "pwned")
    data = code_model(marker)
    with Sandbox() as box:
        for via_path in (False, True):
            outcome = box.run(Case(data, {"x": np.ones(2, np.float32)}, via_path=via_path))
            assert outcome.kind == "ok", outcome.report()
    assert not os.path.exists(marker)


def test_cli_refuses_pickled_npy_inputs(tmp_path):
    from onnxkit.cli import main

    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.npy"
    np.save(evil, np.array([_Payload(str(marker))], dtype=object), allow_pickle=True)
    model = tmp_path / "m.onnx"
    model.write_bytes(onnxkit.load("""<ir_version: 8, opset_import: ["" : 18]>
        g (float[2] x) => (float[2] y) { y = Relu(x) }""").SerializeToString())
    try:
        code = main(["run", str(model), "--input", f"x={evil}"])
    except (ValueError, onnxkit.OnnxkitError):
        code = 1
    assert code != 0 and not marker.exists()


@pytest.mark.parametrize("blob_kind", ["string_data", "raw_data"])
def test_pickles_inside_tensors_stay_bytes(blob_kind, tmp_path):
    marker = tmp_path / "pwned"
    blob = pickle.dumps(_Payload(str(marker)), protocol=0)  # ASCII, valid UTF-8
    if blob_kind == "string_data":
        tensor = helper.make_tensor("t", TensorProto.STRING, [1], [blob])
    else:
        tensor = onnx.numpy_helper.from_array(np.frombuffer(blob, np.uint8).copy(), "t")
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Identity", ["t"], ["y"])], "g", [], [helper.make_value_info("y", onnx.TypeProto())],
        initializer=[tensor]), opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    (y,) = onnxkit.Session(model).run(None, {})
    assert (y.reshape(-1)[0] == blob.decode()) if blob_kind == "string_data" else y.tobytes() == blob
    assert not marker.exists()
