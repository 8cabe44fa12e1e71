"""Checks of exercise 8: the learner's conformance check on runtimes whose verdicts are
known: onnxruntime (right), and runtimes broken on purpose in every way the spec names."""

from __future__ import annotations

import numpy as np
import onnx.helper as oh
import onnxruntime
import pytest

from exercises.tests.cases import node_cases_of
from exercises.tests.select import exercise
from onnxkit.conformance.cases import Case

ex = exercise("ex8_conformance")


def onnxruntime_run(model, feeds):
    return onnxruntime.InferenceSession(model.SerializeToString(),
                                        providers=["CPUExecutionProvider"]).run(None, feeds)


def shifted(by):
    def run(model, feeds):
        return [y + y.dtype.type(by) for y in onnxruntime_run(model, feeds)]
    return run


CASES = node_cases_of("Relu") + node_cases_of("Softmax")


@pytest.mark.task8_1
def test_a_right_runtime_passes_and_a_wrong_one_fails():
    assert ex.conformance(onnxruntime_run, CASES) == {}
    failed = ex.conformance(lambda model, feeds: list(feeds.values()), CASES)   # y = x
    assert set(failed) == {c.name for c in CASES}, failed
    assert all(isinstance(why, str) and why for why in failed.values())


@pytest.mark.task8_1
@pytest.mark.hidden
def test_each_way_to_fail():
    names = {c.name for c in CASES}
    assert ex.conformance(shifted(1e-9), CASES) == {}                          # within tolerance
    assert set(ex.conformance(shifted(1e-2), CASES)) == names                  # beyond it

    def raising(model, feeds):
        raise RuntimeError("no kernel")
    failed = ex.conformance(raising, CASES)
    assert set(failed) == names and all("RuntimeError" in why for why in failed.values())
    wide = ex.conformance(lambda m, f: [y.astype(np.float64) for y in onnxruntime_run(m, f)], CASES)
    assert set(wide) == names                                                  # float64, not float32
    flat = ex.conformance(lambda m, f: [y.reshape(-1) for y in onnxruntime_run(m, f)], CASES)
    assert set(flat) == {c.name for c in CASES if c.data_sets[0][1][0].ndim != 1}
    assert set(ex.conformance(lambda m, f: onnxruntime_run(m, f) * 2, CASES)) == names   # 2 outputs


@pytest.mark.task8_1
@pytest.mark.hidden
def test_nan_where_nan_is_expected():
    model = oh.make_model(oh.make_graph([oh.make_node("Identity", ["x"], ["y"])], "g",
                                        [oh.make_tensor_value_info("x", 1, [2])],
                                        [oh.make_tensor_value_info("y", 1, [2])]))
    x = np.array([np.nan, 1.0], np.float32)
    case = Case("test_nan", "node", 1e-3, 1e-7, None, model, [([x], [x])])
    assert ex.conformance(lambda m, f: [f["x"].copy()], [case]) == {}
    assert set(ex.conformance(lambda m, f: [np.array([0.0, 1.0], np.float32)], [case])) == {"test_nan"}
    assert set(ex.conformance(lambda m, f: [np.array([np.nan, np.nan], np.float32)], [case])) == {"test_nan"}
