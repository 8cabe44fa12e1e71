"""Backends the conformance kit can check, by name.

- an onnxkit executor: ``reference``, ``cpu``, ``cuda``
- ``onnxruntime`` (CPU provider, all graph optimizations)
- ``onnx.reference`` (onnx's own Python reference runtime)
- any importable ``onnx.backend.base.Backend``: ``package.module`` or ``package.module:Name``

A backend is resolved to a run function ``(model, [feeds, ...]) -> [[outputs], ...]``.
"""

from __future__ import annotations

import importlib

from onnxkit.conformance.runner import onnxkit_runner
from onnxkit.errors import OnnxkitError
from onnxkit.runtime.executors import executor_names


def _onnxruntime():
    import onnxruntime as ort

    def run(model, feeds_list):
        # only fatal messages: a case's error is the report's to show, not the terminal's
        opts = ort.SessionOptions()
        opts.log_severity_level = 4
        quiet = ort.RunOptions()
        quiet.log_severity_level = 4
        sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        return [sess.run(None, feeds, quiet) for feeds in feeds_list]

    return run


def _onnx_reference():
    from onnx.reference import ReferenceEvaluator

    def run(model, feeds_list):
        sess = ReferenceEvaluator(model)
        return [list(sess.run(None, feeds)) for feeds in feeds_list]

    return run


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
    if name == "onnxruntime":
        return _onnxruntime()
    if name in ("onnx.reference", "onnx-reference"):
        return _onnx_reference()
    try:
        return _onnx_backend(name)
    except ImportError as exc:
        raise OnnxkitError(
            f"unknown backend {name!r}: not an onnxkit executor ({', '.join(executor_names())}), "
            f"'onnxruntime', 'onnx.reference', or an importable onnx Backend ({exc})"
        ) from exc
