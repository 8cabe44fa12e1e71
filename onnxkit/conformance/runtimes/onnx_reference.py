"""onnx's own Python runtime, ``onnx.reference.ReferenceEvaluator`` (ships with onnx).

Inputs: the feeds dict by graph input name. Outputs: ``run(None, feeds)`` in graph order.
"""

from __future__ import annotations

from onnxkit.conformance.runtimes._common import dist_version

DISTRIBUTION = "onnx"


def version() -> str | None:
    return dist_version(DISTRIBUTION, "onnx.reference")


def runner():
    from onnx.reference import ReferenceEvaluator

    def run(model, feeds_list):
        sess = ReferenceEvaluator(model)
        return [list(sess.run(None, feeds)) for feeds in feeds_list]

    return run
