"""nbgrader end to end: the student release of one assignment, then five submissions
graded together: a correct one (full points per task), an untouched one, one with a
syntax error, one without its notebook, one whose test cells were tampered with. Each
bad one gets 0 points and its reason; none stops the others or changes their files."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("nbgrader", reason="the classroom extra: pip install -e '.[classroom]'")

from exercises import nbgrader_course  # noqa: E402
from exercises.course import points  # noqa: E402

ASSIGNMENT = "ex3_text"  # its checks take a second: the test is about nbgrader, not the tasks
NOTEBOOK = f"{ASSIGNMENT}.ipynb"


def _role(cell, role: str) -> bool:
    return bool(cell.metadata.get("nbgrader", {}).get(role))


def _solved(release, source):
    """The release with the solution written in, as a learner who did the tasks has it."""
    (code,) = [c.source for c in source.cells if _role(c, "solution")]
    nb = nbformat.from_dict(release)
    for cell in nb.cells:
        if _role(cell, "solution"):
            cell.source = re.sub(r"^\s*### (BEGIN|END) SOLUTION\n", "", code, flags=re.M)
    return nb


def _submit(course: Path, student: str, nb) -> Path:
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    if nb is None:
        (folder / "notes.txt").write_text("the notebook stayed on my laptop")
    else:
        nbformat.write(nb, folder / NOTEBOOK)
    return folder


def _digest(folder: Path) -> str:
    return hashlib.sha256(b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())).hexdigest()


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course = tmp_path_factory.mktemp("course")
    assert nbgrader_course.release(course, [ASSIGNMENT]) == [ASSIGNMENT]
    release = nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    source = nbformat.read(course / "source" / ASSIGNMENT / NOTEBOOK, as_version=4)
    _submit(course, "alice", _solved(release, source))
    _submit(course, "bob", release)
    broken = _solved(release, source)
    for cell in broken.cells:
        if _role(cell, "solution"):
            cell.source = cell.source.replace("def softplus_text() -> str:", "def softplus_text( -> str:")
    _submit(course, "carol", broken)
    _submit(course, "dave", None)
    tampered = nbformat.from_dict(release)
    for cell in tampered.cells:
        if _role(cell, "grade"):
            cell.source = "pass  # full points, surely"
    _submit(course, "erin", tampered)
    before = {s: _digest(course / "submitted" / s) for s in ("alice", "bob", "carol", "dave", "erin")}
    reasons = nbgrader_course.grade(course, ASSIGNMENT)
    return course, reasons, before


def test_the_release_has_no_solutions_and_no_hidden_tests(graded):
    course, _, _ = graded
    release = (course / "release" / ASSIGNMENT / NOTEBOOK).read_text()
    source = (course / "source" / ASSIGNMENT / NOTEBOOK).read_text()
    for secret in ("BEGIN SOLUTION", "HIDDEN TESTS", 'part=\\"hidden\\"', "Log (s)"):
        assert secret in source and secret not in release, secret
    assert release.count("# YOUR CODE HERE") == 2 and 'check(\\"3.1\\", globals(), part=\\"visible\\")' in release


def test_points_per_task(graded):
    course, _, _ = graded
    table = nbgrader_course.scores(course, ASSIGNMENT)
    assert table["alice"] == {"task3_1": points("3.1"), "task3_2": points("3.2"), "total": 3.0}
    for student in ("bob", "carol", "erin"):
        assert table[student] == {"task3_1": 0.0, "task3_2": 0.0, "total": 0.0}, student
    assert table["dave"] == {"total": 0.0}
    report = nbgrader_course.report(course, ASSIGNMENT)
    assert report.splitlines()[:2] == ["student  3.1 (1)  3.2 (2)  total", "alice    1        2        3"]


def test_each_bad_submission_says_why(graded):
    _, reasons, _ = graded
    assert "alice" not in reasons
    assert any("FAILED test_softplus_by_hand: NotImplementedError" in r for r in reasons["bob"])
    assert any(r.startswith(f"{ASSIGNMENT}-code: SyntaxError") for r in reasons["carol"])
    assert reasons["dave"] == [f"no {NOTEBOOK} in the submission: 0 points"]
    assert reasons["erin"][:2] == [
        "cell task3_1 was changed (nbgrader's checksum): graded with the original",
        "cell task3_2 was changed (nbgrader's checksum): graded with the original"]


def test_no_students_work_is_touched_and_feedback_is_written(graded):
    course, _, before = graded
    for student, digest in before.items():
        assert _digest(course / "submitted" / student) == digest, student
    feedback = (course / "feedback" / "alice" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert "Task 3.2" in feedback and "3.0 / 3.0" in feedback
    assert sorted(p.parent.parent.name for p in (course / "feedback").glob(f"*/{ASSIGNMENT}/*.html")) == \
        ["alice", "bob", "carol", "erin"]
