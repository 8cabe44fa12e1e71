"""Run one case on a backend and classify the outcome: pass, fail (wrong answer), error."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from onnxkit.conformance.cases import Case
from onnxkit.conformance.compare import assert_outputs_close

# A backend for the kit is a function: (model, list of feeds dicts) -> list of output lists.
RunFn = Callable


@dataclass
class CaseResult:
    name: str
    kind: str
    op_types: list[str]
    status: str  # "pass", "fail", "error"
    message: str
    seconds: float


def onnxkit_runner(executor: str = "reference") -> RunFn:
    from onnxkit.runtime.session import Session

    def run(model, feeds_list):
        sess = Session(model, executor=executor)
        return [sess.run(None, feeds) for feeds in feeds_list]

    return run


def run_case(case: Case, run: RunFn) -> CaseResult:
    start = time.perf_counter()
    try:
        feeds_list = [case.feeds(inputs) for inputs, _ in case.data_sets]
        with np.errstate(all="ignore"):
            got = run(case.model, feeds_list)
    except Exception as exc:  # a backend may raise anything: that is the finding
        msg = f"{type(exc).__name__}: {exc}"
        return CaseResult(case.name, case.kind, case.op_types, "error", msg[:2000],
                          time.perf_counter() - start)
    try:
        for (_, expected), actual in zip(case.data_sets, got):
            assert_outputs_close(expected, actual, case.rtol, case.atol)
    except AssertionError as exc:
        return CaseResult(case.name, case.kind, case.op_types, "fail", str(exc)[:2000],
                          time.perf_counter() - start)
    return CaseResult(case.name, case.kind, case.op_types, "pass", "", time.perf_counter() - start)


def format_failure(result: CaseResult) -> str:
    return f"{result.name} [{', '.join(result.op_types)}] {result.status}: {result.message}"


__all__ = ["CaseResult", "run_case", "onnxkit_runner", "format_failure"]
