"""Apache TVM (``pip install apache-tvm``): its Relax ONNX frontend, compiled for ``llvm`` (CPU).

``tvm.relax.frontend.onnx.from_onnx`` imports the model with its initializers as constants;
the module is legalized to TensorIR and compiled with ``tvm.compile(mod, target="llvm")``,
then run on a ``relax.VirtualMachine`` with one ``tvm.runtime`` tensor per graph input,
positionally in graph input order (initializers excluded). Its result (a tensor, or a tuple
of them in graph output order) is read back with ``.numpy()``; a shape value (what ``Shape``
computes, which Relax keeps as a tuple of ints) as int64. TVM has no string values;
sequences and optionals are the frontend's errors.

Compiling each model with LLVM takes about a second here, so the scoreboard runs it on every
``EVERY``-th case unless asked for all (``--every-runtime tvm=1``).
"""

from __future__ import annotations

import numpy as np

from onnxkit.conformance.runtimes._common import dist_version, graph_inputs

DISTRIBUTION = "apache-tvm"
EVERY = 20


def version() -> str | None:
    return dist_version(DISTRIBUTION, "tvm")


def _to_numpy(value):
    if hasattr(value, "numpy"):
        return value.numpy()
    if isinstance(value, (list, tuple)) or type(value).__name__ in ("Array", "Shape", "ShapeTuple"):
        if all(isinstance(v, (int, np.integer)) for v in value):
            return np.asarray(list(value), np.int64)  # a shape value (Shape's output): int64
        return [_to_numpy(v) for v in value]
    return np.asarray(value)


def runner():
    import tvm
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx

    device = tvm.cpu()

    def run(model, feeds_list):
        mod = from_onnx(model, keep_params_in_input=False)
        mod = relax.transform.DecomposeOpsForInference()(mod)
        mod = relax.transform.LegalizeOps()(mod)
        vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), device)
        names = graph_inputs(model)
        n_out = len(model.graph.output)
        results = []
        for feeds in feeds_list:
            args = [tvm.runtime.tensor(np.ascontiguousarray(feeds[n]), device) for n in names]
            out = vm["main"](*args)
            out = _to_numpy(out)
            results.append(list(out) if n_out > 1 else [out])
        return results

    return run
