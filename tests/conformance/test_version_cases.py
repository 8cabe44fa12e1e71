"""Older operator versions: hand-written cases (numpy from the old spec text) and onnx's
cases re-stamped at older opsets (kept only where onnx.reference agrees at that version)."""

import onnx
import pytest

from onnxkit.conformance import run_case
from onnxkit.conformance.runner import onnxkit_runner
from onnxkit.conformance.versions import SEMANTICS_CHANGED, manifest_cases
from onnxkit.conformance.versions_written import written_cases

WRITTEN = written_cases()


@pytest.mark.parametrize("case", WRITTEN, ids=[c.name for c in WRITTEN])
def test_written_case_is_valid_at_its_opset_and_the_reference_executor_passes(case):
    onnx.checker.check_model(case.model, full_check=True)
    result = run_case(case, onnxkit_runner("reference"))
    assert result.status == "pass", result.message


def test_softmax_before_13_is_not_today_s_softmax():
    """The written expectation differs from a per-axis softmax: the case can tell them apart."""
    import numpy as np

    case = next(c for c in WRITTEN if c.name == "test_softmax_coerced_2d_default_axis_v11")
    (x,), (expected,) = case.data_sets[0]
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    assert not np.allclose(expected, e / e.sum(axis=-1, keepdims=True), atol=1e-3)


def test_restamped_cases_stay_inside_their_older_schema_and_pass_on_onnx_reference():
    from onnx.reference import ReferenceEvaluator

    from onnxkit.conformance.compare import assert_outputs_close

    cases = manifest_cases()
    assert len(cases) > 1000
    for case in cases:
        node = case.model.graph.node[0]
        assert case.model.opset_import[0].version >= SEMANTICS_CHANGED.get(node.op_type, 0), case.name
    for case in cases[::97]:  # a spread sample, re-checked against onnx's own evaluator
        onnx.checker.check_model(case.model, full_check=True)
        inputs, expected = case.data_sets[0]
        got = ReferenceEvaluator(case.model).run(None, case.feeds(inputs))
        assert_outputs_close(expected, list(got), case.rtol, case.atol)
