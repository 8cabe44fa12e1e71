"""Run many cases on one backend, in parallel processes, with a progress bar."""

from __future__ import annotations

import os
import re
from concurrent.futures import ProcessPoolExecutor

import onnx

from onnxkit.conformance.cases import Case, all_cases
from onnxkit.conformance.report import Report
from onnxkit.conformance.runner import CaseResult, run_case

_WORKER: dict = {}


def select_cases(pattern: str | None = None, kinds: tuple[str, ...] | None = None) -> list[Case]:
    cases = list(all_cases())
    if kinds:
        cases = [c for c in cases if c.kind in kinds]
    if pattern:
        rx = re.compile(pattern)
        cases = [c for c in cases if rx.search(c.name)]
    return cases


def _init_worker(backend: str) -> None:
    from onnxkit.conformance.backends import resolve_backend

    _WORKER["run"] = resolve_backend(backend)
    _WORKER["cases"] = {c.name + "|" + c.kind: c for c in all_cases()}


def _run_one(key: str) -> CaseResult:
    return run_case(_WORKER["cases"][key], _WORKER["run"])


def run_suite(backend: str, cases: list[Case], jobs: int | None = None,
              excluded: dict[str, str] | None = None, progress: bool = True) -> Report:
    """Run ``cases`` on ``backend``; excluded cases are reported as skipped with their reason."""
    from tqdm.auto import tqdm

    from onnxkit.conformance.backends import resolve_backend

    resolve_backend(backend)  # an unknown backend fails here, clearly, not inside a worker
    excluded = excluded or {}
    report = Report(backend, onnx_version=onnx.__version__)
    todo = []
    for case in cases:
        if case.name in excluded:
            report.results.append(CaseResult(case.name, case.kind, case.op_types, "skip",
                                             excluded[case.name], 0.0))
        else:
            todo.append(case.name + "|" + case.kind)
    jobs = jobs or os.cpu_count() or 1
    bar = tqdm(total=len(todo), desc=f"conformance {backend}", disable=not progress, unit="case")
    if jobs == 1:
        _init_worker(backend)
        for key in todo:
            report.results.append(_run_one(key))
            bar.update()
    else:
        with ProcessPoolExecutor(jobs, initializer=_init_worker, initargs=(backend,)) as pool:
            for result in pool.map(_run_one, todo, chunksize=8):
                report.results.append(result)
                bar.update()
    bar.close()
    report.results.sort(key=lambda r: (r.kind != "node", r.name))
    return report
