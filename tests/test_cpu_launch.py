"""The pool's compiled hand-over (``_launch``, through ``_threads.run_split``): every part
runs once, on whichever thread, and what a part raises reaches the caller."""

import os
import sys
import threading

import numpy as np
import pytest
from numba import njit

from onnxkit.kernels.cpu import _threads


@njit(nogil=True)
def _scaled(x, y, scale, lo, hi):
    for i in range(lo, hi):
        y[i] = x[i] * scale + 1.0


@njit(nogil=True)
def _counted(hits, lo, hi):
    for i in range(lo, hi):
        hits[i] += 1


@njit(nogil=True)
def _failing(x, lo, hi):
    if lo > 0:
        raise ValueError("part past the first failed")
    x[lo] = 1.0


@pytest.mark.parametrize("parts", [2, 3, 5, 8])
def test_every_part_runs_once_with_more_or_fewer_parts_than_threads(parts):
    items = 10_007  # uneven parts
    per = -(-items // parts)
    hits = np.zeros(items, np.int64)
    for _ in range(3):  # the first split compiles; the next ones hand over
        _threads.run_split(_counted, items, parts, per, hits)
    np.testing.assert_array_equal(hits, np.full(items, 3))


def test_values_match_one_call_and_arguments_change_between_splits():
    x = np.random.default_rng(0).standard_normal(50_000).astype(np.float32)
    for scale in (np.float32(2), np.float32(-0.5), np.float32(3)):
        y = np.full_like(x, np.nan)
        _threads.run_split(_scaled, x.size, 2, x.size // 2 + 1, x, y, scale)
        np.testing.assert_array_equal(y, x * scale + np.float32(1))


def test_a_part_that_raises_raises_in_the_caller():
    x = np.zeros(10, np.float32)
    for _ in range(2):  # first split (part 0 by the dispatcher), then handed over
        with pytest.raises(ValueError, match="past the first"):
            _threads.run_split(_failing, 10, 2, 5, x)


def test_sleeping_workers_are_woken_and_serve_again():
    hits = np.zeros(1000, np.int64)
    _threads.run_split(_counted, 1000, 2, 500, hits)
    pool = _threads._pool()
    deadline = threading.Event()
    for _ in range(200):  # idle until every worker has gone to sleep
        if all(pool.state[w * 16] == 4 for w in range(pool.count)):
            break
        deadline.wait(0.05)
    for _ in range(5):
        _threads.run_split(_counted, 1000, 2, 500, hits)
    np.testing.assert_array_equal(hits, np.full(1000, 6))


def test_two_python_threads_split_at_once():
    """One holds the pool, the other runs its parts itself: both get every value."""
    outs = [np.zeros(200_000, np.int64) for _ in range(2)]

    def work(hits):
        for _ in range(20):
            _threads.run_split(_counted, hits.size, 2, hits.size // 2, hits)

    threads = [threading.Thread(target=work, args=(h,)) for h in outs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for hits in outs:
        np.testing.assert_array_equal(hits, np.full(hits.size, 20))


@njit(nogil=True)
def _returning(hits, lo, hi):
    for i in range(lo, hi):
        hits[i] += 1
    return hi - lo


def test_a_kernel_that_returns_a_value_runs_every_part():
    """The hand-over calls kernels returning nothing; one returning a value runs its parts
    in the caller."""
    hits = np.zeros(1000, np.int64)
    for _ in range(2):
        _threads.run_split(_returning, 1000, 2, 500, hits)
    np.testing.assert_array_equal(hits, np.full(1000, 2))


def test_a_plain_python_kernel_runs_its_parts_in_the_caller():
    seen = []
    _threads.run_split(lambda lo, hi: seen.append((lo, hi)), 10, 3, 4)
    assert seen == [(0, 4), (4, 8), (8, 10)]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_splits_too():
    """A child forked after splits makes its own workers (Numba's OpenMP pool kills such a
    child instead)."""
    hits = np.zeros(1000, np.int64)
    _threads.run_split(_counted, 1000, 2, 500, hits)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            child = np.zeros(1000, np.int64)
            for _ in range(3):
                _threads.run_split(_counted, 1000, 2, 500, child)
            code = 0 if (child == 3).all() else 2
        finally:
            sys.stdout.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
