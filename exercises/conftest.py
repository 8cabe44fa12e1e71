"""Exercise checks: which code they check, and one pytest marker per task.

    ONNXKIT_EXERCISES=learner   check your code in exercises/ex*.py
    ONNXKIT_EXERCISES=solutions check the reference solutions (the default, as CI does)
    --exercises=learner         the same, as a pytest option

The markers (task1_1, task1_2...) are generated from the ``# ## Task X.Y`` lines of the
exercise sources by ``exercises/_tasks.py``. Checks marked ``hidden`` are the ones nbgrader
holds back until grading; tests marked ``maintainer`` check the exercises themselves (the
stubs fail, the solutions pass) and are skipped when the learner's code is checked: they
would fail because the learner did the task.
"""

from __future__ import annotations

import os

import pytest

from exercises._tasks import marker, tasks

MODES = ("learner", "solutions")


def pytest_addoption(parser):
    parser.addoption("--exercises", choices=MODES, default=None,
                     help="check the learner's code (learner) or the reference solutions "
                          "(solutions, the default); same as ONNXKIT_EXERCISES")


def pytest_configure(config):
    for task in tasks():
        config.addinivalue_line("markers", f"{marker(task)}: checks of exercise Task {task}")
    config.addinivalue_line("markers", "hidden: a check nbgrader holds back until grading")
    config.addinivalue_line("markers", "maintainer: checks the exercises themselves (CI only)")
    chosen = config.getoption("--exercises", default=None)
    if chosen is not None:
        os.environ["ONNXKIT_EXERCISES"] = chosen


def pytest_collection_modifyitems(config, items):
    from exercises.tests.select import mode

    if mode() != "learner":
        return
    skip = pytest.mark.skip(reason="a maintainer check of the exercises themselves (CI runs it "
                                   "against the solutions); it does not check your code")
    for item in items:
        if item.get_closest_marker("maintainer") is not None:
            item.add_marker(skip)


def _which() -> str:
    from exercises.tests.select import mode

    if mode() == "solutions":
        return ("exercises: checked the reference solutions (exercises/solutions); "
                "run with ONNXKIT_EXERCISES=learner to check your own code")
    return "exercises: checked YOUR code in exercises/ex*.py"


def pytest_report_header(config):
    return _which()


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(_which())
