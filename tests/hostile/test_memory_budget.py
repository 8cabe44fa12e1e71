"""The run's memory budget (``Limits.max_run_bytes``): models that grow stop with a clear
error naming the node, the op and the budget, before the machine runs out of memory.

Every budget here is small (1 MB), so a test that fails costs little memory. The expected
numbers are worked out by hand in each test: a float32 holds 4 bytes.
"""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from onnx.reference import ReferenceEvaluator

import onnxkit
from onnxkit.errors import LimitExceededError
from onnxkit.runtime.limits import physical_memory, run_bytes_for

GiB = 1024**3
MiB_LIMITS = onnxkit.Limits(max_run_bytes=1 << 20)  # 1,048,576 bytes
MB_LIMITS = onnxkit.Limits(max_run_bytes=1_000_000)

# v doubles each iteration: float32[4] (16 bytes) -> 16 * 2**k bytes after k iterations
DOUBLING = """
<ir_version: 8, opset_import: ["" : 17]>
g (float[4] x, int64 n) => (float[N] y) {
  go = Constant<value = bool {1}>()
  y = Loop(n, go, x) <body = body (int64 i, bool c_in, float[M] v) => (bool c_out, float[K] w) {
     c_out = Identity(c_in)
     w = Concat<axis = 0>(v, v)
  }>
}
"""

# no trip count, a condition that stays true: only the budget (or the iteration cap) ends it
DOUBLING_FOREVER = DOUBLING.replace("Loop(n, go, x)", "Loop(, go, x)").replace(", int64 n)", ")")

# each iteration's scan output is big (float32[16384], 65,536 bytes): the Loop keeps them all
LOOP_PILE = """
<ir_version: 8, opset_import: ["" : 17]>
g (int64 n) => (float[N, 16384] ys) {
  go = Constant<value = bool {1}>()
  ys = Loop(n, go) <body = body (int64 i, bool c_in) => (bool c_out, float[16384] y) {
     c_out = Identity(c_in)
     y = Identity(big)
  }>
}
"""

SCAN_PILE = """
<ir_version: 8, opset_import: ["" : 17]>
g (float[N] steps) => (float[N, 16384] ys) {
  ys = Scan(steps) <num_scan_inputs = 1, body = body (float t) => (float[16384] y) {
     y = Identity(big)
  }>
}
"""

# a sequence carried by a Loop, one fresh float32[16384] inserted per iteration
SEQUENCE_GROWTH = """
<ir_version: 8, opset_import: ["" : 17]>
g (int64 n) => (seq(float) out) {
  empty = SequenceEmpty<dtype = 1>()
  out = Loop(n, , empty) <body = body (int64 i, bool c_in, seq(float) s)
                              => (bool c_out, seq(float) s_out) {
     c_out = Identity(c_in)
     shape = Constant<value = int64[1] {16384}>()
     piece = ConstantOfShape<value = float[1] {1.0}>(shape)
     s_out = SequenceInsert(s, piece)
  }>
}
"""


def _model(text: str, names: dict[str, str], big: np.ndarray | None = None) -> onnx.ModelProto:
    """The model with its nodes named (``op_type -> name``) and ``big`` as an initializer."""
    model = onnx.parser.parse_model(text)
    for graph in [model.graph] + [a.g for n in model.graph.node for a in n.attribute if a.g.node]:
        for node in graph.node:
            node.name = names.get(node.op_type, node.op_type.lower())
    if big is not None:
        model.graph.initializer.append(onnx.numpy_helper.from_array(big, "big"))
    return model


def _doubling(text=DOUBLING):
    return _model(text, {"Loop": "grow", "Concat": "double"})


@pytest.mark.parametrize("executor", ["reference", "cpu"])
def test_a_loop_that_doubles_its_state_stops_at_the_budget(executor):
    # iteration k concatenates v (16 * 2**k bytes, kept by the Loop) with itself: at k = 15
    # v holds 524,288 bytes and the output would be 1,048,576 = the whole budget
    sess = onnxkit.Session(_doubling(), executor=executor, limits=MiB_LIMITS)
    with pytest.raises(LimitExceededError) as info:
        sess.run(None, {"x": np.ones(4, np.float32), "n": np.array(20, np.int64)})
    message = str(info.value)
    assert message.startswith("node 'double' (Concat, domain 'ai.onnx'): ")
    assert "Concat output of shape [262144] would take 1,048,576 bytes" in message
    assert "max_run_bytes=1,048,576" in message
    assert message.endswith("; in the body of node 'grow' (Loop, domain 'ai.onnx') at iteration "
                            "15, which keeps 524,288 bytes of state and scan outputs")


def test_a_loop_without_a_trip_count_stops_at_the_budget_not_the_machine():
    sess = onnxkit.Session(_doubling(DOUBLING_FOREVER), limits=MiB_LIMITS)
    with pytest.raises(LimitExceededError,
                       match=r"^node 'double' \(Concat.*max_run_bytes=1,048,576"):
        sess.run(None, {"x": np.ones(4, np.float32)})


def test_a_loop_that_fits_gives_what_onnx_reference_gives():
    model = _doubling()
    feeds = {"x": np.array([1, 2, 3, 4], np.float32), "n": np.array(15, np.int64)}
    # 15 doublings: 4 * 2**15 floats = 524,288 bytes, the last concat's inputs 262,144
    y, = onnxkit.Session(model, limits=MiB_LIMITS).run(None, feeds)
    expected, = ReferenceEvaluator(model).run(None, feeds)
    assert y.shape == (4 * 2**15,)
    np.testing.assert_array_equal(y, expected)


def test_loop_scan_outputs_piling_up_stop_at_the_budget():
    # each iteration adds 65,536 bytes to the scan outputs the Loop keeps: after 15 of
    # them (983,040 bytes) the 16th body output would bring the run past 1,000,000. The run
    # also holds the two 1-byte conditions (the outer `go`, the body's `c_out`).
    big = np.arange(16384, dtype=np.float32)
    sess = onnxkit.Session(_model(LOOP_PILE, {"Loop": "pile", "Identity": "pass"}, big),
                           limits=MB_LIMITS)
    with pytest.raises(LimitExceededError) as info:
        sess.run(None, {"n": np.array(40, np.int64)})
    assert str(info.value) == (
        "node 'pass' (Identity, domain 'ai.onnx'): its outputs would take 65,536 bytes while "
        "the run already holds 983,042: over the run's memory budget max_run_bytes=1,000,000 "
        "(set Limits(max_run_bytes=...) to change it); in the body of node 'pile' (Loop, "
        "domain 'ai.onnx') at iteration 15, which keeps 983,040 bytes of state and scan outputs")


def test_loop_scan_outputs_that_fit_stack_as_onnx_reference_stacks_them():
    big = np.arange(16384, dtype=np.float32)
    model = _model(LOOP_PILE, {"Loop": "pile"}, big)
    feeds = {"n": np.array(7, np.int64)}  # 7 * 65,536 kept + 458,752 stacked < 1,000,000
    ys, = onnxkit.Session(model, limits=MB_LIMITS).run(None, feeds)
    np.testing.assert_array_equal(ys, np.tile(big, (7, 1)))


def test_scan_outputs_piling_up_stop_at_the_budget():
    big = np.arange(16384, dtype=np.float32)
    sess = onnxkit.Session(_model(SCAN_PILE, {"Scan": "scan", "Identity": "pass"}, big),
                           limits=MB_LIMITS)
    with pytest.raises(LimitExceededError) as info:
        sess.run(None, {"steps": np.zeros(40, np.float32)})
    assert str(info.value) == (
        "node 'pass' (Identity, domain 'ai.onnx'): its outputs would take 65,536 bytes while "
        "the run already holds 983,040: over the run's memory budget max_run_bytes=1,000,000 "
        "(set Limits(max_run_bytes=...) to change it); in the body of node 'scan' (Scan, "
        "domain 'ai.onnx') at step 15, which keeps 983,040 bytes of state and scan outputs")


def test_scan_outputs_that_fit_stack_as_onnx_reference_stacks_them():
    big = np.arange(16384, dtype=np.float32)
    model = _model(SCAN_PILE, {"Scan": "scan"}, big)
    feeds = {"steps": np.zeros(7, np.float32)}
    ys, = onnxkit.Session(model, limits=MB_LIMITS).run(None, feeds)
    expected, = ReferenceEvaluator(model).run(None, feeds)
    assert ys.shape == (7, 16384)
    np.testing.assert_array_equal(ys, expected)


def test_a_sequence_growing_in_a_loop_stops_at_the_budget():
    model = _model(SEQUENCE_GROWTH, {"Loop": "grow", "SequenceInsert": "insert"})
    with pytest.raises(LimitExceededError,
                       match=r"^node '(insert|grow|constantofshape)' .*max_run_bytes=1,000,000"):
        onnxkit.Session(model, limits=MB_LIMITS).run(None, {"n": np.array(64, np.int64)})
    out, = onnxkit.Session(model, limits=MB_LIMITS).run(None, {"n": np.array(3, np.int64)})
    assert len(out) == 3 and all(np.array_equal(p, np.ones(16384, np.float32)) for p in out)


def _one_node(op_type: str, inputs: list[tuple[str, np.ndarray]], n_outputs: int = 1,
              **attrs) -> tuple[onnx.ModelProto, dict]:
    """A one-node model; inputs named ``i0, i1...``; values given as sequences (lists)
    become sequence inputs."""
    from onnx import helper

    def info(name, value):
        if isinstance(value, list):
            return helper.make_tensor_sequence_value_info(name, onnx.TensorProto.FLOAT, None)
        elem = helper.np_dtype_to_tensor_dtype(value.dtype)
        return helper.make_tensor_value_info(name, elem, list(value.shape))

    names = [name for name, _ in inputs]
    outputs = [f"o{i}" for i in range(n_outputs)]
    node = helper.make_node(op_type, names, outputs, name="big", **attrs)
    graph = helper.make_graph([node], "g", [info(n, v) for n, v in inputs],
                              [onnx.ValueInfoProto(name=o) for o in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    return model, dict(inputs)


F = np.ones(75_000, np.float32)  # 300,000 bytes


@pytest.mark.parametrize("op_type, inputs, attrs, shape", [
    ("Concat", [("a", F), ("b", F), ("c", F), ("d", F)], {"axis": 0}, [300000]),
    ("ConcatFromSequence", [("s", [F, F, F, F])], {"axis": 0}, [300000]),
    ("SplitToSequence", [("x", np.ones(300_000, np.float32))], {}, [300000]),
    ("Tile", [("x", F), ("r", np.array([4], np.int64))], {}, [300000]),
    ("Expand", [("x", F[:1]), ("s", np.array([300_000], np.int64))], {}, [300000]),
    ("ConstantOfShape", [("s", np.array([300_000], np.int64))], {}, [300000]),
    ("Range", [("a", np.array(0, np.int64)), ("b", np.array(200_000, np.int64)),
               ("d", np.array(1, np.int64))], {}, [200000]),
    ("Pad", [("x", F), ("p", np.array([0, 225_000], np.int64))], {}, [300000]),
])
def test_one_big_allocation_is_refused_before_it_is_made(op_type, inputs, attrs, shape):
    # each output would take 1,200,000 bytes (Range: 200,000 int64, 1,600,000), over 1,000,000
    model, feeds = _one_node(op_type, inputs, **attrs)
    sess = onnxkit.Session(model, limits=MB_LIMITS)
    with pytest.raises(LimitExceededError) as info:
        sess.run(None, feeds)
    message = str(info.value)
    assert message.startswith(f"node 'big' ({op_type}, domain 'ai.onnx'): ")
    assert re.search(rf"of shape {re.escape(str(shape))} would take 1,[26]00,000 bytes", message)
    assert "max_run_bytes=1,000,000" in message


def test_the_same_allocations_run_under_the_default_budget():
    model, feeds = _one_node("Concat", [("a", F), ("b", F), ("c", F), ("d", F)], axis=0)
    y, = onnxkit.Session(model).run(None, feeds)
    assert y.shape == (300_000,) and y.dtype == np.float32 and float(y.sum()) == 300_000.0


def test_a_long_loop_whose_temporaries_die_runs_under_a_tight_budget():
    # 500 iterations, each making a fresh 65,536-byte tensor and dropping it: nothing piles up
    text = """
    <ir_version: 8, opset_import: ["" : 17]>
    g (int64 n, float start) => (float total) {
      total = Loop(n, , start) <body = body (int64 i, bool c_in, float acc)
                                   => (bool c_out, float acc_out) {
         c_out = Identity(c_in)
         shape = Constant<value = int64[1] {16384}>()
         piece = ConstantOfShape<value = float[1] {0.5}>(shape)
         part = ReduceSum<keepdims = 0>(piece)
         acc_out = Add(acc, part)
      }>
    }
    """
    budget = onnxkit.Limits(max_run_bytes=200_000)  # room for about three pieces at once
    total, = onnxkit.Session(onnx.parser.parse_model(text), limits=budget).run(
        None, {"n": np.array(500, np.int64), "start": np.array(1.0, np.float32)})
    assert float(total) == 1.0 + 500 * 16384 * 0.5  # 4,096,001: exact in float32


@pytest.mark.parametrize("memory, expected", [
    (4 * GiB, 2 * GiB),          # a student laptop: half of it
    (6 * GiB + 2, 3 * GiB + 1),  # half, rounded down
    (16 * GiB, 8 * GiB),         # the cap meets half
    (512 * GiB, 8 * GiB),        # a big server: the cap
    (None, 8 * GiB),             # memory unknown: the cap
])
def test_the_default_budget_is_the_smaller_of_8_gib_and_half_the_memory(memory, expected):
    assert run_bytes_for(memory) == expected


def _memory_from_proc() -> int:
    """MemTotal from /proc/meminfo, lowered to the cgroup's memory limit where one is set."""
    with open("/proc/meminfo") as f:
        total = next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemTotal:"))
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return total


@pytest.mark.skipif(not __import__("os").path.exists("/proc/meminfo"), reason="Linux only")
def test_the_default_budget_comes_from_this_machines_memory():
    memory = _memory_from_proc()
    assert physical_memory() == memory
    expected = min(8 * GiB, memory // 2)
    assert onnxkit.Limits().max_run_bytes == expected
    assert onnxkit.Session(_doubling()).limits.max_run_bytes == expected
