"""The cuda tests need a GPU or numba's simulator (``make test-cuda-sim`` sets it).

NUMBA_ENABLE_CUDASIM must be set before numba is imported, so the simulator tests run in
their own pytest process; in a process without either, only the tests that need no
device (index math, the unavailable-executor message, the PTX compile check) run. Those
are skipped in the simulator process: plain ``pytest tests`` already runs them.
"""

import os

import pytest
from numba import config

SIMULATOR = bool(config.ENABLE_CUDASIM)


def _device_usable() -> bool:
    if SIMULATOR:
        return True
    from numba import cuda

    try:
        return bool(cuda.is_available())
    except Exception:  # no driver
        return False


NEEDS_DEVICE = ("test_kernels.py", "test_executor.py", "test_tiles.py", "test_attention_model.py",
                "test_graphs.py", "test_kernel_errors.py", "test_activation_formulas_cuda.py",
                "test_memory_budget_cuda.py")
#: what runs the same in any process (plain Python and numpy, ``ast``, fresh interpreters
#: without the simulator): the plain session (`pytest tests`) runs it, the simulator
#: session does not run it again
ANY_PROCESS = ("test_indexing.py", "test_tiling_plan.py", "test_unavailable.py")
collect_ignore = [] if _device_usable() else list(NEEDS_DEVICE)
if SIMULATOR:  # the PTX compile check runs without the simulator (plain `pytest tests`)
    collect_ignore += ["test_ptx.py", *ANY_PROCESS]
if SIMULATOR:  # the simulator runs each GPU thread as a Python thread: keep it quiet
    os.environ.setdefault("PYTHONWARNINGS", "ignore::RuntimeWarning")


def pytest_collection_modifyitems(config, items):
    """A device test named on the command line is collected anyway: skip it there."""
    if _device_usable():
        return
    skip = pytest.mark.skip(reason="needs a GPU or the simulator")
    for item in items:
        if item.path.name in NEEDS_DEVICE:
            item.add_marker(skip)
