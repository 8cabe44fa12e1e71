"""Check your tasks from a terminal: a verdict and points per task, and the hint.

    python -m exercises.check 1.1            # one task (your code in exercises/ex*.py)
    python -m exercises.check 1.1 2.2        # several
    python -m exercises.check                # every task, and the total
    python -m exercises.check --solutions    # the reference solutions (maintainers)

The verdict is nbgrader's: the same checks, visible and hidden (exercises/grading.py).
Exit status 0 when every task checked passed.
"""

from __future__ import annotations

import argparse
import os
import sys

from exercises._tasks import tasks
from exercises.course import points


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m exercises.check", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("task", nargs="*", help="tasks to check, e.g. 1.1 (default: all)")
    parser.add_argument("--solutions", action="store_true",
                        help="check the reference solutions instead of your code")
    args = parser.parse_args(argv)
    known = tasks()
    unknown = [t for t in args.task if t not in known]
    if unknown:
        parser.error(f"no task {', '.join(unknown)}; the tasks are {', '.join(known)}")
    os.environ["ONNXKIT_EXERCISES"] = "solutions" if args.solutions else "learner"
    from exercises.grading import checked_code, run

    print(f"checking {checked_code()}")
    chosen = args.task or list(known)
    verdicts = [run(task) for task in chosen]
    for verdict in verdicts:
        print(verdict)
    if len(verdicts) > 1:
        print(f"total: {sum(v.score for v in verdicts)} of {sum(points(t) for t in chosen)} points")
    return 0 if all(v.ok for v in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
