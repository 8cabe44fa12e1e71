"""A pytest plugin for test_stubs.py: write each check's task marker, outcome and error.

    python -m pytest exercises/tests -p exercises.tests.stub_report   (STUB_REPORT=out.json)
"""

from __future__ import annotations

import json
import os

import pytest

_RESULTS: list[dict] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        tasks = [m.name for m in item.iter_markers() if m.name.startswith("task")]
        error = "" if call.excinfo is None else f"{call.excinfo.typename}: {call.excinfo.value}"
        _RESULTS.append({"test": item.nodeid, "tasks": tasks, "outcome": report.outcome,
                         "error": error})


def pytest_sessionfinish(session):
    path = os.environ.get("STUB_REPORT")
    if path:
        with open(path, "w") as f:
            json.dump(_RESULTS, f, indent=1)
