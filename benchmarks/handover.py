"""The cost of sharing one small kernel call between two threads, in one process.

    python -m benchmarks.handover

Times, for a compiled kernel adding 1 to 1000 values: one call on the calling thread;
the same work in two parts through ``onnxkit.kernels.cpu._threads.run_split`` (the
cpu executor's pool, its hand-over compiled: ``_launch``); and in two parts through a
Numba ``prange`` (Numba's own pool, which the cpu kernels used before their cold start
was cut). The difference is what a split costs: work shorter than a few times it runs
faster on one thread (``_threads.DEFAULT_MIN_PARALLEL``). Medians and 90th percentiles
of 2000 calls.
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit, prange

from onnxkit.kernels.cpu._threads import run_split


@njit(nogil=True)
def _add_one(x, lo, hi):
    for i in range(lo, hi):
        x[i] += 1.0


@njit(parallel=True)
def _add_one_prange(x):
    per = (x.size + 1) // 2
    for p in prange(2):
        for i in range(p * per, min(x.size, (p + 1) * per)):
            x[i] += 1.0


def _times(fn, calls: int = 2000) -> tuple[float, float]:
    for _ in range(100):
        fn()
    ts = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - start)
    ts.sort()
    return ts[len(ts) // 2] * 1e6, ts[int(len(ts) * 0.9)] * 1e6


def main() -> int:
    x = np.zeros(1000)
    rows = [("one call, this thread", lambda: _add_one(x, 0, x.size)),
            ("two parts, run_split", lambda: run_split(_add_one, x.size, 2, x.size // 2, x)),
            ("two parts, Numba prange", lambda: _add_one_prange(x))]
    print("| how | median us | p90 us |\n|---|---:|---:|")
    for name, fn in rows:
        median, p90 = _times(fn)
        print(f"| {name} | {median:.1f} | {p90:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
