"""Every kernel the cases reach compiles to PTX for a real GPU (sm_90), without a GPU.

Needs the CUDA toolkit's NVVM library (``tests/cuda/ptx_check.py``); skipped without it.
"""

import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def test_kernels_compile_for_a_real_gpu():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    probe = subprocess.run([sys.executable, "-c", "from tests.cuda.ptx_check import nvvm_available;"
                            "print(nvvm_available())"], env=env, capture_output=True, text=True)
    if probe.stdout.strip() != "True":
        pytest.skip("no CUDA toolkit NVVM to compile with")
    # the op cases reach every kernel template (``--spec`` adds dtypes; by hand, it takes
    # minutes more)
    proc = subprocess.run([sys.executable, "-m", "tests.cuda.ptx_check", "--resources"],
                          env=env, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-3000:]
    assert "0 failed" in proc.stdout
    # with ptxas on PATH every kernel was assembled too: none may spill registers
    spilling = [line for line in proc.stdout.splitlines()
                if "spill stores" in line and not re.search(r"\b0 B spill stores", line)]
    assert not spilling, "\n".join(spilling)
