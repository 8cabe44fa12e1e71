"""The conformance kit classifies outcomes honestly: pass, wrong answer, error."""

import numpy as np
import pytest

from onnxkit.conformance import assert_outputs_close, node_cases, run_case
from onnxkit.conformance.report import Report


def _case(name):
    return next(c for c in node_cases() if c.name == name)


def test_pass_fail_and_error_are_told_apart():
    case = _case("test_relu")
    x = case.data_sets[0][0][0]
    ok = run_case(case, lambda model, feeds: [[np.maximum(x, 0)]])
    wrong = run_case(case, lambda model, feeds: [[np.maximum(x, 0) + 1e-2]])
    broken = run_case(case, lambda model, feeds: 1 / 0)
    assert (ok.status, wrong.status, broken.status) == ("pass", "fail", "error")
    assert "ZeroDivisionError" in broken.message
    report = Report("toy", [ok, wrong, broken])
    assert report.counts() == {"pass": 1, "fail": 1, "error": 1, "skip": 0}
    assert report.by_operator()["Relu"] == {"pass": 1, "fail": 1, "error": 1, "skip": 0}


@pytest.mark.parametrize("actual, message", [
    ([np.zeros(3, np.float64)], "dtype"),
    ([np.zeros(4, np.float32)], "shape"),
    ([np.zeros(3, np.float32), np.zeros(3, np.float32)], "expected 1 outputs"),
    ([[np.zeros(3, np.float32)]], "expected an array"),
])
def test_comparison_checks_dtype_shape_count(actual, message):
    with pytest.raises(AssertionError, match=message):
        assert_outputs_close([np.zeros(3, np.float32)], actual, 1e-3, 1e-7)


def test_tolerance_is_the_cases_own():
    ref = [np.array([1.0], np.float32)]
    assert_outputs_close(ref, [np.array([1.0009], np.float32)], 1e-3, 0)
    with pytest.raises(AssertionError):
        assert_outputs_close(ref, [np.array([1.0011], np.float32)], 1e-3, 0)


@pytest.mark.parametrize("name", ["test_gru_batchwise", "test_reduce_max_empty_set_bool"])
def test_onnxruntime_s_own_errors_go_to_the_report_not_the_terminal(capfd, name):
    """onnxruntime refuses these (batchwise recurrent layout at session creation, an empty
    bool ReduceMax when run): the case is an error with its message, and onnxruntime's
    logger prints nothing to the terminal."""
    pytest.importorskip("onnxruntime")
    from onnxkit.conformance.backends import resolve_backend

    result = run_case(_case(name), resolve_backend("onnxruntime"))
    assert result.status == "error" and "ONNXRuntimeError" in result.message
    assert "onnxruntime" not in capfd.readouterr().err
