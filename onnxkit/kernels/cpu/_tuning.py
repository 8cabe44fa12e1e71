"""Timed choices, when asked for: which candidate computes something, by timing them here.

    Y = pick(key, {"one call": run_whole, "split": run_split}, default="one call")
    winner, Y = timed(key, {"winograd": run_winograd, "im2col": run_im2col})

By default nothing is timed: ``default``, the static rule of the caller, runs, so that the
same model on the same machine gives the same bits in every process. Asked for
(``Session(..., tune=True)``, or ``ONNXKIT_CPU_TUNE=1`` for sessions that do not say), a
run carries its session's ``Tuning`` (``begin_run``): the first ``pick`` of a new ``key``
(a product's shapes and layout) runs every candidate three times, keeps the fastest by
its best time (the first run of each pays for its new buffers) and returns that
candidate's output; later picks of the key in the session run the winner alone, as
cuDNN's benchmark mode does. A convolution's algorithm is timed the same way
(``timed``) but kept by the node's prepared kernel, on the plan (``conv.PreparedConv``).
Each session keeps its own choices: none outlives it, none is shared between sessions.
``TUNING_LOG`` records ``(key, winner, {candidate: ms})`` for every decision of the
process, for reports (``benchmarks.run``); nothing reads it to decide. Why timing can
beat the static rule: ``docs/cpu.md``.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from contextvars import ContextVar
from time import perf_counter

#: (key, winner, {candidate: best ms}) for every decision timed in this process
TUNING_LOG: list = []
RUNS = 3  # per candidate; the best one counts


class Tuning:
    """One session's timed choices: ``choices`` key -> winner, ``log`` its decisions."""

    def __init__(self):
        self.choices: dict = {}
        self.log: list = []
        self.lock = threading.Lock()

    def record(self, key, best: dict) -> str:
        """The winner for ``key`` (the one recorded first, when threads timed it at once)."""
        with self.lock:
            winner = self.choices.get(key)
            if winner is None:
                winner = self.choices[key] = min(best, key=best.get)
                self.log.append((key, winner, best))
                TUNING_LOG.append((key, winner, best))
            return winner


_RUN: ContextVar = ContextVar("onnxkit_cpu_tuning", default=None)  # the run's Tuning


def asked() -> bool:
    """``ONNXKIT_CPU_TUNE``: off unless set to something other than "" or "0"."""
    return os.environ.get("ONNXKIT_CPU_TUNE", "0") not in ("", "0")


def tuning() -> bool:
    """Whether this run times its choices (outside a run: never)."""
    return _RUN.get() is not None


def begin_run(tune: bool | None, choices: Tuning | None = None):
    """Fix whether the run that begins times its choices (``tune``; None: as
    ``ONNXKIT_CPU_TUNE`` says), keeping them in ``choices`` (the session's; None: this
    run's own); the token for ``end_run``."""
    if not (asked() if tune is None else tune):
        return _RUN.set(None)
    return _RUN.set(Tuning() if choices is None else choices)


def end_run(token) -> None:
    _RUN.reset(token)


@contextmanager
def tuning_of_run(tune: bool | None = None, choices: Tuning | None = None):
    """``begin_run`` ... ``end_run`` around the block (a fresh ``Tuning`` by default)."""
    token = begin_run(tune, choices)
    try:
        yield
    finally:
        end_run(token)


def _time(candidates: dict) -> tuple[dict, dict]:
    """Every candidate run ``RUNS`` times: ({name: best ms}, {name: last result})."""
    best, results = {}, {}
    name = None
    for _ in range(RUNS):
        for name, run in candidates.items():
            results.pop(name, None)  # its buffers go back to the pool for this run
            start = perf_counter()
            results[name] = run()
            elapsed = (perf_counter() - start) * 1e3
            best[name] = min(best.get(name, elapsed), elapsed)
    results["__last__"] = name
    return best, results


def _result_of(winner: str, candidates: dict, results: dict):
    if results[winner] is None and winner != results["__last__"]:
        candidates[winner]()  # candidates writing in place: the output is the last one's
    return results[winner]


def pick(key, candidates: dict, default: str):
    """Run the candidate chosen for ``key`` and return its result (see the module doc).

    ``candidates`` maps a name to a function of no arguments computing the same value,
    returned or written in place (returning None: the chosen one then runs last). Threads
    that time the same key at once all give the output of the choice recorded first, the
    one every later call runs.
    """
    choices = _RUN.get()
    if choices is None:
        return candidates[default]()
    chosen = choices.choices.get(key)
    if chosen is not None:
        return candidates[chosen]()
    best, results = _time(candidates)
    return _result_of(choices.record(key, best), candidates, results)


def chosen(key):
    """The candidate this run's session timed for ``key``, or None (not yet, or tuning off)."""
    choices = _RUN.get()
    return None if choices is None else choices.choices.get(key)


def timed(key, candidates: dict) -> tuple[str, object]:
    """Time ``candidates`` (as ``pick`` does on a new key): (the fastest, its result).
    The caller keeps the winner (a prepared kernel, on its plan step); the decision is
    logged in the run's ``Tuning`` under ``key``, not kept there."""
    choices = _RUN.get()
    best, results = _time(candidates)
    winner = min(best, key=best.get)
    if choices is not None:
        with choices.lock:
            choices.log.append((key, winner, best))
    TUNING_LOG.append((key, winner, best))
    return winner, _result_of(winner, candidates, results)


def forget() -> None:
    """Empty ``TUNING_LOG`` (choices live in sessions and go with them)."""
    TUNING_LOG.clear()
