"""One test per onnx backend test case: every node case and every shipped model test."""

import pytest

from onnxkit.conformance import all_cases, run_case
from onnxkit.conformance.runner import format_failure, onnxkit_runner
from spec_tests.exclusions import EXCLUDED, EXCLUDED_BY_EXECUTOR

CASES = all_cases()


def _simulator_skip(case, executor: str) -> str | None:
    """Under numba's CUDA simulator (every GPU thread a Python thread) only the documented
    subset runs, to keep CI time bounded; on a real GPU every case runs."""
    if executor != "cuda":
        return None
    from numba import config

    from spec_tests.cuda_subset import CUDA_SUBSET

    if config.ENABLE_CUDASIM and case.name not in CUDA_SUBSET:
        return "outside spec_tests/cuda_subset.py, the cases run under the CUDA simulator"
    return None


@pytest.mark.parametrize("case", CASES, ids=[f"{c.kind}:{c.name}" for c in CASES])
def test_case(case, executor):
    reason = (EXCLUDED.get(case.name) or EXCLUDED_BY_EXECUTOR.get(executor, {}).get(case.name)
              or _simulator_skip(case, executor))
    if reason:
        pytest.skip(reason)
    result = run_case(case, onnxkit_runner(executor))
    assert result.status == "pass", format_failure(result)
