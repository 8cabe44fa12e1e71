"""Adapters: one small module per runtime the conformance kit can check.

Each adapter module defines

    DISTRIBUTION   the PyPI distribution whose version is reported
    version()      that version, or None when the runtime is not installed (or cannot run here)
    runner()       a run function ``(model, [feeds, ...]) -> [[outputs], ...]``
    EVERY          (optional) the scoreboard runs every N-th case only, by default: for a
                   runtime too slow for all of them in a full run

``RUNTIMES`` is the one table of them; ``installed()`` says which can run on this machine.
A runtime that is not installed is reported as such, never as failures.
"""

from __future__ import annotations

import importlib

from onnxkit.errors import OnnxkitError

# name -> adapter module (one per runtime, in onnxkit/conformance/runtimes/)
RUNTIMES = {
    "reference": "onnxkit.conformance.runtimes.onnxkit_reference",
    "cpu": "onnxkit.conformance.runtimes.onnxkit_cpu",
    "onnxruntime": "onnxkit.conformance.runtimes.onnxruntime",
    "onnx.reference": "onnxkit.conformance.runtimes.onnx_reference",
    "openvino": "onnxkit.conformance.runtimes.openvino",
    "tract": "onnxkit.conformance.runtimes.tract",
    "onnx2torch": "onnxkit.conformance.runtimes.onnx2torch",
    "tinygrad": "onnxkit.conformance.runtimes.tinygrad",
    "tvm": "onnxkit.conformance.runtimes.tvm",
}
ALIASES = {"onnx-reference": "onnx.reference", "ort": "onnxruntime", "torch": "onnx2torch"}


def adapter(name: str):
    """The adapter module of runtime ``name``; an unknown name lists the known ones."""
    name = ALIASES.get(name, name)
    if name not in RUNTIMES:
        raise OnnxkitError(f"unknown runtime {name!r}: known runtimes are {', '.join(RUNTIMES)}")
    return importlib.import_module(RUNTIMES[name])


def version(name: str) -> str | None:
    """The runtime's version, or None where it is not installed or cannot run here."""
    return adapter(name).version()


def installed() -> dict[str, str]:
    """name -> version of every runtime that can run on this machine."""
    out = {}
    for name in RUNTIMES:
        v = version(name)
        if v is not None:
            out[name] = v
    return out


__all__ = ["RUNTIMES", "adapter", "version", "installed"]
