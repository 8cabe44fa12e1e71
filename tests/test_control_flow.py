"""Control flow on tiny inline models: scopes, loop-carried values, limits.

Every expected value is worked out by hand in the comment beside it.
"""

import numpy as np
import pytest

import onnxkit
from onnxkit.errors import GraphError, LimitExceededError

# Loop(3) whose body holds an If: the If condition compares the iteration number with
# the main graph's `limit`, the then-branch reads the main graph's `bias`, the
# else-branch its `scale`, and both read the body's `acc`.
NESTED_IF_IN_LOOP = """
<ir_version: 8, opset_import: ["" : 17]>
nested (float[2] x, float[2] bias, float[2] scale, int64 limit) => (float[2] y, float[3, 2] steps) {
    trip = Constant <value = int64 {3}> ()
    go = Constant <value = bool {1}> ()
    y, steps = Loop (trip, go, x) <body = loop_body (int64 i, bool c_in, float[2] acc)
                                         => (bool c_out, float[2] acc_out, float[2] step) {
        c_out = Identity (c_in)
        past = Greater (i, limit)
        acc_out = If (past) <
            then_branch = then_g () => (float[2] t) { t = Add (acc, bias) },
            else_branch = else_g () => (float[2] e) { e = Mul (acc, scale) }
        >
        step = Identity (acc_out)
    }>
}
"""


def test_if_inside_loop_sees_both_enclosing_scopes():
    x = np.array([1, 2], np.float32)
    bias = np.array([10, 20], np.float32)
    scale = np.array([2, 3], np.float32)
    y, steps = onnxkit.run(NESTED_IF_IN_LOOP, {"x": x, "bias": bias, "scale": scale,
                                               "limit": np.array(0, np.int64)})
    # i=0: 0 > 0 false -> acc * scale = [2, 6]
    # i=1: true       -> acc + bias  = [12, 26]
    # i=2: true       -> acc + bias  = [22, 46]
    np.testing.assert_array_equal(steps, [[2, 6], [12, 26], [22, 46]])
    np.testing.assert_array_equal(y, [22, 46])
    assert y.dtype == np.float32 and steps.shape == (3, 2)


def test_if_inside_loop_takes_the_other_branch_when_limit_changes():
    ones = np.ones(2, np.float32)
    y, steps = onnxkit.run(NESTED_IF_IN_LOOP, {"x": ones, "bias": ones, "scale": 2 * ones,
                                               "limit": np.array(1, np.int64)})
    # i=0, i=1: not past 1 -> doubled twice: 2, 4;  i=2: past -> 4 + 1 = 5
    np.testing.assert_array_equal(steps[:, 0], [2, 4, 5])
    np.testing.assert_array_equal(y, [5, 5])


# A for-loop adding the main graph's `step` to a carried sum (the body has no such input).
OUTER_READ = """
<ir_version: 8, opset_import: ["" : 17]>
outer (int64 n, float start, float step) => (float total, float[N] partial) {
    total, partial = Loop (n, , start) <body = add_body (int64 i, bool c_in, float s)
                                              => (bool c_out, float s_out, float p) {
        c_out = Identity (c_in)
        s_out = Add (s, step)
        p = Identity (s_out)
    }>
}
"""


def test_loop_body_reads_an_outer_value():
    total, partial = onnxkit.run(OUTER_READ, {"n": np.array(4, np.int64),
                                              "start": np.array(1, np.float32),
                                              "step": np.array(2.5, np.float32)})
    # 1 + 2.5 = 3.5, 6, 8.5, 11
    np.testing.assert_array_equal(partial, [3.5, 6.0, 8.5, 11.0])
    assert total == np.float32(11.0) and total.shape == ()


def test_zero_trip_loop_returns_initial_state_and_empty_scan_output():
    total, partial = onnxkit.run(OUTER_READ, {"n": np.array(0, np.int64),
                                              "start": np.array(7, np.float32),
                                              "step": np.array(1, np.float32)})
    assert total == np.float32(7.0)
    # the scan output is empty, typed from the body's declared output (float scalar)
    assert partial.shape == (0,) and partial.dtype == np.float32


# A while-loop: no trip count, the body decides when to stop with an outer `limit`.
WHILE = """
<ir_version: 8, opset_import: ["" : 17]>
while_g (float x, float limit) => (float y, float[N] seen) {
    go = Constant <value = bool {1}> ()
    y, seen = Loop (, go, x) <body = w_body (int64 i, bool c_in, float v)
                                       => (bool c_out, float v_out, float mark) {
        one = Constant <value = float {1}> ()
        v_out = Add (v, one)
        c_out = Less (v_out, limit)
        mark = Identity (v_out)
    }>
}
"""


def test_while_loop_stops_on_the_condition():
    y, seen = onnxkit.run(WHILE, {"x": np.array(0, np.float32), "limit": np.array(5, np.float32)})
    # v_out = 1, 2, 3, 4 (1 < 5 ... 4 < 5 keep going), 5 (5 < 5 is false: stop)
    np.testing.assert_array_equal(seen, [1, 2, 3, 4, 5])
    assert y == np.float32(5)


# A loop whose condition never turns false.
FOREVER = """
<ir_version: 8, opset_import: ["" : 17]>
forever (int64 n, float x) => (float y) {
    go = Constant <value = bool {1}> ()
    y = Loop (n, go, x) <body = f_body (int64 i, bool c_in, float v) => (bool c_out, float v_out) {
        c_out = Identity (c_in)
        v_out = Identity (v)
    }>
}
"""


def test_max_loop_iterations_stops_an_endless_loop():
    sess = onnxkit.Session(FOREVER, limits=onnxkit.Limits(max_loop_iterations=10))
    # n is a trip count of 2**40: the limit (10) is what ends the run
    with pytest.raises(LimitExceededError, match="max_loop_iterations=10"):
        sess.run(None, {"n": np.array(2**40, np.int64), "x": np.array(1, np.float32)})


def test_max_loop_iterations_allows_exactly_the_limit():
    sess = onnxkit.Session(FOREVER, limits=onnxkit.Limits(max_loop_iterations=10))
    (y,) = sess.run(None, {"n": np.array(10, np.int64), "x": np.array(3, np.float32)})
    assert y == np.float32(3)
    with pytest.raises(LimitExceededError):
        sess.run(None, {"n": np.array(11, np.int64), "x": np.array(3, np.float32)})


# Scan, scanning backwards, with the body reading the outer `offset`.
REVERSE_SCAN = """
<ir_version: 8, opset_import: ["" : 17]>
rscan (float init, float[4] xs, float offset) => (float last, float[4] running) {
    last, running = Scan (init, xs) <num_scan_inputs = 1, scan_input_directions = [1],
        body = s_body (float acc, float x) => (float acc_out, float out) {
            shifted = Add (x, offset)
            acc_out = Add (acc, shifted)
            out = Identity (acc_out)
        }>
}
"""


def test_reverse_scan_with_outer_value():
    last, running = onnxkit.run(REVERSE_SCAN, {"init": np.array(0, np.float32),
                                               "xs": np.array([1, 2, 3, 4], np.float32),
                                               "offset": np.array(10, np.float32)})
    # visits 4, 3, 2, 1, each + 10: 14, 27, 39, 50
    np.testing.assert_array_equal(running, [14, 27, 39, 50])
    assert last == np.float32(50)


def test_scan_respects_max_loop_iterations():
    sess = onnxkit.Session(REVERSE_SCAN, limits=onnxkit.Limits(max_loop_iterations=3))
    with pytest.raises(LimitExceededError, match="max_loop_iterations=3"):
        sess.run(None, {"init": np.array(0, np.float32), "xs": np.zeros(4, np.float32),
                        "offset": np.array(0, np.float32)})


# A loop-carried sequence grown by SequenceInsert, and a sequence-valued scan output.
SEQ_CARRIED = """
<ir_version: 8, opset_import: ["" : 17]>
seq_loop (int64 n) => (seq(int64) items) {
    empty = SequenceEmpty <dtype = 7> ()
    items = Loop (n, , empty) <body = q_body (int64 i, bool c_in, seq(int64) s)
                                       => (bool c_out, seq(int64) s_out) {
        c_out = Identity (c_in)
        s_out = SequenceInsert (s, i)
    }>
}
"""


def test_loop_carries_a_sequence():
    (items,) = onnxkit.run(SEQ_CARRIED, {"n": np.array(3, np.int64)})
    assert [int(t) for t in items] == [0, 1, 2]


SEQ_SCAN_OUTPUT = """
<ir_version: 8, opset_import: ["" : 17]>
seq_scan (int64 n, float x) => (float y, seq(float) bad) {
    y, bad = Loop (n, , x) <body = b_body (int64 i, bool c_in, float v)
                                     => (bool c_out, float v_out, seq(float) s) {
        c_out = Identity (c_in)
        v_out = Identity (v)
        s = SequenceConstruct (v)
    }>
}
"""


def test_sequence_scan_output_is_refused():
    with pytest.raises(GraphError, match="scan outputs must be tensors"):
        onnxkit.run(SEQ_SCAN_OUTPUT, {"n": np.array(2, np.int64), "x": np.array(1, np.float32)})
