"""Version refusals are told from wrong answers; foreign runtimes run isolated."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from onnxkit.conformance import node_cases
from onnxkit.conformance.adapt import adapt, is_version_refusal
from onnxkit.conformance.cases import Case
from onnxkit.conformance.isolation import Worker
from onnxkit.conformance.runtimes import installed
from onnxkit.conformance.scoreboard import run_cell

CASES = {c.name: c for c in node_cases()}
ORT_REFUSAL = ("[ONNXRuntimeError] : 1 : FAIL : Unsupported model IR version: 14, "
               "max supported IR version: 13")


def _model(op="Relu", opset=28, ir=14, elem=TensorProto.FLOAT, name="g"):
    graph = helper.make_graph([helper.make_node(op, ["x"], ["y"])], name,
                              [helper.make_tensor_value_info("x", elem, [3])],
                              [helper.make_tensor_value_info("y", elem, [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir
    return model


def test_a_version_refusal_is_told_from_other_errors():
    assert is_version_refusal(ORT_REFUSAL)
    assert not is_version_refusal("NOT_IMPLEMENTED : Could not find an implementation for Relu")
    assert not is_version_refusal("output 0: shape (3,) != expected (4,)")


def test_adapt_lowers_opset_to_the_operator_version_and_ir_to_what_it_needs():
    adapted, note = adapt(_model())
    onnx.checker.check_model(adapted)
    # Relu's newest version is 14: opset 14 needs IR 7 (onnx's VERSION_TABLE)
    assert [(o.domain, o.version) for o in adapted.opset_import] == [("", 14)]
    assert adapted.ir_version == 7
    assert "IR version 14 -> 7" in note


def test_adapt_keeps_the_ir_version_a_newer_element_type_needs():
    model = _model(opset=14)
    model.graph.initializer.append(helper.make_tensor("w", TensorProto.FLOAT8E4M3FN, [1], [1.0]))
    adapted, note = adapt(model)
    assert adapted.ir_version == 9  # opset 14 alone would allow IR 7; float8 arrived with IR 9


def test_nothing_to_adapt_is_said_so():
    adapted, note = adapt(_model(opset=14, ir=7))
    assert adapted is None and "nothing to lower" in note


@pytest.mark.skipif("onnxruntime" not in installed(), reason="onnxruntime is not installed")
def test_onnxruntime_s_ir_refusal_is_its_own_state_with_the_adapted_result_beside_it():
    """onnx 1.23 writes IR 14, onnxruntime 1.31 reads 13 at most. test_bitshift_left_uint8
    (BitShift-28 on uint8: semantics as BitShift-11) passes once adapted; the int8 case
    needs BitShift-28's signed types, so its version is refused."""
    with Worker("onnxruntime") as worker:
        uint8 = run_cell(worker, CASES["test_bitshift_left_uint8"], 60)
        int8 = run_cell(worker, CASES["test_bitshift_left_int8"], 60)
    assert uint8.state == "adapted", uint8
    assert "IR version" in uint8.message and "opset 28 -> 11" in uint8.adapted
    assert int8.state == "version", int8


def _identity_case(graph_name: str) -> Case:
    model = _model(op="Identity", opset=14, ir=7, name=graph_name)
    x = np.array([1, 2, 3], np.float32)
    return Case(f"test_{graph_name}", "node", 1e-3, 1e-7, None, model, [([x], [x])])


def test_a_crash_and_a_hang_are_counted_and_the_run_goes_on():
    runtime = "tests.conformance.fake_runtimes:Misbehaving"
    with Worker(runtime) as worker:
        assert run_cell(worker, _identity_case("fine"), 30).state == "pass"
        crash = run_cell(worker, _identity_case("crash"), 30)
        after_crash = run_cell(worker, _identity_case("fine"), 30)
        hang = run_cell(worker, _identity_case("hang"), 2)
        after_hang = run_cell(worker, _identity_case("fine"), 30)
        restarts = worker.restarts
    assert crash.state == "crash" and "SIGABRT" in crash.message
    assert hang.state == "timeout"
    assert (after_crash.state, after_hang.state, restarts) == ("pass", "pass", 2)


@pytest.mark.skipif("tract" not in installed(), reason="tract is not installed")
def test_a_tract_error_carries_no_rust_backtrace_even_where_one_is_asked_for(monkeypatch):
    """With RUST_BACKTRACE=1 tract captures a backtrace with every error (most of a second
    each); the worker turns them off, so the message is the error alone."""
    monkeypatch.setenv("RUST_BACKTRACE", "1")
    with Worker("tract") as worker:
        cell = run_cell(worker, CASES["test_cumsum_1d_exclusive"], 60)
    assert cell.state == "error" and "CumSum" in cell.message, cell
    assert "backtrace" not in cell.message.lower()
