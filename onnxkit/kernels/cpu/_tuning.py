"""Timed choices, when asked for: which candidate runs a layer, by timing them here.

    Y = pick(key, {"winograd": run_winograd, "im2col": run_im2col}, default="im2col")

By default nothing is timed: ``default``, the static rule of the caller (``_conv_rules``
for convolutions), runs, so that the same model on the same machine gives the same bits
in every process. Asked for (``Session(..., tune=True)``, or ``ONNXKIT_CPU_TUNE=1`` for
sessions that do not say), the first call with a new ``key`` (the layer's shapes and
geometry) runs every candidate three times, keeps the fastest by its best time (the
first run of each pays for its new buffers) and returns that candidate's output; later
calls with the key run the winner alone, as cuDNN's benchmark mode does. ``TUNING_LOG``
holds ``(key, winner, {candidate: ms})`` for every decision. Why timing can beat the
static rule: ``docs/cpu.md``.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from contextvars import ContextVar
from time import perf_counter

#: (key, winner, {candidate: best ms}) for every key timed in this process
TUNING_LOG: list = []
_CHOSEN: dict = {}
_ON_FORGET: list = []  # what else forgets with the decisions (memos built on them)
_LOCK = threading.Lock()
RUNS = 3  # per candidate; the best one counts


_RUN: ContextVar = ContextVar("onnxkit_cpu_tuning", default=None)  # the run's snapshot


def _asked() -> bool:
    """``ONNXKIT_CPU_TUNE``: off unless set to something other than "" or "0"."""
    return os.environ.get("ONNXKIT_CPU_TUNE", "0") not in ("", "0")


def tuning() -> bool:
    """Whether ``pick`` times its candidates. During a run (``tuning_of_run``) the value
    fixed when it began: the session's ``tune``, else ``ONNXKIT_CPU_TUNE`` read once."""
    during = _RUN.get()
    if during is not None:
        return during
    return _asked()


def begin_run(tune: bool | None = None):
    """Fix whether the run that begins times its choices (``tune``; None: as
    ``ONNXKIT_CPU_TUNE`` says); returns the token for ``end_run``."""
    return _RUN.set(_asked() if tune is None else bool(tune))


def end_run(token) -> None:
    _RUN.reset(token)


@contextmanager
def tuning_of_run(tune: bool | None = None):
    """``begin_run`` ... ``end_run`` around the block."""
    token = begin_run(tune)
    try:
        yield
    finally:
        end_run(token)


def pick(key, candidates: dict, default: str):
    """Run the candidate chosen for ``key`` and return its result (see the module doc).

    ``candidates`` maps a name to a function of no arguments computing the same value,
    returned or written in place (returning None: the chosen one then runs last). Threads
    that time the same key at once all give the output of the choice recorded first, the
    one every later call runs.
    """
    if not tuning():
        return candidates[default]()
    chosen = _CHOSEN.get(key)
    if chosen is not None:
        return candidates[chosen]()
    best, results = {}, {}
    for _ in range(RUNS):
        for name, run in candidates.items():
            results.pop(name, None)  # its buffers go back to the pool for this run
            start = perf_counter()
            results[name] = run()
            elapsed = (perf_counter() - start) * 1e3
            best[name] = min(best.get(name, elapsed), elapsed)
    with _LOCK:  # another thread may have timed the key meanwhile: its choice stands
        chosen = _CHOSEN.get(key)
        if chosen is None:
            chosen = _CHOSEN[key] = min(best, key=best.get)
            TUNING_LOG.append((key, chosen, best))
    if results[chosen] is None and chosen != name:
        candidates[chosen]()  # candidates writing in place: the output is the last one's
    return results[chosen]


def chosen(key):
    """The candidate timing chose for ``key``, or None (not timed yet, or tuning off)."""
    return _CHOSEN.get(key)


def forget() -> None:
    """Drop every decision (the next call of each key times again)."""
    _CHOSEN.clear()
    TUNING_LOG.clear()
    for clear in _ON_FORGET:
        clear()


def on_forget(clear) -> None:
    """Call ``clear()`` whenever ``forget`` drops the decisions."""
    _ON_FORGET.append(clear)
