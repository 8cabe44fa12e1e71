"""The exercises themselves: every task has a stub, checks and a solution, and the checks
fail while the stub is left as it is (a check that cannot fail is no check)."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys

import pytest

from exercises._tasks import HERE, exercise_files, marker, stubs, tasks
from exercises.course import TASKS

pytestmark = pytest.mark.maintainer
TESTS = sorted((HERE / "tests").glob("test_ex*.py"))
USED_MARKER = re.compile(r"pytest\.mark\.(task\d+_\d+)")


def test_tasks_are_found_in_the_sources():
    found = tasks()
    assert list(TASKS) == list(found), "exercises/course.py's table and the marked tasks differ"
    assert len(found) >= 14
    assert {"1.1", "1.2", "1.3", "2.1", "2.2", "3.1", "3.2", "4.1", "4.2", "4.3"} <= set(found)
    for task, path in found.items():
        assert task in stubs(path), f"Task {task} in {path.name} has no NotImplementedError stub"


def test_every_task_has_checks_and_every_check_a_task():
    used = {m for path in TESTS for m in USED_MARKER.findall(path.read_text())}
    generated = {marker(t) for t in tasks()}
    assert used == generated, f"markers without a task: {used - generated}; tasks without checks: {generated - used}"


def test_every_exercise_has_a_solution_without_stubs():
    for path in exercise_files():
        solution = HERE / "solutions" / path.name
        assert solution.exists(), f"no solution for {path.name}"
        assert "NotImplementedError" not in solution.read_text()


def test_markers_are_registered(pytestconfig):
    registered = {line.split(":")[0] for line in pytestconfig.getini("markers")}
    assert {marker(t) for t in tasks()} <= registered


@pytest.mark.slow
def test_untouched_stubs_fail_their_checks(tmp_path):
    report = tmp_path / "stubs.json"
    env = dict(os.environ, ONNXKIT_EXERCISES="learner", STUB_REPORT=str(report))
    env.pop("PYTEST_XDIST_WORKER", None)
    selection = " or ".join(marker(t) for t in tasks())
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(HERE / "tests"), "-m", selection, "-q",
         "-p", "no:cacheprovider", "-p", "exercises.tests.stub_report",
         # plugins the checks do not use (~5 s of CPU to load)
         "-p", "no:nbval", "-p", "no:anyio", "-p", "no:hypothesispytest", "-p", "no:xdist"],
        cwd=HERE.parent, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    results = json.loads(report.read_text())
    assert {marker(t) for t in tasks()} == {m for r in results for m in r["tasks"]}
    for r in results:
        assert r["outcome"] == "failed", f"{r['test']} passes against the untouched stub"
        (task_marker,) = r["tasks"]
        task = task_marker[len("task"):].replace("_", ".")
        assert r["error"] == f"NotImplementedError: Need to implement for Task {task}", r


def _marks(func) -> set[str]:
    return {d.attr for dec in func.decorator_list for d in ast.walk(dec) if isinstance(d, ast.Attribute)}


def test_every_task_has_visible_and_hidden_checks():
    """nbgrader's release shows the visible checks; the hidden ones wait for grading."""
    seen: dict[str, set[bool]] = {}
    for path in TESTS:
        for func in ast.parse(path.read_text()).body:
            if isinstance(func, ast.FunctionDef) and func.name.startswith("test_"):
                marks = _marks(func)
                for m in marks & {marker(t) for t in tasks()}:
                    seen.setdefault(m, set()).add("hidden" in marks)
    for task in tasks():
        assert seen.get(marker(task)) == {True, False}, f"Task {task}: visible and hidden checks?"
