"""Which algorithm a layer runs, decided by timing the candidates on this machine.

    Y = pick(key, {"winograd": run_winograd, "im2col": run_im2col}, default="im2col")

Whether Winograd beats im2col + GEMM depends on the processor more than on the layer:
on the AMD development VM it won on ResNet's 3x3 layers; on an Intel one, whose BLAS
is faster, it lost there and won only on DenseNet's thin 128 -> 32 layers. So, like
cuDNN's benchmark mode (and the cuda executor's ``ONNXKIT_CUDA_TUNE``), the first call
with a new ``key`` (the layer's shapes and geometry) runs every candidate three times, keeps
the fastest by its best time (the first run of each pays for its new buffers) and returns
that candidate's output; later calls with the key run the winner alone.

``ONNXKIT_CPU_TUNE=0`` turns the timing off: ``default`` (the static rule of the
caller) runs, as on a first call nothing is timed. The test suites set it, so that
which kernel serves a case does not depend on the machine's load. ``TUNING_LOG`` holds
``(key, winner, {candidate: ms})`` for every decision, for profiles and notebooks.
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


def tuning() -> bool:
    """Whether ``pick`` times its candidates (``ONNXKIT_CPU_TUNE``, on unless "0"). During
    a run (``tuning_of_run``) the value read when it began: the environment lookup took
    0.5 us, paid by every Conv, product and pick of every run."""
    during = _RUN.get()
    if during is not None:
        return during
    return os.environ.get("ONNXKIT_CPU_TUNE", "1") not in ("", "0")


def begin_run():
    """Read ``ONNXKIT_CPU_TUNE`` once for the run that begins (the cpu executor's
    ``running``); returns the token for ``end_run``."""
    return _RUN.set(os.environ.get("ONNXKIT_CPU_TUNE", "1") not in ("", "0"))


def end_run(token) -> None:
    _RUN.reset(token)


@contextmanager
def tuning_of_run():
    """``begin_run`` ... ``end_run`` around the block."""
    token = begin_run()
    try:
        yield
    finally:
        end_run(token)


def pick(key, candidates: dict, default: str):
    """Run the candidate chosen for ``key`` and return its result (see the module doc).

    ``candidates`` maps a name to a function of no arguments computing the same value.
    Threads that time the same key at once all return the output of the choice recorded
    first, the one every later call runs.
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
