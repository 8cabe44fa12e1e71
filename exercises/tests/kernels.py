"""Run a model with only an exercise's kernels registered, and collect an op's test cases."""

from __future__ import annotations

import onnx

from onnxkit import Session
from onnxkit.conformance import node_cases
from onnxkit.errors import KernelError
from onnxkit.runtime.executors import Executor


class ExerciseExecutor(Executor):
    name = "exercise"


def run(module, model: onnx.ModelProto, feeds: dict) -> list:
    """Outputs of ``model`` run with the kernels of ``module.KERNELS`` only.

    A kernel's own exception (a stub's NotImplementedError, an assertion) is re-raised as it
    is, so the failure names the task instead of the node that ran it.
    """
    sess = Session(model, executor=ExerciseExecutor((module.KERNELS,)))
    try:
        return sess.run(None, feeds)
    except KernelError as exc:
        if exc.__cause__ is not None:
            raise exc.__cause__ from exc
        raise


def cases_of(op_type: str) -> list:
    """The onnx backend node cases whose graph is exactly one ``op_type`` node."""
    return [c for c in node_cases() if c.op_types == [op_type]]
