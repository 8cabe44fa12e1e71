"""Find the tasks marked in the exercise sources; the pytest markers are made from them.

    # ## Task 1.2          -> task "1.2", marker "task1_2"

Only the learner's files (``exercises/ex*.py``) are read: the markers cannot drift from
the tasks because nobody copies them by hand.
"""

from __future__ import annotations

import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
TASK_LINE = re.compile(r"^\s*# ## Task (\d+)\.(\d+)\b")
STUB_LINE = re.compile(r'raise NotImplementedError\("Need to implement for Task (\d+)\.(\d+)"\)')


def exercise_files() -> list[Path]:
    return sorted(HERE.glob("ex*.py"))


def tasks() -> dict[str, Path]:
    """``{"1.1": path, ...}`` in source order, for every task marked in an exercise file."""
    found: dict[str, Path] = {}
    for path in exercise_files():
        for line in path.read_text().splitlines():
            m = TASK_LINE.match(line)
            if m is not None:
                found[f"{m.group(1)}.{m.group(2)}"] = path
    return found


def stubs(path: Path) -> list[str]:
    """The tasks whose ``raise NotImplementedError("Need to implement for Task X.Y")`` is in ``path``."""
    return [f"{a}.{b}" for a, b in STUB_LINE.findall(path.read_text())]


def marker(task: str) -> str:
    """``"1.2"`` -> ``"task1_2"``."""
    return "task" + task.replace(".", "_")
