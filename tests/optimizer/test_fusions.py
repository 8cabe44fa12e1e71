"""Level-2 fusions, one tiny model each: how many rewrites, and the same outputs."""

import math

import numpy as np
import pytest

from onnxkit.optimizer.passes import (activation_fusion, attention_fusion, chains, conv_add_fusion,
                                      gelu_fusion, layer_norm_fusion, matmul_add_fusion,
                                      skip_layer_norm_fusion)
from tests.optimizer._helpers import model, ops, rand, run_pass

H = '<ir_version: 8, opset_import: ["" : 17]>'
H20 = '<ir_version: 9, opset_import: ["" : 20]>'
H23 = '<ir_version: 10, opset_import: ["" : 23]>'
TOL = {"rtol": 1e-5, "atol": 1e-5}


@pytest.mark.parametrize("act, params", [
    ("Relu ()", []), ("LeakyRelu <alpha = 0.2> ()", [0.2]), ("Sigmoid ()", []), ("Tanh ()", []),
    ("HardSigmoid ()", [0.2, 0.5]), ("Clip (lo, hi)", [0.0, 6.0]),
])
def test_conv_activation(act, params):
    call = act.replace("()", "(c)").replace("(lo, hi)", "(c, lo, hi)")
    m = model(H + f"""
    g (float[1,3,6,6] x) => (float[1,4,4,4] y) {{
        c = Conv (x, W, B)
        y = {call}
    }}""", W=rand(4, 3, 3, 3), B=rand(4), lo=np.array(0, np.float32), hi=np.array(6, np.float32))
    out, report = run_pass(m, activation_fusion.PASS, **TOL)
    assert report.count("activation_fusion") == 1
    assert ops(out) == ["onnxkit::FusedConv"]
    got = {a.name: a for a in out.graph.node[0].attribute}
    assert got["activation"].s.decode() == act.split()[0]
    assert list(got["activation_params"].floats) == pytest.approx(params) if params else True


@pytest.mark.parametrize("silu", ["Mul (c, s)", "Mul (s, c)"])
def test_conv_silu_becomes_swish(silu):
    m = model(H + f"""
    g (float[1,3,6,6] x) => (float[1,4,4,4] y) {{
        c = Conv (x, W, B)
        s = Sigmoid (c)
        y = {silu}
    }}""", W=rand(4, 3, 3, 3), B=rand(4))
    out, report = run_pass(m, activation_fusion.PASS, **TOL)
    assert report.count("activation_fusion") == 1
    assert ops(out) == ["onnxkit::FusedConv"]
    got = {a.name: a for a in out.graph.node[0].attribute}
    assert got["activation"].s.decode() == "Swish"
    assert list(got["activation_params"].floats) == [1.0]


def test_swish_op_and_silu_of_gemm_fuse_but_not_silu_of_another_value():
    m = model('<ir_version: 10, opset_import: ["" : 24]>' + """
    g (float[5,6] a, float[1,3,6,6] x) => (float[5,4] y, float[1,4,4,4] z, float[1,4,4,4] w) {
        g1 = Gemm (a, B, C)
        s = Sigmoid (g1)
        y = Mul (g1, s)
        c = Conv (x, W)
        z = Swish <alpha = 0.5> (c)
        d = Conv (x, W)
        d2 = Conv (x, W2)
        e = Sigmoid (d2)
        w = Mul (d, e)
    }""", B=rand(6, 4), C=rand(4), W=rand(4, 3, 3, 3, seed=3), W2=rand(4, 3, 3, 3, seed=4))
    out, report = run_pass(m, activation_fusion.PASS, **TOL)
    fused = {n.output[0]: n for n in out.graph.node if n.domain == "onnxkit"}
    params = {}
    for o, n in fused.items():
        got = {a.name: a for a in n.attribute}
        params[o] = (got["activation"].s.decode(),
                     list(got["activation_params"].floats) if "activation_params" in got else [])
    # d * Sigmoid(d2) is no SiLU: d2's Conv takes the Sigmoid, the Mul stays
    assert params == {"y": ("Swish", [1.0]), "z": ("Swish", [0.5]), "e": ("Sigmoid", [])}
    assert "Mul" in ops(out)


def test_gemm_and_matmul_activation():
    m = model(H + """
    g (float[5,6] a, float[2,5,6] b) => (float[5,4] y, float[2,5,4] z) {
        g1 = Gemm (a, B, C)
        y = Relu (g1)
        m1 = MatMul (b, W)
        z = Sigmoid (m1)
    }""", B=rand(6, 4), C=rand(4), W=rand(6, 4, seed=3))
    out, report = run_pass(m, activation_fusion.PASS, **TOL)
    assert report.count("activation_fusion") == 2
    assert sorted(ops(out)) == ["onnxkit::FusedGemm", "onnxkit::FusedMatMul"]


def test_batchnorm_activation_keeps_only_epsilon():
    bn = {"scale": rand(4, seed=1), "bias": rand(4, seed=2), "mean": rand(4, seed=3),
          "var": rand(4, seed=4, low=0.5)}
    m = model(H + """
    g (float[2,4,5,5] x) => (float[2,4,5,5] y) {
        b = BatchNormalization <epsilon = 0.01, momentum = 0.8> (x, scale, bias, mean, var)
        y = Clip (b, lo, hi)
    }""", lo=np.array(-0.5, np.float32), hi=np.array(0.5, np.float32), **bn)
    out, report = run_pass(m, activation_fusion.PASS, **TOL)
    assert report.count("activation_fusion") == 1
    assert ops(out) == ["onnxkit::FusedBatchNormalization"]
    got = {a.name: a for a in out.graph.node[0].attribute}
    assert sorted(got) == ["activation", "activation_params", "epsilon"]
    assert got["epsilon"].f == pytest.approx(0.01) and list(got["activation_params"].floats) == [-0.5, 0.5]


def test_training_batchnorm_is_not_fused():
    bn = {"scale": rand(4, seed=1), "bias": rand(4, seed=2), "mean": rand(4, seed=3),
          "var": rand(4, seed=4, low=0.5)}
    m = model(H + """
    g (float[2,4,5,5] x) => (float[2,4,5,5] y) {
        b = BatchNormalization <training_mode = 1> (x, scale, bias, mean, var)
        y = Relu (b)
    }""", **bn)  # one output, yet the statistics are the batch's
    _, report = run_pass(m, activation_fusion.PASS, **TOL)
    assert report.count("activation_fusion") == 0
    assert any("training-mode" in r.reason for r in report.rejections)


def test_activation_after_a_shared_conv_is_not_fused():
    m = model(H + """
    g (float[1,3,6,6] x) => (float[1,4,4,4] y, float[1,4,4,4] z) {
        c = Conv (x, W)
        y = Relu (c)
        z = Neg (c)
    }""", W=rand(4, 3, 3, 3))
    _, report = run_pass(m, activation_fusion.PASS)
    assert report.count("activation_fusion") == 0
    assert any("also read by Neg" in r.reason for r in report.rejections)


def test_residual_add_and_relu_fold_into_fused_conv():
    m = model(H + """
    g (float[1,4,6,6] x) => (float[1,4,6,6] y) {
        c = Conv <pads = [1, 1, 1, 1]> (x, W, B)
        s = Add (x, c)
        y = Relu (s)
    }""", W=rand(4, 4, 3, 3), B=rand(4))
    out, report = run_pass(m, conv_add_fusion.PASS, activation_fusion.PASS, **TOL)
    assert report.count("conv_add_fusion") == 1 and report.count("activation_fusion") == 1
    assert ops(out) == ["onnxkit::FusedConv"] and list(out.graph.node[0].input) == ["x", "W", "B", "x"]


def test_relu_then_add_is_not_a_z_input():
    m = model(H + """
    g (float[1,4,6,6] x) => (float[1,4,6,6] y) {
        c = Conv <pads = [1, 1, 1, 1]> (x, W)
        r = Relu (c)
        y = Add (r, x)
    }""", W=rand(4, 4, 3, 3))
    out, report = run_pass(m, activation_fusion.PASS, conv_add_fusion.PASS, **TOL)
    assert ops(out) == ["onnxkit::FusedConv", "Add"]
    assert any("already has an activation" in r.reason for r in report.rejections)


def test_matmul_add_becomes_gemm_or_fused_matmul():
    m = model(H + """
    g (float[5,6] a, float[2,5,6] b) => (float[5,4] y, float[2,5,4] z) {
        m1 = MatMul (a, W)
        y = Add (m1, bias)
        m2 = MatMul (b, W)
        z = Add (bias, m2)
    }""", W=rand(6, 4), bias=rand(4))
    out, report = run_pass(m, matmul_add_fusion.PASS, **TOL)
    assert report.count("matmul_add_fusion") == 2
    assert ops(out) == ["Gemm", "onnxkit::FusedMatMul"]


def test_matmul_add_that_broadcasts_stays():
    m = model(H + """
    g (float[5,6] a) => (float[3,5,4] y) {
        m1 = MatMul (a, W)
        y = Add (m1, bias)
    }""", W=rand(6, 4), bias=rand(3, 5, 4))
    _, report = run_pass(m, matmul_add_fusion.PASS)
    assert report.count("matmul_add_fusion") == 0


GELU_ERF = """
        d = Div (x, sqrt2)
        e = Erf (d)
        p = Add (e, one)
        m = Mul (x, p)
        y = Mul (m, half)
"""
GELU_TANH = """
        c = Pow (x, three)
        k = Mul (c, coef)
        i = Add (x, k)
        j = Mul (i, root)
        t = Tanh (j)
        p = Add (one, t)
        h = Mul (half, x)
        y = Mul (h, p)
"""
GELU_CONSTS = {"sqrt2": np.array(math.sqrt(2), np.float32), "one": np.array(1, np.float32),
               "half": np.array(0.5, np.float32), "three": np.array(3, np.float32),
               "coef": np.array(0.044715, np.float32),
               "root": np.array(math.sqrt(2 / math.pi), np.float32)}


@pytest.mark.parametrize("header, body, expected", [
    (H, GELU_ERF, "onnxkit::Gelu"), (H, GELU_TANH, "onnxkit::Gelu"),
    (H20, GELU_ERF, "Gelu"), (H20, GELU_TANH, "Gelu"),
])
def test_gelu(header, body, expected):
    m = model(header + "g (float[3,8] x) => (float[3,8] y) {" + body + "}", **GELU_CONSTS)
    out, report = run_pass(m, gelu_fusion.PASS, **TOL)
    assert report.count("gelu_fusion") == 1
    assert ops(out) == [expected]


LAYER_NORM = """
        mu = ReduceMean <axes = [-1]> (x)
        d = Sub (x, mu)
        sq = Pow (d, two)
        v = ReduceMean <axes = [-1]> (sq)
        ve = Add (v, eps)
        sd = Sqrt (ve)
        n = Div (d, sd)
        sc = Mul (n, gamma)
        y = Add (sc, beta)
"""


def test_layer_norm_from_its_decomposition():
    m = model(H + "g (float[2,5,8] x) => (float[2,5,8] y) {" + LAYER_NORM + "}",
              two=np.array(2, np.float32), eps=np.array(1e-5, np.float32), gamma=rand(8), beta=rand(8, seed=2))
    out, report = run_pass(m, layer_norm_fusion.PASS, **TOL)
    assert report.count("layer_norm_fusion") == 1
    assert ops(out) == ["LayerNormalization"]


def test_layer_norm_over_a_middle_axis_stays():
    body = LAYER_NORM.replace("axes = [-1]", "axes = [1]")
    m = model(H + "g (float[2,5,8] x) => (float[2,5,8] y) {" + body + "}",
              two=np.array(2, np.float32), eps=np.array(1e-5, np.float32), gamma=rand(8), beta=rand(8, seed=2))
    _, report = run_pass(m, layer_norm_fusion.PASS)
    assert report.count("layer_norm_fusion") == 0
    assert any("not the last" in r.reason for r in report.rejections)


def test_layer_norm_before_opset_17_is_onnxkit():
    header = '<ir_version: 7, opset_import: ["" : 13]>'
    m = model(header + "g (float[2,5,8] x) => (float[2,5,8] y) {" + LAYER_NORM.replace(
        "<axes = [-1]> (x)", "<axes = [-1]> (x)") + "}",
        two=np.array(2, np.float32), eps=np.array(1e-5, np.float32), gamma=rand(8), beta=rand(8, seed=2))
    out, _ = run_pass(m, layer_norm_fusion.PASS, **TOL)
    assert ops(out) == ["onnxkit::LayerNormalization"]


def test_skip_layer_norm():
    m = model(H + """
    g (float[2,5,8] a, float[2,5,8] b) => (float[2,5,8] y) {
        s = Add (a, b)
        y = LayerNormalization <epsilon = 1e-6> (s, gamma, beta)
    }""", gamma=rand(8), beta=rand(8, seed=2))
    out, report = run_pass(m, skip_layer_norm_fusion.PASS, **TOL)
    assert report.count("skip_layer_norm_fusion") == 1
    assert ops(out) == ["onnxkit::SkipLayerNormalization"]


def test_transpose_and_shape_chains():
    m = model(H + """
    g (float[2,3,4] x, float[4,5] m) => (float[4,3,2] y, float[1,4,1,5] z) {
        a = Transpose <perm = [1, 0, 2]> (x)
        y = Transpose <perm = [2, 0, 1]> (a)
        u = Unsqueeze (m, zero)
        z = Unsqueeze (u, two)
    }""", zero=np.array([0]), two=np.array([2]))
    out, report = run_pass(m, chains.PASS)
    assert report.count("chains") == 2
    assert ops(out) == ["Transpose", "Reshape"]


def test_transposes_that_cancel_disappear():
    m = model(H + """
    g (float[2,3,4] x) => (float[2,3,4] y) {
        a = Transpose <perm = [1, 2, 0]> (x)
        t = Transpose <perm = [2, 0, 1]> (a)
        y = Relu (t)
    }""")
    out, report = run_pass(m, chains.PASS)
    assert ops(out) == ["Relu"] and out.graph.node[0].input[0] == "x"


ATTENTION = """
    g (float[1,6,16] x, float[1,1,1,6] mask) => (float[1,6,16] y) {
        q3 = MatMul (x, Wq)
        k3 = MatMul (x, Wk)
        v3 = MatMul (x, Wv)
        q = Reshape (q3, split)
        qt = Transpose <perm = [0, 2, 1, 3]> (q)
        k = Reshape (k3, split)
        kt = Transpose <perm = [0, 2, 3, 1]> (k)
        v = Reshape (v3, split)
        vt = Transpose <perm = [0, 2, 1, 3]> (v)
        s = MatMul (qt, kt)
        sc = Div (s, root)
        sm = Add (sc, mask)
        p = Softmax <axis = -1> (sm)
        o = MatMul (p, vt)
        ot = Transpose <perm = [0, 2, 1, 3]> (o)
        y = Reshape (ot, merged)
    }"""
ATTENTION_CONSTS = {"Wq": rand(16, 16, seed=1), "Wk": rand(16, 16, seed=2), "Wv": rand(16, 16, seed=3),
                    "split": np.array([1, 6, 4, 4]), "merged": np.array([1, 6, 16]),
                    "root": np.array(2, np.float32)}


@pytest.mark.parametrize("header, expected", [(H, "onnxkit::Attention"), (H23, "Attention")])
def test_attention(header, expected):
    m = model(header + ATTENTION, **ATTENTION_CONSTS)
    feeds = {"x": rand(1, 6, 16, seed=5), "mask": np.where(np.arange(6) < 4, 0, -1e4).astype(
        np.float32).reshape(1, 1, 1, 6)}
    out, report = run_pass(m, attention_fusion.PASS, feeds=feeds, **TOL)
    assert report.count("attention_fusion") == 2  # the 4D core, then the head split and merge
    assert ops(out) == ["MatMul"] * 3 + [expected]
    heads = {a.name: a.i for a in out.graph.node[-1].attribute if a.name.endswith("num_heads")}
    assert heads == {"q_num_heads": 4, "kv_num_heads": 4}


def test_softmax_over_another_axis_is_not_attention():
    m = model(H + ATTENTION.replace("axis = -1", "axis = 2"), **ATTENTION_CONSTS)
    _, report = run_pass(m, attention_fusion.PASS)
    assert report.count("attention_fusion") == 0
    assert any("not the last" in r.reason for r in report.rejections)
