"""Run a model with only an exercise's kernels registered, and collect an op's test cases."""

from __future__ import annotations

import numpy as np
import onnx

from onnxkit import Session
from exercises.tests.cases import node_cases_of
from onnxkit.conformance import assert_outputs_close
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
    cases = list(node_cases_of(op_type))
    assert cases, f"no onnx backend cases for {op_type}"
    return cases


def check_cases(module, cases: list) -> None:
    """Run each case with ``module``'s kernels; compare with onnx's expected outputs at the
    case's own tolerances."""
    for case in cases:
        for inputs, expected in case.data_sets:
            got = run(module, case.model, case.feeds(inputs))
            try:
                assert_outputs_close(expected, got, case.rtol, case.atol)
            except AssertionError as err:
                raise AssertionError(f"{case.name}: {err}") from None


def one_node(op_type: str, opset: int, x: np.ndarray, **attrs) -> onnx.ModelProto:
    """A model ``y = op_type(x)`` importing ``opset``, x and y of x's dtype."""
    elem = onnx.helper.np_dtype_to_tensor_dtype(x.dtype)
    node = onnx.helper.make_node(op_type, ["x"], ["y"], **attrs)
    graph = onnx.helper.make_graph([node], "g", [onnx.helper.make_tensor_value_info("x", elem, None)],
                                   [onnx.helper.make_tensor_value_info("y", elem, None)])
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", opset)])
