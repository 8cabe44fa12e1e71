"""onnxruntime (``pip install onnxruntime``), CPU execution provider, all graph optimizations.

Inputs: the feeds dict by graph input name. Outputs: ``InferenceSession.run(None, feeds)``,
in graph order (sequences as lists, optionals as None). Its logger is silenced: a case's
error is the report's to show, not the terminal's.
"""

from __future__ import annotations

from onnxkit.conformance.runtimes._common import dist_version

DISTRIBUTION = "onnxruntime"


def version() -> str | None:
    return dist_version(DISTRIBUTION, "onnxruntime")


def runner():
    import onnxruntime as ort

    def run(model, feeds_list):
        opts = ort.SessionOptions()
        opts.log_severity_level = 4
        opts.intra_op_num_threads = 1
        quiet = ort.RunOptions()
        quiet.log_severity_level = 4
        sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        return [sess.run(None, feeds, quiet) for feeds in feeds_list]

    return run
