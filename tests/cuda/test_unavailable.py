"""Without a GPU and without the simulator, executor="cuda" says why and what to do.

Each check runs in a fresh interpreter: numba reads NUMBA_ENABLE_CUDASIM once, at import.
NUMBA_DISABLE_CUDA=1 makes the answer the same on machines that do have a GPU.
"""

import os
import subprocess
import sys

SCRIPT = """
import numpy as np, onnx
from onnx import helper, TensorProto
import onnxkit
from onnxkit.errors import ExecutorUnavailableError
g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
{before}
try:
    onnxkit.Session(m, executor="cuda")
except ExecutorUnavailableError as exc:
    print("UNAVAILABLE:", exc)
else:
    print("RAN")
"""


def _run(before: str = "", **env_extra) -> str:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env.update(env_extra)
    proc = subprocess.run([sys.executable, "-c", SCRIPT.format(before=before)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_no_gpu_no_simulator_is_a_clear_error():
    out = _run(NUMBA_DISABLE_CUDA="1")
    assert out.startswith("UNAVAILABLE: the 'cuda' executor is unavailable"), out
    assert "NUMBA_ENABLE_CUDASIM=1" in out and "NVIDIA GPU" in out


def test_setting_the_simulator_too_late_is_explained():
    out = _run('import numba, os\nos.environ["NUMBA_ENABLE_CUDASIM"] = "1"', NUMBA_DISABLE_CUDA="1")
    assert "UNAVAILABLE" in out and "before Python starts" in out, out


def test_numba_cuda_array_typing_loads_on_a_numpy_without_row_stack():
    """numpy 2.5 removed np.row_stack; numba-cuda 0.30's array typing registers it
    unguarded, so every kernel compile failed on the lent H200 (numpy 2.5.2) until the
    executor gave the alias back. Here numpy 2.5 is imitated by deleting the name."""
    script = ("import numpy\n"
              "if hasattr(numpy, 'row_stack'): del numpy.row_stack\n"
              "{fix}"
              "import numba.cuda.np.arrayobj\n"
              "print('LOADED', numpy.row_stack is numpy.vstack)\n")
    fixed = "from onnxkit.kernels.cuda import _numpy_compat\n_numpy_compat()\n"
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    runs = [subprocess.run([sys.executable, "-c", script.format(fix=fix)], env=env,
                           capture_output=True, text=True, timeout=120) for fix in ("", fixed)]
    assert "has no attribute 'row_stack'" in runs[0].stderr  # the failure, reproduced
    assert runs[1].returncode == 0, runs[1].stderr
    assert runs[1].stdout.strip() == "LOADED True"
