"""A q/k/v Split whose pieces are each cut into heads and transposed becomes one Reshape,
one Transpose and one Split (``split_heads``): GPT-2's c_attn output (equal pieces) and
Llama's merged q/k/v projection (grouped-query k and v, fewer heads), checked exactly
against onnxruntime and onnx.reference; Splits that do not fit are left alone."""

import numpy as np
import pytest
from onnx.reference import ReferenceEvaluator

import onnxkit
from onnxkit.optimizer import optimize
from onnxkit.optimizer.passes import split_heads
from tests.optimizer._exported import ort_outputs
from tests.optimizer._helpers import model, rand

H = '<ir_version: 8, opset_import: ["" : 17]>'


def _qkv(sizes, heads, perm="0, 2, 1, 3", second_perm=None, extra=""):
    """x [2, 1, sum(sizes)] split on the last axis, piece p reshaped to [2, 1, heads[p], 8]
    and transposed by ``perm`` (the last piece by ``second_perm`` if given)."""
    outs, body = [], []
    for p, h in enumerate(heads):
        pp = second_perm if second_perm and p == len(heads) - 1 else perm
        body.append(f"r{p} = Reshape (s{p}, shape{p})")
        body.append(f"t{p} = Transpose <perm = [{pp}]> (r{p})")
        outs.append(f"float[2,{h},1,8] t{p}" if pp == "0, 2, 1, 3" else f"float[?,?,?,?] t{p}")
    text = H + f"""
    g (float[2,1,{sum(sizes)}] x) => ({", ".join(outs)}{extra and ", float[2,1,?] s0"}) {{
        {", ".join(f"s{p}" for p in range(len(sizes)))} = Split <axis = -1> (x, sizes)
        {chr(10).join(body)}
    }}"""
    inits = {f"shape{p}": np.array([2, 1, h, 8]) for p, h in enumerate(heads)}
    return model(text, sizes=np.array(sizes), **inits)


@pytest.mark.parametrize("sizes, heads", [([32, 32, 32], [4, 4, 4]),  # GPT-2
                                          ([32, 16, 16], [4, 2, 2])])  # Llama, grouped
def test_heads_split_once(sizes, heads):
    m = _qkv(sizes, heads)
    out, report = optimize(m, 1, passes=(split_heads.PASS,))
    assert [n.op_type for n in out.graph.node] == ["Reshape", "Transpose", "Split"]
    assert report.count("split_heads") == 1
    feeds = {"x": rand(2, 1, sum(sizes))}
    expected = ort_outputs(m, feeds)
    oracle = ReferenceEvaluator(m).run(None, feeds)
    for executor in ("reference", "cpu"):
        got = onnxkit.Session(out, executor=executor).run(None, feeds)
        for g, e, o in zip(got, expected, oracle):
            assert g.shape == e.shape
            np.testing.assert_array_equal(g, e)  # data movement only: exact
            np.testing.assert_array_equal(g, o)


def test_level_2_takes_gpt2_attention_heads():
    """At one token, the heads' Transpose moves a unit axis only: a Reshape (chains)."""
    m = _qkv([32, 32, 32], [4, 4, 4])
    out, _ = optimize(m, 2)
    assert [n.op_type for n in out.graph.node] == ["Reshape", "Split"]
    feeds = {"x": rand(2, 1, 96)}
    for g, e in zip(onnxkit.Session(out, executor="cpu").run(None, feeds), ort_outputs(m, feeds)):
        np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("kwargs", [
    {"second_perm": "0, 1, 2, 3"},  # one piece transposed differently
    {"extra": "s0"},  # a piece is also a graph output
])
def test_splits_that_do_not_fit_are_left_alone(kwargs):
    m = _qkv([32, 32, 32], [4, 4, 4], **kwargs)
    out, report = optimize(m, 1, passes=(split_heads.PASS,))
    assert report.count("split_heads") == 0
    assert [n.op_type for n in out.graph.node].count("Split") == 1
    assert len(out.graph.node) == len(m.graph.node)


def test_heads_of_different_sizes_are_left_alone():
    m = model(H + """
    g (float[2,1,48] x) => (float[2,4,1,8] t0, float[2,4,1,4] t1) {
        s0, s1 = Split <axis = -1> (x, sizes)
        r0 = Reshape (s0, shape0)
        t0 = Transpose <perm = [0, 2, 1, 3]> (r0)
        r1 = Reshape (s1, shape1)
        t1 = Transpose <perm = [0, 2, 1, 3]> (r1)
    }""", sizes=np.array([32, 16]), shape0=np.array([2, 1, 4, 8]),
        shape1=np.array([2, 1, 4, 4]))
    out, report = optimize(m, 1, passes=(split_heads.PASS,))
    assert report.count("split_heads") == 0
    assert [n.op_type for n in out.graph.node] == ["Split"] + ["Reshape", "Transpose"] * 2


def test_reshapes_in_a_row_without_transpose():
    """A decoder step after ``chains``: each piece reshaped twice, read by anything."""
    m = model(H + """
    g (float[2,1,64] x) => (float[2,4,1,8] t0, float[2,2,1,8] t1, float[2,2,1,8] t2) {
        s0, s1, s2 = Split <axis = -1> (x, sizes)
        r0 = Reshape (s0, a0)
        t0 = Reshape (r0, b0)
        r1 = Reshape (s1, a1)
        t1 = Reshape (r1, b1)
        r2 = Reshape (s2, a1)
        t2 = Reshape (r2, b1)
    }""", sizes=np.array([32, 16, 16]), a0=np.array([2, 1, 4, 8]), b0=np.array([2, 4, 1, 8]),
        a1=np.array([2, 1, 2, 8]), b1=np.array([2, 2, 1, 8]))
    out, report = optimize(m, 1, passes=(split_heads.PASS,))
    assert [n.op_type for n in out.graph.node] == ["Reshape", "Split"]
    feeds = {"x": rand(2, 1, 64)}
    for g, e in zip(onnxkit.Session(out, executor="cpu").run(None, feeds), ort_outputs(m, feeds)):
        assert g.shape == e.shape
        np.testing.assert_array_equal(g, e)
