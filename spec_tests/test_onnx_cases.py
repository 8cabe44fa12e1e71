"""One test per onnx backend test case: every node case and every shipped model test."""

import pytest

from onnxkit.conformance import all_cases, run_case
from onnxkit.conformance.runner import format_failure, onnxkit_runner
from spec_tests.exclusions import EXCLUDED, EXCLUDED_BY_EXECUTOR

CASES = all_cases()


@pytest.mark.parametrize("case", CASES, ids=[f"{c.kind}:{c.name}" for c in CASES])
def test_case(case, executor):
    reason = EXCLUDED.get(case.name) or EXCLUDED_BY_EXECUTOR.get(executor, {}).get(case.name)
    if reason:
        pytest.skip(reason)
    result = run_case(case, onnxkit_runner(executor))
    assert result.status == "pass", format_failure(result)
