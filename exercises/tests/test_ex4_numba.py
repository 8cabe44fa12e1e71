"""Checks of exercise 4: onnx's backend cases, numpy and hand-computed values for Softmax (4.1)
and LeakyRelu (4.2); exact sums (math.fsum) within a rounding bound for the row sums (4.3).

The GPU checks (4.2, 4.3) are plain functions run each in a child process by the test
that names them (exercises/tests/child.py): on the GPU when this machine has one, else in
numba's CUDA simulator. pytest's assertion rewriting does not reach them there, so every
assertion in them says what it compared.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import cuda
from numba.core.registry import CPUDispatcher

from exercises import given
from exercises.tests.child import in_child
from exercises.tests.kernels import cases_of, check_cases, one_node, run
from exercises.tests.select import exercise

ex = exercise("ex4_numba")
FLOATS = (np.float32, np.float64)


# --- Task 4.1: softmax_rows, Numba on the CPU ----------------------------------------------

@pytest.mark.task4_1
@pytest.mark.hidden
def test_softmax_rows_onnx_cases():
    check_cases(ex, cases_of("Softmax"))


@pytest.mark.task4_1
@pytest.mark.parametrize("dtype", FLOATS)
def test_softmax_rows_by_hand(dtype):
    x = np.array([[0.0, np.log(3.0), -np.inf],      # e^0 : e^ln3 : e^-inf = 1 : 3 : 0
                  [1000.0, 1000.0, -1000.0],        # exp(1000) overflows; exp(-2000) is 0
                  [7.0, 7.0, 7.0]], dtype)
    y = np.full_like(x, 5.0)
    ex.softmax_rows(x, y)
    rtol = 8 * np.finfo(dtype).eps                  # a few roundings of exp and the sum
    np.testing.assert_allclose(y, [[0.25, 0.75, 0.0], [0.5, 0.5, 0.0], [1 / 3, 1 / 3, 1 / 3]],
                               rtol=rtol, atol=0)


@pytest.mark.task4_1
@pytest.mark.parametrize("dtype", FLOATS)
def test_softmax_rows_of_minus_infinity(dtype):
    x = np.full((2, 3), -np.inf, dtype)
    x[1] = [1.0, 2.0, 3.0]                          # a normal row after it: not disturbed
    y = np.full_like(x, 5.0)
    try:
        ex.softmax_rows(x, y)
    except ZeroDivisionError:
        raise AssertionError(
            "softmax_rows divided by a zero sum on a row of -inf: under @njit 0.0 / 0.0 raises "
            "ZeroDivisionError, as in Python (numpy, and the reference kernel, give NaN). Let "
            "that row come out NaN: with m = -inf, x - m is NaN; or @njit(error_model=\"numpy\")") from None
    assert np.isnan(y[0]).all(), f"a row of -inf has no softmax: NaN, as the reference gives, not {y[0]}"
    e = np.exp([-2.0, -1.0, 0.0])
    np.testing.assert_allclose(y[1], e / e.sum(), rtol=8 * np.finfo(dtype).eps, atol=0)


@pytest.mark.task4_1
def test_softmax_rows_along_an_axis():
    x = np.array([[0.0, np.log(3.0)], [1.0, 1.0]], np.float32)
    (y,) = run(ex, one_node("Softmax", 13, x, axis=0), {"x": x})   # down the columns
    np.testing.assert_allclose(y[:, 0], [1 / (1 + np.e), np.e / (1 + np.e)], rtol=1e-6)
    cube = np.arange(24, dtype=np.float64).reshape(2, 3, 4)        # a middle axis: steps of 4
    (y,) = run(ex, one_node("Softmax", 13, cube, axis=1), {"x": cube})
    assert y.dtype == np.float64
    rtol = 8 * np.finfo(np.float64).eps
    np.testing.assert_allclose(y[0, :, 0], np.exp([-8.0, -4.0, 0.0]) / np.exp([-8.0, -4.0, 0.0]).sum(),
                               rtol=rtol)
    np.testing.assert_allclose(y.sum(axis=1), np.ones((2, 4)), rtol=rtol)


@pytest.mark.task4_1
def test_softmax_rows_is_compiled_by_numba():
    x = np.zeros((2, 3), np.float32)
    ex.softmax_rows(x, np.empty_like(x))
    assert isinstance(ex.softmax_rows, CPUDispatcher), \
        "softmax_rows must be compiled by Numba: keep the @njit decorator"
    assert ex.softmax_rows.signatures, "softmax_rows was called, but Numba compiled nothing"


# --- Task 4.2: leaky_relu_kernel, one GPU thread per element -----------------------------

def leaky_relu_oracle(x: np.ndarray, alpha: float) -> np.ndarray:
    return np.where(x >= 0, x, x * x.dtype.type(alpha))


def leaky_relu_by_hand():
    for dtype in FLOATS:
        x = np.array([-2.0, -0.5, 0.0, 3.0], dtype)
        y = given.leaky_relu(ex.leaky_relu_kernel, x, 0.1)
        assert y.dtype == dtype, f"y of {dtype.__name__} x is {y.dtype}"
        np.testing.assert_allclose(y, [-0.2, -0.05, 0.0, 3.0], rtol=np.finfo(dtype).eps, atol=0,
                                   err_msg=f"leaky_relu of {x} with alpha 0.1")


def leaky_relu_past_the_end():
    """Sizes that leave the last block partly outside the arrays: x and y are views of
    longer buffers, so a thread past the end raises IndexError (simulator) or writes into
    the guard after y (GPU); both fail here."""
    threads = guard = given.THREADS         # the guard holds a whole block's overhang
    rng = np.random.default_rng(42)
    for dtype in FLOATS:
        for n in (1, threads - 1, threads + 1, 3 * threads + 5):
            x = rng.standard_normal(n + guard).astype(dtype)
            y = np.full(n + guard, 12345.0, dtype)
            d_x, d_y = cuda.to_device(x), cuda.to_device(y)
            blocks = (n + threads - 1) // threads
            where = f"n={n} ({dtype.__name__}), blocks={blocks}, threads={threads}"
            try:
                ex.leaky_relu_kernel[blocks, threads](d_x[:n], dtype(0.25), d_y[:n])
            except IndexError as exc:
                raise AssertionError(f"{where}: a thread past the end of the arrays indexed "
                                     f"them ({exc}); threads with i >= x.size must do nothing") from exc
            got = d_y.copy_to_host()
            np.testing.assert_allclose(got[:n], leaky_relu_oracle(x[:n], 0.25),
                                       rtol=np.finfo(dtype).eps, atol=0, err_msg=where)
            assert (got[n:] == 12345.0).all(), f"{where}: a thread past the end wrote {got[n:]}"


def leaky_relu_onnx_cases(cases):
    check_cases(ex, cases)


@pytest.mark.task4_2
def test_leaky_relu_by_hand():
    in_child(leaky_relu_by_hand)


@pytest.mark.task4_2
def test_leaky_relu_past_the_end():
    in_child(leaky_relu_past_the_end)


@pytest.mark.task4_2
@pytest.mark.hidden
def test_leaky_relu_onnx_cases():
    in_child(leaky_relu_onnx_cases, cases_of("LeakyRelu"))


# --- Task 4.3: row_sums_kernel, one GPU block per row ------------------------------------

#: (rows, row length, threads per block): rows shorter than the block, exactly one block,
#: several blocks' worth, one row, many rows, one thread (no tree at all)
SHAPES = ((1, 5, 32), (3, 32, 32), (4, 100, 32), (12, 37, 8), (2, 9, 1))


def assert_row_sums(x: np.ndarray, threads: int) -> None:
    """The kernel's sums against the exact ones (math.fsum), within the rounding error a sum
    of this shape can make. Each element goes through at most ceil(cols / threads) additions
    in its thread's strided loop and log2(threads) in the tree, and the sum is rounded once
    more to x's dtype: with ``depth`` those roundings, |error| <= gamma(depth) * sum|x_i|,
    gamma(k) = k u / (1 - k u), u the unit roundoff of x's dtype (Higham, Accuracy and
    Stability of Numerical Algorithms, section 4.2)."""
    got = given.row_sums(ex.row_sums_kernel, x, threads)
    rows, cols = x.shape
    where = f"a {rows} x {cols} {x.dtype} input, {threads} threads per row"
    assert got.shape == (rows,) and got.dtype == x.dtype, f"{where}: got {got.shape} {got.dtype}"
    depth = math.ceil(cols / threads) + int(math.log2(threads)) + 1
    ku = depth * np.finfo(x.dtype).eps / 2
    for r in range(rows):
        exact = math.fsum(x[r].astype(np.float64))
        bound = ku / (1 - ku) * float(np.abs(x[r]).astype(np.float64).sum())
        assert abs(float(got[r]) - exact) <= bound, (
            f"{where}: row {r} sums to {float(got[r])!r}, not {exact!r} "
            f"(off by {abs(float(got[r]) - exact):.3g}, more than rounding allows: {bound:.3g})")


def row_sums_float64():
    rng = np.random.default_rng(7)
    for rows, cols, threads in SHAPES:
        assert_row_sums(rng.uniform(-1.0, 1.0, (rows, cols)), threads)


def row_sums_float32():
    rng = np.random.default_rng(8)
    for rows, cols, threads in SHAPES:
        assert_row_sums(rng.uniform(0.5, 1.5, (rows, cols)).astype(np.float32), threads)


@pytest.mark.task4_3
def test_row_sums_float64():
    in_child(row_sums_float64)


@pytest.mark.task4_3
@pytest.mark.hidden
def test_row_sums_float32():
    in_child(row_sums_float32)
