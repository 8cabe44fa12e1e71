"""Checks of exercise 2: each rule on tiny models in ONNX text syntax. A rule must fire
exactly where it should, and the rewritten model must give the reference executor's
answers (tight tolerances)."""

from __future__ import annotations

import numpy as np
import pytest

import onnxkit
from exercises.tests.select import exercise
from onnxkit.optimizer import optimize

ex = exercise("ex2_rewrite")
rng = np.random.default_rng(0)


def rewrite_with(rule, text: str):
    model = onnxkit.load(text)
    optimized, report = optimize(model, passes=(ex.make_pass(rule),))
    return model, optimized, report


def same_answers(before, after, feeds, rtol=0.0):
    expected = onnxkit.Session(before).run(None, feeds)
    got = onnxkit.Session(after).run(None, feeds)
    for e, g in zip(expected, got):
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=rtol, atol=0)


HEAD = '<ir_version: 8, opset_import: ["" : 18]>\n'


# --- Task 2.1: x * Reciprocal(y) -> x / y ---------------------------------------------------

@pytest.mark.task2_1
def test_reciprocal_becomes_div():
    before, after, report = rewrite_with(ex.reciprocal_rule(), HEAD + """
g (float[4] a, float[4] b) => (float[4] z) {
  r = Reciprocal (b)
  z = Mul (a, r)
}""")
    assert len(report.rewrites) == 1
    assert [n.op_type for n in after.graph.node] == ["Div"]
    assert list(after.graph.node[0].input) == ["a", "b"]
    feeds = {"a": np.array([1, 2, 3, 4], np.float32), "b": np.array([2, 4, 8, 0.5], np.float32)}
    (z,) = onnxkit.Session(after).run(None, feeds)
    assert z.tolist() == [0.5, 0.5, 0.375, 8.0]
    same_answers(before, after, {"a": rng.standard_normal(4, np.float32),
                                 "b": rng.uniform(0.5, 2, 4).astype(np.float32)}, rtol=1e-6)


@pytest.mark.task2_1
def test_reciprocal_on_the_left_of_mul():
    _, after, report = rewrite_with(ex.reciprocal_rule(), HEAD + """
g (float[2] a, float[2] b) => (float[2] z) {
  r = Reciprocal (b)
  z = Mul (r, a)
}""")
    assert len(report.rewrites) == 1
    assert [(n.op_type, list(n.input)) for n in after.graph.node] == [("Div", ["a", "b"])]


@pytest.mark.task2_1
@pytest.mark.hidden
def test_reciprocal_read_elsewhere_stays():
    _, after, report = rewrite_with(ex.reciprocal_rule(), HEAD + """
g (float[2] a, float[2] b) => (float[2] z, float[2] r) {
  r = Reciprocal (b)
  z = Mul (a, r)
}""")
    assert report.rewrites == [] and len(after.graph.node) == 2
    # a Mul with no Reciprocal is not a match at all
    _, after, report = rewrite_with(ex.reciprocal_rule(), HEAD + """
g (float[2] a, float[2] b) => (float[2] z) { n = Neg (b)
  z = Mul (a, n) }""")
    assert report.rewrites == [] and [n.op_type for n in after.graph.node] == ["Neg", "Mul"]


# --- Task 2.2: Pow(x, 2) -> Mul(x, x) ----------------------------------------------------

POW = HEAD + """
g (float[3] x) => (float[{shape}] z) {{
  e = Constant <value = {exponent}> ()
  z = Pow (x, e)
}}"""


@pytest.mark.task2_2
@pytest.mark.parametrize("exponent", ["float {2.0}", "int64 {2}", "float[1] {2.0}"])
def test_square_becomes_mul(exponent):
    before, after, report = rewrite_with(ex.square_rule(), POW.format(shape=3, exponent=exponent))
    assert len(report.rewrites) == 1
    # the unused Constant stays: removing dead nodes is the dead_code pass's job
    assert [(n.op_type, list(n.input)) for n in after.graph.node if n.op_type != "Constant"] == \
        [("Mul", ["x", "x"])]
    x = np.array([-3.0, 0.5, 4.0], np.float32)
    (z,) = onnxkit.Session(after).run(None, {"x": x})
    assert z.tolist() == [9.0, 0.25, 16.0]
    same_answers(before, after, {"x": rng.standard_normal(3, np.float32)})


def refused(report) -> list[str]:
    return [r.reason for r in report.rejections if r.rule == "Pow(x, 2)->Mul"]


@pytest.mark.task2_2
@pytest.mark.parametrize("shape, exponent", [
    (3, "float {3.0}"),            # not a square
    (3, "float[2] {2.0, 3.0}"),    # not 2 everywhere
    ("1, 3", "float[1, 1] {2.0}"),  # would broadcast x from [3] to [1, 3]
])
def test_square_refused_with_a_reason(shape, exponent):
    before, after, report = rewrite_with(ex.square_rule(), POW.format(shape=shape, exponent=exponent))
    assert report.rewrites == []
    assert [n.op_type for n in after.graph.node] == ["Constant", "Pow"]
    reasons = refused(report)
    assert reasons and all(isinstance(r, str) and r for r in reasons)


@pytest.mark.task2_2
@pytest.mark.hidden
def test_square_of_an_unknown_exponent_is_refused():
    _, after, report = rewrite_with(ex.square_rule(), HEAD + """
g (float[3] x, float e) => (float[3] z) { z = Pow (x, e) }""")
    assert report.rewrites == [] and refused(report)
