"""onnxkit's ``reference`` executor (readable numpy kernels).

Inputs: the feeds dict as given. Outputs: ``Session.run(None, feeds)``, in graph order.
"""

from __future__ import annotations

from onnxkit.conformance.runtimes._common import dist_version

DISTRIBUTION = "onnxkit"
EXECUTOR = "reference"


def version() -> str | None:
    return dist_version(DISTRIBUTION, "onnxkit")


def runner():
    from onnxkit.conformance.runner import onnxkit_runner

    return onnxkit_runner(EXECUTOR)
