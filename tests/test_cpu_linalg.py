"""Einsum of two operands and MatMul of 4-D operands on the ``cpu`` executor: one batch
of products on the Numba threads. Oracle: numpy's einsum / matmul in float64."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

import onnxkit
from onnxkit.kernels.cpu import einsum as cpu_einsum

EQUATIONS = [  # (equation, shapes)
    ("bhqd,bhkd->bhqk", [(2, 3, 5, 4), (2, 3, 6, 4)]),
    ("ij,jk->ik", [(5, 7), (7, 3)]),
    ("bij,jk->bki", [(2, 5, 7), (7, 3)]),            # output transposed
    ("ijk,ikl->lj", [(3, 4, 5), (3, 5, 2)]),         # two contracted labels
    ("ab,cd->abcd", [(2, 3), (4, 5)]),               # outer product
    ("abc,cb->a", [(4, 3, 5), (5, 3)]),
    ("ij,ij->", [(3, 4), (3, 4)]),                   # full contraction
    ("ijx,jky->ki", [(3, 4, 2), (4, 5, 6)]),         # x, y summed out first
    ("i j,j k -> i k", [(2, 3), (3, 4)]),            # spaces
]


@pytest.mark.parametrize("equation, shapes", EQUATIONS, ids=[e for e, _ in EQUATIONS])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_two_operand_einsum_matches_numpy(equation, shapes, dtype):
    """The Einsum node on the cpu executor, and the batched product it is built on
    (``einsum_fast``: None means the reference kernel serves the equation, as it does
    every float64 one: the fast kernels take float32 only)."""
    rng = np.random.default_rng(len(equation))
    a, b = (rng.standard_normal(s).astype(dtype) for s in shapes)
    expected = np.einsum(equation.replace(" ", ""), a.astype(np.float64), b.astype(np.float64))
    t = "float" if dtype == np.float32 else "double"
    m = onnx.parser.parse_model(f"""<ir_version: 8, opset_import: ["" : 17]>
        g ({t}{list(shapes[0])} a, {t}{list(shapes[1])} b) => ({t} y) {{
            y = Einsum <equation = "{equation}"> (a, b) }}""")
    got = onnxkit.Session(m, executor="cpu").run(None, {"a": a, "b": b})[0]
    fast = cpu_einsum.einsum_fast(a, b, equation)
    if dtype == np.float32:
        assert fast is not None, "the equation went to the reference kernel"
    else:
        assert fast is None, "a float64 equation took the float32 kernel"
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for y in (got, fast) if fast is not None else (got,):
        assert y.dtype == dtype and y.shape == expected.shape
        np.testing.assert_allclose(y, expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("equation, shapes", [
    ("ii->i", [(3, 3)]),                               # one operand, a diagonal
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),    # ellipsis
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),        # three operands
    ("ij,jk->ik", [(2, 3), (1, 4)]),                   # sizes that do not match
])
def test_other_equations_go_to_the_reference(equation, shapes):
    rng = np.random.default_rng(1)
    ops = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    if len(ops) == 2:
        assert cpu_einsum.einsum_fast(*ops, equation) is None
    if equation == "ij,jk->ik":
        return  # the reference reports the mismatch
    np.testing.assert_allclose(cpu_einsum.einsum(*ops, equation=equation),
                               np.einsum(equation, *ops), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("b_shape", [(2, 3, 4, 5), (1, 1, 4, 5)])
def test_matmul_of_4d_operands(b_shape):
    m = onnx.parser.parse_model(f"""<ir_version: 8, opset_import: ["" : 17]>
        g (float[2,3,6,4] a, float{list(b_shape)} b) => (float y) {{ y = MatMul (a, b) }}""")
    rng = np.random.default_rng(2)
    a = rng.standard_normal((2, 3, 6, 4)).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    got = onnxkit.Session(m, executor="cpu").run(None, {"a": a, "b": b})[0]
    np.testing.assert_allclose(got, np.matmul(a.astype(np.float64), b), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op, gates, attrs", [
    ("LSTM", 4, 'direction = "bidirectional"'),
    ("GRU", 3, 'direction = "reverse", linear_before_reset = 1'),
    ("GRU", 3, 'direction = "bidirectional"'),
    ("RNN", 1, 'direction = "bidirectional"'),
])
def test_recurrent_ops_match_onnxruntime(op, gates, attrs):
    """LSTM / GRU / RNN with sequence_lens, against onnxruntime (the kernels report no
    algorithm: which product serves them is not checked here)."""
    import onnxruntime as ort

    dirs = 2 if "bidirectional" in attrs else 1
    seq, batch, inp, hidden = 7, 3, 5, 6
    m = onnx.parser.parse_model(f"""<ir_version: 8, opset_import: ["" : 17]>
        g (float[{seq},{batch},{inp}] x, int32[{batch}] lens) => (float y, float yh) {{
            y, yh = {op} <hidden_size = {hidden}, {attrs}> (x, W, R, B, lens)
        }}""")
    rng = np.random.default_rng(gates)
    m.graph.initializer.extend([
        onnx.numpy_helper.from_array(
            (rng.standard_normal(s) * 0.4).astype(np.float32), name)
        for name, s in (("W", (dirs, gates * hidden, inp)), ("R", (dirs, gates * hidden, hidden)),
                        ("B", (dirs, 2 * gates * hidden)))])
    feeds = {"x": rng.standard_normal((seq, batch, inp)).astype(np.float32),
             "lens": np.array([7, 4, 1], np.int32)}
    expected = ort.InferenceSession(m.SerializeToString(),
                                    providers=["CPUExecutionProvider"]).run(None, feeds)
    got = onnxkit.Session(m, executor="cpu").run(None, feeds)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)
