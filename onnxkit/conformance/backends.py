"""Backends the conformance kit can check, by name.

- an onnxkit executor: ``reference``, ``cpu``, ``cuda``
- a runtime with an adapter in ``onnxkit/conformance/runtimes/`` (onnxruntime, onnx.reference,
  openvino, tract, onnx2torch, tinygrad: ``runtimes.RUNTIMES``)
- any importable ``onnx.backend.base.Backend``: ``package.module`` or ``package.module:Name``

A backend is resolved to a run function ``(model, [feeds, ...]) -> [[outputs], ...]``.
"""

from __future__ import annotations

import importlib

from onnxkit.conformance.runner import onnxkit_runner
from onnxkit.conformance.runtimes import ALIASES, RUNTIMES, adapter, version
from onnxkit.errors import OnnxkitError
from onnxkit.runtime.executors import executor_names


def _onnx_backend(spec: str):
    module_name, _, attr = spec.partition(":")
    backend = importlib.import_module(module_name)
    if attr:
        backend = getattr(backend, attr)
    if not hasattr(backend, "prepare"):
        raise OnnxkitError(f"{spec!r} has no prepare(): not an onnx.backend.base.Backend")

    def run(model, feeds_list):
        rep = backend.prepare(model, "CPU")
        init = {t.name for t in model.graph.initializer}
        names = [i.name for i in model.graph.input if i.name not in init]
        return [list(rep.run([feeds[n] for n in names if n in feeds])) for feeds in feeds_list]

    return run


def resolve_backend(name: str):
    if name in executor_names():
        return onnxkit_runner(name)
    name = ALIASES.get(name, name)
    if name in RUNTIMES:
        if version(name) is None:
            raise OnnxkitError(f"runtime {name!r} is not installed here (see the 'conformance' extra)")
        return adapter(name).runner()
    try:
        return _onnx_backend(name)
    except ImportError as exc:
        raise OnnxkitError(
            f"unknown backend {name!r}: not an onnxkit executor ({', '.join(executor_names())}), "
            f"a runtime ({', '.join(RUNTIMES)}), or an importable onnx Backend ({exc})"
        ) from exc
