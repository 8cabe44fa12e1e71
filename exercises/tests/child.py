"""Run a GPU check in a child Python process, on the GPU or in numba's CUDA simulator.

    def leaky_relu_by_hand(): ...            # the check's body: runs in the child

    @pytest.mark.task4_2
    def test_leaky_relu_by_hand():
        in_child(leaky_relu_by_hand)         # in_child(check, *args): args are pickled

Why a child: the simulator (NUMBA_ENABLE_CUDASIM=1) must be switched on before numba is
imported, and the pytest process has imported numba already. The child runs

    python -m exercises.tests.child <module> <check> <folder>

with this process's ONNXKIT_EXERCISES (your code or the solutions), and with
NUMBA_ENABLE_CUDASIM=1 added when this machine has no usable GPU. It writes its outcome
to <folder>/outcome.json; here a NotImplementedError is raised again as one, with the
same message (a stub's), and any other error as an AssertionError that carries the
child's message and the end of its traceback. A notebook's kernels are checked in the
notebook's own process instead (it cannot hand them to a child). A child that does not
finish in TIMEOUT_S (a kernel that never ends) is killed, and the check fails.
"""

from __future__ import annotations

import importlib
import json
import os
import pickle
import re
import subprocess
import sys
import tempfile
import traceback
from functools import lru_cache
from pathlib import Path

from exercises.tests.select import mode, notebook

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 60
TRACEBACK_TAIL = 2500
#: a kernel's exception names the GPU thread that raised it, "... tid=[0, 0, 0] ctaid=[1, 0, 0]: "
THREAD = re.compile(r"^.*?tid=\[[\d, ]*\] ctaid=\[[\d, ]*\]: ")


@lru_cache(maxsize=None)
def _no_gpu() -> bool:
    from onnxkit.kernels.cuda import unavailable_reason

    return unavailable_reason() is not None


def _simulated(env) -> bool:
    return env.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def in_child(check, *args, timeout: float = TIMEOUT_S) -> None:
    """``check(*args)`` in a child process; its failure raised here (see the module doc)."""
    __tracebackhide__ = True  # pytest shows the check that failed, not this function
    if notebook():
        # a notebook's kernels live in its own process: check them there (the notebook
        # switched the simulator on before importing numba, exercises.grading.setup)
        check(*args)
        return
    env = dict(os.environ, ONNXKIT_EXERCISES=mode())
    if _no_gpu():
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    where = "numba's CUDA simulator" if _simulated(env) else "the GPU"
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "args.pickle").write_bytes(pickle.dumps(args))
        command = [sys.executable, "-m", __name__, check.__module__, check.__name__, folder]
        try:
            proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"{check.__name__} did not finish in {timeout} s on {where}: does a kernel "
                "loop forever (a `while step > 0` whose step never shrinks), or wait at a "
                "cuda.syncthreads() that some threads of its block never reach?") from None
        sys.stdout.write(proc.stdout)  # your prints: pytest shows them with a failure
        sys.stderr.write(proc.stderr)
        report = Path(folder, "outcome.json")
        if not report.exists():
            raise AssertionError(f"{check.__name__}: the child process ended (exit status "
                                 f"{proc.returncode}) without an outcome:\n{proc.stderr[-TRACEBACK_TAIL:]}")
        outcome = json.loads(report.read_text())
    if outcome["error"] is None:
        return
    if outcome["error"] == "NotImplementedError":
        raise NotImplementedError(outcome["message"])
    error = outcome["message"] if outcome["error"] == "AssertionError" else \
        f"{outcome['error']}: {outcome['message']}"
    raise AssertionError(f"{error}\n\n(ran on {where}, in a child process; the end of its "
                         f"traceback:)\n{outcome['traceback']}")


def _ours(filename: str) -> bool:
    path = Path(filename).resolve()
    return path.is_relative_to(ROOT) and ".venv" not in path.parts and path != Path(__file__).resolve()


def _outcome(exc: BaseException) -> dict:
    """The error, its message and its traceback through this repository's files only (the
    checks, the given code, your kernel; not numba's simulator nor Python's threads)."""
    message = str(exc)
    if isinstance(exc, NotImplementedError):
        message = THREAD.sub("", message, count=1)  # the stub's message as it is written
    report = traceback.TracebackException.from_exception(exc)
    part = report
    while part is not None:
        part.stack = traceback.StackSummary.from_list([f for f in part.stack if _ours(f.filename)])
        part = part.__cause__ or part.__context__
    text = "".join(report.format())
    tail = text if len(text) <= TRACEBACK_TAIL else "...\n" + text[-TRACEBACK_TAIL:].split("\n", 1)[1]
    return {"error": type(exc).__name__, "message": message, "traceback": tail}


def main(module: str, name: str, folder: str) -> None:
    if _simulated(os.environ):
        sys.setswitchinterval(1e-3)  # the simulated GPU threads take turns sooner
    try:
        check = getattr(importlib.import_module(module), name)
        check(*pickle.loads(Path(folder, "args.pickle").read_bytes()))
        outcome = {"error": None}
    except Exception as exc:  # the learner's code may raise anything: report it
        outcome = _outcome(exc)
    Path(folder, "outcome.json").write_text(json.dumps(outcome))


if __name__ == "__main__":
    main(*sys.argv[1:])
