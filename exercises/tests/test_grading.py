"""The checker learners and nbgrader use (exercises/grading.py, exercises/check.py): the
same verdict from a terminal and from a notebook's code, and no maintainer check in a
learner's run."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from exercises._tasks import HERE

pytestmark = pytest.mark.maintainer
ROOT = HERE.parent


def python(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, **(env or {}))
    env.pop("PYTEST_XDIST_WORKER", None)
    env.pop("ONNXKIT_EXERCISES", None)
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def test_a_solution_gets_the_points_and_a_stub_the_hint():
    done = python("-m", "exercises.check", "3.1", "--solutions")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Task 3.1 (softplus in ONNX text syntax): 2 of 2 checks passed, 1 of 1 points" in done.stdout
    stub = python("-m", "exercises.check", "3.1")
    assert stub.returncode == 1, stub.stdout + stub.stderr
    assert "0 of 2 checks passed, 0 of 1 points" in stub.stdout
    assert "FAILED test_softplus_by_hand: NotImplementedError: Need to implement for Task 3.1" in stub.stdout


NOTEBOOK = """
import sys
from exercises.grading import check
names = {}
exec(open(sys.argv[1]).read(), names)
try:
    verdict = check("3.2", names, part=sys.argv[2])
    print("VERDICT", verdict.score, len(verdict.passed))
except AssertionError as err:
    print("FAILED", err)
"""


@pytest.mark.parametrize("part, checks", [("visible", 1), ("hidden", 1), ("all", 2)])
def test_a_notebooks_code_is_checked_as_the_module_is(part, checks):
    done = python("-c", NOTEBOOK, str(HERE / "solutions" / "ex3_text.py"), part)
    assert f"VERDICT 2 {checks}" in done.stdout, done.stdout + done.stderr
    stub = python("-c", NOTEBOOK, str(HERE / "ex3_text.py"), part)
    assert "FAILED Task 3.2" in stub.stdout, stub.stdout + stub.stderr
    assert "NotImplementedError: Need to implement for Task 3.2" in stub.stdout


def test_a_learners_run_skips_the_maintainer_checks():
    done = python("-m", "pytest", str(HERE / "tests" / "test_stubs.py"), "-q", "-p", "no:cacheprovider",
                  "-p", "no:nbval", "-p", "no:anyio", "-p", "no:hypothesispytest",  # unused here
                  "--exercises=learner")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "passed" not in done.stdout and "failed" not in done.stdout and "skipped" in done.stdout
