"""Sessions on the cpu executor run at once from several Python threads: each gives what it
gives run alone, bit for bit, and numpy's BLAS setting belongs to no single run."""

import threading

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxkit
from onnxkit.runtime import blas_threads
from tests.cpu_models import NAMES, build

# every family twice, with other weights: the twins' layers have the same shapes
CASES = [(name, seed) for name in NAMES for seed in (0, 1)]
REPEATS = 4


def _sessions(level):
    return {case: (onnxkit.Session(build(*case)[0], executor="cpu", level=level),
                   build(*case)[1]) for case in CASES}


def _in_threads(sessions) -> dict:
    """REPEATS runs of every session, each session in a thread of its own, all at once."""
    out: dict = {}
    errors: list = []
    start = threading.Barrier(len(sessions))

    def work(case, sess, feeds):
        try:
            start.wait(30)
            out[case] = [sess.run(None, feeds)[0] for _ in range(REPEATS)]
        except Exception as exc:  # raised again below, in the test's thread
            errors.append(exc)

    workers = [threading.Thread(target=work, args=(case, *pair))
               for case, pair in sessions.items()]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    if errors:
        raise errors[0]
    return out


def _alone(sessions) -> dict:
    return {case: [sess.run(None, feeds)[0] for _ in range(REPEATS)]
            for case, (sess, feeds) in sessions.items()}


def _differ(got: dict, want: dict) -> list:
    return [(case, i, float(np.abs(y - want[case][0]).max()))
            for case in CASES for i, y in enumerate(got[case])
            if not np.array_equal(y, want[case][0])]


@pytest.mark.parametrize("level", [0, 3])
def test_models_run_in_threads_give_what_they_give_alone(level):
    """Fresh sessions run one after another, then fresh ones all at once: bit-equal."""
    alone = _alone(_sessions(level))
    together = _in_threads(_sessions(level))
    differ = _differ(together, alone) + _differ(alone, alone)
    assert not differ, f"{len(differ)} of {2 * len(CASES) * REPEATS} results differ: {differ[:5]}"


def test_timed_choices_made_in_threads_serve_every_run_alike(monkeypatch):
    """With the timed choice (``ONNXKIT_CPU_TUNE=1``), sessions whose layers have the same
    shapes time them at once, from their first runs in threads: each session's runs then,
    and its runs alone afterwards, are bit-equal (each session keeps its own choices, the
    output of the one kept; numpy's BLAS on one thread until the last run ends)."""
    monkeypatch.setenv("ONNXKIT_CPU_TUNE", "1")
    for _ in range(2):
        sessions = _sessions(3)
        together = _in_threads(sessions)
        alone = _alone(sessions)
        differ = _differ(together, alone) + _differ(alone, alone)
        assert not differ, f"{len(differ)} of {2 * len(CASES) * REPEATS} differ: {differ[:5]}"


def _two_node_model():
    w = np.ones((8, 8), np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["y"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_empty_tensor_value_info("y")], [numpy_helper.from_array(w, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)


@pytest.mark.skipif(blas_threads.GET is None, reason="numpy's OpenBLAS not found")
def test_a_run_ending_leaves_blas_on_one_thread_for_a_run_still_going():
    """Run A begins, run B begins, A ends, B goes on: B's later nodes still find numpy's
    BLAS on one thread, and the count the process had comes back once both have ended."""
    before = blas_threads.GET()
    blas_threads.SET(2)
    try:
        if blas_threads.GET() != 2:
            pytest.skip("this OpenBLAS does not take a second thread here")
        x = np.ones((1, 8), np.float32)
        a_inside, b_inside, a_done = threading.Event(), threading.Event(), threading.Event()
        seen_by_b: list = []

        def trace_a(event):
            if event.node.op_type == "MatMul":
                a_inside.set()
                assert b_inside.wait(10)

        def trace_b(event):
            if event.node.op_type == "MatMul":
                b_inside.set()
                assert a_done.wait(10)
            else:
                seen_by_b.append(blas_threads.GET())

        def run_a():
            onnxkit.Session(_two_node_model(), executor="cpu").run(None, {"x": x}, trace=trace_a)
            a_done.set()

        sess_b = onnxkit.Session(_two_node_model(), executor="cpu")
        thread_a = threading.Thread(target=run_a)
        thread_a.start()
        assert a_inside.wait(10)
        (y,) = sess_b.run(None, {"x": x}, trace=trace_b)
        thread_a.join()
        assert seen_by_b == [1]
        assert blas_threads.GET() == 2
        np.testing.assert_array_equal(y, np.full((1, 8), 8, np.float32))
    finally:
        blas_threads.SET(before)


def test_one_compiled_kernel_serves_every_thread_setting():
    """The thread count and the small-work threshold are read when a kernel runs: changing
    them compiles nothing new (one kernel cache for every setting; the hand-over of a
    kernel's parts compiles once per argument types, on its first split), and every setting
    gives the same values, bit for bit (parts write disjoint outputs)."""
    from numba import get_num_threads, set_num_threads

    from onnxkit.kernels.cpu import _threads, activations, softmax
    from tests.cpu_signatures import added_since, kernel_signatures

    x = np.random.default_rng(3).standard_normal((64, 1024)).astype(np.float32)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    cases = {"relu": (activations.relu, np.maximum(x, 0), 0),
             "softmax": (softmax.softmax, e / e.sum(axis=1, keepdims=True), 1e-6)}
    threads, least = get_num_threads(), _threads.min_parallel()
    _threads.set_min_parallel(1)  # split: the kernels and the hand-over of their parts
    try:  # compile here
        first = {name: kernel(x) for name, (kernel, _, _) in cases.items()}
    finally:
        _threads.set_min_parallel(least)
    before = kernel_signatures()
    try:
        for n in sorted({1, 2, threads}):
            for values in (1, 1 << 15, 1 << 40):
                set_num_threads(min(n, threads))
                _threads.set_min_parallel(values)
                for name, (kernel, want, tol) in cases.items():
                    got = kernel(x)
                    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=name)
                    np.testing.assert_array_equal(got, first[name], err_msg=name)
    finally:
        set_num_threads(threads)
        _threads.set_min_parallel(least)
    added = added_since(before)
    assert not added, f"compiled for a thread setting: {added}"
