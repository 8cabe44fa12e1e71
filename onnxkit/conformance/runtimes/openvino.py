"""OpenVINO (``pip install openvino``): its ONNX frontend, compiled for the ``CPU`` device.

The model goes through a temporary .onnx file (``Core.read_model``), is compiled with one
inference thread, and run with a dict of graph input name -> array. Outputs are read in
``compiled.outputs`` order, which is the graph's output order; OpenVINO has no sequence or
optional values, so cases with them are its errors.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np

from onnxkit.conformance.runtimes._common import dist_version

DISTRIBUTION = "openvino"


def version() -> str | None:
    return dist_version(DISTRIBUTION, "openvino")


def runner():
    import openvino as ov

    core = ov.Core()

    def run(model, feeds_list):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "model.onnx")
            with open(path, "wb") as f:
                f.write(model.SerializeToString())
            compiled = core.compile_model(core.read_model(path), "CPU", {"INFERENCE_NUM_THREADS": 1})
        results = []
        for feeds in feeds_list:
            out = compiled(dict(feeds))
            results.append([np.asarray(out[port]) for port in compiled.outputs])
        return results

    return run
