"""Level-1 passes, one tiny model each: how many rewrites, and the same outputs."""

import numpy as np
import onnx

from onnxkit.optimizer.passes import (canonicalize, constant_folding, cse, dead_code,
                                      identity_elimination, noop_elimination, shape_folding)
from tests.optimizer._helpers import model, ops, rand, run_pass

H = '<ir_version: 8, opset_import: ["" : 17]>'


def test_constant_folding_turns_constant_math_into_initializers():
    m = model(H + """
    g (float[2,3] x) => (float[2,3] y) {
        two = Constant <value = float {2}> ()
        w2 = Mul (w, two)
        y = Add (x, w2)
    }""", w=rand(2, 3))
    out, report = run_pass(m, constant_folding.PASS)
    assert report.count("constant_folding") == 2  # the Constant, then the Mul
    assert ops(out) == ["Add"]


def test_constant_folding_leaves_random_nodes_and_graph_outputs():
    m = model(H + """
    g (float[2] x) => (float[2] y, float[2] c) {
        c = Constant <value = float[2] {1, 2}> ()
        r = RandomUniform <shape = [2]> ()
        z = Mul (r, 0.0f)
        y = Add (x, c)
    }""".replace("0.0f", "zero"), zero=np.array(0, np.float32))
    out, report = run_pass(m, constant_folding.PASS)
    assert report.count("constant_folding") == 0
    assert "RandomUniform" in ops(out)


def test_shape_folding_of_a_static_shape():
    m = model(H + """
    g (float[2,3,4] x) => (float[6,4] y) {
        s = Shape (x)
        head = Slice (s, zero, two)
        n = ReduceProd <keepdims = 1> (head)
        shape = Concat <axis = 0> (n, four)
        y = Reshape (x, shape)
    }""", zero=np.array([0]), two=np.array([2]), four=np.array([4]))
    out, report = run_pass(m, shape_folding.PASS, constant_folding.PASS, dead_code.PASS)
    assert report.count("shape_folding") == 1
    assert ops(out) == ["Reshape"]


def test_shape_with_a_symbolic_dimension_stays():
    m = model(H + """
    g (float[N,3] x) => (float[2] y) {
        s = Shape (x)
        y = Cast <to = 1> (s)
    }""")
    out, report = run_pass(m, shape_folding.PASS)
    assert report.count("shape_folding") == 0
    assert any("not static" in r.reason for r in report.rejections)


def test_identity_and_dropout_are_removed():
    m = model(H + """
    g (float[4] x) => (float[4] y) {
        a = Identity (x)
        b = Dropout <seed = 1> (a)
        y = Relu (b)
    }""")
    out, report = run_pass(m, identity_elimination.PASS)
    assert report.count("identity_elimination") == 2
    assert ops(out) == ["Relu"] and out.graph.node[0].input[0] == "x"


def test_identity_feeding_a_graph_output_keeps_the_output_name():
    m = model(H + """
    g (float[4] x) => (float[4] y) {
        r = Relu (x)
        y = Identity (r)
    }""")
    out, report = run_pass(m, identity_elimination.PASS)
    assert ops(out) == ["Relu"] and out.graph.node[0].output[0] == "y"


def test_identity_between_input_and_output_stays():
    m = model(H + "g (float[4] x) => (float[4] y) { y = Identity (x) }")
    out, report = run_pass(m, identity_elimination.PASS)
    assert ops(out) == ["Identity"] and report.rejections


def test_dropout_in_training_mode_stays():
    m = model(H + """
    g (float[4] x) => (float[4] y) {
        y = Dropout (x, ratio, on)
    }""", ratio=np.array(0.5, np.float32), on=np.array(True))
    _, report = run_pass(m, identity_elimination.PASS, feeds={"x": np.zeros(4, np.float32)})
    assert report.count("identity_elimination") == 0


def test_noop_nodes_are_removed():
    m = model(H + """
    g (float[2,3] x) => (float[2,3] y) {
        a = Cast <to = 1> (x)
        b = Reshape (a, same)
        c = Transpose <perm = [0, 1]> (b)
        d = Slice (c, starts, ends)
        e = Pad (d, zeros)
        f = Expand (e, full)
        u = Unsqueeze (f, one)
        s = Squeeze (u, one)
        t = Add (s, zero)
        y = Mul (one_f, t)
    }""", same=np.array([2, -1]), full=np.array([2, 3]), starts=np.array([0]), ends=np.array([2**62]),
        zeros=np.zeros(4, np.int64), one=np.array([1]), zero=np.zeros(3, np.float32),
        one_f=np.array(1, np.float32))
    out, report = run_pass(m, noop_elimination.PASS)
    assert report.count("noop_elimination") == 9  # the Unsqueeze+Squeeze pair is one rewrite
    assert ops(out) == ["Identity"]  # y = x needs one node: a graph output cannot be an input


def test_noops_that_change_something_stay():
    m = model(H + """
    g (float[2,3] x) => (float[3,2] y) {
        a = Add (x, row)
        y = Transpose (a)
    }""", row=np.zeros((4, 2, 3), np.float32)[0:1].reshape(1, 2, 3)[0])
    m2 = model(H + """
    g (float[2,3] x) => (float[1,2,3] y) {
        y = Add (x, zero3)
    }""", zero3=np.zeros((1, 2, 3), np.float32))
    _, r1 = run_pass(m, noop_elimination.PASS)
    _, r2 = run_pass(m2, noop_elimination.PASS)
    assert r1.count("noop_elimination", "Add 0") == 1  # same shape: removed
    assert r1.count("noop_elimination", "Transpose") == 0
    assert r2.count("noop_elimination") == 0  # the zero broadcasts x to a bigger shape


def test_sum_of_two_becomes_add():
    m = model(H + "g (float[3] a, float[3] b) => (float[3] y) { y = Sum (a, b) }")
    out, report = run_pass(m, canonicalize.PASS)
    assert ops(out) == ["Add"]


def test_cse_merges_duplicates_and_equal_constants():
    m = model(H + """
    g (float[4] x) => (float[4] y) {
        a = Add (x, c1)
        b = Add (x, c2)
        ra = Relu (a)
        rb = Relu (b)
        y = Mul (ra, rb)
    }""", c1=np.arange(4, dtype=np.float32), c2=np.arange(4, dtype=np.float32))
    out, report = run_pass(m, cse.PASS)
    assert report.count("cse", "duplicate node") == 2
    assert report.count("cse", "duplicate constants") == 1
    assert ops(out) == ["Add", "Relu", "Mul"]


def test_cse_keeps_random_nodes_apart():
    m = model(H + """
    g (float[2] x) => (float[2] y) {
        a = RandomNormalLike (x)
        b = RandomNormalLike (x)
        y = Sub (a, b)
    }""")
    out, _ = cse.PASS, None
    from onnxkit.optimizer import optimize

    out, report = optimize(m, 1, passes=(cse.PASS,))
    assert report.count("cse") == 0


def test_dead_code_and_unused_initializers():
    m = model(H + """
    g (float[4] x) => (float[4] y) {
        dead = Sigmoid (x)
        dead2 = Add (dead, w)
        y = Relu (x)
    }""", w=np.ones(4, np.float32), unused=np.ones(8, np.float32))
    out, report = run_pass(m, dead_code.PASS)
    assert report.count("dead_code", "unused node") == 2
    assert report.count("dead_code", "unused initializers") == 1
    assert ops(out) == ["Relu"] and not out.graph.initializer


def test_ir3_initializers_listed_as_inputs_become_constants():
    m = model(H.replace("ir_version: 8", "ir_version: 3").replace('"" : 17', '"" : 9') + """
    g (float[2] x, float[2] w) => (float[2] y) {
        w2 = Mul (w, w)
        y = Add (x, w2)
    }""", w=np.array([1, 2], np.float32))
    out, report = run_pass(m, constant_folding.PASS, feeds={"x": np.ones(2, np.float32)})
    assert report.count("constant_folding") == 1
    assert out.ir_version == 4 and [i.name for i in out.graph.input] == ["x"]
    onnx.checker.check_model(out, full_check=True)


def test_initializer_that_a_feed_can_override_is_not_folded():
    m = model(H + """
    g (float[2] x, float[2] w) => (float[2] y) {
        w2 = Mul (w, w)
        y = Add (x, w2)
    }""", w=np.array([1, 2], np.float32))
    out, report = run_pass(m, constant_folding.PASS, feeds={"x": np.ones(2, np.float32)})
    assert report.count("constant_folding") == 0
