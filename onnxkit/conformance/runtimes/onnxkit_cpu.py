"""onnxkit's ``cpu`` executor (Numba kernels for the hot operators, reference kernels otherwise).

Inputs: the feeds dict as given. Outputs: ``Session.run(None, feeds)``, in graph order.
The first run compiles the Numba kernels (cached in NUMBA_CACHE_DIR).
"""

from __future__ import annotations

from onnxkit.conformance.runtimes._common import dist_version

DISTRIBUTION = "onnxkit"
EXECUTOR = "cpu"


def version() -> str | None:
    if dist_version("numba", "numba") is None:
        return None
    return dist_version(DISTRIBUTION, "onnxkit")


def runner():
    from onnxkit.conformance.runner import onnxkit_runner

    return onnxkit_runner(EXECUTOR)
