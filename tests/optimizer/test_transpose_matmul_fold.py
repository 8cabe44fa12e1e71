"""Transposes of a MatMul's operands become FusedMatMul's transA / transB (and Gemm's), and
the dynamo exporter's Reshape, Transpose, Reshape of the keys becomes one Transpose: on
a GPT-2 step with past keys exported by the dynamo exporter, checked against onnxruntime,
and on small graphs against numpy."""

import numpy as np
import pytest

import onnxkit
from onnxkit.errors import OnnxkitError
from onnxkit.optimizer import optimize
from onnxkit.optimizer.levels import EXTENDED
from onnxkit.optimizer.passes import attention_fusion, chains, transpose_matmul_fold
from onnxkit.ops.fused.fused_matmul import fused_matmul
from tests.optimizer._exported import check_against_ort, export, op_types
from tests.optimizer._helpers import model, rand, run_pass

H = '<ir_version: 8, opset_import: ["" : 17]>'


def _unfused_level2(m):
    """Level 2 without the attention fusion, which takes this scores product whole."""
    level1, _ = optimize(m, 1)
    return optimize(level1, 2, passes=tuple(p for p in EXTENDED if p is not attention_fusion.PASS))


@pytest.fixture(scope="module")
def gpt2_dynamo(tmp_path_factory):
    """A one-layer GPT-2 (hidden 32, 2 heads) taking one token after 5 past ones."""
    pytest.importorskip("transformers")
    pytest.importorskip("onnxscript")
    from benchmarks.kinds import hf

    torch = hf._torch()
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(vocab_size=64, n_embd=32, n_layer=1, n_head=2, n_positions=16,
                        bos_token_id=0, eos_token_id=0)
    module = hf._WithPast.wrap(torch, GPT2LMHeadModel(config).eval(), 1)
    inputs = {"input_ids": torch.randint(0, 64, (2, 1)),
              "attention_mask": torch.ones(2, 6, dtype=torch.int64),
              "past_k0": torch.randn(2, 2, 5, 16), "past_v0": torch.randn(2, 2, 5, 16)}
    return export(module, inputs, "dynamo", tmp_path_factory.mktemp("gpt2"), outputs=3)


def test_exported_gpt2_keys_fold_into_the_scores_product(gpt2_dynamo):
    m, feeds = gpt2_dynamo
    out, report = _unfused_level2(m)
    assert report.count("transpose_matmul_fold") == 1
    assert any(r.rule == "Reshape+Transpose+Reshape" for r in report.rewrites)
    scores = [n for n in out.graph.node if n.op_type == "FusedMatMul"
              and any(a.name == "transB" and a.i == 1 for a in n.attribute)]
    assert len(scores) == 1
    # the keys go in as the exporter's present_k0, not through a Transpose
    producers = {o: n for n in out.graph.node for o in n.output}
    assert producers[scores[0].input[1]].op_type == "Concat"
    check_against_ort(m, out, feeds)


def test_exported_gpt2_keeps_one_transpose_less(gpt2_dynamo):
    m, _ = gpt2_dynamo
    out, _ = _unfused_level2(m)
    transposes = op_types(out).count("Transpose")
    # what the exporter wrote, less the key's Transpose and the two Reshapes around it
    exported = op_types(m).count("Transpose")
    # the rest only move axes of length 1 at this one-token step: Reshapes (chains)
    assert exported == 5 and transposes == 0
    assert "MatMul" in op_types(out)  # the probabilities @ values product stays plain


def test_batched_trans_b_against_numpy():
    m = model(H + """
    g (float[2,4,1,16] q, float[2,4,9,16] k) => (float[2,4,1,9] y) {
        kt = Transpose <perm = [0, 1, 3, 2]> (k)
        y = MatMul (q, kt)
    }""")
    out, report = run_pass(m, transpose_matmul_fold.PASS)
    assert op_types(out) == ["onnxkit::FusedMatMul"]
    q, k = rand(2, 4, 1, 16), rand(2, 4, 9, 16, seed=1)
    y, = onnxkit.Session(out).run(None, {"q": q, "k": k})
    np.testing.assert_allclose(y, q @ np.swapaxes(k, -1, -2), rtol=1e-6, atol=1e-6)


def test_both_operands_and_an_existing_flag():
    """transA from the Transpose of A; the FusedMatMul's transB = 1 and a Transpose of B
    cancel (transB = 0); its bias and activation stay."""
    m = model('<ir_version: 8, opset_import: ["" : 17, "onnxkit" : 1]>' + """
    g (float[3,6,4] a, float[3,6,5] b) => (float[3,4,5] y) {
        at = Transpose <perm = [0, 2, 1]> (a)
        bt = Transpose <perm = [0, 2, 1]> (b)
        y = onnxkit.FusedMatMul <transB = 1, activation = "Relu"> (at, bt, bias)
    }""", bias=rand(5))
    out, report = run_pass(m, transpose_matmul_fold.PASS)
    assert op_types(out) == ["onnxkit::FusedMatMul"]
    attrs = {a.name: a.i for a in out.graph.node[0].attribute if a.name.startswith("trans")}
    assert attrs == {"transA": 1, "transB": 0}
    a, b, bias = rand(3, 6, 4), rand(3, 6, 5, seed=1), rand(5)
    y, = onnxkit.Session(out).run(None, {"a": a, "b": b})
    want = np.maximum(np.swapaxes(a, 1, 2) @ b + bias, 0)
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)


def test_matrices_become_a_standard_gemm():
    m = model(H + """
    g (float[4,3] a, float[5,4] b) => (float[3,5] y) {
        at = Transpose (a)
        bt = Transpose <perm = [1, 0]> (b)
        y = MatMul (at, bt)
    }""")
    out, _ = run_pass(m, transpose_matmul_fold.PASS)
    assert op_types(out) == ["Gemm"]
    a, b = rand(4, 3), rand(5, 4, seed=1)
    y, = onnxkit.Session(out).run(None, {"a": a, "b": b})
    np.testing.assert_allclose(y, a.T @ b.T, rtol=1e-6, atol=1e-6)


def test_gemm_flag_flips():
    m = model(H + """
    g (float[3,4] a, float[5,4] b) => (float[3,5] y) {
        at = Transpose (a)
        y = Gemm <transA = 1, transB = 1, alpha = 2.0> (at, b)
    }""")
    out, _ = run_pass(m, transpose_matmul_fold.PASS)
    assert op_types(out) == ["Gemm"]
    attrs = {a.name: a.i for a in out.graph.node[0].attribute if a.name.startswith("trans")}
    assert attrs == {"transA": 0, "transB": 1}


@pytest.mark.parametrize("body", [
    "kt = Transpose <perm = [0, 2, 1, 3]> (k)\n y = MatMul (q, kt)",    # not the last two axes
    "kt = Transpose <perm = [0, 1, 3, 2]> (k)\n y = MatMul (q, kt)\n z = Relu (kt)",  # read twice
])
def test_stays(body):
    m = model(H + """
    g (float[2,4,4,4] q, float[2,4,4,4] k) => (float[2,4,4,4] y) {
        """ + body + """
    }""")
    out, report = run_pass(m, transpose_matmul_fold.PASS)
    assert report.count("transpose_matmul_fold") == 0
    assert "Transpose" in op_types(out)


@pytest.mark.parametrize("second, expected", [
    ("[2, 4, 16, 9]", ["Transpose"]),                # back to k's batch axes
    ("[8, 16, 9]", ["Transpose", "Reshape"]),         # the batch axes stay merged
])
def test_reshape_transpose_reshape_is_one_transpose(second, expected):
    m = model(H + """
    g (float[2,4,9,16] k) => (float""" + second + """ y) {
        r = Reshape (k, s1)
        t = Transpose <perm = [0, 2, 1]> (r)
        y = Reshape (t, s2)
    }""", s1=np.array([-1, 9, 16], np.int64), s2=np.array(eval(second), np.int64))
    out, report = run_pass(m, chains.PASS)
    assert op_types(out) == expected
    assert out.graph.node[0].attribute[0].ints == [0, 1, 3, 2]


def test_reshape_that_changes_the_matrix_stays():
    m = model(H + """
    g (float[2,4,9,16] k) => (float[2,4,8,18] y) {
        r = Reshape (k, s1)
        t = Transpose <perm = [0, 2, 1]> (r)
        y = Reshape (t, s2)
    }""", s1=np.array([-1, 18, 8], np.int64), s2=np.array([2, 4, 8, 18], np.int64))
    out, report = run_pass(m, chains.PASS)
    assert op_types(out) == ["Reshape", "Transpose", "Reshape"]


def test_transposing_a_vector_is_a_clear_error():
    with pytest.raises(OnnxkitError, match="transA"):
        fused_matmul(rand(4), rand(4, 3), transA=1)
