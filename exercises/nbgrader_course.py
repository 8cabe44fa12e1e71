"""The course for nbgrader: a course folder, the student release, grading with points.

    python -m exercises.nbgrader_course release build/course     # `make assignments`
    python -m exercises.nbgrader_course grade build/course ex3_text
    python -m exercises.nbgrader_course scores build/course ex3_text

``release`` writes the source notebooks (exercises/sources.py) and nbgrader's
configuration into the course folder, then runs ``nbgrader generate_assignment``: the
student release, ``release/<exercise>/<exercise>.ipynb``, has no solutions and no hidden
tests. ``grade`` runs ``nbgrader autograde`` and ``generate_feedback`` on what is in
``submitted/<student>/<exercise>/``; ``scores`` reads the points per task from nbgrader's
gradebook. The notebooks import the checks from this repository (PYTHONPATH).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from exercises._tasks import HERE

ROOT = HERE.parent
NBGRADER = Path(sys.executable).with_name("nbgrader")
CONFIG = """\
# nbgrader's configuration of the onnxkit course (written by exercises/nbgrader_course.py)
c = get_config()
c.CourseDirectory.root = {root!r}
c.CourseDirectory.course_id = "onnxkit"
c.ClearSolutions.code_stub = {{"python": "# YOUR CODE HERE\\nraise NotImplementedError()"}}
c.Execute.timeout = 600          # seconds per cell: the CUDA simulator's checks are slow
c.Autograde.create_student = True
"""


class CourseError(RuntimeError):
    """An nbgrader step failed: its command and the end of what it said."""


def environment() -> dict:
    """nbgrader's environment: the checks importable, the caches the Makefile uses."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join((str(NBGRADER.parent), env.get("PATH", "")))  # alembic, the kernel
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env.setdefault("ONNX_HOME", str(ROOT / ".cache" / "onnx"))
    env.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".cache" / "numba"))
    env.setdefault("MPLBACKEND", "Agg")
    env.pop("ONNXKIT_EXERCISES", None)
    return env


def nbgrader(course: Path, *args: str, timeout: float = 1800) -> str:
    """``nbgrader *args`` in the course folder; what it said (it logs on stderr)."""
    proc = subprocess.run([str(NBGRADER), *args], cwd=course, env=environment(), capture_output=True,
                          text=True, timeout=timeout)
    said = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise CourseError(f"nbgrader {' '.join(args)} failed (exit status {proc.returncode}):\n{said[-3000:]}")
    return said


def write_course(course: Path, exchange: Path | None = None) -> list[str]:
    """The course folder: nbgrader_config.py (with the exchange folder where students
    fetch and submit, if given: the classroom's) and the source notebooks; the assignments."""
    from exercises.sources import write_sources

    course.mkdir(parents=True, exist_ok=True)
    config = CONFIG.format(root=str(course.resolve()))
    if exchange is not None:
        config += f"c.Exchange.root = {str(exchange.resolve())!r}\n"
    (course / "nbgrader_config.py").write_text(config)
    return write_sources(course)


def release(course: Path, assignments: list[str] | None = None, exchange: Path | None = None) -> list[str]:
    """The student release of ``assignments`` (every exercise by default)."""
    names = write_course(course, exchange)
    for name in assignments or names:
        if name not in names:
            raise CourseError(f"no assignment {name!r}; there are {', '.join(names)}")
        nbgrader(course, "generate_assignment", name, "--force")
    return assignments or names


def grade(course: Path, assignment: str) -> dict[str, list[str]]:
    """Autograde every submission of ``assignment`` and write its feedback; for each
    student, the reasons points were lost (a missing notebook, a changed test cell, an
    error a cell raised). A submission without the notebook gets 0 points and its reason;
    nbgrader grades the others, each apart from the rest."""
    released = sorted((course / "release" / assignment).glob("*.ipynb"))
    reasons: dict[str, list[str]] = {}
    for folder in sorted((course / "submitted").glob(f"*/{assignment}")):
        why = []
        for notebook in released:
            mine = folder / notebook.name
            why += _changed(notebook, mine) if mine.is_file() else \
                [f"no {notebook.name} in the submission: 0 points"]
        if why:
            reasons[folder.parent.name] = why
    nbgrader(course, "autograde", assignment, "--force")
    nbgrader(course, "generate_feedback", assignment, "--force")
    for notebook in sorted((course / "autograded").glob(f"*/{assignment}/*.ipynb")):
        errors = _errors(notebook)
        if errors:
            reasons.setdefault(notebook.parent.parent.name, []).extend(errors)
    return reasons


def _changed(released: Path, submitted: Path) -> list[str]:
    """The locked cells (the tests) of a submission whose nbgrader checksum is not the
    released one's; nbgrader grades with the originals instead."""
    import nbformat
    from nbgrader.utils import compute_checksum

    def locked(path):
        cells = nbformat.read(path, as_version=4).cells
        return {c.metadata["nbgrader"]["grade_id"]: c for c in cells
                if c.metadata.get("nbgrader", {}).get("locked")}
    try:
        theirs = locked(submitted)
    except Exception as exc:  # not a notebook at all: nbgrader will say so
        return [f"{submitted.name} is not a readable notebook: {type(exc).__name__}"]
    found = []
    for grade_id, cell in locked(released).items():
        if grade_id not in theirs:
            found.append(f"cell {grade_id} was deleted")
        elif compute_checksum(theirs[grade_id]) != cell.metadata["nbgrader"]["checksum"]:
            found.append(f"cell {grade_id} was changed (nbgrader's checksum): graded with the original")
    return found


def _errors(path: Path) -> list[str]:
    """Each cell's error in a graded notebook: its cell and the error's first line."""
    import nbformat

    found = []
    for cell in nbformat.read(path, as_version=4).cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                where = cell.metadata.get("nbgrader", {}).get("grade_id", "a cell")
                lines = str(out.get("evalue", "")).strip().splitlines() or [""]
                hint = " / ".join([lines[0]] + [ln.strip() for ln in lines[1:] if "FAILED" in ln][:1])
                found.append(f"{where}: {out.get('ename')}: {hint}")
    return found


def scores(course: Path, assignment: str) -> dict[str, dict[str, float]]:
    """``{student: {grade cell: points, "total": points}}`` from the gradebook; a student
    who submitted a folder nbgrader could not grade (no notebook) has a total of 0."""
    from nbgrader.api import Gradebook

    found: dict[str, dict[str, float]] = {
        folder.parent.name: {"total": 0.0} for folder in (course / "submitted").glob(f"*/{assignment}")}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as book:
        for submission in book.assignment_submissions(assignment):
            points = {grade.name: float(grade.score) for nb in submission.notebooks
                      for grade in nb.grades}
            points["total"] = float(submission.score)
            found[submission.student.id] = points
    return found


def report(course: Path, assignment: str, reasons: dict[str, list[str]] | None = None) -> str:
    """The scores as a table, one line per student and a column per task, then the
    reasons points were lost."""
    from exercises.course import points

    table = scores(course, assignment)
    cells = sorted({k for row in table.values() for k in row if k != "total"})
    tasks = [c[len("task"):].replace("_", ".") for c in cells]
    head = ["student"] + [f"{t} ({points(t)})" for t in tasks] + ["total"]
    rows = [head] + [[s] + [f"{row.get(c, 0):g}" for c in cells] + [f"{row['total']:g}"]
                     for s, row in sorted(table.items())]
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    for student, why in sorted((reasons or {}).items()):
        lines += [f"{student}: {reason}" for reason in why]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m exercises.nbgrader_course", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=("release", "grade", "scores"))
    parser.add_argument("course", type=Path, help="the course folder (e.g. build/course)")
    parser.add_argument("assignment", nargs="*", help="exercise names, e.g. ex3_text (release: default all)")
    args = parser.parse_args(argv)
    try:
        if args.step == "release":
            for name in release(args.course, args.assignment or None):
                print(f"released {args.course / 'release' / name}")
            return 0
        if not args.assignment:
            parser.error(f"{args.step} needs an assignment")
        for name in args.assignment:
            reasons = grade(args.course, name) if args.step == "grade" else None
            print(f"{name}:\n{report(args.course, name, reasons)}")
    except CourseError as err:
        print(err, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
