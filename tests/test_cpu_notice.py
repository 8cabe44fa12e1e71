"""Nothing compiles before a cpu kernel is used; the first use says so in one line, once
per operator, and a later process loads the kernel from the cache without a word."""

import os
import subprocess
import sys

SCRIPT = """
import sys
import numpy as np
from onnx import TensorProto, helper
import onnxkit

graph = helper.make_graph(
    [helper.make_node("Relu", ["x"], ["h"]), helper.make_node("Relu", ["h"], ["y"])], "g",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [32, 96])],
    [helper.make_empty_tensor_value_info("y")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)
sess = onnxkit.Session(model, executor="cpu")
print("session made", file=sys.stderr, flush=True)
# big enough for the Numba kernel (a tiny Relu is numpy's maximum, nothing to compile)
x = np.tile(np.array([[-1, 2, -3], [4, -5, 6]], np.float32), (16, 32))
for _ in range(2):
    (y,) = sess.run(None, {"x": x})
    print(y[:2, :3].tolist(), float(y.sum()), flush=True)
"""
NOTICE = "compiling the cpu kernel for Relu (first use, cached afterwards)\u2026"


def test_first_use_compiles_with_one_notice_then_the_cache_serves(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "ONNXKIT_CPU_NOTICE"}
    cache = str(tmp_path / "numba")
    first = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                           env={**env, "NUMBA_CACHE_DIR": cache}, timeout=600, check=True)
    lines = first.stderr.splitlines()
    assert lines[0] == "session made"  # making the session compiled nothing
    assert lines[1:] == [NOTICE]  # one notice for two Relu nodes and two runs
    # max(x, 0): 0, 2, 0 / 4, 0, 6, repeated 16 x 32 times (sum 12 * 512)
    assert first.stdout.splitlines() == ["[[0.0, 2.0, 0.0], [4.0, 0.0, 6.0]] 6144.0"] * 2
    again = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                           env={**env, "NUMBA_CACHE_DIR": cache}, timeout=600, check=True)
    assert again.stderr.splitlines() == ["session made"]
    assert again.stdout == first.stdout


def test_the_notice_can_be_silenced(monkeypatch):
    """``ONNXKIT_CPU_NOTICE=0`` (the notebook checks): no line for a kernel compiling."""
    from onnxkit.kernels.cpu import CPU, _notice, softmax

    monkeypatch.setattr(_notice, "_SHOWN", set())
    monkeypatch.setenv("ONNXKIT_CPU_NOTICE", "0")
    assert _notice.notice(softmax._shift, CPU) is None
    monkeypatch.delenv("ONNXKIT_CPU_NOTICE")
    assert _notice.notice(softmax._shift, CPU) == (
        "compiling the cpu kernel _shift (first use, cached afterwards)\u2026")
    assert _notice.notice(softmax._shift, CPU) is None  # once
