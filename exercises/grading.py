"""Run one task's checks and give the verdict: from a terminal, a notebook or nbgrader.

    check("1.1", globals())                 # in a notebook: raises with the hint on failure
    python -m exercises.check 1.1           # in a terminal: the same verdict (exercises/check.py)

A task's checks are its pytest tests (``-m task1_1``, exercises/tests); ``part`` picks the
ones shown to learners (``visible``), those nbgrader holds back until grading (``hidden``,
marked ``@pytest.mark.hidden``) or both (``all``). pytest runs in this process, quietly,
without the plugins a check does not need (they take seconds to load).
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field

from exercises._tasks import HERE, marker
from exercises.course import assignment_of, points, title

TESTS = HERE / "tests"
PARTS = {"all": "", "visible": " and not hidden", "hidden": " and hidden"}
QUIET = ("-p", "no:cacheprovider", "-p", "no:nbval", "-p", "no:hypothesispytest",
         "-p", "no:anyio", "-p", "no:xdist", "-p", "no:xdist.looponfail", "-p", "no:terminal",
         "--capture=sys")


@dataclass
class Verdict:
    """A task's outcome: how many of its checks passed, and what the first failure said."""

    task: str
    passed: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (check, message)

    @property
    def ok(self) -> bool:
        return bool(self.passed) and not self.failed

    @property
    def score(self) -> int:
        return points(self.task) if self.ok else 0

    def __str__(self) -> str:
        head = (f"Task {self.task} ({title(self.task)}): {len(self.passed)} of "
                f"{len(self.passed) + len(self.failed)} checks passed, "
                f"{self.score} of {points(self.task)} points")
        if not self.passed and not self.failed:
            return head + "\n  no checks ran"
        lines = [head] + [f"  FAILED {name}: {message}" for name, message in self.failed[:3]]
        if len(self.failed) > 3:
            lines.append(f"  ... and {len(self.failed) - 3} more")
        return "\n".join(lines)


class _Collect:
    """A pytest plugin that keeps each check's outcome and its failure's short message."""

    def __init__(self, verdict: Verdict):
        self.verdict = verdict

    def pytest_runtest_logreport(self, report):
        if report.when == "call" and report.passed:
            self.verdict.passed.append(report.head_line)
        elif report.failed:
            crash = getattr(report.longrepr, "reprcrash", None)
            message = crash.message if crash is not None else str(report.longrepr)
            self.verdict.failed.append((report.head_line, _short(message)))

    def pytest_collectreport(self, report):
        if report.failed:  # e.g. the exercise does not import: a syntax error in it
            text = str(report.longrepr)
            errors = [line[2:] for line in text.splitlines() if line.startswith("E ")]
            self.verdict.failed.append(("loading the checks", _short("\n".join(errors[-6:]) or text)))


def _short(message: str, limit: int = 600) -> str:
    message = message.strip()
    return message if len(message) <= limit else message[:limit] + " ..."


def files_of(task: str) -> list[str]:
    """The check files that hold ``task``'s checks."""
    used = re.compile(rf"pytest\.mark\.{marker(task)}\b")
    return sorted(str(p) for p in TESTS.glob("test_*.py") if used.search(p.read_text()))


def run(task: str, part: str = "all") -> Verdict:
    """``task``'s checks of ``part`` against the code chosen by exercises/tests/select.py."""
    import pytest

    verdict = Verdict(task)
    args = [*files_of(task), "-m", marker(task) + PARTS[part], "--rootdir", str(HERE.parent), *QUIET]
    status = pytest.main(args, plugins=[_Collect(verdict)])
    if status not in (0, 1, 5) and not verdict.failed:
        verdict.failed.append(("pytest", f"could not run the checks (pytest exit status {status})"))
    return verdict


def check(task: str, namespace: dict, part: str = "all") -> Verdict:
    """Check a notebook's code for ``task``; an AssertionError with the verdict if it fails."""
    from exercises.tests.select import use

    with use(assignment_of(task), namespace):
        verdict = run(task, part)
    if not verdict.ok:
        raise AssertionError(str(verdict))
    print(verdict)
    return verdict


def setup() -> None:
    """Call before numba is imported: without a GPU, numba's CUDA simulator runs the GPU
    kernels (it must be on before the import), as the terminal checks' child does."""
    if shutil.which("nvidia-smi") is None:
        os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")


def checked_code() -> str:
    from exercises.tests.select import mode

    return "your code (exercises/ex*.py)" if mode() == "learner" else \
        "the reference solutions (exercises/solutions)"
