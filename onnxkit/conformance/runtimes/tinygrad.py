"""tinygrad (``pip install tinygrad``): its ONNX frontend, ``tinygrad.nn.onnx.OnnxRunner``.

The serialized model is handed over as a ``Tensor`` of bytes; the runner is called with the
feeds dict by graph input name and returns a dict of output name -> ``Tensor`` (read back
with ``.numpy()``, in graph output order; sequences as lists). tinygrad needs a device: on
a CPU-only machine its ``CPU`` device compiles kernels with clang, so without clang (or
another usable device) the runtime counts as not installed.

Lowering and compiling each kernel takes most of a second of Python and clang, so the
scoreboard runs it on every ``EVERY``-th case unless asked for all
(``onnxkit scoreboard --every-runtime tinygrad=1``): all of them would take it over an hour.
"""

from __future__ import annotations

from functools import lru_cache

from onnxkit.conformance.runtimes._common import dist_version, graph_outputs

DISTRIBUTION = "tinygrad"
EVERY = 20


@lru_cache(maxsize=1)
def _usable() -> bool:
    try:
        from tinygrad import Device

        Device.DEFAULT  # noqa: B018 - raises "no usable devices" where none is
    except Exception:  # any failure to find a device means: cannot run here
        return False
    return True


def version() -> str | None:
    v = dist_version(DISTRIBUTION, "tinygrad")
    return v if v is not None and _usable() else None


def _to_numpy(value):
    if isinstance(value, (list, tuple)):
        return [_to_numpy(v) for v in value]
    return value.numpy() if hasattr(value, "numpy") else value


def runner():
    from tinygrad import Tensor
    from tinygrad.nn.onnx import OnnxRunner

    def run(model, feeds_list):
        names = graph_outputs(model)
        results = []
        for feeds in feeds_list:
            out = OnnxRunner(Tensor(model.SerializeToString()))(dict(feeds))
            results.append([_to_numpy(out[n]) for n in names])
        return results

    return run
