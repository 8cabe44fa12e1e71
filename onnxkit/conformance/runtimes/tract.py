"""tract (``pip install tract``: Python bindings of Sonos's Rust inference engine).

The model goes through a temporary .onnx file (``tract.onnx().load``), is typed and
optimized (``into_model``) and made runnable. Inputs are passed positionally in graph input
order (initializers excluded); outputs come back in graph order and are read with
``to_numpy()``. tract has no sequence, optional or string values.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np

from onnxkit.conformance.runtimes._common import dist_version, graph_inputs

DISTRIBUTION = "tract"


def version() -> str | None:
    return dist_version(DISTRIBUTION, "tract")


def runner():
    import tract

    def run(model, feeds_list):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "model.onnx")
            with open(path, "wb") as f:
                f.write(model.SerializeToString())
            runnable = tract.onnx().load(path).into_model().into_runnable()
        names = graph_inputs(model)
        return [[np.asarray(t.to_numpy()) for t in runnable.run([feeds[n] for n in names])]
                for feeds in feeds_list]

    return run
