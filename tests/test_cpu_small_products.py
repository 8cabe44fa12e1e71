"""Small matrix products on the cpu executor (``onnxkit.kernels.cpu._blas.matmul``): the
products of transformer layers and small CNNs, too small to split among the threads.

Integer-valued operands make every product exact in float32 and float64, so the outputs
are compared bit for bit with numpy's integer matmul (no BLAS) and with onnxruntime.
Each way an operand can lie in memory is covered: C order, transposed views, strided
rows, one row, a batch of one, a batch times one matrix, an empty inner dimension.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import onnxkit
from onnxkit.kernels.cpu import _blas
from onnxkit.kernels.cpu._threads import min_parallel, set_min_parallel
from tests.cpu_signatures import added_since, kernel_signatures

pytestmark = pytest.mark.skipif(not _blas.AVAILABLE,
                                reason="no BLAS library found (oneMKL, numpy's OpenBLAS)")
RNG = np.random.default_rng(5)


def ints(*shape, dtype=np.float32):
    """Integers in [-3, 3] as floats: sums of up to 2^20 / 9 such products are exact."""
    return RNG.integers(-3, 4, shape).astype(dtype)


def exact(a, b):
    """a @ b in integers (numpy's own loop: no BLAS), as floats of a's type."""
    return np.matmul(a.astype(np.int64), b.astype(np.int64)).astype(a.dtype)


def read_only(x):
    x = np.array(x)
    x.flags.writeable = False
    return x


def layouts(x):
    """x as it can reach a product: C order, a transposed view of its transpose, rows of a
    wider array, read-only (a session's weights)."""
    wide = np.zeros(x.shape[:-1] + (x.shape[-1] + 7,), x.dtype)
    wide[..., 3:3 + x.shape[-1]] = x
    return {"C": np.ascontiguousarray(x), "T": np.ascontiguousarray(np.swapaxes(x, -1, -2))
            .swapaxes(-1, -2), "rows": wide[..., 3:3 + x.shape[-1]], "read-only": read_only(x)}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m, k, n", [(1, 64, 256), (16, 64, 64), (128, 64, 128), (8, 128, 128),
                                     (5, 3, 1), (1, 1, 1), (3, 300, 7)])
def test_2d_products_are_exact_for_every_layout(dtype, m, k, n):
    a, b = ints(m, k, dtype=dtype), ints(k, n, dtype=dtype)
    want = exact(a, b)
    for la, a_ in layouts(a).items():
        for lb, b_ in layouts(b).items():
            out = np.full((m, n), np.nan, dtype)
            assert _blas.matmul(a_, b_, out) is out
            np.testing.assert_array_equal(out, want, err_msg=f"{la} @ {lb}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sa, sb", [((4, 16, 64), (4, 64, 16)), ((4, 16, 64), (64, 32)),
                                    ((16, 64), (3, 64, 8)), ((1, 16, 64), (1, 64, 32)),
                                    ((1, 1, 64), (64, 48)), ((6, 1, 32), (6, 32, 1))])
def test_batched_products_are_exact_for_every_layout(dtype, sa, sb):
    a, b = ints(*sa, dtype=dtype), ints(*sb, dtype=dtype)
    want = exact(a, b)
    for la, a_ in layouts(a).items():
        for lb, b_ in layouts(b).items():
            out = np.full(want.shape, np.nan, dtype)
            assert _blas.matmul(a_, b_, out) is out
            np.testing.assert_array_equal(out, want, err_msg=f"{la} @ {lb}")


def test_an_output_view_is_written_and_nothing_around_it():
    a, b = ints(3, 12, 8), ints(3, 8, 12)
    wide = np.zeros((3, 12, 20), np.float32)
    _blas.matmul(a, b, wide[:, :, 5:17])
    np.testing.assert_array_equal(wide[:, :, 5:17], exact(a, b))
    assert not wide[:, :, :5].any() and not wide[:, :, 17:].any()


def test_empty_inner_dimension_gives_zeros_and_odd_layouts_go_to_numpy():
    out = np.full((4, 5), np.nan, np.float32)
    np.testing.assert_array_equal(_blas.matmul(ints(4, 0), ints(0, 5), out), np.zeros((4, 5)))
    x = ints(8, 12)[::2, ::3]  # no unit stride either way: BLAS cannot read it in place
    y = np.full((4, 4), np.nan, np.float32)
    np.testing.assert_array_equal(_blas.matmul(x, x.T, y), exact(x, x.T))
    a, b = ints(4, 6, dtype=np.float64), ints(6, 5)  # mixed types: numpy's matmul
    mixed = np.full((4, 5), np.nan, np.float64)
    np.testing.assert_array_equal(_blas.matmul(a, b, mixed), exact(a, b.astype(np.float64)))
    u, v = ints(2, 3, 4, 6), ints(2, 3, 6, 5)  # 4-D: numpy's matmul
    four = np.full((2, 3, 4, 5), np.nan, np.float32)
    np.testing.assert_array_equal(_blas.matmul(u, v, four), exact(u, v))


def test_a_batch_has_the_bits_of_its_products_however_it_is_split():
    """Real-valued operands: each product of a batch gives the same bits run alone, in a
    batch run on one thread, or in a batch shared among the threads."""
    a = RNG.standard_normal((6, 16, 40)).astype(np.float32)
    b = RNG.standard_normal((6, 40, 24)).astype(np.float32)
    alone = np.stack([_blas.matmul(a[i], b[i], np.empty((16, 24), np.float32))
                      for i in range(6)])
    together = _blas.matmul(a, b, np.empty((6, 16, 24), np.float32))
    least = min_parallel()
    set_min_parallel(1)  # every batch splits (with more than one thread)
    try:
        split = _blas.matmul(a, b, np.empty((6, 16, 24), np.float32))
    finally:
        set_min_parallel(least)
    np.testing.assert_array_equal(together, alone)
    np.testing.assert_array_equal(split, alone)
    np.testing.assert_allclose(together, np.matmul(a.astype(np.float64), b), rtol=1e-5,
                               atol=1e-5)


def test_other_layouts_compile_nothing_after_the_first_product():
    """One compiled variant serves every layout of a dtype and number of dimensions:
    transposed, strided, read-only operands compile nothing more."""
    for dtype in (np.float32, np.float64):
        for sa, sb in (((4, 6), (6, 5)), ((2, 4, 6), (2, 6, 5)), ((2, 4, 6), (6, 5))):
            a, b = ints(*sa, dtype=dtype), ints(*sb, dtype=dtype)
            _blas.matmul(a, b, np.empty(np.matmul(a, b).shape, dtype))
    before = kernel_signatures()
    for dtype in (np.float32, np.float64):
        for sa, sb in (((4, 6), (6, 5)), ((2, 4, 6), (2, 6, 5)), ((2, 4, 6), (6, 5))):
            a, b = ints(*sa, dtype=dtype), ints(*sb, dtype=dtype)
            want = exact(a, b)
            for a_ in layouts(a).values():
                for b_ in layouts(b).values():
                    out = np.full(want.shape, np.nan, dtype)
                    np.testing.assert_array_equal(_blas.matmul(a_, b_, out), want)
    assert not added_since(before)


def _model(node, inputs, output, dtype=TensorProto.FLOAT):
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(name, dtype, shape)
                                            for name, shape in inputs],
                              [helper.make_tensor_value_info(output, dtype, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _run_both(model, feeds):
    import onnxruntime as ort

    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)
    got = onnxkit.Session(model, executor="cpu").run(None, feeds)
    return got, want


MATMULS = [((1, 64), (64, 256)), ((16, 64), (64, 64)), ((128, 64), (64, 128)),
           ((2, 8, 128), (128, 128)), ((2, 16, 64), (2, 64, 16)), ((1, 16, 64), (1, 64, 32)),
           ((2, 3, 8, 32), (2, 3, 32, 8))]


@pytest.mark.parametrize("sa, sb", MATMULS, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_nodes_match_onnxruntime_exactly(sa, sb, dtype):
    elem = TensorProto.FLOAT if dtype == np.float32 else TensorProto.DOUBLE
    model = _model(helper.make_node("MatMul", ["a", "b"], ["y"]), [("a", sa), ("b", sb)], "y",
                   elem)
    feeds = {"a": ints(*sa, dtype=dtype), "b": ints(*sb, dtype=dtype)}
    (got,), (want,) = _run_both(model, feeds)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, exact(feeds["a"], feeds["b"]))


@pytest.mark.parametrize("trans_a, trans_b", [(0, 0), (0, 1), (1, 0), (1, 1)])
@pytest.mark.parametrize("m, k, n", [(1, 64, 256), (8, 128, 128), (16, 64, 10)])
def test_gemm_nodes_match_onnxruntime_exactly(trans_a, trans_b, m, k, n):
    """Transposed operands are read in place; alpha and beta powers of two keep it exact."""
    sa, sb = ((k, m) if trans_a else (m, k)), ((n, k) if trans_b else (k, n))
    node = helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=trans_a, transB=trans_b,
                            alpha=0.5, beta=2.0)
    model = _model(node, [("a", sa), ("b", sb), ("c", (n,))], "y")
    feeds = {"a": ints(*sa), "b": ints(*sb), "c": ints(n)}
    (got,), (want,) = _run_both(model, feeds)
    np.testing.assert_array_equal(got, want)
    a = feeds["a"].T if trans_a else feeds["a"]
    b = feeds["b"].T if trans_b else feeds["b"]
    np.testing.assert_array_equal(got, exact(a, b) * 0.5 + 2 * feeds["c"])


def test_real_valued_products_match_onnxruntime_closely():
    node = helper.make_node("Gemm", ["a", "b"], ["y"], transB=1)
    model = _model(node, [("a", (8, 128)), ("b", (96, 128))], "y")
    feeds = {"a": RNG.standard_normal((8, 128)).astype(np.float32),
             "b": RNG.standard_normal((96, 128)).astype(np.float32)}
    (got,), (want,) = _run_both(model, feeds)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-5)
    np.testing.assert_allclose(got, feeds["a"].astype(np.float64) @ feeds["b"].T, rtol=1e-5,
                               atol=2e-5)
