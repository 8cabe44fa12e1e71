"""The cpu executor's matrix products on the Numba threads (``onnxkit.kernels.cpu._blas``).

Every product is checked against numpy's own ``matmul`` (numpy's OpenBLAS: a library
independent of oneMKL, which does onnxkit's products where installed) for each way an
operand can lie in memory, and for each way of splitting the work: by columns, by rows,
over a batch, with more parts than threads.
"""

from __future__ import annotations

import importlib.metadata
import os

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxkit
from onnxkit.kernels.cpu import _blas, _blas_libraries
from tests.op_cases import f32

pytestmark = pytest.mark.skipif(not _blas.AVAILABLE,
                                reason="no BLAS library found (oneMKL, numpy's OpenBLAS)")
RNG = np.random.default_rng(11)


def test_onemkl_does_the_products_where_installed():
    """The ``mkl`` wheel (a dependency on Linux x86-64) is found and used, unless refused
    with ``ONNXKIT_BLAS=openblas``; numpy's OpenBLAS otherwise."""
    try:
        importlib.metadata.version("mkl")
        installed = True
    except importlib.metadata.PackageNotFoundError:
        installed = False
    refused = os.environ.get("ONNXKIT_BLAS", "").strip().lower() == "openblas"
    alone = os.environ.get("ONNXKIT_BLAS", "").strip().lower() == "mkl"
    if installed and not refused:
        assert _blas.LIBRARY.startswith("libmkl_rt"), _blas.LIBRARY
        assert _blas.ILP64 and _blas_libraries._S_NAME == "cblas_sgemm_64"
        # numpy's OpenBLAS beside it, timed against it per product shape
        assert _blas.CHOICES == (("onemkl",) if alone else ("onemkl", "openblas"))
    else:
        assert "openblas" in _blas.LIBRARY, _blas.LIBRARY
        assert _blas.CHOICES == ("openblas",)


def test_the_default_library_follows_the_processor_maker():
    """OpenBLAS by default on AMD processors, oneMKL on others, where both are loaded."""
    assert _blas_libraries.preferred("AuthenticAMD") == "openblas"
    assert _blas_libraries.preferred("GenuineIntel") == "onemkl"
    assert _blas_libraries.preferred("") == "onemkl"
    with open("/proc/cpuinfo") as f:
        vendor = next((line.split(":")[1].strip() for line in f if line.startswith("vendor_id")),
                      "")
    wanted = "openblas" if vendor == "AuthenticAMD" else "onemkl"
    assert _blas.CHOICES[_blas.DEFAULT] == (wanted if wanted in _blas.CHOICES
                                            else _blas.CHOICES[0])


def _layouts(x):
    """x as C order, Fortran order, and a strided view of a bigger array."""
    wide = np.zeros((x.shape[0], x.shape[1] + 5), x.dtype)
    wide[:, 2:2 + x.shape[1]] = x
    return {"C": np.ascontiguousarray(x), "F": np.asfortranarray(x),
            "view": wide[:, 2:2 + x.shape[1]]}


def _tol(dtype):
    return (dict(rtol=1e-5, atol=1e-4) if dtype == np.float32
            else dict(rtol=1e-12, atol=1e-12))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m, k, n", [(64, 40, 300), (300, 17, 9), (7, 5, 3), (1, 8, 260)])
def test_products_match_numpy_for_every_layout(dtype, m, k, n):
    a = RNG.standard_normal((m, k)).astype(dtype)
    b = RNG.standard_normal((k, n)).astype(dtype)
    want = np.matmul(a, b)
    for la, a_ in _layouts(a).items():
        for lb, b_ in _layouts(b).items():
            out = np.full((m, n), np.nan, dtype)
            assert _blas.matmul(a_, b_, out) is out
            np.testing.assert_allclose(out, want, **_tol(dtype), err_msg=f"{la} @ {lb}")


@pytest.mark.parametrize("lib", range(len(_blas.CHOICES)), ids=lambda i: _blas.CHOICES[i])
@pytest.mark.parametrize("parts", [1, 2, 3, 7])
@pytest.mark.parametrize("m, n", [(300, 1000), (100, 20), (5, 3)])
@pytest.mark.parametrize("by_columns", [True, False])
@pytest.mark.parametrize("order_a, order_b", [("C", "C"), ("F", "F"), ("C", "F")])
def test_every_split_covers_the_output_once(parts, m, n, by_columns, order_a, order_b, lib):
    """Column splits and row splits, of operands as they lie or transposed (F order:
    TRANS), with more parts than rows or columns, by each library loaded."""
    k = 6
    a, b = f32(m, k), f32(k, n)
    a_, b_ = np.asarray(a, order=order_a), np.asarray(b, order=order_b)
    out = np.full((m, n), np.nan, np.float32)
    ta, lda = _blas._layout(a_)
    tb, ldb = _blas._layout(b_)
    _blas.gemm_parts(a_.ctypes.data, ta, lda, b_.ctypes.data, tb, ldb, out.ctypes.data, n, m,
                     n, k, 4, parts, by_columns, lib)
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("lib", range(len(_blas.CHOICES)), ids=lambda i: _blas.CHOICES[i])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_each_library_computes_batches(lib, dtype):
    u = RNG.standard_normal((5, 7, 9)).astype(dtype)
    v = RNG.standard_normal((5, 9, 4)).astype(dtype)
    out = np.full((5, 7, 4), np.nan, dtype)
    la, lb = _blas._layout(u), _blas._layout(v)
    size = out.itemsize
    _blas.gemm_batch(u.ctypes.data, la[0], la[1], u.strides[0], v.ctypes.data, lb[0], lb[1],
                     v.strides[0], out.ctypes.data, 4, out.strides[0], 5, 7, 4, 9, size, lib)
    np.testing.assert_allclose(out, u @ v, **_tol(dtype))


def test_the_library_is_timed_once_per_product_shape():
    """With oneMKL and OpenBLAS both loaded and tuning on, the first product of a shape
    times each library (three runs each) and the session's later ones run the winner
    only; with tuning off ``CHOICES[DEFAULT]`` runs (the processor maker's library)."""
    from onnxkit.kernels.cpu import _tuning

    calls = []
    session = _tuning.Tuning()
    with _tuning.tuning_of_run(False, session):
        _blas.with_library(("test", 1), calls.append)
    assert calls == [_blas.DEFAULT]
    calls.clear()
    with _tuning.tuning_of_run(True, session):
        _blas.with_library(("test", 2), calls.append)
        if len(_blas.CHOICES) == 1:
            assert calls == [0] == [_blas.DEFAULT]
            return
        (key, winner, times), = [e for e in session.log if e[0] == ("test", 2)]
        assert set(times) == set(_blas.CHOICES) and winner == min(times, key=times.get)
        # three timed runs each; the winner runs last (again, unless its run was the last
        # timed one), so an in-place output is the winner's
        chosen = _blas.CHOICES.index(winner)
        assert sorted(calls[:6]) == [0, 0, 0, 1, 1, 1]
        assert calls[-1] == chosen and len(calls) == (6 if calls[5] == chosen else 7)
        calls.clear()
        _blas.with_library(("test", 2), calls.append)
        assert calls == [_blas.CHOICES.index(winner)]
        a, b = f32(70, 300), f32(300, 90)  # a real product through the timed path
        out = np.full((70, 90), np.nan, np.float32)
        _blas.matmul(a, b, out)
        np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-4)
    assert any(e[0][0] == "gemm" for e in session.log)
    calls.clear()
    with _tuning.tuning_of_run(True):  # another session: its own choices, timed again
        _blas.with_library(("test", 2), calls.append)
    assert len(calls) >= 6


def test_the_split_direction():
    """Rows when each part gets ROWS_FIRST of them; else columns when wide enough."""
    assert not _blas.split_by_columns(512, 784, 2)  # a 512-channel 1x1 layer: rows
    assert _blas.split_by_columns(64, 3136, 2)  # 64 channels, a 56x56 plane: columns
    assert not _blas.split_by_columns(64, 100, 2)  # narrow: rows
    assert _blas.split_by_columns(8, 100, 2)  # too few of either: one column part each


def test_transposed_operands_are_read_in_place():
    a = f32(30, 20)
    b = f32(40, 20)
    out = np.empty((30, 40), np.float32)
    _blas.matmul(a, b.T, out)  # b.T is a transposed view: TRANS, no copy
    np.testing.assert_allclose(out, a @ b.T, rtol=1e-5, atol=1e-5)
    assert _blas._layout(b.T) == (_blas.TRANS, 20)


def test_batches_and_a_shared_matrix():
    u, v = f32(36, 16, 24), f32(36, 24, 50)
    p = np.empty((36, 16, 50), np.float32)
    _blas.matmul(u, v, p)
    np.testing.assert_allclose(p, u @ v, rtol=1e-5, atol=1e-4)
    w = f32(24, 50)  # one matrix for the whole batch
    _blas.matmul(u, w, p)
    np.testing.assert_allclose(p, u @ w, rtol=1e-5, atol=1e-4)
    q = f32(4, 12, 8)  # scores against transposed keys, the output a strided view
    wide = np.zeros((4, 12, 20), np.float32)
    _blas.matmul(q, np.swapaxes(q, 1, 2), wide[:, :, 3:15])
    np.testing.assert_allclose(wide[:, :, 3:15], q @ np.swapaxes(q, 1, 2), rtol=1e-5, atol=1e-5)
    assert not wide[:, :, :3].any() and not wide[:, :, 15:].any()


def test_what_blas_cannot_read_goes_to_numpy():
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    out = np.empty((3, 3), np.int64)
    np.testing.assert_array_equal(_blas.matmul(a, a.T, out), a @ a.T)
    x = f32(6, 8)[::2, ::2]  # no unit stride: numpy copies it
    out32 = np.empty((3, 3), np.float32)
    np.testing.assert_allclose(_blas.matmul(x, x.T, out32), x @ x.T, rtol=1e-6)


def test_a_run_sets_blas_to_one_thread_and_restores_it():
    seen = []
    node = helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 12, 12])],
        [helper.make_empty_tensor_value_info("y")], [numpy_helper.from_array(f32(8, 16, 3, 3), "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)
    sess = onnxkit.Session(model, executor="cpu")
    before = _blas._GET()
    _blas._SET(2)
    try:
        sess.run(None, {"x": f32(1, 16, 12, 12)}, trace=lambda event: seen.append(_blas._GET()))
        assert seen == [1]
        assert _blas._GET() == 2
    finally:
        _blas._SET(before)


def _row_layouts(x):
    """A row (1, k) as it lies, and as the column of a wider matrix seen transposed
    (TRANS, its values ``lda`` apart)."""
    k = x.shape[1]
    wide = np.zeros((k, 5), x.dtype)
    wide[:, 2] = x[0]
    return {"C": np.ascontiguousarray(x), "column": wide[:, 2:3].T}


@pytest.mark.parametrize("lib", range(len(_blas.CHOICES)), ids=lambda i: _blas.CHOICES[i])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("parts", [1, 2, 3])
@pytest.mark.parametrize("k, n", [(24, 1000), (300, 7), (1, 5)])
def test_one_row_runs_as_matrix_vector_products(lib, dtype, parts, k, n):
    """A classifier at batch 1: C (1, n) = A (1, k) @ B (k, n) by ``cblas_?gemv``, for
    every layout of A and B (B transposed as torch's Linear stores it), split in parts."""
    a = RNG.standard_normal((1, k)).astype(dtype)
    b = RNG.standard_normal((k, n)).astype(dtype)
    want = np.matmul(a, b)
    assert _blas_libraries._SGEMV is not None and _blas_libraries._DGEMV is not None
    for la, a_ in _row_layouts(a).items():
        for lb, b_ in _layouts(b).items():
            out = np.full((1, n), np.nan, dtype)
            (ta, lda), (tb, ldb) = _blas._layout(a_), _blas._layout(b_)
            _blas.gemm_parts(_blas._address(a_), ta, lda, _blas._address(b_), tb, ldb,
                             out.ctypes.data, n, 1, n, k, out.itemsize, parts, True, lib)
            np.testing.assert_allclose(out, want, **_tol(dtype), err_msg=f"{la} @ {lb}")
    assert _blas._layout(_row_layouts(a)["column"]) == (_blas.TRANS, 5)


@pytest.mark.parametrize("lib", range(len(_blas.CHOICES)), ids=lambda i: _blas.CHOICES[i])
@pytest.mark.parametrize("parts", [1, 2, 3, 5])
def test_identical_weight_rows_give_identical_values_however_the_rows_are_split(lib, parts):
    """onnx's light models have constant weights: every logit of the classifier is the same
    sum, which their expected outputs (a uniform softmax over logits of ~1e11) rely on.
    Split into parts that start mid-block, OpenBLAS's sgemv summed some rows in another
    order (logits 1e7 apart, a one-hot softmax)."""
    k, n = 4096, 1000
    a = RNG.uniform(0, 1e6, (1, k)).astype(np.float32)
    b = np.full((n, k), 0.02, np.float32).T  # stored transposed, as torch's Linear
    out = np.full((1, n), np.nan, np.float32)
    (ta, lda), (tb, ldb) = _blas._layout(a), _blas._layout(b)
    _blas.gemm_parts(a.ctypes.data, ta, lda, b.ctypes.data, tb, ldb, out.ctypes.data, n, 1,
                     n, k, 4, parts, True, lib)
    assert np.unique(out).size == 1
    np.testing.assert_allclose(out[0, 0], a.astype(np.float64).sum() * 0.02, rtol=1e-5)
